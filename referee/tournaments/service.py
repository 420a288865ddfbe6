"""The tournament lifecycle between the HTTP API, the log store and the games (CONTRACT section 10).

One write path, as for games (``referee.games_service``): check a submission against the fold of the
tournament's log (:class:`~referee.tournaments.log.TournamentReplayer`, the same fold the verifier
uses), seal the entry for the position the fold is at, and append it atomically at exactly that position
(``APPEND_ENTRY``); a stale position is a 409 for a player's submission and a refold-and-retry for the
referee's own entries.

What the referee owes a tournament's log is written by :meth:`TournamentService.advance`, which anyone
may call any number of times (each step is an atomic append at an expected position, so two callers
never write twice):

* ``game_finished`` / ``adjudicated`` for each game of the open round that has ended (its log final: the
  seed revealed), read from the game's own fold (``LogReplayer.result()``);
* what :meth:`TournamentReplayer.due` says: ``paired`` (then the round's games are created through
  :class:`~referee.games_service.GameService` with the game ids the pairing names; a crash in between is
  repaired by the next ``advance``, which creates any missing game of the open round), ``round_closed``
  (reason ``deadline`` once the round's deadline has passed, else ``complete``), ``finished`` and
  ``revealed``.

Who calls :meth:`advance`: the join that completes the roster; the replay worker each time it has
folded a finished game whose ``created`` names a tournament (``workers/projector.py``, ``on_finished``);
the deadline scheduler at a round's deadline (``workers/deadlines.py``: the member
``tournament:<id>`` of ``referee:timers``), which first adjudicates the round's unfinished games; and an
organiser's decision (``POST /tournaments/{id}/adjudicate``).
"""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import io
import logging
import os
import threading
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..clock import now, now_ms
from ..games import ruleset
from ..games_service import GameService
from ..games_service.entries import make_entry
from ..games_service.errors import ServiceError, invalid
from ..notify.events import tournament_round_events
from ..replay import FINISHED as GAME_FINISHED
from ..replay import LogError
from ..signing import verify
from ..store import DuplicateSubmission, GameExists, GameNotFound, StaleAppend, StoreUnavailable
from ..store.base import LogStore
from ..store.keys import TOURNAMENT_TIMER, valid_game_id
from ..timecontrol import TimeControlError, engine_options, format_ms, parse_ms
from ..timecontrol import resolve as resolve_time_control
from .certificate import CertificateError, build_certificate
from .log import TournamentReplayer, finished_payload
from .ratings import rate_games
from .spec import TOURNAMENT_CTX, SpecError, resolve_tournament
from .state import ACTIVE, WAITING

log = logging.getLogger(__name__)

#: HTTP status of the fold's rejection codes (anything else: 400)
STATUS_BY_CODE = {
    "submission/wrong_tournament": 403,
    "submission/bad_signature": 401,
    "join/not_player": 403,
    "withdraw/not_player": 403,
    "submission/stale": 409,
    "join/duplicate": 409,
    "withdraw/duplicate": 409,
    "tournament/not_waiting": 409,
    "tournament/not_active": 409,
    "game/not_open": 409,
    "adjudication/method": 409,
}


def new_tournament_id() -> str:
    """``t_`` and 16 random base32 characters (80 bits)."""
    return "t_" + base64.b32encode(os.urandom(10)).decode("ascii").lower()


def signed_tournament_id(signature: str) -> str:
    """Id of an organiser-signed tournament, derived from its signature (posting it twice makes one)."""
    return "t_" + base64.b32encode(hashlib.sha256(signature.encode("ascii")).digest()[:10]).decode("ascii").lower()


def table_game_id(tournament_id: str, round_no: int, table: int) -> str:
    """The game id of table ``table`` (1-based) of round ``round_no``: ``<tournament>-r<round>-t<table>``."""
    return f"{tournament_id}-r{round_no}-t{table}"


def _not_found(tournament_id: str) -> ServiceError:
    return ServiceError(404, "tournament/not_found", f"no tournament {tournament_id!r}")


def _unavailable(exc: Exception) -> ServiceError:
    return ServiceError(503, "log/unavailable", f"the log could not be written durably: {exc}")


def _cell(text: str) -> str:
    """A name as a CSV cell that a spreadsheet will not run as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _game_revealed(game: Any) -> bool:
    """Whether a finished game's log is final: its seed revealed (seeded games) or recorded mode."""
    if (game.created or {}).get("mode") != "seeded":
        return True
    return bool(game.revealed)


