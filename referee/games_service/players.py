"""A player's games (``GET /players/{key}/games``): the games a public key is seated in, from the per-key
index the service keeps at creation (``referee.store.keys.PLAYER_GAMES``; ``referee rebuild --all`` rebuilds it
from the ``created`` entries), each described from its stored projection (status, whose turn, deadline,
pending offer: never stored twice) — the key's seats, whether it is that key's turn, names.

Ordering, over every game of the key at each request (the index and the projections are read in pipelines
of :data:`CHUNK` games): the games where it is the key's turn first, then by deadline (soonest first; none
last), then newest first."""

from __future__ import annotations

import logging
from typing import Any

from ..clock import now_ms
from ..errors import ServiceError
from ..protocol.signing import b64url_decode, load_public_key
from ..replay import ACTIVE, WAITING, LogReplayer, seat_kind
from ..store.base import LogStore
from ..store.keys import PLAYER_KEY_RE
from ..timecontrol.times import parse_ms
from .core import ServiceCore
from .projection import clock_view, projection_of

log = logging.getLogger(__name__)

#: games read per pipeline (projections, ``created`` entries, last entries)
CHUNK = 500
#: the projection's fields a listing reads (not the public state, ``view``, nor the last verdict)
LISTED_FIELDS = ("status", "to_move", "accepted", "clocks", "decisions")


def player_rows(item_id: str, created: dict[str, Any], field: str = "seats") -> list[tuple[str, str, int]]:
    """The index rows of a game (``(key, game, created ms)`` per seated key) from its ``created`` entry; of a
    tournament with ``field="players"``."""
    at = parse_ms(created["at"])
    keys = {seat.get("key") for seat in created.get(field) or [] if isinstance(seat, dict)}
    return [(key, item_id, at) for key in sorted(k for k in keys if isinstance(k, str)) if PLAYER_KEY_RE.match(key)]


def bad_key(public_key: str) -> ServiceError | None:
    """400 ``player/bad_key`` unless ``public_key`` is an Ed25519 public key (base64url of 32 bytes)."""
    try:
        if PLAYER_KEY_RE.match(public_key) is None:
            raise ValueError(public_key)
        b64url_decode(public_key)
        load_public_key(public_key)
    except (ValueError, TypeError):
        return ServiceError(400, "player/bad_key", "not an Ed25519 public key (base64url of its 32 raw bytes)",
                            details={"problems": [{"path": "key", "problem": "must be canonical base64url of 32 "
                                                                             "bytes (no padding)"}]})
    return None


def _chunks(items: list[Any]) -> list[list[Any]]:
    return [items[i:i + CHUNK] for i in range(0, len(items), CHUNK)]


def index_players(store: LogStore, game_id: str, created: dict[str, Any]) -> None:
    """List a new game under each seated key (right after its creation). A failure is logged, not raised: the
    game is in the log, and ``referee rebuild --all`` lists it again."""
    try:
        store.index_player_games(player_rows(game_id, created))
    except Exception:
        log.exception("could not list game %s under its players' keys; `referee rebuild --all` will", game_id)


def index_tournament_players(store: LogStore, tournament_id: str, created: dict[str, Any]) -> None:
    """List a new tournament under each of its players' keys (right after its creation); a failure is logged,
    as :func:`index_players` does."""
    try:
        store.index_player_tournaments(player_rows(tournament_id, created, "players"))
    except Exception:
        log.exception("could not list tournament %s under its players' keys; `referee rebuild --all` will",
                      tournament_id)


