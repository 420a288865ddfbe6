"""The reconciler: finds games whose projection lags their log with no replay on the way (a web process
died between its append and its notification, a worker was killed mid-catch-up, the work Redis lost the
ready list) and pushes each onto the ready list again (``workers/queue.py``). Runs in every ``referee
worker`` (a thread) and as ``referee reconcile``."""

from __future__ import annotations

import logging
import threading

from rq import Queue

from referee.clock import now_ms
from referee.store.base import LogStore

from .queue import ReplayDispatch

log = logging.getLogger(__name__)


def reconcile_once(store: LogStore, queue: Queue, stale_after: float = 10.0) -> list[str]:
    """Push every lagging game whose pending flag is absent or older than ``stale_after`` seconds onto
    ``queue``'s ready list (a fresh flag means a replay is on its way or running). Returns those games."""
    now = now_ms()
    queued = []
    dispatch = ReplayDispatch(queue, store)
    for game_id, length, _seq, pending in store.lagging_games():
        if pending is not None and now - pending < stale_after * 1000:
            continue
        store.mark_pending(game_id, now)
        dispatch.notify(game_id, length)
        queued.append(game_id)
    if queued:
        log.info("reconciler pushed the replays of %s", ", ".join(queued))
    return queued


class Reconciler(threading.Thread):
    """Runs :func:`reconcile_once` every ``every`` seconds until :meth:`stop`."""

    def __init__(self, store: LogStore, queue: Queue, every: float = 5.0, stale_after: float = 10.0):
        super().__init__(name="referee-reconciler", daemon=True)
        self.store, self.queue, self.every, self.stale_after = store, queue, every, stale_after
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                reconcile_once(self.store, self.queue, self.stale_after)
            except Exception:  # keep reconciling; a Redis blip must not end the thread
                log.exception("reconciler pass failed")
            self._stop_event.wait(self.every)

    def stop(self) -> None:
        self._stop_event.set()