class TournamentService:
    """Creates tournaments, takes joins, withdrawals and organiser decisions, writes the referee's own entries
    and answers reads; one per app (and one in each worker process)."""

    def __init__(self, store: LogStore, games: GameService, organiser_keys: list[str] | None = None,
                 referee_key: Ed25519PrivateKey | None = None):
        self.store = store
        self.games = games
        self.organiser_keys = list(organiser_keys or [])
        self.referee_key = referee_key or games.referee_key
        self._folds: dict[str, TournamentReplayer] = {}
        self._lock = threading.Lock()
        self._ratings: dict[str, tuple[Any, list[dict[str, Any]]]] = {}

    # -- the fold -------------------------------------------------------------------------------------
    def fold(self, tournament_id: str) -> TournamentReplayer:
        """A private, current fold of the tournament's log (with the server seed). 404 when unknown."""
        if not valid_game_id(tournament_id):
            raise _not_found(tournament_id)
        with self._lock:
            cached = self._folds.get(tournament_id)
        try:
            if cached is None:
                cached = TournamentReplayer(server_seed=self.store.tournament_secret(tournament_id))
            else:
                cached = copy.deepcopy(cached)
            entries, _tip = self.store.read_tournament(tournament_id, cached.seq)
            for entry in entries:
                cached.feed(entry)
        except GameNotFound as exc:
            raise _not_found(tournament_id) from exc
        except LogError as exc:
            raise ServiceError(500, "log/corrupt", str(exc)) from exc
        self._keep(tournament_id, cached)  # keeps its own copy: ``cached`` is the caller's
        return cached

    def _keep(self, tournament_id: str, replayer: TournamentReplayer) -> None:
        with self._lock:
            current = self._folds.get(tournament_id)
            if current is None or current.seq <= replayer.seq:
                if len(self._folds) > 1024:
                    self._folds.clear()
                self._folds[tournament_id] = copy.deepcopy(replayer)

    def _append(self, tournament_id: str, replayer: TournamentReplayer, kind: str, *, signature: str | None = None,
                at: str | None = None, **payload: Any) -> dict[str, Any]:
        """Seal, check on ``replayer`` (advanced in place when it is ``ok``) and append; returns the entry.
        A rejected entry raises the fold's error; a moved log raises ``StaleAppend``."""
        entry = make_entry(kind, replayer.seq, replayer.head, at=at, **payload)
        prev = replayer.head
        verdict = replayer.feed(entry)
        if verdict.status == "rejected":
            error = verdict.error or {}
            code = error.get("code", "tournament/invalid")
            raise ServiceError(STATUS_BY_CODE.get(code, 400), code, error.get("message", code))
        try:
            self.store.append_tournament(tournament_id, entry, prev, signature=signature)
        except StoreUnavailable as exc:
            raise _unavailable(exc) from exc
        except GameNotFound as exc:
            raise _not_found(tournament_id) from exc
        self._keep(tournament_id, replayer)
        return entry

    # -- create ---------------------------------------------------------------------------------------
    def create(self, body: dict[str, Any], organiser: dict[str, str] | None = None) -> dict[str, Any]:
        """Create a tournament from a validated body (CONTRACT section 10); 201 body."""
        try:
            resolved = resolve_tournament(body)
        except SpecError as exc:
            raise invalid(exc.problems) from exc
        rules = ruleset(resolved["ruleset"]["name"])
        options = resolved["options"]
        try:  # the games' options must make games: checked now, not when round 1 is paired
            resolve_time_control(options.get("time_control"))
            rules.new_game(min(resolved["format"]["table_sizes"]), engine_options(options), seed=bytes(32))
        except TimeControlError as exc:
            raise ServiceError(400, "game/bad_time_control", str(exc), "TC-C1",
                               details={"problems": exc.problems}) from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise invalid([{"path": "$.options", "problem": str(exc)}]) from exc
        organiser_key = None
        if organiser is not None:
            organiser_key = organiser["key"]
            if self.organiser_keys and organiser_key not in self.organiser_keys:
                raise ServiceError(403, "organiser/not_allowed", "this key may not create tournaments here")
            if not verify(organiser_key, {"v": 1, "ctx": TOURNAMENT_CTX, **body}, organiser["sig"]):
                raise ServiceError(401, "organiser/bad_signature", "the organiser signature is not over "
                                   "{v: 1, ctx: 'referee/tournament', ...this body}")
        elif self.organiser_keys:
            raise ServiceError(401, "organiser/required",
                               "only organisers may create tournaments here: sign the request (field 'organiser')")
        if resolved["adjudication"] == "organiser" and organiser_key is None:
            raise invalid([{"path": "$.adjudication", "problem": "adjudication by the organiser needs an organiser "
                                                                 "(field 'organiser')"}])
        tournament_id = signed_tournament_id(organiser["sig"]) if organiser else new_tournament_id()
        secret = os.urandom(32)
        payload: dict[str, Any] = {"tournament": tournament_id, **resolved,
                                   "commitment": hashlib.sha256(secret).hexdigest(), "organiser": organiser_key}
        if organiser is not None:
            payload.update(organiser_sig=organiser["sig"], request=body)
        entry = make_entry("created", 0, "0" * 64, **payload)
        replayer = TournamentReplayer(server_seed=secret)
        try:
            replayer.feed(entry)
        except LogError as exc:
            raise invalid([{"path": "$", "problem": str(exc)}]) from exc
        try:
            self.store.create_tournament(tournament_id, entry, secret)
        except GameExists as exc:
            raise ServiceError(409, "tournament/exists", f"tournament {tournament_id} exists already (this "
                               "request was posted before)", details={"tournament": tournament_id}) from exc
        except StoreUnavailable as exc:
            raise _unavailable(exc) from exc
        self._keep(tournament_id, replayer)
        return {"tournament": tournament_id, "seq": replayer.seq, "head": replayer.head,
                "commitment": payload["commitment"], "status": replayer.status}

    # -- players' submissions --------------------------------------------------------------------------
    def _check_binding(self, tournament_id: str, replayer: TournamentReplayer, submission: dict[str, Any],
                       signers: list[str], who: str) -> None:
        """403 another tournament's envelope, 401 a signature by none of ``signers``."""
        envelope, sig = submission["envelope"], submission["sig"]
        if envelope["tournament"] != tournament_id:
            raise ServiceError(403, "submission/wrong_tournament",
                               f"the envelope is bound to tournament {envelope['tournament']!r}, not {tournament_id!r}")
        if not any(verify(key, envelope, sig) for key in signers if key):
            raise ServiceError(401, "submission/bad_signature", f"the signature is not {who}'s over this envelope")

    @staticmethod
    def _stale(replayer: TournamentReplayer) -> ServiceError:
        return ServiceError(409, "submission/stale", f"stale seq/prev: the log is at seq {replayer.seq} with head "
                            f"{replayer.head}", details={"seq": replayer.seq, "head": replayer.head})

    def _submit(self, tournament_id: str, replayer: TournamentReplayer, kind: str, submission: dict[str, Any],
                **payload: Any) -> dict[str, Any]:
        envelope = submission["envelope"]
        if envelope["seq"] != replayer.seq or envelope["prev"] != replayer.head:
            raise self._stale(replayer)
        try:
            entry = self._append(tournament_id, replayer, kind, signature=submission["sig"], submission=submission,
                                 **payload)
        except StaleAppend as exc:
            raise ServiceError(409, "submission/stale", "the log moved on; sign for the new position",
                               details={"seq": exc.seq, "head": exc.head}) from exc
        except DuplicateSubmission as exc:
            raise ServiceError(409, "submission/duplicate", f"this submission is already in the log at position "
                               f"{exc.position}", details={"position": exc.position, "seq": exc.seq,
                                                           "head": exc.head}) from exc
        return entry

    def join(self, tournament_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A player's signed acceptance (``ctx`` ``referee/join``, 32 bytes of entropy). After the last one
        round 1 is paired and its games are created."""
        replayer = self.fold(tournament_id)
        envelope = submission["envelope"]
        key = envelope["key"]
        self._check_binding(tournament_id, replayer, submission, [key], "the envelope key")
        if key not in replayer.keys:
            raise ServiceError(403, "join/not_player", "this key is no player of the tournament")
        if key in {k for k, _ in replayer.joins}:
            raise ServiceError(409, "join/duplicate", "this player has joined already")
        if replayer.status != WAITING:
            raise ServiceError(409, "tournament/not_waiting", f"the tournament is {replayer.status}")
        entry = self._submit(tournament_id, replayer, "joined", submission, key=key)
        self.advance(tournament_id)
        return self._receipt(tournament_id, entry)

    def withdraw(self, tournament_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A player's withdrawal (``ctx`` ``referee/withdraw``), signed by the player or the organiser: the
        player is paired no more; games already running go on (docs/tournaments.md)."""
        replayer = self.fold(tournament_id)
        envelope = submission["envelope"]
        key = envelope["key"]
        organiser = (replayer.created or {}).get("organiser")
        self._check_binding(tournament_id, replayer, submission, [key, organiser], "the player's or the organiser")
        if key not in replayer.keys:
            raise ServiceError(403, "withdraw/not_player", "this key is no player of the tournament")
        if key in replayer.withdrawn:
            raise ServiceError(409, "withdraw/duplicate", "this player has withdrawn already")
        if replayer.status != ACTIVE:
            raise ServiceError(409, "tournament/not_active", f"the tournament is {replayer.status}")
        entry = self._submit(tournament_id, replayer, "withdrawn", submission, key=key)
        self._withdraw_from_games(tournament_id, key)
        self.advance(tournament_id)
        return self._receipt(tournament_id, entry)

    def _withdraw_from_games(self, tournament_id: str, key: str) -> list[str]:
        """The withdrawn player's running games of the open round, as ``created.withdrawal`` declares: the
        seat is forfeited there (default moves), and with ``adjudicate`` the game is adjudicated at once."""
        replayer = self.fold(tournament_id)
        mode = (replayer.created or {}).get("withdrawal", "default_moves")
        rnd = replayer.open_round()
        done = []
        for table in rnd.tables if rnd is not None else []:
            if key not in table["players"] or table["game"] in rnd.results:
                continue
            game_id = table["game"]
            try:
                game = self.games.fold(game_id)
                if game.status == "active":
                    self.games.withdraw_seat(game_id, table["players"].index(key), tournament_id)
                    done.append(game_id)
                if mode == "adjudicate" and self.games.fold(game_id).status in ("active", "waiting"):
                    self.games.adjudicate(game_id, "provisional", "a player withdrew from the tournament")
            except ServiceError as exc:  # the round deadline settles it; the withdrawal stands
                log.warning("tournament %s: withdrawal from %s: %s", tournament_id, game_id, exc)
        return done

    def adjudicate_signed(self, tournament_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The organiser's signed decision on a game of the open round (``ctx`` ``referee/adjudicate``, bound
        to the tournament's seq/prev): written as ``adjudicated`` into the game's log, then the tournament's."""
        replayer = self.fold(tournament_id)
        created = replayer.created or {}
        envelope = body["envelope"]
        organiser = created.get("organiser")
        if envelope["tournament"] != tournament_id:
            raise ServiceError(403, "submission/wrong_tournament",
                               f"the envelope is bound to tournament {envelope['tournament']!r}, not {tournament_id!r}")
        if not organiser:
            raise ServiceError(403, "adjudication/no_organiser", "this tournament has no organiser to decide")
        if not verify(organiser, envelope, body["sig"]):
            raise ServiceError(401, "adjudication/bad_signature", "the decision is not signed by the organiser")
        if created.get("adjudication") != "organiser":
            raise ServiceError(409, "adjudication/method", f"this tournament adjudicates by "
                               f"{created.get('adjudication')}, not by the organiser's decision")
        game_id = envelope["game"]
        rnd = replayer.open_round()
        if rnd is None or game_id not in {t["game"] for t in rnd.tables} or game_id in rnd.results:
            raise ServiceError(409, "game/not_open", f"{game_id!r} is no game of the open round without a result")
        if envelope["seq"] != replayer.seq or envelope["prev"] != replayer.head:
            raise ServiceError(409, "submission/stale", f"the decision is bound to seq {envelope['seq']}; the log is "
                               f"at seq {replayer.seq}", details={"seq": replayer.seq, "head": replayer.head})
        game = self.games.adjudicate(game_id, "organiser", envelope["reason"], envelope["ranks"], body)
        self.advance(tournament_id)
        after = self.fold(tournament_id)
        return {"tournament": tournament_id, "game": game_id, "seq": after.seq, "head": after.head,
                "status": after.status, "result": game.get("result")}

    def _receipt(self, tournament_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        after = self.fold(tournament_id)
        return {"tournament": tournament_id, "position": entry["seq"], "hash": entry["hash"], "seq": after.seq,
                "head": after.head, "status": after.status}

    # -- the referee's own entries ----------------------------------------------------------------------
    def advance(self, tournament_id: str, at_ms: int | None = None) -> list[str]:
        """Write everything the referee owes the tournament's log now; returns the entry types written.
        Safe to call from any process, any number of times."""
        written: list[str] = []
        for _step in range(256):
            replayer = self.fold(tournament_id)
            owed = self._owed(tournament_id, replayer, at_ms)
            if owed is None:
                break
            kind = owed.pop("type")
            try:
                entry = self._append(tournament_id, replayer, kind, **owed)
            except StaleAppend:
                continue  # someone else wrote first: fold again
            except ServiceError:
                log.exception("tournament %s: the %s entry it owes was refused", tournament_id, kind)
                break
            written.append(kind)
            if kind == "paired":
                self._paired(tournament_id, replayer, entry)
        return written

    def _owed(self, tournament_id: str, replayer: TournamentReplayer, at_ms: int | None) -> dict[str, Any] | None:
        created = replayer.created
        if created is None:
            return None
        rnd = replayer.open_round()
        if replayer.status == ACTIVE and rnd is not None:
            results = [self._game_result(tournament_id, replayer, table) for table in rnd.tables
                       if table["game"] not in rnd.results]
            results = [r for r in results if r is not None]
            if results:  # an organiser's decision is bound to this very position: it goes first
                return next((r for r in results if "decision" in r), results[0])
        due = replayer.due()
        if due is None:
            return None
        if due["type"] == "paired":
            pairing = due["pairing"]
            tables = [{"game": table_game_id(tournament_id, due["round"], i + 1), "players": list(players)}
                      for i, players in enumerate(pairing.tables)]
            return {"type": "paired", "round": due["round"], "tables": tables, "byes": list(pairing.byes)}
        if due["type"] == "round_closed":
            at = now()
            deadline = created.get("round_deadline")
            assert rnd is not None
            passed = deadline is not None and rnd.paired_at is not None and \
                parse_ms(at) - parse_ms(rnd.paired_at) >= deadline * 1000
            return {"type": "round_closed", "round": due["round"], "reason": "deadline" if passed else "complete",
                    "at": at}
        return dict(due)

    def _game_result(self, tournament_id: str, replayer: TournamentReplayer, table: dict[str, Any]
                     ) -> dict[str, Any] | None:
        """The ``game_finished`` or ``adjudicated`` entry owed for a table, once its game's log is final;
        creates the game when it is missing (a crash between ``paired`` and the creation)."""
        game_id = table["game"]
        try:
            game = self.games.fold(game_id)
        except ServiceError as exc:
            if exc.status == 404:
                self._create_game(tournament_id, replayer, table)
            return None
        if game.status != GAME_FINISHED or not _game_revealed(game):
            return None
        result = game.result()
        if result is None:
            return None
        payload = finished_payload(game_id, game.head, result)
        method = (replayer.created or {}).get("adjudication")
        adjudication = game.adjudication
        if adjudication is not None and adjudication["method"] == method:
            if method == "provisional":
                return {"type": "adjudicated", **payload, "method": method, "reason": adjudication["reason"]}
            decision = self._decision(game_id, adjudication["position"])
            envelope = (decision or {}).get("envelope") or {}
            if (envelope.get("tournament") == tournament_id and envelope.get("seq") == replayer.seq
                    and envelope.get("prev") == replayer.head and envelope.get("ranks") == payload["ranks"]):
                return {"type": "adjudicated", **payload, "method": method, "reason": adjudication["reason"],
                        "decision": decision}
        return {"type": "game_finished", **payload}

    def _decision(self, game_id: str, position: int) -> dict[str, Any] | None:
        try:
            entry = self.store.read_log(game_id, position, 1)[0]
        except (GameNotFound, IndexError):
            return None
        return entry.get("decision")

    def _create_game(self, tournament_id: str, replayer: TournamentReplayer, table: dict[str, Any]) -> None:
        created = replayer.created or {}
        names = {p["key"]: p["name"] for p in created["players"]}
        spec = {"ruleset": created["ruleset"]["name"],
                "seats": [{"name": names[key], "key": key} for key in table["players"]],
                "options": created.get("options") or {}}
        try:
            self.games.create_game(spec, tournament=tournament_id, adjudicator=created.get("organiser"),
                                   game_id=table["game"])
        except ServiceError as exc:
            if exc.code != "game/exists":
                raise

    def _paired(self, tournament_id: str, replayer: TournamentReplayer, entry: dict[str, Any]) -> None:
        """After ``paired``: the round's games, its ``tournament_round`` events and its deadline timer."""
        for table in entry["tables"]:
            try:
                self._create_game(tournament_id, replayer, table)
            except ServiceError:
                log.exception("could not create %s; the next advance tries again", table["game"])
        try:
            self.store.emit_events(tournament_round_events(tournament_id, entry))
        except StoreUnavailable:
            log.exception("could not emit the round events of %s", tournament_id)
        deadline = (replayer.created or {}).get("round_deadline")
        if deadline is not None:
            self.store.set_timer(TOURNAMENT_TIMER.format(tournament=tournament_id),
                                 parse_ms(entry["at"]) + deadline * 1000)

    def on_deadline(self, tournament_id: str, at_ms: int | None = None) -> dict[str, Any]:
        """The deadline scheduler's look at a tournament: when the open round's deadline has passed, each
        unfinished game is adjudicated (``provisional``: the engine's provisional result of the position,
        in the game's log; ``organiser``: the round waits for the organiser's decisions), then whatever is
        owed is written (the results, ``round_closed`` with reason ``deadline``, the next round)."""
        moment = at_ms if at_ms is not None else now_ms()
        replayer = self.fold(tournament_id)
        created = replayer.created or {}
        deadline = created.get("round_deadline")
        rnd = replayer.open_round()
        adjudicated: list[str] = []
        if rnd is not None and deadline is not None and rnd.paired_at is not None and \
                moment >= parse_ms(rnd.paired_at) + deadline * 1000 and created.get("adjudication") == "provisional":
            for table in rnd.tables:
                if table["game"] in rnd.results:
                    continue
                try:
                    game = self.games.fold(table["game"])
                    if game.status in ("active", "waiting"):  # waiting: a seat never accepted
                        self.games.adjudicate(table["game"], "provisional",
                                              f"round {rnd.number} deadline ({deadline} s) passed")
                        adjudicated.append(table["game"])
                except ServiceError as exc:
                    log.warning("tournament %s: could not adjudicate %s: %s", tournament_id, table["game"], exc)
        written = self.advance(tournament_id, moment)
        after = self.fold(tournament_id)
        current = after.open_round()
        timer = TOURNAMENT_TIMER.format(tournament=tournament_id)
        if current is not None and deadline is not None and current.paired_at is not None and \
                parse_ms(current.paired_at) + deadline * 1000 > moment:
            self.store.set_timer(timer, parse_ms(current.paired_at) + deadline * 1000)
        else:
            self.store.set_timer(timer, None)
        return {"tournament": tournament_id, "adjudicated": adjudicated, "appended": written}

    def game_over(self, game_id: str, tournament_id: str) -> list[str]:
        """Hook of the replay worker: a game of ``tournament_id`` has finished. If the tournament cannot be
        advanced now (the store is away), its timer is set a minute ahead: the deadline scheduler's look
        (:meth:`on_deadline`) advances it then."""
        try:
            return self.advance(tournament_id)
        except Exception as exc:
            log.warning("tournament %s after game %s: %s; the deadline scheduler tries again in a minute",
                        tournament_id, game_id, exc)
            try:
                self.store.set_timer(TOURNAMENT_TIMER.format(tournament=tournament_id), now_ms() + 60_000)
            except Exception:
                log.exception("could not set the timer of tournament %s", tournament_id)
            return []

    # -- reads ------------------------------------------------------------------------------------------
    def list_tournaments(self, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """``GET /tournaments``: newest first, a summary of each (folded here, like ``state``)."""
        out = []
        for tournament_id in self.store.newest_tournaments(offset, limit):
            try:
                replayer = self.fold(tournament_id)
            except ServiceError:
                continue
            created = replayer.created or {}
            out.append({"tournament": tournament_id, "status": replayer.status, "ruleset": created.get("ruleset"),
                        "format": created.get("format"), "players": len(created.get("players", [])),
                        "joined": len(replayer.joins), "withdrawn": len(replayer.withdrawn),
                        "round": len(replayer.rounds), "seq": replayer.seq, "head": replayer.head,
                        "created_at": created.get("at")})
        return out

    def state(self, tournament_id: str) -> dict[str, Any]:
        """``GET /tournaments/{id}``: the projection of the log (CONTRACT section 10), folded here."""
        replayer = self.fold(tournament_id)
        created = replayer.created or {}
        out = replayer.to_dict()
        joined = {k for k, _ in replayer.joins}
        deadline = created.get("round_deadline")
        for rnd, row in zip(replayer.rounds, out["rounds"], strict=True):
            row["paired_at"] = rnd.paired_at
            row["deadline"] = None if deadline is None or rnd.paired_at is None else \
                format_ms(parse_ms(rnd.paired_at) + deadline * 1000)
        out.update(ruleset=created.get("ruleset"), options=created.get("options"),
                   commitment=created.get("commitment"), organiser=created.get("organiser"),
                   adjudication=created.get("adjudication"), round_deadline=deadline,
                   created_at=created.get("at"), revealed=replayer.revealed,
                   players=[{"name": p["name"], "key": p["key"], "joined": p["key"] in joined,
                             "withdrawn": p["key"] in replayer.withdrawn} for p in created.get("players", [])])
        return out

    def standings_csv(self, tournament_id: str) -> str:
        """The standings as CSV: ``rank,name,key,points`` and one column per tie-break, in chain order."""
        state = self.fold(tournament_id)
        chain = (state.created or {}).get("tie_breaks", [])
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["rank", "name", "key", "points", *chain])
        for row in state.standings():
            values = ["" if row["tie_breaks"].get(t) is None else row["tie_breaks"][t] for t in chain]
            writer.writerow([row["rank"], _cell(row["name"]), row["key"], row["points"], *values])
        return out.getvalue()

    def log_page(self, tournament_id: str, start: int = 0, limit: int = 100) -> dict[str, Any]:
        if not valid_game_id(tournament_id):
            raise _not_found(tournament_id)
        try:
            entries, tip = self.store.read_tournament(tournament_id, start)
        except GameNotFound as exc:
            raise _not_found(tournament_id) from exc
        entries = entries[:limit]
        following = start + len(entries)
        return {"tournament": tournament_id, "from": start, "total": tip.seq, "head": tip.head, "entries": entries,
                "next": following if following < tip.seq else None}

    def export(self, tournament_id: str) -> dict[str, Any]:
        """The signed certificate (409 before the seed is revealed)."""
        replayer = self.fold(tournament_id)
        if not replayer.revealed:
            raise ServiceError(409, "tournament/not_revealed", f"the tournament is {replayer.status}; its certificate "
                               "comes once it is finished and its seed revealed", details={"status": replayer.status})
        entries, _tip = self.store.read_tournament(tournament_id)
        try:
            return build_certificate(entries, self.referee_key)
        except CertificateError as exc:
            raise ServiceError(500, "log/corrupt", str(exc)) from exc

    def ratings(self, ruleset_name: str, game: str | None = None) -> dict[str, Any]:
        """``GET /ratings/{ruleset}``: OpenSkill over every game with a result in the ruleset's tournaments
        (tournaments in creation order, games in log order), computed on read and cached until a log grows.
        With ``game``, also that game's rating change per seat (``change``; 404 for a game not rated)."""
        try:
            name = ruleset(ruleset_name).name
        except KeyError as exc:
            raise ServiceError(404, "ruleset/not_found", f"no ruleset {ruleset_name!r}") from exc
        folds = []
        for tournament_id in self.store.list_tournaments():
            try:
                replayer = self.fold(tournament_id)
            except ServiceError:
                continue
            if (replayer.created or {}).get("ruleset", {}).get("name") == name:
                folds.append(replayer)
        stamp = tuple((r.created["tournament"], r.seq) for r in folds)  # type: ignore[index]
        cached = self._ratings.get(name)
        if cached is None or cached[0] != stamp:
            games = [{"game": res.game, "players": list(res.players), "ranks": list(res.ranks)}
                     for r in folds for res in r.results()]
            changes: dict[str, list[dict[str, Any]]] = {}
            cached = (stamp, (rate_games(games, changes), changes))
            self._ratings[name] = cached
        rows, changes = cached[1]
        out: dict[str, Any] = {"ruleset": name, "ratings": rows}
        if game is not None:
            if game not in changes:
                raise ServiceError(404, "ratings/no_such_game", f"game {game!r} has no rated result in {name}")
            out["game"], out["change"] = game, changes[game]
        return out


__all__ = ["TournamentService", "new_tournament_id", "table_game_id"]
