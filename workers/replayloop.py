"""The replay loop of every ``referee worker``: drains the queue's ready list (``workers/queue.py``) and
brings each named game's projection up to its log with the worker's :class:`~workers.projector.Projector`.

One pass (:meth:`ReplayLoop.run_once`): ``BRPOP`` waits for the first game id, ``RPOP … count`` takes the
rest that are waiting (up to ``batch``), duplicates are dropped, and the games are caught up: those this
worker folded before together (``Projector.catch_up_many``: their reads, events, projections and
releases in four pipelines for the whole batch), the others, and any the batch could not finish, one by
one (``Projector.catch_up``: fold the new entries, write the projection, release the pending flag). So a
notification costs one or two commands for a whole batch of games, not an RQ job's bookkeeping each.

A catch-up that raises is handed to RQ as a ``replay_game`` job (retried by RQ's scheduler, kept in the
failed registry). A loop that dies mid-catch-up loses nothing: the game's pending flag stays set, goes
stale, and the reconciler pushes the game again (``workers/reconciler.py``); the catch-up is idempotent.

The loop runs in a thread of the worker process, beside RQ's own loop (retries, deliveries) in the main
thread; it has a projector of its own (a projector's cache is not shared across threads).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError
from rq import Queue

from referee import logs
from referee.clock import now_ms

from .looping import PassLoop
from .projector import Projector
from .queue import enqueue_replay, ready_key

log = logging.getLogger(__name__)


class ReplayLoop:
    """:meth:`run_once` for one pass, :meth:`drain` until the list is empty, :meth:`start`/:meth:`stop` for
    a thread."""

    def __init__(self, queue: Queue, projector: Projector, *, batch: int = 64,
                 on_finished: Callable[[str, str], Any] | None = None):
        self.queue = queue
        self.connection = projector.store.ready_redis  # type: ignore[attr-defined]
        self.key = ready_key(queue)
        self.projector = projector
        if on_finished is not None:
            projector.on_finished = on_finished
        self.batch = batch
        self._loop = PassLoop("referee-replay-loop", lambda: self.run_once(block=1.0))
        #: catch-ups done and handed to RQ after a failure, since the start (for logs and tests)
        self.done = 0
        self.failed = 0

    def take(self, block: float) -> list[str]:
        """The game ids waiting in the ready list, without duplicates, oldest first; waits up to ``block``
        seconds for the first one (0: no wait)."""
        if block > 0:
            first = self.connection.brpop([self.key], timeout=block)
            if first is None:
                return []
            names = [first[1]]
            more = self.connection.rpop(self.key, self.batch - 1) if self.batch > 1 else None
        else:
            names = []
            more = self.connection.rpop(self.key, self.batch)
        names += more or []
        return list(dict.fromkeys(name.decode() if isinstance(name, bytes) else name for name in names))

    def replay(self, game_id: str) -> bool:
        """Catch ``game_id`` up; on failure hand it to RQ (retries, the failed registry). Returns whether it
        was caught up here."""
        with logs.bound(game_id=game_id):
            try:
                self.projector.catch_up(game_id)
                self.done += 1
                return True
            except Exception:
                self.failed += 1
                log.exception("replay of %s failed; handed to RQ for retries", game_id)
                try:
                    enqueue_replay(self.queue, game_id, f"retry-{game_id}-{now_ms()}")
                except RedisError:  # the flag stays set: the reconciler pushes the game again once it is stale
                    log.exception("could not hand %s to RQ; the reconciler will push it again", game_id)
                return False

    def run_once(self, block: float = 0.0) -> int:
        """One pass: take what waits (waiting up to ``block`` s for the first) and catch each game up.
        Returns how many games were taken."""
        games = self.take(block)
        rest = games
        if len(games) > 1:  # the games folded here before, in one batch of round trips
            try:
                rest = self.projector.catch_up_many(games)
                self.done += len(games) - len(rest)
            except Exception:  # each game on its own then (idempotent: what the batch did is not done twice)
                log.exception("batched catch-up of %d games failed; one by one", len(games))
                rest = games
        for game_id in rest:
            self.replay(game_id)
        return len(games)

    def drain(self) -> int:
        """Pass after pass until the ready list is empty (``referee worker --burst``, tests)."""
        total = 0
        while True:
            taken = self.run_once(0)
            if not taken:
                return total
            total += taken

    def start(self) -> ReplayLoop:
        self._loop.start()
        return self

    def request_stop(self) -> None:
        self._loop.request_stop()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the current pass (a pass in progress finishes its games)."""
        self._loop.stop(timeout)
