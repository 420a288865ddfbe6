"""The game lifecycle between the HTTP API and the log store (CONTRACT sections 3–6).

Every write follows one path: check the submission against a fold of the log (binding, signature,
seat, turn, legality — with the same :class:`~referee.replay.LogReplayer` the workers and the verifier
use), build and seal the entry for the position the fold is at, and append it atomically at exactly
that position. Nothing is written unless every check passes; a stale position is a 409, never a
silent merge. After an append the game's replay job is queued (once per burst, see ``workers``).

Inputs arrive already validated by the marshmallow schemas of ``schemas/``; outputs are plain dicts.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from collections.abc import Callable
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..clock import now_ms
from ..games import ruleset
from ..games.randomness import recorded_game_seed
from ..notify.events import next_alarm
from ..replay import ABORTED, ACTIVE, EXPIRED, FINISHED, WAITING, LogError, LogReplayer
from ..signing import ACCEPT_CTX, MOVE_CTX, RECEIPT_CTX, VACATION_CTX, sign, verify
from ..store import DuplicateSubmission, GameExists, GameNotFound, StaleAppend, StoreUnavailable
from ..store.base import KEEP_TIMER, Appended, LogStore, Tip
from ..store.keys import valid_game_id
from ..timecontrol import TimeControlError, engine_options, format_ms
from ..timecontrol import resolve as resolve_time_control
from ..timecontrol.spec import time_control_of
from .entries import append_system_entries, due_system_entry, make_entry
from .errors import ServiceError, from_verdict_error, invalid
from .folds import ReplayerCache, clone_replayer, fold_with_states
from .projection import clock_view, projection_of

log = logging.getLogger(__name__)

CREATE_CTX = "referee/create"
ABORT_CTX = "referee/abort"


class Dispatcher(Protocol):
    """Gets the game's replay going after an append that raised the game's pending flag."""

    def notify(self, game_id: str, position: int) -> None: ...


def notify_appended(dispatcher: Dispatcher, game_id: str, appended: list[Appended]) -> None:
    """Tell ``dispatcher`` of the first of ``appended`` that raised the game's pending flag, unless the
    append script told the workers already (``Appended.notified``). A failure is logged, not raised: the
    entries are durably logged and the reconciler pushes the game once its flag is stale."""
    for item in appended:
        if item.pending_set:
            if not item.notified:
                try:
                    dispatcher.notify(game_id, item.position)
                except Exception:
                    log.exception("could not notify the replay of %s after position %s", game_id, item.position)
            return


class NoDispatch:
    """Queue nothing (projections are then built by ``referee rebuild`` or a reconciler only)."""

    def notify(self, game_id: str, position: int) -> None:
        return None


class InlineDispatch:
    """Build the projection in the request itself (single-process use with the in-memory store)."""

    def __init__(self, catch_up: Callable[[str], Any]):
        self.catch_up = catch_up

    def notify(self, game_id: str, position: int) -> None:
        self.catch_up(game_id)


def new_game_id() -> str:
    """``g_`` and 16 random base32 characters (80 bits)."""
    return "g_" + base64.b32encode(os.urandom(10)).decode("ascii").lower()


def signed_game_id(signature: str) -> str:
    """Id of an organiser-signed game, derived from its signature: posting it twice cannot make two games."""
    digest = hashlib.sha256(signature.encode("ascii")).digest()
    return "g_" + base64.b32encode(digest[:10]).decode("ascii").lower()


def _not_found(game_id: str) -> ServiceError:
    return ServiceError(404, "game/not_found", f"no game {game_id!r}")


def _unavailable(exc: Exception) -> ServiceError:
    return ServiceError(503, "log/unavailable", f"the log could not be written durably: {exc}")


class GameService:
    """Creates games, takes signed acceptances and moves, and answers reads; one per app."""

    def __init__(self, store: LogStore, dispatcher: Dispatcher | None = None, organiser_keys: list[str] | None = None,
                 max_wait: float = 30.0, referee_key: Ed25519PrivateKey | None = None, *,
                 accept_within: float | None = None):
        self.store = store
        #: seconds a seeded game may wait for its acceptances before it expires (None: never)
        self.accept_within = accept_within
        #: signs receipts (CONTRACT section 8); a fresh key when none is given (tools and tests)
        self.referee_key = referee_key or Ed25519PrivateKey.generate()
        self.dispatcher: Dispatcher = dispatcher or NoDispatch()
        self.organiser_keys = list(organiser_keys or [])
        self.max_wait = max_wait
        self.cache = ReplayerCache(store)
        self._created: dict[str, dict[str, Any]] = {}

    # -- helpers ------------------------------------------------------------------------------------
    def _check_id(self, game_id: str) -> None:
        if not valid_game_id(game_id):
            raise _not_found(game_id)

    def fold(self, game_id: str) -> LogReplayer:
        """The current fold of ``game_id`` (shared; do not mutate). 404 for an unknown game."""
        self._check_id(game_id)
        try:
            return self.cache.current(game_id)
        except GameNotFound as exc:
            raise _not_found(game_id) from exc
        except LogError as exc:
            raise ServiceError(500, "log/corrupt", str(exc)) from exc

    def fold_for(self, game_id: str, envelope: dict[str, Any]) -> LogReplayer:
        """The fold to check a submission against: the cached one, without asking the store, when it is at
        exactly the position the envelope names; else the current fold.

        Trusting a cache that may be behind is safe: the append script writes only at exactly that
        position, so if the log has moved on, the append is refused as stale and nothing is written."""
        self._check_id(game_id)
        cached = self.cache.peek(game_id)
        if cached is not None and cached.seq == envelope.get("seq") and cached.head == envelope.get("prev"):
            return cached
        return self.fold(game_id)

    def _settle(self, game_id: str, replayer: LogReplayer) -> LogReplayer:
        """Cache ``replayer`` after the referee's own entries were appended, and return it; but if it still
        owes one (``started``, ``revealed``, …), someone else (a replay worker) appended it first and this
        fold is behind the log: then forget it and return the current fold. A fold that is behind must not
        answer the next submission (it would call the game "waiting" when it has started)."""
        if due_system_entry(replayer, replayer.server_seed) is not None:
            self.cache.forget(game_id)
            try:
                return self.fold(game_id)
            except Exception:  # the store is unreachable: answer from this fold (what was appended stands)
                log.warning("could not refold %s after the referee's entries; answering from the request's fold",
                            game_id, exc_info=True)
                return replayer
        self.cache.put(game_id, replayer)
        return replayer

    def created_entry(self, game_id: str) -> dict[str, Any]:
        """The game's ``created`` entry (immutable, so cached for good). 404 for an unknown game."""
        created = self._created.get(game_id)
        if created is None:
            self._check_id(game_id)
            try:
                created = self.store.read_log(game_id, 0, 1)[0]
            except GameNotFound as exc:
                raise _not_found(game_id) from exc
            if len(self._created) > 4096:
                self._created.clear()
            self._created[game_id] = created
        return created

    def _set_timer(self, game_id: str, replayer: LogReplayer) -> None:
        """Tell the deadline scheduler when to look at this game next (best effort: the replay worker sets
        it again from its own fold, so a failure here loses nothing)."""
        try:
            self.store.set_timer(game_id, next_alarm(replayer, now_ms()))
        except StoreUnavailable:
            log.warning("could not set the timer of %s; the replay worker will", game_id)
        except Exception:
            log.exception("could not set the timer of %s; the replay worker will", game_id)

    def _notify(self, game_id: str, appended: list[Appended]) -> None:
        notify_appended(self.dispatcher, game_id, appended)

    def _conflict(self, game_id: str, tip: Tip, signature: str | None, error: ServiceError) -> ServiceError:
        """``error``, unless the submission is simply already in the log (a client's retry): then a 409
        ``submission/duplicate`` naming its position."""
        position = self.store.find_submission(game_id, signature) if signature else None
        if position is not None:
            return ServiceError(409, "submission/duplicate",
                                f"this submission is already in the log at position {position}",
                                details={"position": position, "seq": tip.seq, "head": tip.head})
        return error

    def _stale(self, game_id: str, tip: Tip, signature: str | None, envelope: dict[str, Any]) -> ServiceError:
        """409 ``submission/stale``; the message names the stale field and the log's seq and head (as details)."""
        now = f"the log is at seq {tip.seq} with head {tip.head}"
        if envelope.get("seq") != tip.seq:
            message = f"stale seq: the envelope is for seq {envelope.get('seq')}, but {now}"
        else:
            message = f"stale prev: the envelope's prev {envelope.get('prev')} is not the log's head; {now}"
        return self._conflict(game_id, tip, signature, ServiceError(409, "submission/stale", message,
                            details={"seq": tip.seq, "head": tip.head}))

    def _authenticate(self, game_id: str, replayer: LogReplayer, submission: dict[str, Any]) -> int:
        """The seat of a signed submission whose binding to this game and signature hold; else the error."""
        envelope, sig = submission["envelope"], submission["sig"]
        if envelope["game"] != game_id:
            raise ServiceError(403, "submission/wrong_game",
                               f"the envelope is bound to game {envelope['game']!r}, not {game_id!r}")
        keys = replayer.keys
        seat = envelope["seat"]
        if not 0 <= seat < len(keys):
            raise ServiceError(403, "submission/wrong_seat", f"this game has no seat {seat} ({len(keys)} seats)")
        if not verify(keys[seat], envelope, sig):
            others = [other for other, key in enumerate(keys) if other != seat and key != keys[seat]
                      and verify(key, envelope, sig)]
            if others:
                raise ServiceError(403, "submission/wrong_key",
                                   f"signed with seat {others[0]}'s key, not seat {seat}'s",
                                   details={"seat": seat, "signed_by": others[0]})
            raise ServiceError(401, "submission/bad_signature",
                               f"the signature is not seat {seat}'s key over this envelope")
        return seat

    def _append_submission(self, game_id: str, replayer: LogReplayer, entry: dict[str, Any],
                           submission: dict[str, Any]) -> tuple[LogReplayer, list[Appended]]:
        """Check ``entry`` on a copy of the fold, append it at the fold's position, then the referee's own
        due entries; returns the advanced copy (now cached) and what was appended."""
        trial = clone_replayer(replayer)
        envelope, sig = submission["envelope"], submission["sig"]
        seat_key = replayer.keys[envelope["seat"]]

        def checked_once(key: str, value: Any, signature: str) -> bool:
            # _authenticate verified exactly this (key, envelope, sig) already; other checks go to verify()
            return (key == seat_key and value is envelope and signature == sig) or verify(key, value, signature)

        trial.verifier = checked_once
        try:
            verdict = trial.feed(entry)
        finally:
            trial.verifier = verify
        if verdict.status == "rejected":
            raise from_verdict_error(verdict.error or {})
        # the game's next timer goes with the append (one write, one fsync); set again below only if the
        # referee's own entries follow
        timer = next_alarm(trial, now_ms()) if trial.clocks is not None and trial.clocks.running else KEEP_TIMER
        try:
            first = self.store.append(game_id, entry, replayer.head, signature=submission["sig"], timer=timer)
        except StaleAppend as exc:
            raise self._stale(game_id, Tip(exc.seq, exc.head), submission["sig"], submission["envelope"]) from exc
        except DuplicateSubmission as exc:
            raise ServiceError(409, "submission/duplicate",
                               f"this submission is already in the log at position {exc.position}",
                               details={"position": exc.position, "seq": exc.seq, "head": exc.head}) from exc
        except StoreUnavailable as exc:
            raise _unavailable(exc) from exc
        except GameNotFound as exc:
            raise _not_found(game_id) from exc
        try:
            more = append_system_entries(self.store, game_id, trial, trial.server_seed)
        except StoreUnavailable:  # the submission is logged; the worker appends what is due
            log.exception("could not append the referee's entries after %s:%s", game_id, first.position)
            more = []
        trial = self._settle(game_id, trial)
        appended = [first, *more]
        if more and trial.clocks is not None and trial.clocks.running:
            self._set_timer(game_id, trial)
        self._notify(game_id, appended)
        return trial, appended

    def _receipt(self, game_id: str, first: Appended, replayer: LogReplayer,
                 entry: dict[str, Any] | None = None) -> dict[str, Any]:
        """The 2xx body of a submission: where it went and, signed by the referee, the receipt that proves
        it is in the log at that position and time (CONTRACT section 8)."""
        out: dict[str, Any] = {"game": game_id, "position": first.position, "hash": first.head, "seq": replayer.seq,
                               "head": replayer.head, "status": replayer.status, "to_move": replayer.to_move()}
        if entry is not None:
            receipt = {"ctx": RECEIPT_CTX, "game": game_id, "seq": first.position, "hash": first.head,
                       "at": entry["at"]}
            out["receipt"] = receipt
            out["receipt_sig"] = sign(self.referee_key, receipt)
        clocks = clock_view_of(replayer)
        if clocks is not None:
            out["clocks"] = clocks
        return out

    def _enforce_deadline(self, game_id: str, replayer: LogReplayer, seat: int, envelope: dict[str, Any],
                          signature: str) -> str:
        """The server time (``at``) for a seat's submission at this position; if the seat to move is past
        its deadline, the timeout is written at this position instead (with what it entails) and the
        submission is refused: 409 ``time/expired`` for the seat that ran out of time, 409
        ``submission/stale`` for any other (the log has moved on)."""
        at_ms = now_ms()
        deadline = replayer.deadline_ms()
        if deadline is None or at_ms <= deadline:
            return format_ms(at_ms)
        trial = clone_replayer(replayer)
        try:
            written = append_system_entries(self.store, game_id, trial, trial.server_seed, now=at_ms)
        except StoreUnavailable as exc:
            raise _unavailable(exc) from exc
        if written:
            trial = self._settle(game_id, trial)  # a worker may have appended part of it first
            self._set_timer(game_id, trial)
            self._notify(game_id, written)
        tip = Tip(trial.seq, trial.head) if written else self.store.tip(game_id)
        if not written or seat != replayer.clocks.seat:  # type: ignore[union-attr]
            raise self._stale(game_id, tip, signature, envelope)
        raise ServiceError(409, "time/expired", f"seat {seat}'s time ran out at {format_ms(deadline)}; the timeout "
                           f"is logged at position {written[0].position}", "TC-T1",
                           details={"deadline": format_ms(deadline), "timeout": written[0].position,
                                    "seq": tip.seq, "head": tip.head})

    # -- create ---------------------------------------------------------------------------------------
    def create_game(self, spec: dict[str, Any], organiser: dict[str, str] | None = None, *,
                    tournament: str | None = None, adjudicator: str | None = None,
                    game_id: str | None = None) -> dict[str, Any]:
        """Create a game from a validated spec (``ruleset``, ``seats``, ``options``, ``deck``?, ``nonce``?).

        The tournament service (not the HTTP API) also passes the ``tournament`` the game belongs to, its
        ``adjudicator`` (the tournament's organiser key, who may decide an adjudication) and the game id
        its pairing named; all three are written into ``created``."""
        options = spec.get("options") or {}
        try:  # a 400 answers before any signature is looked at (CONTRACT section 6)
            time_control = resolve_time_control(options.get("time_control"))
        except TimeControlError as exc:
            raise ServiceError(400, "game/bad_time_control", str(exc), "TC-C1",
                               details={"problems": exc.problems}) from exc
        organiser_key = None
        if organiser is not None:
            organiser_key = organiser["key"]
            if self.organiser_keys and organiser_key not in self.organiser_keys:
                raise ServiceError(403, "organiser/not_allowed", "this key may not create games here")
            if not verify(organiser_key, {"v": 1, "ctx": CREATE_CTX, **spec}, organiser["sig"]):
                raise ServiceError(401, "organiser/bad_signature",
                                   "the organiser signature is not over {v: 1, ctx: 'referee/create', ...this body}")
        elif self.organiser_keys and tournament is None:  # a tournament's games are the referee's own
            raise ServiceError(401, "organiser/required",
                               "only organisers may create games here: sign the request (field 'organiser')")
        try:
            rules = ruleset(spec["ruleset"])
        except KeyError as exc:
            raise invalid([{"path": "$.ruleset", "problem": str(exc.args[0])}]) from exc
        except ImportError as exc:
            raise ServiceError(503, "ruleset/unavailable", f"the {spec['ruleset']} engine is not installed") from exc
        seats = spec["seats"]
        players = len(seats)
        if not rules.min_players <= players <= rules.max_players:
            raise invalid([{"path": "$.seats", "problem": f"{rules.name} is for {rules.min_players} to "
                                                          f"{rules.max_players} players, not {players}"}])
        deck = spec.get("deck")
        game_id = game_id or (signed_game_id(organiser["sig"]) if organiser else new_game_id())
        try:  # the engine is the judge of options and decks
            if deck is not None:
                rules.new_game(players, engine_options(options), deck=list(deck), seed=recorded_game_seed(game_id))
            else:
                rules.new_game(players, engine_options(options), seed=bytes(32))
        except (ValueError, TypeError, KeyError) as exc:
            where = "$.deck" if deck is not None and "deck" in str(exc) else "$.options"
            raise ServiceError(400, "game/bad_options", str(exc),
                               details={"problems": [{"path": where, "problem": str(exc)}]}) from exc
        payload: dict[str, Any] = {
            "game": game_id,
            "ruleset": {"name": rules.name, "version": rules.version},
            "seats": [{"name": seat["name"], "key": seat["key"]} for seat in seats],
            "options": options,  # verbatim: the organiser signed them (the verifier rebuilds the request)
            "time_control": time_control,  # resolved, defaults filled in (CONTRACT section 8)
            "organiser": organiser_key,
        }
        secret = None
        if deck is not None:
            payload.update(mode="recorded", deck=list(deck))
        else:
            secret = os.urandom(32)
            payload.update(mode="seeded", commitment=hashlib.sha256(secret).hexdigest())
        if organiser:
            payload["organiser_sig"] = organiser["sig"]
        if deck is None and self.accept_within and tournament is None:  # a tournament's round deadline decides
            payload["accept_by"] = format_ms(now_ms() + int(self.accept_within * 1000))
        if spec.get("nonce") is not None:
            payload["nonce"] = spec["nonce"]
        if tournament is not None:
            payload["tournament"] = tournament
        if adjudicator is not None:
            payload["adjudicator"] = adjudicator
        entry = make_entry("created", 0, "0" * 64, **payload)
        try:
            first = self.store.create(game_id, entry, secret)
        except GameExists as exc:
            raise ServiceError(409, "game/exists", f"game {game_id} exists already (this request was posted before)",
                               details={"game": game_id}) from exc
        except StoreUnavailable as exc:
            raise _unavailable(exc) from exc
        replayer = LogReplayer(server_seed=secret)
        replayer.feed(entry)
        more = append_system_entries(self.store, game_id, replayer, secret)
        replayer = self._settle(game_id, replayer)
        if replayer.accept_by_ms() is not None or (
                replayer.clocks is not None and replayer.clocks.running and replayer.status == ACTIVE):
            self._set_timer(game_id, replayer)
        self._notify(game_id, [first, *more])
        return {"game": game_id, "ruleset": payload["ruleset"], "mode": payload["mode"],
                "commitment": payload.get("commitment"), "seq": replayer.seq, "head": replayer.head,
                "status": replayer.status, "to_move": replayer.to_move()}

    # -- submissions ----------------------------------------------------------------------------------
    def accept(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A seat's signed acceptance (``ctx`` ``referee/accept``, 32 bytes of ``entropy``)."""
        replayer = self.fold_for(game_id, submission["envelope"])
        seat = self._authenticate(game_id, replayer, submission)
        envelope = submission["envelope"]
        tip = Tip(replayer.seq, replayer.head)
        if replayer.status != WAITING or (replayer.created or {}).get("mode") != "seeded":
            raise self._conflict(game_id, tip, submission["sig"], ServiceError(
                409, "game/not_waiting", f"the game is {replayer.status}, not waiting for acceptances"))
        if seat in replayer.entropies:
            raise self._conflict(game_id, tip, submission["sig"], ServiceError(
                409, "accept/duplicate", f"seat {seat} has already accepted"))
        if envelope["seq"] != tip.seq or envelope["prev"] != tip.head:
            raise self._stale(game_id, tip, submission["sig"], envelope)
        entry = make_entry("accepted", tip.seq, tip.head, seat=seat, submission=submission)
        advanced, appended = self._append_submission(game_id, replayer, entry, submission)
        return self._receipt(game_id, appended[0], advanced, entry)

    def submit_move(self, game_id: str, submission: dict[str, Any], wait: float | None = None, *,
                    legal: bool = False) -> tuple[int, dict[str, Any]]:
        """A seat's signed move: ``(202, receipt)``, or ``(200, receipt with verdict)`` when ``wait`` is given
        and the worker's verdict arrives in time. With ``legal`` the answer also holds the legal moves of
        the seat now to move, from the fold that checked this move: a client needs no second request."""
        replayer = self.fold_for(game_id, submission["envelope"])
        seat = self._authenticate(game_id, replayer, submission)
        envelope = submission["envelope"]
        tip = Tip(replayer.seq, replayer.head)
        if replayer.status != ACTIVE:
            raise self._conflict(game_id, tip, submission["sig"], ServiceError(
                409, "game/not_active", f"the game is {replayer.status}; it takes no moves",
                details={"status": replayer.status}))
        if envelope["seq"] != tip.seq or envelope["prev"] != tip.head:
            raise self._stale(game_id, tip, submission["sig"], envelope)
        at = self._enforce_deadline(game_id, replayer, seat, envelope, submission["sig"])
        to_move = replayer.to_move()
        if seat != to_move:
            raise ServiceError(403, "move/not_your_turn", f"seat {to_move} is to move, not seat {seat}",
                               details={"to_move": to_move})
        entry = make_entry("move", tip.seq, tip.head, at=at, seat=seat, submission=submission)
        advanced, appended = self._append_submission(game_id, replayer, entry, submission)
        receipt = self._receipt(game_id, appended[0], advanced, entry)
        if legal:
            game = advanced.game
            receipt["legal_moves"] = game.legal_moves() if game is not None and advanced.status == ACTIVE else []
        if wait:
            verdict = self.wait_for_verdict(game_id, appended[0].position, min(wait, self.max_wait))
            if verdict is not None:
                return 200, {**receipt, "verdict": verdict}
        return 202, receipt

    def vacation(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A seat's signed vacation request (``ctx`` ``referee/vacation``, ``seconds`` from now): its clock
        stops for that long, within its allowance (CONTRACT section 8, TC-V1)."""
        replayer = self.fold_for(game_id, submission["envelope"])
        seat = self._authenticate(game_id, replayer, submission)
        envelope = submission["envelope"]
        tip = Tip(replayer.seq, replayer.head)
        clocks = replayer.clocks
        if replayer.status != ACTIVE:
            raise self._conflict(game_id, tip, submission["sig"], ServiceError(
                409, "game/not_active", f"the game is {replayer.status}; no vacation to take",
                details={"status": replayer.status}))
        if clocks is None or not clocks.running:
            raise ServiceError(409, "time/no_clock", "this game has no clock: there is no vacation to take", "TC-V1")
        if envelope["seq"] != tip.seq or envelope["prev"] != tip.head:
            raise self._stale(game_id, tip, submission["sig"], envelope)
        at = self._enforce_deadline(game_id, replayer, seat, envelope, submission["sig"])
        entry = make_entry("vacation", tip.seq, tip.head, at=at, seat=seat, submission=submission)
        advanced, appended = self._append_submission(game_id, replayer, entry, submission)
        return self._receipt(game_id, appended[0], advanced, entry)

    def abort(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """End a seeded game early and reveal its seed: signed (``ctx`` ``referee/abort``) by the organiser
        recorded in ``created``, or by any seat when the game has no organiser."""
        replayer = self.fold(game_id)
        created = replayer.created or {}
        envelope, sig = submission["envelope"], submission["sig"]
        if envelope["game"] != game_id:
            raise ServiceError(403, "submission/wrong_game",
                               f"the envelope is bound to game {envelope['game']!r}, not {game_id!r}")
        allowed = [created["organiser"]] if created.get("organiser") else replayer.keys
        if not any(verify(key, envelope, sig) for key in allowed):
            who = "the organiser" if created.get("organiser") else "a seat"
            raise ServiceError(401, "submission/bad_signature", f"an abort must be signed by {who} of this game")
        if created.get("mode") != "seeded":
            raise ServiceError(409, "game/recorded", "a recorded game has no seed to reveal; it cannot be aborted")
        if created.get("tournament"):  # its round could never close; the tournament decides at its deadline
            raise ServiceError(409, "game/in_tournament", f"a game of tournament {created['tournament']} ends by play, "
                               "timeout or adjudication, not by an abort")
        if replayer.status in (FINISHED, ABORTED):
            raise ServiceError(409, "game/over", f"the game is already {replayer.status}")
        tip = Tip(replayer.seq, replayer.head)
        if envelope["seq"] != tip.seq or envelope["prev"] != tip.head:
            raise self._stale(game_id, tip, None, envelope)
        secret = replayer.server_seed or self.store.read_secret(game_id)
        if secret is None:
            raise ServiceError(500, "game/no_secret", "the server seed of this game is missing")
        entry = make_entry("revealed", tip.seq, tip.head, server_seed=secret.hex(), reason="aborted",
                           abort=submission)
        trial = clone_replayer(replayer)
        trial.feed(entry)
        try:
            first = self.store.append(game_id, entry, tip.head, signature=sig)
        except StaleAppend as exc:
            raise self._stale(game_id, Tip(exc.seq, exc.head), sig, envelope) from exc
        except DuplicateSubmission as exc:
            raise ServiceError(409, "submission/duplicate", "this abort is already in the log",
                               details={"position": exc.position, "seq": exc.seq, "head": exc.head}) from exc
        except StoreUnavailable as exc:
            raise _unavailable(exc) from exc
        self.cache.put(game_id, trial)
        self._notify(game_id, [first])
        return self._receipt(game_id, first, trial)

    def adjudicate(self, game_id: str, method: str, reason: str, ranks: list[int] | None = None,
                   decision: dict[str, Any] | None = None) -> dict[str, Any]:
        """End a running game by adjudication (CONTRACT section 10): ``provisional`` (the engine's
        ``provisional_result()`` of the position) or ``organiser`` (the ranks of the adjudicator's signed
        ``referee/adjudicate`` decision). Appended at the log's end like every referee entry; the fold
        checks it (409 when the game is not running, 403 for a decision not signed by the adjudicator)."""
        payload: dict[str, Any] = {"method": method, "reason": reason}
        if method == "organiser":
            payload.update(ranks=ranks, decision=decision)

        def refused(error: dict[str, Any]) -> ServiceError:
            status = {"game/not_active": 409, "adjudication/bad_signature": 403}.get(error.get("code"), 400)
            return ServiceError(status, error.get("code", "adjudication/invalid"), error.get("message", ""))

        first, trial = self._append_at_end(game_id, "adjudicated", payload, refused,
                                           "the game kept moving; try the adjudication again")
        return {**self._receipt(game_id, first, trial), "result": trial.result()}

    def withdraw_seat(self, game_id: str, seat: int, tournament: str) -> dict[str, Any]:
        """The seat's player withdrew from ``tournament``: the seat is forfeited in this game (``forfeited``
        with reason ``withdrawn``); the referee plays its turns by default moves from now on, or the game ends
        when fewer than two seats stand (TC-F1, TC-F2)."""
        first, trial = self._append_at_end(
            game_id, "forfeited", {"seat": seat, "reason": "withdrawn", "tournament": tournament},
            lambda error: ServiceError(409, error.get("code", "withdrawal/invalid"), error.get("message", "")),
            "the game kept moving; try again")
        return self._receipt(game_id, first, trial)

    def _append_at_end(self, game_id: str, kind: str, payload: dict[str, Any],
                       refused: Callable[[dict[str, Any]], ServiceError],
                       stale_message: str) -> tuple[Appended, LogReplayer]:
        """A referee entry ``kind`` at the log's end, checked by the fold first (``refused(error)`` is raised
        for a rejected one), then what it entails; a move that lands first is simply folded and the entry
        tried again after it (5 times)."""
        for _attempt in range(5):
            replayer = self.fold(game_id)
            entry = make_entry(kind, replayer.seq, replayer.head, **payload)
            trial = clone_replayer(replayer)
            verdict = trial.feed(entry)
            if verdict.status == "rejected":
                raise refused(verdict.error or {})
            try:
                first = self.store.append(game_id, entry, replayer.head)
            except StaleAppend:
                continue  # a move landed first: try again after it
            except StoreUnavailable as exc:
                raise _unavailable(exc) from exc
            more = append_system_entries(self.store, game_id, trial, trial.server_seed)
            trial = self._settle(game_id, trial)
            self._set_timer(game_id, trial)
            self._notify(game_id, [first, *more])
            return first, trial
        raise ServiceError(409, "submission/stale", stale_message)

    def adjudicate_signed(self, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /games/{id}/adjudicate``: the adjudicator's (or organiser's) signed decision."""
        envelope, sig = body["envelope"], body["sig"]
        if envelope["game"] != game_id:
            raise ServiceError(403, "submission/wrong_game",
                               f"the envelope is bound to game {envelope['game']!r}, not {game_id!r}")
        replayer = self.fold(game_id)
        signers = replayer.adjudicator_keys()
        if not signers:
            raise ServiceError(403, "adjudication/no_adjudicator", "this game has no organiser or adjudicator")
        if not any(verify(key, envelope, sig) for key in signers):
            raise ServiceError(401, "adjudication/bad_signature",
                               "the decision is not signed by this game's adjudicator or organiser")
        if envelope.get("method", "organiser") == "organiser":
            if envelope.get("ranks") is None:
                raise invalid([{"path": "$.envelope.ranks", "problem": "an organiser's decision gives the ranks"}])
            return self.adjudicate(game_id, "organiser", envelope["reason"], envelope["ranks"], body)
        return self.adjudicate(game_id, "provisional", envelope["reason"])

    def wait_for_verdict(self, game_id: str, position: int, timeout: float) -> dict[str, Any] | None:
        """The worker's verdict on ``position`` once its projection covers it, or ``None`` after ``timeout``."""
        return self.store.wait_for_verdict(game_id, position, max(0.0, timeout))

    # -- reads -----------------------------------------------------------------------------------------
    def _describe(self, game_id: str, created: dict[str, Any], projection: dict[str, Any]) -> dict[str, Any]:
        accepted = set(projection.get("accepted") or [])
        mode = created.get("mode")
        clocks = clock_view(projection.get("clocks"), len(created["seats"]), now_ms())
        return {
            "game": game_id,
            "ruleset": created["ruleset"],
            "mode": mode,
            "commitment": created.get("commitment"),
            "organiser": created.get("organiser"),
            "options": created.get("options") or {},
            "created_at": created["at"],
            "seats": [{"seat": i, "name": seat["name"], "key": seat["key"],
                       "accepted": mode == "recorded" or i in accepted,
                       **({"clock": clocks[i]} if clocks is not None else {})}
                      for i, seat in enumerate(created["seats"])],
            "time_control": time_control_of(created),
            "status": projection["status"],
            "to_move": projection["to_move"],
            "seq": projection["seq"],
            "head": projection["head"],
        }

    def game_state(self, game_id: str) -> dict[str, Any]:
        """``GET /games/{id}``: from the worker's projection when it is up to date, else from a fold here."""
        created = self.created_entry(game_id)
        try:
            tip = self.store.tip(game_id)
        except GameNotFound as exc:
            raise _not_found(game_id) from exc
        projection = self.store.read_projection(game_id)
        source = "worker"
        if projection is None or projection["seq"] != tip.seq or projection["head"] != tip.head:
            projection = projection_of(self.fold(game_id))
            source = "web"
        return {**self._describe(game_id, created, projection), "state": projection["view"],
                "last_verdict": projection["last_verdict"], "version_mismatch": projection["version_mismatch"],
                "blocked": projection["blocked"], "projection": source}

    def list_games(self, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """``GET /games``: newest first, from the stored projections (a game that has none yet is folded here)."""
        out = []
        for game_id in self.store.list_games(offset, limit):
            try:
                created = self.created_entry(game_id)
                projection = self.store.read_projection(game_id) or projection_of(self.fold(game_id))
            except ServiceError:
                continue
            if projection.get("status") == EXPIRED:
                continue  # a game never accepted in time leaves the lobby
            summary = self._describe(game_id, created, projection)
            summary.pop("options")
            out.append(summary)
        return out

    def legal_moves(self, game_id: str) -> dict[str, Any]:
        replayer = self.fold(game_id)
        game = replayer.game
        moves = game.legal_moves() if game is not None and replayer.status == ACTIVE else []
        return {"game": game_id, "status": replayer.status, "to_move": replayer.to_move(), "seq": replayer.seq,
                "head": replayer.head, "moves": moves}

    def log_page(self, game_id: str, start: int = 0, limit: int = 100) -> dict[str, Any]:
        self._check_id(game_id)
        try:
            entries, tip = self.store.read_log(game_id, start, limit), self.store.tip(game_id)
        except GameNotFound as exc:
            raise _not_found(game_id) from exc
        following = start + len(entries)
        return {"game": game_id, "from": start, "total": tip.seq, "head": tip.head, "entries": entries,
                "next": following if following < tip.seq else None}

    def replay(self, game_id: str, start: int = 0, limit: int | None = None, at: int | None = None
               ) -> dict[str, Any]:
        """Entries with their verdicts and the public state after each (from a fresh fold)."""
        self._check_id(game_id)
        try:
            tip = self.store.tip(game_id)
            if at is not None:
                if at >= tip.seq:
                    raise ServiceError(404, "replay/no_such_entry", f"the log has {tip.seq} entries; no entry {at}")
                steps = fold_with_states(self.store, game_id, at + 1)[at:]
                start = at
            else:
                stop = None if limit is None else start + limit
                steps = fold_with_states(self.store, game_id, stop)[start:]
        except GameNotFound as exc:
            raise _not_found(game_id) from exc
        except LogError as exc:
            raise ServiceError(500, "log/corrupt", str(exc)) from exc
        following = start + len(steps)
        return {"game": game_id, "from": start, "total": tip.seq, "steps": steps,
                "next": following if at is None and following < tip.seq else None}

    def result(self, game_id: str) -> dict[str, Any]:
        """``GET /result``: the engine's result once the game is finished (409 before)."""
        state = self.game_state(game_id)
        if state["status"] != FINISHED:
            raise ServiceError(409, "game/not_finished", f"the game is {state['status']}; no result yet",
                               details={"status": state["status"], "seq": state["seq"]})
        projection = self.store.read_projection(game_id)
        if projection is not None and projection.get("result") is not None and projection["seq"] == state["seq"]:
            result = projection["result"]
        else:
            result = self.fold(game_id).result()
        return {"game": game_id, "ruleset": state["ruleset"], "status": state["status"], "seq": state["seq"],
                "head": state["head"], "version_mismatch": state["version_mismatch"], "result": result}


def clock_view_of(replayer: LogReplayer) -> list[dict[str, Any]] | None:
    """The seats' clocks of a fold, as ``GET /games/{id}`` shows them, at the current server time."""
    if replayer.clocks is None or not replayer.clocks.running:
        return None
    return replayer.clocks.view(now_ms())


__all__ = ["ABORT_CTX", "ACCEPT_CTX", "CREATE_CTX", "MOVE_CTX", "VACATION_CTX", "Dispatcher", "GameService",
           "InlineDispatch", "NoDispatch"]