def tournament_rows(tournament_id: str, entries: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    """The index rows of a tournament: its listed players (``created``), the keys that joined an open
    registration (``joined`` entries of keys not listed) and the new keys the organiser moved players to
    (``rekeyed``), each at the tournament's created time, as a join lists them
    (``tournaments/service/submissions.py``)."""
    created = entries[0]
    rows = player_rows(tournament_id, created, "players")
    listed = {key for key, _item, _at in rows}
    joined = {entry.get("key") for entry in entries[1:] if entry.get("type") in ("joined", "rekeyed")}
    at = parse_ms(created["at"])
    return rows + [(key, tournament_id, at) for key in sorted(k for k in joined if isinstance(k, str))
                   if key not in listed and PLAYER_KEY_RE.match(key)]


def rebuild_tournament_index(store: LogStore) -> int:
    """List every tournament of ``referee:tournaments`` under its players' keys again, from its log: the
    ``created`` entry's players and the keys that joined an open registration (additive, as
    :func:`rebuild_player_index`). Returns the rows written."""
    from ..store import GameNotFound  # noqa: PLC0415

    rows = []
    for tournament_id in store.list_tournaments():
        try:
            entries, _tip = store.read_tournament(tournament_id)
        except GameNotFound:
            continue
        rows += tournament_rows(tournament_id, entries)
    for chunk in _chunks(rows):
        store.index_player_tournaments(chunk)
    return len(rows)


def rebuild_player_index(store: LogStore, game_ids: list[str]) -> int:
    """List every game of ``game_ids`` under its seated keys again, from the ``created`` entries (``referee
    rebuild --all``, ``--players``): additive, so a game created meanwhile is never lost. Returns the rows
    written."""
    written = 0
    for chunk in _chunks(game_ids):
        # a seat's new key (CONTRACT section 15): a game whose projection names a rekey is folded for its holders
        rekeyed = [bool(((projection or {}).get("decisions") or {}).get("rekeys"))
                   for projection in store.read_projections(chunk, ("decisions",))]
        rows = [row for game_id, created, moved in zip(chunk, store.read_created(chunk), rekeyed, strict=True)
                if created is not None for row in player_rows(game_id, _as_held(store, game_id, created, moved))]
        store.index_player_games(rows)
        written += len(rows)
    return written


def _as_held(store: LogStore, game_id: str, created: dict[str, Any], rekeyed: bool = False) -> dict[str, Any]:
    """``created`` with the keys that hold its seats now (from the log's ``seated``, ``left`` and ``rekeyed``, as the
    fold judges them); ``created`` itself for a game whose seats all had keys at creation and never changed them."""
    if not rekeyed and all(seat_kind(seat) == "key" for seat in created.get("seats") or []):
        return created
    replayer = LogReplayer(server_seed=store.read_secret(game_id))
    try:
        for entry in store.read_log(game_id):
            replayer.feed(entry)
    except Exception:
        log.warning("could not fold %s for the keys that hold its seats", game_id, exc_info=True)
    return {**created, "seats": [{"key": holder[0]} for holder in replayer.holders if holder is not None]}


class PlayerGames(ServiceCore):
    """Answers a key's games (the index is kept by :func:`index_players` at creation)."""

    def _created_many(self, game_ids: list[str]) -> list[dict[str, Any] | None]:
        missing = [g for g in game_ids if g not in self._created]
        found: dict[str, dict[str, Any] | None] = {}
        for chunk in _chunks(missing):
            found.update(zip(chunk, self.store.read_created(chunk), strict=True))
        out = []
        for game_id in game_ids:
            created = self._created.get(game_id) or found.get(game_id)
            if created is not None and game_id not in self._created and len(self._created) <= 4096:
                self._created[game_id] = created
            out.append(created)
        return out

    def player_games(self, public_key: str, offset: int = 0, limit: int = 100,
                     status: str | None = None) -> dict[str, Any]:
        """``GET /players/{key}/games``: one page of the key's games, your turn first, then by deadline, then
        newest; ``total`` counts the games that pass ``status``."""
        problem = bad_key(public_key)
        if problem is not None:
            raise problem
        listed = self.store.player_games(public_key)
        ids = [game for game, _ms in listed]
        projections: list[dict[str, Any] | None] = []
        for chunk in _chunks(ids):
            projections += self.store.read_projections(chunk, LISTED_FIELDS)
        createds = self._created_many(ids)
        now = now_ms()
        rows = []
        for (game_id, created_ms), stored, created in zip(listed, projections, createds, strict=True):
            if created is None:
                continue  # listed but without a log (an index row left over): nothing to show
            projection = stored
            if projection is None:
                try:
                    projection = projection_of(self.fold(game_id))  # not projected yet: a fold here
                except ServiceError:
                    continue
            described = created
            seats = created.get("seats") or []
            moved = bool((projection.get("decisions") or {}).get("rekeys"))  # a seat's new key (CONTRACT section 15)
            if moved or any(seat_kind(seat) != "key" for seat in seats) or not any(
                    seat.get("key") == public_key for seat in seats):
                held = self._held_now(game_id, created)
                if held is None or not any(seat["key"] == public_key for seat in held[0]["seats"]):
                    # the key left the seat it took: its row is taken off when it leaves, but that write is on
                    # another hash tag than the log and best effort (a crash between, or a take's late listing)
                    continue
                described, projection = held
            row = self._player_row(public_key, game_id, described, projection, now)
            row["_created_ms"] = created_ms
            if status is None or row["status"] == status or (
                    status == "open" and row["status"] in (WAITING, ACTIVE)):
                rows.append(row)
        rows.sort(key=lambda r: (not r["your_turn"], r["_deadline_ms"] is None, r["_deadline_ms"] or 0,
                                 -r["_created_ms"], r["game"]))
        page = rows[offset:offset + limit]
        lasts = self.store.read_last_entries([r["game"] for r in page])
        for row, last in zip(page, lasts, strict=True):
            row["last_move_at"] = last.get("at") if last else None
            del row["_created_ms"], row["_deadline_ms"]
        following = offset + len(page) if offset + len(page) < len(rows) else None
        return {"key": public_key, "games": page, "offset": offset, "total": len(rows), "next": following}

    def _held_now(self, game_id: str, created: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """A game with open seats (CONTRACT section 14) as its holders now make it (who holds a seat is the fold's,
        not ``created``'s): ``created`` with each seat's holder, and the fold's projection; None when unreadable."""
        try:
            replayer = self.fold(game_id)
        except ServiceError:
            return None
        seats = [{"name": holder[1], "key": holder[0]} if holder is not None
                 else {"name": spec.get("name"), "key": None}
                 for holder, spec in zip(replayer.holders, created["seats"], strict=True)]
        return {**created, "seats": seats}, projection_of(replayer)

    @staticmethod
    def _player_row(public_key: str, game_id: str, created: dict[str, Any], projection: dict[str, Any],
                    now: int) -> dict[str, Any]:
        seats = created.get("seats") or []
        mine = [i for i, seat in enumerate(seats) if seat.get("key") == public_key]
        state, to_move = projection.get("status"), projection.get("to_move")
        accepted = set(projection.get("accepted") or [])
        waiting_for = [i for i in mine if i not in accepted] if (
            state == WAITING and created.get("mode") == "seeded") else []
        your_turn = (state == ACTIVE and to_move in mine) or bool(waiting_for)
        deadline = None
        if state == ACTIVE:
            clocks = clock_view(projection.get("clocks"), len(seats), now)
            if clocks is not None and isinstance(to_move, int) and 0 <= to_move < len(clocks):
                deadline = clocks[to_move].get("deadline")
        elif state == WAITING:
            deadline = created.get("accept_by")
        deadline_ms = None
        if deadline is not None:
            try:
                deadline_ms = parse_ms(deadline)
            except ValueError:
                deadline = None
        decisions = projection.get("decisions") or {}
        pending = decisions.get("pending") if isinstance(decisions, dict) else None
        ruleset = created.get("ruleset") or {}
        return {
            "game": game_id,
            "ruleset": ruleset,
            "mode": created.get("mode"),
            "tournament": created.get("tournament"),
            "created_at": created.get("at"),
            "status": state,
            "seats": [{"seat": i, "name": seat.get("name"), "key": seat.get("key"),
                       "accepted": created.get("mode") == "recorded" or i in accepted,
                       **({"bot": True} if seat.get("bot") is True else {})} for i, seat in enumerate(seats)],
            "my_seats": mine,
            "to_move": to_move,
            "your_turn": your_turn,
            "awaiting_acceptance": waiting_for,
            "deadline": deadline,
            "pending_offer": pending,
            "seq": projection.get("seq"),
            "_deadline_ms": deadline_ms,
        }
