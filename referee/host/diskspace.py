"""The free space under the log Redis's files, and the floor kept above the full disk (CONTRACT section 13,
"A full disk"; issue 50).

Redis with ``appendfsync always`` does not go on after a failed write of its append-only file: it exits. So
the referee keeps a floor, ``REFEREE_MIN_FREE_DISK`` bytes (default 1024 × ``REFEREE_MAX_BODY``: room for a
thousand of the largest writes in flight, 64 MiB), free under the log Redis's data directory: below it every
write is refused before it reaches Redis (503 ``log/disk_full``, ``referee/observability.py``), and the
workers' own periodic writes to the log Redis skip their pass; reads go on. Nothing is latched: each write
looks again (one ``statvfs``, a few microseconds), so writes resume by themselves when space is back.

The folder watched is ``REFEREE_LOG_DISK``; unset, it is the log Redis's own ``dir`` (``CONFIG GET dir``),
when that folder exists on this machine (``referee serve``'s embedded Redis, a Redis on the same host). A
Redis elsewhere, a cluster, or a Redis that refuses ``CONFIG``: the disk is ``unknown`` and no floor is
applied here (watch that host's disk yourself; ``docs/operations.md``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

#: how long a failed look-up of the log Redis's ``dir`` is trusted before it is tried again (seconds)
LOOKUP_AGAIN_AFTER = 30.0


def free_bytes(path: str | os.PathLike[str]) -> int | None:
    """Bytes an unprivileged writer may still write on ``path``'s file system; None when it cannot be asked."""
    try:
        stat = os.statvfs(path)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def redis_dir(client: Any) -> str | None:
    """The data directory a Redis reports (``CONFIG GET dir``), when it exists on this machine."""
    try:
        found = client.config_get("dir").get("dir")
    except Exception:
        return None
    if isinstance(found, bytes):
        found = found.decode()
    return found if found and os.path.isdir(found) else None


class LogDisk:
    """The disk of the log Redis: ``free()`` its free bytes (None: unknown), ``full()`` whether they are below
    ``floor``. ``directory`` is the folder; ``lookup`` finds it when it is not given (asked again after
    :data:`LOOKUP_AGAIN_AFTER` seconds when it found nothing)."""

    def __init__(self, floor: int, directory: str | None = None, lookup: Callable[[], str | None] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.floor = floor
        self.directory = directory
        self._lookup = lookup
        self._looked_at = float("-inf")
        self._clock = clock

    def path(self) -> str | None:
        if self.directory is None and self._lookup is not None and \
                self._clock() - self._looked_at >= LOOKUP_AGAIN_AFTER:
            self._looked_at = self._clock()
            self.directory = self._lookup()
        return self.directory

    def free(self) -> int | None:
        path = self.path()
        return None if path is None else free_bytes(path)

    def full(self) -> bool:
        """Below the floor (never when the floor is 0 or the disk is unknown)."""
        if not self.floor:
            return False
        free = self.free()
        return free is not None and free < self.floor

    def state(self) -> str:
        """``ok``, ``full`` or ``unknown``: what ``GET /health`` says of the disk."""
        free = self.free()
        if free is None:
            return "unknown"
        return "full" if self.floor and free < self.floor else "ok"


def log_disk(config: Any, client: Any = None) -> LogDisk:
    """The :class:`LogDisk` of ``config`` (``REFEREE_MIN_FREE_DISK``, ``REFEREE_LOG_DISK``), looking the folder
    up on ``client`` (the log Redis) when it is not set."""
    directory = config.get("REFEREE_LOG_DISK") or None
    lookup = (lambda: redis_dir(client)) if client is not None and directory is None else None
    return LogDisk(int(config.get("REFEREE_MIN_FREE_DISK") or 0), directory, lookup)
