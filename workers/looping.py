"""The background loops of ``referee worker`` (replay loop, deadline scheduler, outbox router, reconciler):
each is one pass, done again and again in a daemon thread until it is stopped."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from redis.exceptions import RedisError

from referee.store import StoreUnavailable

log = logging.getLogger(__name__)


class PassLoop:
    """Calls ``one_pass()`` in a daemon thread named ``name`` until :meth:`stop`: ``pause`` seconds after each
    pass, ``retry`` seconds after a pass that failed. A failure never ends the loop: an unreachable Redis is
    a warning (it comes back), anything else is logged with its traceback."""

    def __init__(self, name: str, one_pass: Callable[[], object], pause: float = 0.0, retry: float = 1.0):
        self.name, self.one_pass, self.pause, self.retry = name, one_pass, pause, retry
        #: set by :meth:`stop`; a long pass may look at it to end early
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def run(self) -> None:
        """The loop itself, in the calling thread."""
        while not self.stopping.is_set():
            wait = self.pause
            try:
                self.one_pass()
            except (RedisError, StoreUnavailable):
                log.warning("%s: Redis is unavailable; again in %g s", self.name, self.retry)
                wait = self.retry
            except Exception:
                log.exception("%s: a pass failed; again in %g s", self.name, self.retry)
                wait = self.retry
            if wait:
                self.stopping.wait(wait)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the current pass (waiting up to ``timeout`` seconds for it)."""
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def request_stop(self) -> None:
        """Ask the loop to stop after its current pass, without waiting (:meth:`stop` waits): several loops asked
        first end their blocking reads together, not one after another."""
        self.stopping.set()
