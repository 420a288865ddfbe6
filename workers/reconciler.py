"""The reconciler: finds games whose projection lags their log with no replay job on the way (a web
process died between its append and the enqueue, a worker was killed mid-job, Redis lost the queue)
and queues a job for each. Runs in every ``referee worker`` (a thread) and as ``referee reconcile``."""

from __future__ import annotations

import logging
import threading

from rq import Queue

from referee.clock import now_ms
from referee.store.base import LogStore

from .queue import enqueue_replay

log = logging.getLogger(__name__)


def reconcile_once(store: LogStore, queue: Queue, stale_after: float = 10.0) -> list[str]:
    """Queue a replay job for every lagging game whose pending flag is absent or older than
    ``stale_after`` seconds (a fresh flag means a job is queued or running). Returns those games."""
    now = now_ms()
    queued = []
    for game_id, length, _seq, pending in store.lagging_games():
        if pending is not None and now - pending < stale_after * 1000:
            continue
        store.mark_pending(game_id, now)
        enqueue_replay(queue, game_id, f"reconcile-{game_id}-{length}-{now}")
        queued.append(game_id)
    if queued:
        log.info("reconciler queued replays of %s", ", ".join(queued))
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
