"""The RQ queue of replay jobs, with RQ's JSON serializer (never pickle: job payloads are game ids).

Deduplication: a per-game *pending* flag (``game:{id}:pending``) means "a replay job is queued or
running for this game". The append script raises it with ``SET NX``, and only the append that raised it
queues a job (:class:`RQDispatch`). The job folds until it has caught up with the log and then releases
the flag atomically, only if no entry arrived meanwhile (``RELEASE_PENDING``); so a burst of moves, or
a steady stream of them, costs one job per game, not one per move. Job ids are deterministic
(``replay-<game>-<position>``, the position whose append raised the flag).
"""

from __future__ import annotations

import redis
from rq import Queue, Retry
from rq.job import Job
from rq.serializers import JSONSerializer

REPLAY_JOB = "workers.jobs.replay_game"
DEFAULT_QUEUE = "referee"


def replay_queue(connection: redis.Redis, name: str = DEFAULT_QUEUE) -> Queue:
    return Queue(name, connection=connection, serializer=JSONSerializer)


def enqueue_replay(queue: Queue, game_id: str, job_id: str) -> Job:
    """Queue one replay job for ``game_id``; failures are retried by the worker's scheduler."""
    return queue.enqueue(REPLAY_JOB, game_id, job_id=job_id, result_ttl=0, failure_ttl=7 * 24 * 3600,
                         job_timeout=600, retry=Retry(max=3, interval=[1, 5, 30]),
                         description=f"replay {game_id}")


class RQDispatch:
    """The web process's dispatcher: one RQ job per raised pending flag."""

    def __init__(self, queue: Queue):
        self.queue = queue

    def notify(self, game_id: str, position: int) -> None:
        enqueue_replay(self.queue, game_id, f"replay-{game_id}-{position}")
