"""Replay bookkeeping on the log's Redis: each game's pending flag (raised by an append, cleared by the replay
job that stored the projection up to the log's end: ``RELEASE_PENDING``) and the pending index the reconciler
reads for flags left standing; the games whose projection lags their log.
"""

from __future__ import annotations

from ..clock import now_ms
from . import keys
from .indexes import Indexes
from .replies import text_of


class PendingFlags(Indexes):
    """The pending flags and their index (a part of :class:`referee.store.RedisStore`)."""

    def mark_pending(self, game_id: str, now_ms_: int) -> None:
        index = [] if self.cluster else [keys.PENDING_INDEX]
        self._mark_pending(keys=[keys.game_keys(game_id).pending, *index], args=[now_ms_, game_id])
        if self.cluster:
            self._index_pending([(game_id, now_ms_)])

    def release_pending(self, game_id: str, seq: int) -> bool:
        return self.release_many([(game_id, seq)])[0]

    def release_many(self, seqs: list[tuple[str, int]]) -> list[bool]:
        now = now_ms()
        index = [] if self.cluster else [keys.PENDING_INDEX]
        calls = []
        for game_id, seq in seqs:
            k = keys.game_keys(game_id)
            calls.append(([k.log, k.pending, *index], [seq, now, game_id]))
        replies = self._evalsha_many(self.redis, self._release_pending, calls)
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        released = [bool(int(reply)) for reply in replies]
        if self.cluster and seqs:
            self._index_pending([(game_id, None if done else now) for (game_id, _), done in zip(seqs, released,
                                                                                               strict=True)])
        return released

    def stale_pending(self, before_ms: int, limit: int = 10_000) -> list[str]:
        return [text_of(game) for game in self.redis.zrangebyscore(keys.PENDING_INDEX, "-inf", before_ms, start=0,
                                                                  num=limit)]

    def pending_since(self, game_id: str) -> int | None:
        raw = self.redis.get(keys.game_keys(game_id).pending)
        return int(raw) if raw is not None else None

    def lagging_games(self, games: list[str] | None = None) -> list[tuple[str, int, int, int | None]]:
        games = self.live_games() if games is None else games
        out: list[tuple[str, int, int, int | None]] = []
        for chunk_start in range(0, len(games), 500):
            chunk = games[chunk_start:chunk_start + 500]
            logs, work = self.redis.pipeline(transaction=False), self.work.pipeline(transaction=False)
            for game in chunk:
                k = keys.game_keys(game)
                logs.xlen(k.log)
                logs.get(k.pending)
                work.hget(k.projection, "seq")
            log_replies, seqs = logs.execute(), work.execute()
            for i, game in enumerate(chunk):
                length, pending = log_replies[2 * i: 2 * i + 2]
                seq = seqs[i]
                length, seq = int(length or 0), int(seq or 0)
                if length > seq:
                    out.append((game, length, seq, int(pending) if pending is not None else None))
        return out
