"""``referee worker``: the replay loop (``workers/replayloop.py``, a thread draining the queue's ready list),
an RQ worker for the replay queue's retries and the notify queue, with RQ's scheduler (for retries), the
reconciler thread and the deadline scheduler thread (``workers/deadlines.py``).

The worker class is RQ's ``SimpleWorker`` by default: jobs run in the worker process itself, so the
projector of a retry keeps each game's fold between jobs and a job folds only the new entries (a forking worker
would fold every log from scratch in each job). Crash safety does not depend on the class: a killed
worker's job is redone from the stored projection by the next job or by the reconciler. Either class
runs only the referee's own job functions (``workers/allowlist.py``).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import redis
from rq.serializers import JSONSerializer

from referee.config import load_config
from referee.host.diskspace import log_disk
from referee.host.runtime import settle_heap
from referee.notify.contacts import ContactService
from referee.store import RedisStore

from . import jobs
from .allowlist import RefereeSimpleWorker, RefereeWorker
from .archiver import archiver_of
from .deadlines import DeadlineScheduler
from .projector import Projector
from .queue import ReplayDispatch, replay_queue
from .reconciler import Reconciler, reconcile_once

if TYPE_CHECKING:
    from rq.worker import BaseWorker

log = logging.getLogger(__name__)

#: RQ's worker classes with the referee's allow-list of job functions (``workers/allowlist.py``).
WORKER_CLASSES: dict[str, type[BaseWorker]] = {"simple": RefereeSimpleWorker, "fork": RefereeWorker}


def run_worker(redis_url: str, queue_name: str = "referee", *, work_url: str | None = None, burst: bool = False,
               worker_class: str = "simple", reconcile_every: float = 5.0, stale_after: float = 10.0,
               name: str | None = None, logging_level: str = "WARNING", deadlines_every: float = 0.25,
               notify: bool | str = True) -> bool:
    """Run a replay worker until it is stopped (SIGINT/SIGTERM: RQ's warm shutdown) or, with ``burst``,
    until the queue is empty. ``redis_url`` is the log's Redis, ``work_url`` the queue's and projections'
    (default: the same). ``deadlines_every``: seconds between the deadline scheduler's passes (0: none; a
    burst worker makes one pass before it works). ``notify``: also route the outbox and run delivery jobs
    (webhooks, mail) from the notify queue, after replay jobs; ``"only"``: deliveries only (no replay loop).
    Returns whether any job or replay ran."""
    work_url = work_url or redis_url
    jobs.configure(redis_url, work_url)
    connection = redis.Redis.from_url(work_url)
    queue = replay_queue(connection, queue_name)
    queues = [] if notify == "only" else [queue]
    store = RedisStore.from_url(redis_url, work_url=work_url).replicas_from(load_config())
    reconcile_once(store, queue, stale_after, full=True)  # whatever a previous worker left unfinished, every game
    reconciler = None
    if not burst and reconcile_every > 0:
        reconciler = Reconciler(store, queue, reconcile_every, stale_after)
        reconciler.start()
    router = None
    if notify:
        from .deliveries import OutboxRouter, enqueue_jobs, notify_queue  # noqa: PLC0415

        config = load_config()
        contacts = ContactService(store.redis, enqueue_jobs(connection, queue_name, config["REFEREE_WEBHOOK_RETRIES"]),
                                  allow_private=config["REFEREE_WEBHOOK_PRIVATE"])
        router = OutboxRouter(store.redis, contacts, name=name or f"router-{os.getpid()}")
        if burst:
            router.run_once(block_ms=0)
        else:
            router.start()
        queues.append(notify_queue(connection, queue_name))
    deadlines = None
    if deadlines_every > 0:
        deadlines = DeadlineScheduler(store, ReplayDispatch(queue, store), every=deadlines_every,
                                      tournaments=jobs.tournaments(store, queue_name),
                                      disk=log_disk(load_config(), store.redis))
        if burst:
            deadlines.run_once()
        else:
            deadlines.start()
    archiver = archiver_of(store, load_config()) if not burst and notify != "only" else None
    if archiver is not None:
        archiver.start()
    loop = None
    if notify != "only":
        loop = jobs.replay_loop(queue, Projector(store))  # its own projector: the RQ retries use jobs.projector()
        if not burst:
            loop.start()
    worker = WORKER_CLASSES[worker_class](queues, connection=connection, serializer=JSONSerializer, name=name)
    if not burst:
        settle_heap()  # the start-up objects out of every full garbage collection (referee/host/runtime.py)
    log.info("worker %s on queue %s: %s", worker.name, queue_name,
             "deliveries only" if notify == "only" else "replays and deliveries" if notify else "replays")
    try:
        replayed = loop.drain() if loop is not None and burst else 0
        worked = worker.work(burst=burst, with_scheduler=True, logging_level=logging_level)
        if loop is not None and burst:
            replayed += loop.drain()  # what the jobs (deliveries, retries) appended meanwhile
        return worked or bool(replayed)
    finally:
        for part in (loop, reconciler, archiver, deadlines, router):  # asked together: their reads end together
            if part is not None and not burst:
                part.request_stop()
        if loop is not None and not burst:
            loop.stop()
        if reconciler is not None:
            reconciler.stop()
        if archiver is not None:
            archiver.stop()
        if deadlines is not None and not burst:
            deadlines.stop()
        if router is not None and not burst:
            router.stop()
        store.close()
