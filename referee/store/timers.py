"""Time control's timers on the log's Redis: one sorted set (``keys.TIMERS``) of each game's next deadline, which
the schedulers take due games from by lease (``CLAIM_TIMERS``), so that several split them.
"""

from __future__ import annotations

from typing import cast

from . import keys
from .indexes import Indexes
from .replies import text_of


class Timers(Indexes):
    """The games' timers (a part of :class:`referee.store.RedisStore`)."""

    def set_timer(self, game_id: str, when_ms: int | None) -> None:
        if when_ms is None:
            self.redis.zrem(keys.TIMERS, game_id)
        else:
            self.redis.zadd(keys.TIMERS, {game_id: when_ms})

    def set_timers(self, timers: list[tuple[str, int | None]]) -> None:
        self._score_members(keys.TIMERS, timers)

    def due_timers(self, now_ms_: int, limit: int = 100) -> list[tuple[str, int]]:
        rows = cast(list[tuple[bytes, float]],
                    self.redis.zrangebyscore(keys.TIMERS, "-inf", now_ms_, start=0, num=limit, withscores=True))
        return [(text_of(game), int(score)) for game, score in rows]

    def claim_timers(self, now_ms_: int, limit: int = 100, lease_ms: int = 30_000) -> list[tuple[str, int]]:
        rows = self._claim_timers(keys=[keys.TIMERS], args=[now_ms_, limit, now_ms_ + lease_ms])
        return [(text_of(rows[i]), int(float(rows[i + 1]))) for i in range(0, len(rows), 2)]
