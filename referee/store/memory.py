"""The log store in process memory: the same interface and semantics as the Redis store, for the
engine-only tools and single-process use. Nothing survives the process; use the Redis store for
anything that must be durable."""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from ..clock import now_ms
from ..protocol.canonical import canonical_bytes
from ..protocol.logchain import GENESIS
from . import keys
from .base import KEEP_TIMER, Appended, LogStore, Tip, decode_projection, encode_projection, open_listing_rows
from .errors import DuplicateSubmission, GameExists, GameNotFound, StaleAppend


@dataclass
class _Game:
    log: list[bytes] = field(default_factory=list)  # RFC 8785 bytes, as the Redis store keeps them
    head: str = GENESIS
    secret: bytes | None = None
    sigs: dict[str, int] = field(default_factory=dict)
    pending: int | None = None
    projection: dict[str, str] = field(default_factory=dict)
    verdicts: list[str] = field(default_factory=list)
    created_ms: int = 0


def _append_at(log: Any, entry: dict[str, Any], prev: str, signature: str | None) -> int:
    """Append ``entry`` to a game's or a tournament's log (with ``log``, ``head``, ``sigs``) at exactly its
    position, as ``APPEND_ENTRY`` does in Redis; its position. The caller holds the store's lock."""
    length = len(log.log)
    if signature and signature in log.sigs:
        raise DuplicateSubmission(log.sigs[signature], length, log.head)
    if entry["seq"] != length or prev != log.head:
        raise StaleAppend(length, log.head)
    log.log.append(canonical_bytes(entry))
    log.head = entry["hash"]
    if signature:
        log.sigs[signature] = length
    return length


