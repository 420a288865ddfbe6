"""A game's life from creation to its end, besides play (CONTRACT sections 3, 4, 6 and 10): creating it
(the referee's ``started`` follows at once for a recorded game, after the last acceptance for a seeded
one), the seats' signed acceptances (through the one submission path of ``submissions``), and the ends
that are not play: an abort that reveals the seed, an adjudication, a tournament seat's withdrawal. An
unaccepted game's ``expired`` is the referee's own entry (``entries.due_system_entry``)."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from typing import Any

from ..clock import now_ms
from ..errors import ServiceError, invalid
from ..games import ruleset
from ..games.randomness import recorded_game_seed
from ..protocol.signing import CREATE_CTX, verify
from ..replay import ABORT_STARTED, ABORTED, ACTIVE, FINISHED, WAITING, LogReplayer, seat_kind
from ..store import DuplicateSubmission, GameExists, StaleAppend, StoreUnavailable
from ..store.base import Appended, Tip
from ..timecontrol import TimeControlError, engine_options, format_ms
from ..timecontrol import resolve as resolve_time_control
from .core import new_game_id, signed_game_id, unavailable
from .entries import append_system_entries, make_entry
from .folds import clone_replayer
from .players import index_players
from .projection import open_listing
from .submissions import Submissions

log = logging.getLogger(__name__)



def _accept_state(replayer: LogReplayer, seat: int) -> ServiceError | None:
    if replayer.status != WAITING or (replayer.created or {}).get("mode") != "seeded":
        return ServiceError(409, "game/not_waiting", f"the game is {replayer.status}, not waiting for acceptances")
    if seat in replayer.entropies:
        return ServiceError(409, "accept/duplicate", f"seat {seat} has already accepted")
    return None


class Lifecycle(Submissions):
    """Creates games, takes acceptances and aborts, adjudicates, forfeits a withdrawn seat."""

    # -- create ---------------------------------------------------------------------------------------
    def create_game(self, spec: dict[str, Any], organiser: dict[str, str] | None = None, *,
                    tournament: str | None = None, adjudicator: str | None = None,
                    game_id: str | None = None, creator: dict[str, str] | None = None,
                    rematch: dict[str, Any] | None = None) -> dict[str, Any]:
        """Create a game from a validated spec (``ruleset``, ``seats``, ``options``, ``deck``?, ``nonce``?).

        The tournament service (not the HTTP API) also passes the ``tournament`` the game belongs to, its
        ``adjudicator`` (the tournament's organiser key, who may decide an adjudication) and the game id
        its pairing named; all three are written into ``created``. The rematch service (``rematch``) passes
        ``{"of": {game, head}, "ask": the seat's signed ask}``: written as ``rematch_of`` and ``rematch``, and, like a
        tournament's game, the referee's own (no organiser needed).

        A seat may be open (CONTRACT section 14): ``{"name"?, "invite": key}`` or ``{"open": true, "name"?}``.
        A game with an open seat is created by a signed request: ``creator`` ``{key, sig}`` (or ``organiser``,
        whose signature serves as the creator's), ``sig`` over ``{v: 1, ctx: 'referee/create', ...the body
        without creator}``; ``created`` keeps ``creator`` and ``creator_sig``, and the game id is the
        signature's. A game without a ``creator`` is created exactly as before.

        :raises ServiceError: the first that applies of
            400 ``game/bad_time_control`` (``options.time_control``; ``details.problems``, before any
            signature is looked at);
            403 ``organiser/not_allowed`` (a key not among the organisers'), 401 ``organiser/bad_signature``,
            401 ``organiser/required`` (unsigned where only organisers may create games);
            401 ``creator/required`` (an open seat, no signed request), 401 ``creator/bad_signature``;
            400 ``request/invalid`` (an unknown ruleset, a number of seats the ruleset does not take;
            ``details.problems``), 503 ``ruleset/unavailable`` (its engine is not installed);
            400 ``game/bad_options`` (options or deck the engine refuses);
            409 ``creator/too_many_open`` (the signer has ``max_open_games`` open games already);
            409 ``game/exists`` (this signed request was posted before: the id is the signature's);
            503 ``log/unavailable`` (the store could not take the ``created`` entry).
        """
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
        elif self.organiser_keys and tournament is None and rematch is None:  # the referee's own games
            raise ServiceError(401, "organiser/required",
                               "only organisers may create games here: sign the request (field 'organiser')")
        if creator is not None:
            if not verify(creator["key"], {"v": 1, "ctx": CREATE_CTX, **spec}, creator["sig"]):
                raise ServiceError(401, "creator/bad_signature",
                                   "the creator signature is not over {v: 1, ctx: 'referee/create', ...this body}")
        elif organiser is None and any(seat_kind(seat) != "key" for seat in spec["seats"]):
            raise ServiceError(401, "creator/required", "a game with an open seat is created by a signed request: "
                               "sign it (field 'creator')")
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
        signer = organiser or creator
        game_id = game_id or (signed_game_id(signer["sig"]) if signer else new_game_id())
        try:  # the engine is the judge of options and decks
            if deck is not None:
                rules.new_game(players, engine_options(options), deck=list(deck), seed=recorded_game_seed(game_id))
            else:
                rules.new_game(players, engine_options(options), seed=bytes(32))
        except (ValueError, TypeError, KeyError) as exc:
            where = "$.deck" if deck is not None and "deck" in str(exc) else "$.options"
            raise ServiceError(400, "game/bad_options", str(exc),
                               details={"problems": [{"path": where, "problem": str(exc)}]}) from exc
        if signer is not None and any(seat_kind(seat) == "open" for seat in seats):  # a 409: after every 400
            self._within_open_games(signer["key"])
        payload: dict[str, Any] = {
            "game": game_id,
            "ruleset": {"name": rules.name, "version": rules.version},
            "seats": [{"name": seat["name"], "key": seat["key"], **({"bot": seat["bot"]} if "bot" in seat else {})}
                      if seat_kind(seat) == "key" else dict(seat)
                      for seat in seats],  # ``bot``, an open seat as given: the organiser or creator signed them
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
        if creator:
            payload.update(creator=creator["key"], creator_sig=creator["sig"])
        if deck is None and self.accept_within and tournament is None:  # a tournament's round deadline decides
            payload["accept_by"] = format_ms(now_ms() + int(self.accept_within * 1000))
        if spec.get("nonce") is not None:
            payload["nonce"] = spec["nonce"]
        if tournament is not None:
            payload["tournament"] = tournament
        if adjudicator is not None:
            payload["adjudicator"] = adjudicator
        if rematch is not None:
            payload.update(rematch_of=rematch["of"], rematch=rematch["ask"])
        entry = make_entry("created", 0, "0" * 64, **payload)
        try:
            first = self.store.create(game_id, entry, secret)
        except GameExists as exc:
            raise ServiceError(409, "game/exists", f"game {game_id} exists already (this request was posted before)",
                               details={"game": game_id}) from exc
        except StoreUnavailable as exc:
            raise unavailable(exc) from exc
        index_players(self.store, game_id, entry)
        replayer = LogReplayer(server_seed=secret)
        replayer.feed(entry)
        self._list_if_open(game_id, replayer)
        more = append_system_entries(self.store, game_id, replayer, secret)
        replayer = self._settle(game_id, replayer)
        if replayer.accept_by_ms() is not None or (
                replayer.clocks is not None and replayer.clocks.running and replayer.status == ACTIVE):
            self._set_timer(game_id, replayer)
        self._notify(game_id, [first, *more])
        return {"game": game_id, "ruleset": payload["ruleset"], "mode": payload["mode"],
                "commitment": payload.get("commitment"), "seq": replayer.seq, "head": replayer.head,
                "status": replayer.status, "to_move": replayer.to_move()}

    def _within_open_games(self, creator: str) -> None:
        """409 ``creator/too_many_open`` when ``creator`` has ``max_open_games`` open games already (CONTRACT section
        14: a key holds at most that many waiting games with a seat open to anyone that it created)."""
        if self.max_open_games is None:
            return
        try:
            count = self.store.count_open_games(creator)
        except Exception:  # the listing is derived data: its loss must not stop creation
            log.warning("could not count the open games of %s", creator, exc_info=True)
            return
        if count >= self.max_open_games:
            raise ServiceError(409, "creator/too_many_open",
                               f"this key has {count} open games waiting for players already (at most "
                               f"{self.max_open_games}): cancel one, or wait until its seats are taken",
                               details={"limit": self.max_open_games, "open": count})

    def _list_if_open(self, game_id: str, replayer: LogReplayer) -> None:
        """List a new game among the open games at once (the replay workers' projection writes keep it from then
        on); best effort, as the players' index is."""
        listing = open_listing(replayer)
        if listing is None or not listing["open"]:
            return
        try:
            self.store.list_open_games([(game_id, listing["creator"], listing["created_ms"])])
        except Exception:
            log.exception("could not list game %s among the open games; its projection will", game_id)

    def accept(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A seat's signed acceptance (``ctx`` ``referee/accept``, 32 bytes of ``entropy``).

        :raises ServiceError: the first that applies of
            404 ``game/not_found``, 500 ``log/corrupt`` (reading the log);
            403 ``submission/wrong_game``, 403 ``submission/wrong_seat``, 401 ``submission/bad_signature``,
            403 ``submission/wrong_key`` (the envelope's binding and signature);
            409 ``game/not_waiting`` (started, over, or a recorded game), 409 ``accept/duplicate`` (the seat
            has accepted already) — 409 ``submission/duplicate`` instead of either when this very
            submission is in the log (``details.position``);
            409 ``submission/stale`` (``seq``/``prev`` are not the log's; ``details`` has its ``seq`` and
            ``head``) or ``submission/duplicate``;
            the fold's verdict: 400 ``accept/bad_entropy``, 409 ``game/expired`` (past ``accept_by``);
            409 ``submission/stale`` or ``submission/duplicate`` when the log moved on before the append,
            503 ``log/unavailable`` when the store could not take it.
        """
        receipt, _advanced, _appended = self._submit(game_id, submission, "accepted", _accept_state, clocked=False)
        return receipt

    def abort(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """End a seeded game early and reveal its seed: signed (``ctx`` ``referee/abort``) by the organiser
        recorded in ``created``, or by any seat when the game has no organiser and has not started (once it is
        under way, a seat's abort is an offer the others accept: DC-A1).

        :raises ServiceError: the first that applies of
            404 ``game/not_found``, 500 ``log/corrupt`` (reading the log);
            403 ``submission/wrong_game``, 401 ``submission/bad_signature`` (not the organiser's or a seat's);
            409 ``game/recorded`` (no seed to reveal), 409 ``game/in_tournament``, 409 ``game/over``,
            409 ``abort/started`` (a seat alone, once the game has started: the others must agree, DC-A1);
            409 ``submission/stale`` (``seq``/``prev`` are not the log's);
            500 ``game/no_secret`` (the server seed is missing);
            409 ``submission/stale`` or ``submission/duplicate`` when the log moved on before the append,
            503 ``log/unavailable`` when the store could not take it.
        """
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
        if not created.get("organiser") and replayer.status != WAITING:  # the fold refuses it too (DC-A1)
            raise ServiceError(409, "abort/started", ABORT_STARTED,
                               details={"offer": f"POST /games/{game_id}/offers with offer 'abort'"})
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
            raise unavailable(exc) from exc
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
            status = {"game/not_active": 409, "adjudication/bad_signature": 403}.get(error.get("code") or "", 400)
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
                raise unavailable(exc) from exc
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
