"""Device links (CONTRACT section 15): a sealed box that carries a key from one device to another, kept for a few
minutes and given out once.

The referee never sees what is in a box: the browser (or ``referee key link``) seals the key with AES-256-GCM under
a secret that travels only in the link's ``#fragment``. What is kept here is the box, its expiry and whether it was
taken — in the work Redis (``devlink:<id>``, a hash that expires with the link), or in memory with
``REFEREE_STORE=memory``. A taken link keeps its ``taken`` mark until it expires, so the first device can say the
key arrived; its box is gone the moment it is read.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

#: the id of a link: 16 random bytes, base64url (22 characters): not guessable, so a box cannot be fished for
LINK_ID_BYTES = 16
LINK_ID_PATTERN = r"^[A-Za-z0-9_-]{22}$"

_TAKE = """
local box = redis.call('HGET', KEYS[1], 'box')
if not box then return false end
redis.call('HDEL', KEYS[1], 'box')
redis.call('HSET', KEYS[1], 'taken', '1')
return box
"""


@dataclass(frozen=True)
class LinkStatus:
    taken: bool
    expires: str


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_link_id() -> str:
    return secrets.token_urlsafe(LINK_ID_BYTES)


class RedisDeviceLinks:
    """The links in a Redis (the work Redis: a link lives minutes, nothing of a game's record is in it)."""

    def __init__(self, redis: Any, seconds: float) -> None:
        self.redis = redis
        self.seconds = seconds
        self._take = redis.register_script(_TAKE)

    @staticmethod
    def _key(link: str) -> str:
        return f"devlink:{link}"

    def put(self, box: str) -> tuple[str, str]:
        """Keep ``box`` (base64url text); the link's id and its expiry (ISO 8601, UTC)."""
        link = new_link_id()
        expires_ms = int(time.time() * 1000 + self.seconds * 1000)
        expires = _iso(expires_ms)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(self._key(link), mapping={"box": box, "expires": expires, "taken": "0"})
        pipe.pexpireat(self._key(link), expires_ms)
        pipe.execute()
        return link, expires

    def take(self, link: str) -> str | None:
        """The box of ``link``, forgotten as it is given; None when it was taken, has expired or never was."""
        box = self._take(keys=[self._key(link)])
        if box is None:
            return None
        return box.decode() if isinstance(box, bytes) else str(box)

    def status(self, link: str) -> LinkStatus | None:
        taken, expires = self.redis.hmget(self._key(link), ["taken", "expires"])
        if expires is None:
            return None
        text = lambda value: value.decode() if isinstance(value, bytes) else str(value)  # noqa: E731
        return LinkStatus(taken=text(taken) == "1", expires=text(expires))


class MemoryDeviceLinks:
    """The same in this process's memory (``REFEREE_STORE=memory``: tests and a single process)."""

    def __init__(self, seconds: float, clock: Any = time.time) -> None:
        self.seconds = seconds
        self.clock = clock
        self._links: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _live(self, link: str) -> dict[str, Any] | None:
        found = self._links.get(link)
        if found is not None and found["expires_ms"] <= self.clock() * 1000:
            del self._links[link]
            return None
        return found

    def put(self, box: str) -> tuple[str, str]:
        link = new_link_id()
        expires_ms = int(self.clock() * 1000 + self.seconds * 1000)
        with self._lock:
            self._links[link] = {"box": box, "expires_ms": expires_ms, "taken": False}
        return link, _iso(expires_ms)

    def take(self, link: str) -> str | None:
        with self._lock:
            found = self._live(link)
            if found is None or found["box"] is None:
                return None
            box, found["box"], found["taken"] = found["box"], None, True
            return str(box)

    def status(self, link: str) -> LinkStatus | None:
        with self._lock:
            found = self._live(link)
            return None if found is None else LinkStatus(taken=found["taken"], expires=_iso(found["expires_ms"]))