class MemoryStore(LogStore):
    """A :class:`LogStore` in a dict, guarded by one lock (every operation is atomic, as in Redis)."""

    def __init__(self) -> None:
        self._games: dict[str, _Game] = {}
        self._lock = threading.RLock()
        self._projected = threading.Condition(self._lock)
        self._appended = threading.Condition(self._lock)
        self._order = 0
        self._timers: dict[str, int] = {}
        self._outbox: list[dict[str, Any]] = []
        self._seen: set[str] = set()
        self._tournaments: dict[str, _Game] = {}
        self._players: dict[str, dict[str, int]] = {}
        self._player_tournaments: dict[str, dict[str, int]] = {}
        #: the open games (game -> created ms) and each creator's (key -> game -> created ms)
        self._open: dict[str, int] = {}
        self._open_by_creator: dict[str, dict[str, int]] = {}
        #: a finished game -> its rematch's id
        self._rematches: dict[str, str] = {}

    def _game(self, game_id: str) -> _Game:
        keys.game_keys(game_id)  # same id rules as the Redis store
        game = self._games.get(game_id)
        if game is None or not game.log:
            raise GameNotFound(game_id)
        return game

    # -- games and their logs ---------------------------------------------------------------------
    def create(self, game_id: str, entry: dict[str, Any], secret: bytes | None) -> Appended:
        keys.game_keys(game_id)
        with self._lock:
            if game_id in self._games:
                raise GameExists(game_id)
            self._order += 1
            self._games[game_id] = _Game(log=[canonical_bytes(entry)], head=entry["hash"], secret=secret,
                                         pending=now_ms(), created_ms=self._order)
        return Appended(0, entry["hash"], True)

    def append(self, game_id: str, entry: dict[str, Any], prev: str, signature: str | None = None, *,
               timer: int | object | None = KEEP_TIMER) -> Appended:
        with self._lock:
            game = self._game(game_id)
            length = _append_at(game, entry, prev, signature)
            self._appended.notify_all()
            pending_set = game.pending is None
            if pending_set:
                game.pending = now_ms()
            if timer is not KEEP_TIMER:
                self.set_timer(game_id, timer)  # type: ignore[arg-type]
            return Appended(length, entry["hash"], pending_set)

    def read_log(self, game_id: str, start: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        with self._lock:
            log = self._game(game_id).log
            stop = None if limit is None else max(start, 0) + limit
            rows = log[max(start, 0):stop]
        return [json.loads(row) for row in rows]

    def read_since(self, game_id: str, start: int) -> tuple[list[dict[str, Any]], Tip]:
        with self._lock:
            game = self._game(game_id)
            rows, tip = game.log[max(start, 0):], Tip(len(game.log), game.head)
        return [json.loads(row) for row in rows], tip

    def follow_log(self, game_id: str, after: int, timeout: float, limit: int = 100) -> list[tuple[int, bytes]]:
        """As :meth:`RedisStore.follow_log`: entries after position ``after``, waiting up to ``timeout`` s."""
        return [(position, raw) for _game, position, raw in self.follow_logs({game_id: after}, timeout, limit)]

    def follow_logs(self, afters: dict[str, int], timeout: float, limit: int = 100) -> list[tuple[str, int, bytes]]:
        """As :meth:`RedisStore.follow_logs`."""
        def rows() -> list[tuple[str, int, bytes]]:
            out = []
            for game_id, after in afters.items():
                game = self._games.get(game_id)
                log = game.log if game is not None else []
                start = max(after + 1, 0)
                out += [(game_id, position, raw) for position, raw in enumerate(log[start:start + limit], start)]
            return out

        with self._appended:
            return self._appended.wait_for(rows, timeout=max(0.0, timeout)) or []

    def log_lengths(self, games: list[str]) -> dict[str, int]:
        with self._lock:
            return {game: len(self._games[game].log) for game in games if game in self._games}

    def tip(self, game_id: str) -> Tip:
        with self._lock:
            game = self._game(game_id)
            return Tip(len(game.log), game.head)

    def read_secret(self, game_id: str) -> bytes | None:
        with self._lock:
            game = self._games.get(game_id)
            return game.secret if game else None

    def find_submission(self, game_id: str, signature: str) -> int | None:
        with self._lock:
            game = self._games.get(game_id)
            return game.sigs.get(signature) if game else None

    def list_games(self, offset: int = 0, limit: int | None = None) -> list[str]:
        with self._lock:
            ordered = sorted(self._games, key=lambda g: self._games[g].created_ms, reverse=True)
        stop = None if limit is None else offset + limit
        return ordered[offset:stop]

    def scan_games(self) -> list[str]:
        with self._lock:
            return sorted(game for game, state in self._games.items() if state.log)

    # -- the games of a player's key ------------------------------------------------------------------
    def _index_rows(self, index: dict[str, dict[str, int]], rows: list[tuple[str, str, int]]) -> None:
        for public_key, _item, _ms in rows:
            keys.player_games_key(public_key)
        with self._lock:
            for public_key, item, created_ms in rows:
                index.setdefault(public_key, {})[item] = int(created_ms)

    def _listed(self, index: dict[str, dict[str, int]], public_key: str, offset: int, limit: int | None
                ) -> list[tuple[str, int]]:
        keys.player_games_key(public_key)
        with self._lock:
            listed = dict(index.get(public_key, {}))
        ordered = sorted(listed.items(), key=lambda item: (item[1], item[0]), reverse=True)
        return ordered[offset:None if limit is None else offset + limit]

    def index_player_games(self, rows: list[tuple[str, str, int]]) -> None:
        self._index_rows(self._players, rows)

    def player_games(self, public_key: str, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        return self._listed(self._players, public_key, offset, limit)

    def unindex_player_games(self, rows: list[tuple[str, str]]) -> None:
        for public_key, _game in rows:
            keys.player_games_key(public_key)
        with self._lock:
            for public_key, game in rows:
                self._players.get(public_key, {}).pop(game, None)

    def index_player_tournaments(self, rows: list[tuple[str, str, int]]) -> None:
        self._index_rows(self._player_tournaments, rows)

    def player_tournaments(self, public_key: str, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        return self._listed(self._player_tournaments, public_key, offset, limit)

    # -- replay bookkeeping -------------------------------------------------------------------------
    def read_projection(self, game_id: str, with_verdicts: bool = False) -> dict[str, Any] | None:
        with self._lock:
            game = self._games.get(game_id)
            if game is None or not game.projection:
                return None
            raw, verdicts = dict(game.projection), list(game.verdicts)
        projection = decode_projection(raw)
        if with_verdicts:
            projection["verdicts"] = [json.loads(v) for v in verdicts]
        return projection

    def read_verdicts(self, game_id: str, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        with self._lock:
            game = self._games.get(game_id)
            rows = game.verdicts[start:stop] if game else []
        return [json.loads(v) for v in rows]

    def write_projection(self, game_id: str, projection: dict[str, Any], verdicts: list[dict[str, Any]],
                         from_seq: int, replace: bool = False) -> int:
        fields = encode_projection(copy.deepcopy(projection))
        encoded = [json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in verdicts]
        with self._lock:
            game = self._games.setdefault(game_id, _Game())
            current = int(game.projection.get("seq", 0))
            if replace:
                game.projection, game.verdicts = {}, []
            else:
                if current >= projection["seq"]:
                    return 0
                if current != from_seq or len(game.verdicts) != current:
                    return -1
            game.projection.update(fields)
            game.projection["seq"] = str(projection["seq"])
            game.verdicts.extend(encoded)
            self.list_open_games(open_listing_rows([(game_id, projection)]))
            self._projected.notify_all()
            return 1

    def claim_rematch(self, game_id: str, rematch_id: str) -> str | None:
        keys.rematch_key(game_id)
        keys.rematch_key(rematch_id)
        with self._lock:
            game = self._games.get(game_id)
            if game is None or not game.log:
                return None
            return self._rematches.setdefault(game_id, rematch_id)

    def read_rematch(self, game_id: str) -> str | None:
        keys.rematch_key(game_id)
        with self._lock:
            return self._rematches.get(game_id)

    # -- the open games ----------------------------------------------------------------------------------
    def list_open_games(self, rows: list[tuple[str, str | None, int | None]]) -> None:
        for _game, creator, _ms in rows:
            if creator is not None:
                keys.creator_open_games_key(creator)
        with self._lock:
            for game, creator, ms in rows:
                lists = [self._open, *([self._open_by_creator.setdefault(creator, {})] if creator else [])]
                for listed in lists:
                    if ms is None:
                        listed.pop(game, None)
                    else:
                        listed[game] = int(ms)

    def open_games(self, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        with self._lock:
            ordered = sorted(self._open.items(), key=lambda item: (item[1], item[0]))
        return ordered[offset:None if limit is None else offset + limit]

    def count_open_games(self, creator: str | None = None) -> int:
        if creator is None:
            with self._lock:
                return len(self._open)
        keys.creator_open_games_key(creator)
        with self._lock:
            return len(self._open_by_creator.get(creator, {}))

    def wait_for_verdict(self, game_id: str, position: int, timeout: float) -> dict[str, Any] | None:
        def stored() -> str | None:
            game = self._games.get(game_id)
            return game.verdicts[position] if game is not None and len(game.verdicts) > position else None

        with self._projected:
            found = self._projected.wait_for(stored, timeout=max(0.0, timeout))
        return json.loads(found) if found else None

    def mark_pending(self, game_id: str, now_ms_: int) -> None:
        with self._lock:
            if game_id in self._games:
                self._games[game_id].pending = now_ms_

    def release_pending(self, game_id: str, seq: int) -> bool:
        with self._lock:
            game = self._games.get(game_id)
            if game is None or len(game.log) == seq:
                if game is not None:
                    game.pending = None
                return True
            game.pending = now_ms()
            return False

    def pending_since(self, game_id: str) -> int | None:
        with self._lock:
            game = self._games.get(game_id)
            return game.pending if game else None

    def stale_pending(self, before_ms: int, limit: int = 10_000) -> list[str]:
        with self._lock:
            flagged = sorted((game.pending, game_id) for game_id, game in self._games.items()
                             if game.pending is not None and game.pending <= before_ms)
        return [game_id for _when, game_id in flagged[:limit]]

    def lagging_games(self, games: list[str] | None = None) -> list[tuple[str, int, int, int | None]]:
        out = []
        with self._lock:
            chosen = self._games.items() if games is None else [(g, self._games[g]) for g in games if g in self._games]
            for game_id, game in chosen:
                seq = int(game.projection.get("seq", 0))
                if game.log and len(game.log) > seq:
                    out.append((game_id, len(game.log), seq, game.pending))
        return out

    # -- time control: timers and the outbox ------------------------------------------------------------
    def set_timer(self, game_id: str, when_ms: int | None) -> None:
        with self._lock:
            if when_ms is None:
                self._timers.pop(game_id, None)
            else:
                self._timers[game_id] = when_ms

    def due_timers(self, now_ms_: int, limit: int = 100) -> list[tuple[str, int]]:
        with self._lock:
            due = sorted((when, game) for game, when in self._timers.items() if when <= now_ms_)
            return [(game, when) for when, game in due[:limit]]

    def claim_timers(self, now_ms_: int, limit: int = 100, lease_ms: int = 30_000) -> list[tuple[str, int]]:
        with self._lock:
            due = self.due_timers(now_ms_, limit)
            for game, _when in due:
                self._timers[game] = now_ms_ + lease_ms
            return due

    def emit_events(self, events: list[dict[str, Any]]) -> int:
        added = 0
        with self._lock:
            for event in events:
                if event["id"] not in self._seen:
                    self._seen.add(event["id"])
                    self._outbox.append(json.loads(json.dumps(event)))
                    added += 1
        return added

    def read_outbox(self, count: int = 1000) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._outbox[:count])

    # -- tournaments ------------------------------------------------------------------------------------
    def _tournament(self, tournament_id: str) -> _Game:
        keys.tournament_keys(tournament_id)
        found = self._tournaments.get(tournament_id)
        if found is None:
            raise GameNotFound(tournament_id)
        return found

    def create_tournament(self, tournament_id: str, entry: dict[str, Any], secret: bytes) -> Appended:
        keys.tournament_keys(tournament_id)
        with self._lock:
            if tournament_id in self._tournaments:
                raise GameExists(tournament_id)
            self._order += 1
            self._tournaments[tournament_id] = _Game(log=[canonical_bytes(entry)], head=entry["hash"], secret=secret,
                                                     created_ms=self._order)
        return Appended(0, entry["hash"], True)

    def append_tournament(self, tournament_id: str, entry: dict[str, Any], prev: str,
                          signature: str | None = None) -> Appended:
        with self._lock:
            length = _append_at(self._tournament(tournament_id), entry, prev, signature)
            return Appended(length, entry["hash"], False)

    def read_tournament(self, tournament_id: str, start: int = 0) -> tuple[list[dict[str, Any]], Tip]:
        with self._lock:
            log = self._tournament(tournament_id)
            rows, tip = log.log[max(start, 0):], Tip(len(log.log), log.head)
        return [json.loads(row) for row in rows], tip

    def tournament_secret(self, tournament_id: str) -> bytes | None:
        with self._lock:
            found = self._tournaments.get(tournament_id)
            return found.secret if found else None

    def list_tournaments(self) -> list[str]:
        with self._lock:
            return sorted(self._tournaments, key=lambda t: self._tournaments[t].created_ms)
