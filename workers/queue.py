"""How appends reach the replay workers: a *ready list* per queue, and RQ for retries and failures.

Deduplication: a per-game *pending* flag (``game:{id}:pending``) means "a replay is on its way or running
for this game". The append script raises it with ``SET NX``, and only the append that raised it notifies
the workers (:class:`ReplayDispatch`). The replay folds until it has caught up with the log and then
releases the flag atomically, only if no entry arrived meanwhile (``RELEASE_PENDING``); so a burst of
moves, or a steady stream of them, costs one notification per game, not one per move.

The notification is one ``LPUSH`` of the game id onto the queue's ready list (``referee:ready:<queue>``,
on RQ's Redis), which every ``referee worker`` drains (``workers/replayloop.py``: ``BRPOP``, then the rest
of the list in one ``RPOP … count``). It used to be one RQ job per raised flag; RQ's bookkeeping around a
job (about 27 round trips and 3 ms of CPU) cost two to three times the catch-up it wrapped (issue 13,
``docs/performance.md``). RQ stays for what it does well: a catch-up that fails is handed to RQ as a
``replay_game`` job (:func:`enqueue_replay`), retried by RQ's scheduler and kept in its failed registry.

Nothing is lost if a notification is: the reconciler (``workers/reconciler.py``) pushes every game whose
projection lags its log and whose flag went stale (a web process that died between its append and the
push, a worker killed mid-catch-up, a work Redis that lost the list).
"""

from __future__ import annotations

import redis
from rq import Queue, Retry
from rq.job import Job
from rq.serializers import JSONSerializer

REPLAY_JOB = "workers.jobs.replay_game"
DEFAULT_QUEUE = "referee"
#: the ready list of a queue: game ids whose log has entries their projection lacks
READY_KEY = "referee:ready:{queue}"


def replay_queue(connection: redis.Redis, name: str = DEFAULT_QUEUE) -> Queue:
    return Queue(name, connection=connection, serializer=JSONSerializer)


def ready_key(queue: Queue | str) -> str:
    return READY_KEY.format(queue=queue if isinstance(queue, str) else queue.name)


def ready_count(queue: Queue) -> int:
    """How many notifications wait in ``queue``'s ready list (a game may be named more than once)."""
    return int(queue.connection.llen(ready_key(queue)))


def enqueue_replay(queue: Queue, game_id: str, job_id: str) -> Job:
    """Hand ``game_id``'s catch-up to RQ (after a failure): retried by the worker's scheduler, kept in the
    failed registry when every retry failed."""
    return queue.enqueue(REPLAY_JOB, game_id, job_id=job_id, result_ttl=0, failure_ttl=7 * 24 * 3600,
                         job_timeout=600, retry=Retry(max=3, interval=[1, 5, 30]),
                         description=f"replay {game_id}")


class ReplayDispatch:
    """The dispatcher of web processes, the deadline scheduler and the gateway: one ``LPUSH`` per raised
    pending flag onto the ready list of ``queue``."""

    def __init__(self, queue: Queue):
        self.queue = queue
        self.key = ready_key(queue)

    def notify(self, game_id: str, position: int) -> None:
        self.queue.connection.lpush(self.key, game_id)
