"""The event streams each client address may hold open (``REFEREE_MAX_STREAMS_PER_CLIENT``; issue 37, item 9):
slots leased in the work Redis, shared by every web process, or in this process with the memory store. The
stream endpoints (``events.py``) take a slot before they answer and hold it while they stream."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from flask import current_app
from redis.exceptions import RedisError

from referee.store.keys import STREAM_SLOTS
from referee.store.scripts import TAKE_STREAM_SLOT

log = logging.getLogger(__name__)

#: the key of a client's stream slots in the work Redis
SLOTS_KEY = STREAM_SLOTS


class StreamSlots:
    """The event streams each client address holds open, over every web process that shares the work Redis (a
    sorted set per address: a stream's id and when its lease ends), or in this process with the memory store.
    :meth:`take` gives a stream a slot, or None when the address holds ``cap`` already; the stream renews its
    lease while it runs (:meth:`held`) and gives the slot back when it ends or its client goes away. A slot
    whose lease ran out (its process died) is dropped at the next :meth:`take` of that address, and the key
    itself expires with its last lease."""

    def __init__(self, redis_client: Any, cap: int, lease: float):
        self.redis = redis_client
        self.cap = cap
        self.lease_ms = int(lease * 1000)
        self.local: dict[str, dict[str, float]] = {}
        self.lock = threading.Lock()
        self._take = redis_client.register_script(TAKE_STREAM_SLOT) if redis_client is not None else None

    def take(self, address: str, client: str = "") -> str | None:
        """A new stream's slot id, or None when ``address`` holds ``cap`` streams (never None with no cap, or when
        the work Redis cannot be reached: the limits are not enforced then, as the rate limits are not). A
        ``client`` that names itself (``?client=``: a browser's id) holds one slot: its new stream takes over the
        slot of its earlier one, which it closed (the server notices only at that stream's next write)."""
        slot = f"{client}:{uuid.uuid4().hex}" if client else uuid.uuid4().hex
        if self.cap <= 0:
            return slot
        now_ms = int(time.time() * 1000)
        if self._take is None:
            with self.lock:
                held = {k: end for k, end in self.local.get(address, {}).items()
                        if end > now_ms and not (client and k.startswith(client + ":"))}
                if len(held) >= self.cap:
                    return None
                held[slot] = now_ms + self.lease_ms
                self.local[address] = held
            return slot
        try:
            taken = self._take(keys=[SLOTS_KEY.format(address=address)],
                               args=[now_ms, self.lease_ms, self.cap, slot, client])
        except RedisError:
            log.exception("could not count the event streams of %s; not limited", address)
            return slot
        return slot if int(taken) else None

    def renew(self, address: str, slot: str) -> bool:
        """Renew the slot's lease; False when the slot is gone (its client's newer stream took it over: this
        stream ends)."""
        end = int(time.time() * 1000) + self.lease_ms
        if self.cap <= 0:
            return True
        if self._take is None:
            with self.lock:
                held = self.local.get(address, {})
                if slot not in held:
                    return False
                held[slot] = end
            return True
        try:
            key = SLOTS_KEY.format(address=address)
            pipe = self.redis.pipeline(transaction=True)
            pipe.zadd(key, {slot: end}, xx=True, ch=True)
            pipe.pexpire(key, self.lease_ms)
            changed, _ = pipe.execute()
            return bool(changed)
        except RedisError:
            log.warning("could not renew an event stream's slot of %s", address)
            return True

    def release(self, address: str, slot: str) -> None:
        if self.cap <= 0:
            return
        if self._take is None:
            with self.lock:
                self.local.get(address, {}).pop(slot, None)
            return
        try:
            self.redis.zrem(SLOTS_KEY.format(address=address), slot)
        except RedisError:  # its lease runs out
            log.warning("could not give back an event stream's slot of %s", address)

    def held(self, address: str, slot: str, stream: Iterable[bytes]) -> Iterator[bytes]:
        """``stream``, renewing the slot's lease as it goes (at every chunk a third of a lease after the last
        renewal: a stream yields at least once a heartbeat) and giving the slot back when it ends."""
        renewed = time.monotonic()
        try:
            for chunk in stream:
                if time.monotonic() - renewed >= self.lease_ms / 3000:
                    if not self.renew(address, slot):
                        return  # taken over by its client's newer stream
                    renewed = time.monotonic()
                yield chunk
        finally:
            self.release(address, slot)


def stream_slots(app: Any = None) -> StreamSlots:
    """The app's :class:`StreamSlots` (``app.extensions["referee.stream_slots"]``), made on first use: on the
    work Redis (the store's ``queue_redis``), a lease of three heartbeats (at least 30 s)."""
    app = app or current_app
    found = app.extensions.get("referee.stream_slots")
    if found is None:
        config = app.config
        store = app.extensions["referee.store"]
        client = getattr(store, "queue_redis", None) if config["REFEREE_STORE"] == "redis" else None
        lease = max(30.0, 3 * float(config["REFEREE_SSE_HEARTBEAT"]))
        found = app.extensions.setdefault("referee.stream_slots", StreamSlots(
            client, int(config["REFEREE_MAX_STREAMS_PER_CLIENT"]), lease))
    return found  # type: ignore[no-any-return]
