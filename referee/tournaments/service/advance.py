"""The referee's own entries in a tournament's log (:class:`RefereeEntries`, part of
:class:`~referee.tournaments.service.TournamentService`): the games' results once their logs are final,
then what :meth:`~referee.tournaments.state.TournamentState.due` says (``paired`` and the round's games,
``round_closed``, ``finished``, ``revealed``); round deadlines; the replay worker's hook for a finished game."""

from __future__ import annotations

from typing import Any

from ...clock import now, now_ms
from ...errors import ServiceError
from ...notify.events import tournament_round_events
from ...replay import FINISHED as GAME_FINISHED
from ...store import GameNotFound, StaleAppend, StoreUnavailable
from ...store.keys import TOURNAMENT_TIMER
from ...timecontrol import parse_ms
from ..log import TournamentReplayer, finished_payload
from ..state import ACTIVE
from .base import log, table_game_id
from .ratings import RatedTournaments


def _game_revealed(game: Any) -> bool:
    """Whether a finished game's log is final: its seed revealed (seeded games) or recorded mode."""
    if (game.created or {}).get("mode") != "seeded":
        return True
    return bool(game.revealed)


class RefereeEntries(RatedTournaments):
    """Writes what the referee owes a tournament's log (:meth:`advance`), at round deadlines too
    (:meth:`on_deadline`) and after a game of it has finished (:meth:`game_over`); then rates the
    tournament's new results (:meth:`~.ratings.RatedTournaments.rate_tournament`)."""

    def advance(self, tournament_id: str, at_ms: int | None = None) -> list[str]:
        """Write everything the referee owes the tournament's log now, then add its results not yet rated
        to its ruleset's ratings; returns the entry types written. Safe to call from any process, any number
        of times (an entry the fold refuses, or ratings that cannot be stored now, are logged, not raised:
        the next advance of the tournament rates what this one did not).

        :raises ServiceError: from :meth:`fold` (404 ``tournament/not_found``, 500 ``log/corrupt``).
        """
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
        try:
            self.rate_tournament(tournament_id)
        except Exception:
            log.exception("tournament %s: its results could not be rated now", tournament_id)
        return written

    def _owed(self, tournament_id: str, replayer: TournamentReplayer, at_ms: int | None) -> dict[str, Any] | None:
        created = replayer.created
        if created is None:
            return None
        rnd = replayer.open_round()
        if replayer.status == ACTIVE and rnd is not None:
            owed = [self._game_result(tournament_id, replayer, table) for table in rnd.tables
                    if table["game"] not in rnd.results]
            results = [r for r in owed if r is not None]
            if results:  # an organiser's decision is bound to this very position: it goes first
                return next((r for r in results if "decision" in r), results[0])
        due = replayer.due()
        closes = created.get("closes")
        if due is None and replayer.registration_open and closes is not None:
            at = now()  # the fold checks this `at` against `closes`: the time is in the log
            return {"type": "registration_closed", "reason": "closes", "at": at} \
                if parse_ms(at) >= parse_ms(closes) else None
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
        players = {p["key"]: p for p in replayer.players}  # an open registration's joiners too
        spec = {"ruleset": created["ruleset"]["name"],
                "seats": [{"name": players[key]["name"], "key": key,
                           **({"bot": True} if players[key].get("bot") else {})} for key in table["players"]],
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
        owed is written (the results, ``round_closed`` with reason ``deadline``, the next round).

        :raises ServiceError: from :meth:`fold` (404 ``tournament/not_found``, 500 ``log/corrupt``).
        """
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
        closes = created.get("closes")
        if current is not None and deadline is not None and current.paired_at is not None and \
                parse_ms(current.paired_at) + deadline * 1000 > moment:
            self.store.set_timer(timer, parse_ms(current.paired_at) + deadline * 1000)
        elif after.registration_open and closes is not None:  # looked before `closes`: look again then
            self.store.set_timer(timer, max(parse_ms(closes), moment + 1000))
        else:
            self.store.set_timer(timer, None)
        return {"tournament": tournament_id, "adjudicated": adjudicated, "appended": written}

    def game_over(self, game_id: str, tournament_id: str) -> list[str]:
        """Hook of the replay worker: a game of ``tournament_id`` has finished. If the tournament cannot be
        advanced now (the store is away), its timer is set a minute ahead: the deadline scheduler's look
        (:meth:`on_deadline`) advances it then. Never raises."""
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
