"""The reads of a game (CONTRACT section 6): its state (from the worker's projection when it is up to
date, else from a fold here), the lobby's list, the legal moves, the raw log paged, the replay with a
verdict and the public state after each entry, and the result. Waiting for a worker's verdict is
:meth:`~referee.games_service.core.ServiceCore.wait_for_verdict` (a move's ``?wait`` needs it too); the
export bundle is read from the store by ``referee.api.verification``, not here."""

from __future__ import annotations

import logging
from typing import Any

from ..clock import now_ms
from ..errors import ServiceError
from ..replay import ACTIVE, CANCELLED, EXPIRED, FINISHED, LogError, keys_in_turn, seat_kind
from ..store import GameNotFound
from ..timecontrol.spec import time_control_of
from .core import ServiceCore, not_found
from .folds import fold_with_states
from .projection import clock_view, open_listing, projection_of

log = logging.getLogger(__name__)


def has_open_seats(created: dict[str, Any]) -> bool:
    """Whether a game was created with a seat open to an invitation or to anyone (CONTRACT section 14)."""
    return any(seat_kind(seat) != "key" for seat in created.get("seats") or [])


def _open_seat_row(seat: int, spec: dict[str, Any], holder: tuple[str, str | None] | None, accepted: bool,
                   clocks: list[dict[str, Any]] | None) -> dict[str, Any]:
    """A seat of a game with open seats, as ``GET /games/{id}`` shows it: its holder now (key and name; ``null``
    while nobody holds it), and ``open`` (``invite`` or ``anyone``) for a seat declared open."""
    kind = seat_kind(spec)
    return {"seat": seat, "name": holder[1] if holder is not None else spec.get("name"),
            "key": holder[0] if holder is not None else None, "accepted": accepted,
            **({"open": "anyone" if kind == "open" else "invite", "taken": holder is not None}
               if kind != "key" else {}),
            **({"bot": True} if spec.get("bot") is True else {}),
            **({"clock": clocks[seat]} if clocks is not None else {})}


class GameReads(ServiceCore):
    """Answers the reads of games; writes nothing."""

    def _describe(self, game_id: str, created: dict[str, Any], projection: dict[str, Any],
                  holders: tuple[Any, ...] | None = None) -> dict[str, Any]:
        """A game's summary; ``holders`` (the fold's, for a game with open seats) name who holds each seat now."""
        accepted = set(projection.get("accepted") or [])
        mode = created.get("mode")
        clocks = clock_view(projection.get("clocks"), len(created["seats"]), now_ms())
        if holders is not None:
            seats = [_open_seat_row(i, spec, holders[i], i in accepted, clocks)
                     for i, spec in enumerate(created["seats"])]
        else:
            seats = [{"seat": i, "name": seat["name"], "key": seat["key"],
                      "accepted": mode == "recorded" or i in accepted,
                      **({"bot": True} if seat.get("bot") is True else {}),
                      **({"clock": clocks[i]} if clocks is not None else {})}
                     for i, seat in enumerate(created["seats"])]
        return {
            "game": game_id,
            "ruleset": created["ruleset"],
            "mode": mode,
            "commitment": created.get("commitment"),
            "organiser": created.get("organiser"),
            "options": created.get("options") or {},
            "created_at": created["at"],
            "seats": seats,
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
            raise not_found(game_id) from exc
        projection = self.store.read_projection(game_id)
        source = "worker"
        holders = None
        if has_open_seats(created):  # who holds a seat is the fold's (the stored projection does not keep it)
            replayer = self.fold(game_id)
            projection, source, holders = projection_of(replayer), "web", replayer.holders
        elif projection is None or projection["seq"] != tip.seq or projection["head"] != tip.head:
            projection = projection_of(self.fold(game_id))
            source = "web"
        rematch = self._rematch_of(game_id) if projection["status"] == FINISHED else None
        described = self._describe(game_id, created, projection, holders)
        keys = (projection.get("decisions") or {}).get("seat_keys")
        if keys:  # a seat's new key (CONTRACT section 15): the key that holds each seat now
            described["seats"] = [{**row, "key": keys[row["seat"]] or row["key"]} for row in described["seats"]]
        return {**described, "state": projection["view"],
                "rematch": rematch, **({"rematch_of": created["rematch_of"]} if "rematch_of" in created else {}),
                "last_verdict": projection["last_verdict"], "version_mismatch": projection["version_mismatch"],
                "blocked": projection["blocked"], "decisions": projection.get("decisions"), "projection": source}

    def _rematch_of(self, game_id: str) -> str | None:
        """The rematch of a finished game (``POST /games/{id}/rematch``), if one was asked for; None when the store
        cannot say (the game's page then offers to ask, which answers the existing one)."""
        try:
            return self.store.read_rematch(game_id)
        except Exception:
            log.warning("could not read the rematch of %s", game_id, exc_info=True)
            return None

    def list_games(self, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """``GET /games``: newest first, from the stored projections (a game that has none yet is folded here)."""
        out = []
        for game_id in self.store.list_games(offset, limit):
            holders = None
            try:
                created = self.created_entry(game_id)
                if has_open_seats(created):
                    replayer = self.fold(game_id)
                    projection, holders = projection_of(replayer), replayer.holders
                else:
                    projection = self.store.read_projection(game_id) or projection_of(self.fold(game_id))
            except ServiceError:
                continue
            if projection.get("status") in (EXPIRED, CANCELLED):
                continue  # a game never accepted in time, or cancelled by its creator, leaves the lobby
            summary = self._describe(game_id, created, projection, holders)
            summary.pop("options")
            out.append(summary)
        return out

    def open_games(self, offset: int = 0, limit: int = 100) -> dict[str, Any]:
        """``GET /games?open=true``: the waiting games with a seat open to anyone, oldest first (CONTRACT section 14),
        from the open games' index (kept by the replay workers' projection writes); each is described from its fold
        (who holds each seat now), and one the index still lists but whose fold is no longer open (the workers have
        not caught up) is left out of the page."""
        rows = self.store.open_games(offset, limit)
        total = self.store.count_open_games()
        now = now_ms()
        out = []
        for game_id, _created_ms in rows:
            try:
                replayer = self.fold(game_id)
            except ServiceError:
                continue
            listing = open_listing(replayer)
            accept_by = replayer.accept_by_ms()
            if listing is None or not listing["open"] or (accept_by is not None and accept_by <= now):
                continue
            created = replayer.created or {}
            summary = self._describe(game_id, created, projection_of(replayer), replayer.holders)
            creator = listing["creator"]
            creator_name = next((holder[1] for holder in replayer.holders
                                 if holder is not None and holder[0] == creator), None)
            out.append({**summary, "creator": {"key": creator, "name": creator_name},
                        "accept_by": created.get("accept_by"),
                        "seats_taken": sum(holder is not None for holder in replayer.holders),
                        "seats_open": sum(seat.get("open") == "anyone" and not seat["taken"]
                                          for seat in summary["seats"])})
        following = offset + len(rows) if offset + len(rows) < total and rows else None
        return {"games": out, "offset": offset, "next": following, "total": total}

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
            raise not_found(game_id) from exc
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
            raise not_found(game_id) from exc
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
        out = {"game": game_id, "ruleset": state["ruleset"], "status": state["status"], "seq": state["seq"],
               "head": state["head"], "version_mismatch": state["version_mismatch"], "result": result}
        if (state.get("decisions") or {}).get("rekeys"):  # a seat's new key (CONTRACT section 15)
            out["seat_keys"] = keys_in_turn(self.fold(game_id))
        return out
