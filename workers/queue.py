"""How appends reach the replay workers: a *ready list* per queue, and RQ for retries and failures.

Deduplication: a per-game *pending* flag (``game:{id}:pending``) means "a replay is on its way or running
for this game". The append script raises it with ``SET NX``, and only the append that raised it notifies
the workers (:class:`ReplayDispatch`). The replay folds until it has caught up with the log and then
releases the flag atomically, only if no entry arrived meanwhile (``RELEASE_PENDING``); so a burst of
moves, or a steady stream of them, costs one notification per game, not one per move.

The notification is one ``LPUSH`` of the game id onto its shard of the queue's ready list
(``referee:ready:<queue>:<shard>``, one of ``READY_SHARDS`` lists chosen by the game id), drained by the
``referee worker`` that owns the shard (``workers/replayloop.py``: ``BRPOP``, then the rest of its lists in one
script of ``RPOP … count``). Every game's catch-ups so go to one worker, which keeps its fold and folds each
entry once; when any worker drained any list, two workers each folded every entry of a game they took turns
with (issue 28: twice the workers' CPU per move). The unsharded list ``referee:ready:<queue>`` is still
drained by every worker (what an older version pushed). It used to be one RQ job per raised flag; RQ's
bookkeeping around a job (about 27 round trips and 3 ms of CPU) cost two to three times the catch-up it
wrapped (issue 13, ``docs/performance.md``). RQ stays for what it does well: a catch-up that fails is handed to RQ as a
``replay_game`` job (:func:`enqueue_replay`), retried by RQ's scheduler and kept in its failed registry.

Where the list lives (``RedisStore.ready_redis``): on the log's Redis, so that the append script that
raises the flag pushes the game itself (``APPEND_ENTRY``'s optional KEYS[5]: the accept path stays one
round trip, and no notification can be lost between the append and the push); on a Redis Cluster, whose
scripts touch one slot, on RQ's plain Redis, pushed by :class:`ReplayDispatch` after the append.

Nothing is lost if a notification is: the reconciler (``workers/reconciler.py``) pushes every game whose
projection lags its log and whose flag went stale (a web process that died between its append and the
push, a worker killed mid-catch-up, a work Redis that lost the list).
"""

from __future__ import annotations

from typing import Any

import redis
from rq import Queue, Retry
from rq.job import Job
from rq.serializers import JSONSerializer

from referee.store.keys import READY_SHARDS, ready_shard_key, ready_shard_list

REPLAY_JOB = "workers.jobs.replay_game"
DEFAULT_QUEUE = "referee"
#: the ready list of a queue: game ids whose log has entries their projection lacks
READY_KEY = "referee:ready:{queue}"


def replay_queue(connection: redis.Redis, name: str = DEFAULT_QUEUE) -> Queue:
    return Queue(name, connection=connection, serializer=JSONSerializer)


def ready_key(queue: Queue | str) -> str:
    return READY_KEY.format(queue=queue if isinstance(queue, str) else queue.name)


def ready_keys(queue: Queue | str) -> list[str]:
    """Every list of ``queue``'s ready list: the unsharded one, then its shards in order."""
    base = ready_key(queue)
    return [base] + [ready_shard_list(base, shard) for shard in range(READY_SHARDS)]


def ready_key_for(queue: Queue | str, game_id: str) -> str:
    """The shard of ``queue``'s ready list that ``game_id``'s notifications go onto."""
    return ready_shard_key(ready_key(queue), game_id)


def ready_count(store: Any, queue: Queue | str) -> int:
    """How many notifications wait in ``queue``'s ready list, all shards (a game may be named more than once)."""
    pipe = store.ready_redis.pipeline(transaction=False)
    for key in ready_keys(queue):
        pipe.llen(key)
    return sum(int(n) for n in pipe.execute())


def enqueue_replay(queue: Queue, game_id: str, job_id: str) -> Job:
    """Hand ``game_id``'s catch-up to RQ (after a failure): retried by the worker's scheduler, kept in the
    failed registry when every retry failed."""
    return queue.enqueue(REPLAY_JOB, game_id, job_id=job_id, result_ttl=0, failure_ttl=7 * 24 * 3600,
                         job_timeout=600, retry=Retry(max=3, interval=[1, 5, 30]),
                         description=f"replay {game_id}")


class ReplayDispatch:
    """The dispatcher of web processes, the deadline scheduler and the gateway, for the games of ``store``
    (a ``RedisStore``): it asks the store to push onto ``queue``'s ready list in its append scripts
    (``use_ready_list``), and where the store cannot (a cluster) :meth:`notify` pushes: one ``LPUSH`` onto the
    game's shard per raised pending flag."""

    def __init__(self, queue: Queue, store: Any):
        self.queue = queue
        self.key = ready_key(queue)
        self.connection = store.ready_redis
        store.use_ready_list(self.key)

    def notify(self, game_id: str, position: int) -> None:
        self.connection.lpush(ready_shard_key(self.key, game_id), game_id)
