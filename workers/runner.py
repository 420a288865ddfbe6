"""``referee worker``: an RQ worker for the replay queue, with RQ's scheduler (for retries) and the
reconciler thread.

The worker class is RQ's ``SimpleWorker`` by default: jobs run in the worker process itself, so the
projector keeps each game's fold between jobs and a job folds only the new entries (a forking worker
would fold every log from scratch in each job). Crash safety does not depend on the class: a killed
worker's job is redone from the stored projection by the next job or by the reconciler. Either class
runs only the referee's own job functions (``workers/allowlist.py``).
"""

from __future__ import annotations

import logging

import redis
from rq.serializers import JSONSerializer

from referee.store import RedisStore

from . import jobs
from .allowlist import RefereeSimpleWorker, RefereeWorker
from .queue import replay_queue
from .reconciler import Reconciler, reconcile_once

log = logging.getLogger(__name__)

#: RQ's worker classes with the referee's allow-list of job functions (``workers/allowlist.py``).
WORKER_CLASSES = {"simple": RefereeSimpleWorker, "fork": RefereeWorker}


def run_worker(redis_url: str, queue_name: str = "referee", *, work_url: str | None = None, burst: bool = False,
               worker_class: str = "simple", reconcile_every: float = 5.0, stale_after: float = 10.0,
               name: str | None = None, logging_level: str = "WARNING") -> bool:
    """Run a replay worker until it is stopped (SIGINT/SIGTERM: RQ's warm shutdown) or, with ``burst``,
    until the queue is empty. ``redis_url`` is the log's Redis, ``work_url`` the queue's and projections'
    (default: the same). Returns whether any job ran."""
    work_url = work_url or redis_url
    jobs.configure(redis_url, work_url)
    connection = redis.Redis.from_url(work_url)
    queue = replay_queue(connection, queue_name)
    store = RedisStore.from_url(redis_url, work_url=work_url)
    reconcile_once(store, queue, stale_after)  # pick up whatever a previous worker left unfinished
    reconciler = None
    if not burst and reconcile_every > 0:
        reconciler = Reconciler(store, queue, reconcile_every, stale_after)
        reconciler.start()
    worker = WORKER_CLASSES[worker_class]([queue], connection=connection, serializer=JSONSerializer, name=name)
    try:
        return worker.work(burst=burst, with_scheduler=True, logging_level=logging_level)
    finally:
        if reconciler is not None:
            reconciler.stop()
        store.close()
