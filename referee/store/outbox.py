"""The outbox on the log's Redis: the stream of events the delivery workers send (``{outbox}:stream``, capped),
each event added once by its id (``EMIT_EVENT`` and its ``{outbox}:seen:<id>`` mark).
"""

from __future__ import annotations

import json
from typing import Any

from . import keys
from .connection import StoreConnection
from .replies import event_of, rows_of


class Outbox(StoreConnection):
    """The outbox (a part of :class:`referee.store.RedisStore`)."""

    def emit_events(self, events: list[dict[str, Any]]) -> int:
        # One round trip for the whole batch (issue 13): a catch-up of N entries emits about N events, and on
        # the durable Redis (appendfsync always) each separate call waited for its own fsync.
        if not events:
            return 0
        replies = self._evalsha_many(self.redis, self._emit_event, [
            ([keys.OUTBOX, keys.OUTBOX_SEEN.format(event=event["id"])],
             [json.dumps(event, separators=(",", ":"), ensure_ascii=False), keys.OUTBOX_SEEN_TTL, keys.OUTBOX_MAXLEN])
            for event in events])
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return sum(int(added) for added in replies)

    def read_outbox(self, count: int = 1000) -> list[dict[str, Any]]:
        return [event_of(fields) for _id, fields in rows_of(self.redis.xrange(keys.OUTBOX, count=count))]
