"""The reconciler: finds games whose projection lags their log with no replay on the way (a web process
died between its append and its notification, a worker was killed mid-catch-up, the work Redis lost the
ready list) and pushes each onto the ready list again (``workers/queue.py``). Runs in every ``referee
worker`` (a thread) and as ``referee reconcile``."""

from __future__ import annotations

import logging
import time

from rq import Queue

from referee.clock import now_ms
from referee.store.base import LogStore

from .looping import PassLoop
from .queue import ReplayDispatch

log = logging.getLogger(__name__)


def reconcile_once(store: LogStore, queue: Queue, stale_after: float = 10.0, full: bool | None = None) -> list[str]:
    """Push every lagging game whose pending flag is absent or older than ``stale_after`` seconds onto
    ``queue``'s ready list (a fresh flag means a replay is on its way or running). Returns those games.

    A pass looks only at the games whose flag is stale (``store.stale_pending``: the index of raised flags,
    so its cost does not grow with the games stored); a stale flag on a game that does not lag (a worker
    died between storing the projection and releasing the flag) is released. A *full* pass looks at every
    game: ``full=True``, or by default when the derived data was lost (``store.work_intact()`` is false: a
    work Redis that restarted empty lags every game with no flag raised); after it the store is marked
    intact again."""
    if full is None:
        full = not store.work_intact()
    now = now_ms()
    queued = []
    dispatch = ReplayDispatch(queue, store)
    if full:
        candidates = store.lagging_games()
    else:
        stale = store.stale_pending(now - int(stale_after * 1000))
        candidates = store.lagging_games(stale) if stale else []
        lagging = {game_id for game_id, *_rest in candidates}
        for game_id in stale:
            if game_id not in lagging:
                store.release_pending(game_id, store.tip(game_id).seq)
    for game_id, length, _seq, pending in candidates:
        if pending is not None and now - pending < stale_after * 1000:
            continue
        store.mark_pending(game_id, now)
        dispatch.notify(game_id, length)
        queued.append(game_id)
    if full:
        store.mark_work_intact()
    if queued:
        log.info("reconciler pushed the replays of %s", ", ".join(queued))
    return queued


class Reconciler:
    """Runs :func:`reconcile_once` every ``every`` seconds until :meth:`stop`, a full pass every ``full_every``
    seconds (what a best-effort pending index on a Redis Cluster may miss; on one Redis the index is
    written by the same scripts as the flags, and the full pass finds nothing)."""

    def __init__(self, store: LogStore, queue: Queue, every: float = 5.0, stale_after: float = 10.0,
                 full_every: float = 600.0):
        self.store, self.queue, self.every, self.stale_after = store, queue, every, stale_after
        self.full_every = full_every
        self._last_full = time.monotonic()
        self._loop = PassLoop("referee-reconciler", self.run_once, pause=every, retry=every)

    def run_once(self) -> list[str]:
        full = time.monotonic() - self._last_full >= self.full_every
        queued = reconcile_once(self.store, self.queue, self.stale_after, full=True if full else None)
        if full:
            self._last_full = time.monotonic()
        return queued

    def start(self) -> Reconciler:
        self._loop.start()
        return self

    def request_stop(self) -> None:
        self._loop.request_stop()

    def stop(self) -> None:
        self._loop.stop()
