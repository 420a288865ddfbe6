"""A tournament's log on the log's Redis: one stream each, the same entry format, scripts and answers as a game's
log (``referee.store.logs``), and the index of tournaments (``keys.TOURNAMENTS_INDEX``).
"""

from __future__ import annotations

from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..clock import now_ms
from ..protocol.logchain import GENESIS
from . import codec, keys
from .base import Appended, Tip
from .errors import GameExists, GameNotFound, StoreUnavailable
from .logs import GameLogs
from .replies import text_of


class Tournaments(GameLogs):
    """The tournaments' logs (a part of :class:`referee.store.RedisStore`)."""

    def create_tournament(self, tournament_id: str, entry: dict[str, Any], secret: bytes) -> Appended:
        k = keys.tournament_keys(tournament_id)
        call_keys = [k.log, k.head, k.secret, k.pending]
        call_args = [codec.pack(entry, tournament_id), entry["hash"], secret.hex(), now_ms()]
        try:
            if self.min_replicas:
                result = self._replicated(self._create, call_keys, call_args, f"tournament {tournament_id}'s creation")
            else:
                result = self._create(keys=call_keys, args=call_args)
            if text_of(result[0]) == "exists":
                raise GameExists(tournament_id)
            self._index(keys.TOURNAMENTS_INDEX, tournament_id, now_ms(), nx=True)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            raise StoreUnavailable(f"Redis did not confirm the write: {exc}") from exc
        return Appended(0, entry["hash"], True)

    def append_tournament(self, tournament_id: str, entry: dict[str, Any], prev: str,
                          signature: str | None = None) -> Appended:
        return self._append_at(keys.tournament_keys(tournament_id), tournament_id, entry, prev, signature)

    def read_tournament(self, tournament_id: str, start: int = 0) -> tuple[list[dict[str, Any]], Tip]:
        k = keys.tournament_keys(tournament_id)
        length, head, *rows = self._read_since(keys=[k.log, k.head], args=[keys.stream_id(max(start, 0))])
        if not length:
            raise GameNotFound(tournament_id)
        return [codec.unpack(raw, tournament_id) for raw in rows], Tip(int(length), text_of(head) if head else GENESIS)

    def tournament_secret(self, tournament_id: str) -> bytes | None:
        raw = self.redis.get(keys.tournament_keys(tournament_id).secret)
        return bytes.fromhex(text_of(raw)) if raw else None

    def list_tournaments(self) -> list[str]:
        return [text_of(t) for t in self.redis.zrange(keys.TOURNAMENTS_INDEX, 0, -1)]

    def newest_tournaments(self, offset: int = 0, limit: int | None = None) -> list[str]:
        stop = -1 if limit is None else offset + limit - 1
        return [text_of(t) for t in self.redis.zrevrange(keys.TOURNAMENTS_INDEX, offset, stop)]
