"""Only the referee's own job functions run (issue 17).

An RQ job names its function by dotted path, and a stock worker imports and calls whatever a job in its
queue names: anyone who can write to the work Redis could have the worker run ``os.mkdir`` (shown by the
security review) or any other function, or name one as a success/failure/stopped callback, or have the
worker send webhooks. The password on Redis (``referee/running/embedded_redis.py``) is the first lock; this is
the second: the referee's workers check every job against :data:`ALLOWED_JOBS` before it runs — before
its function is even imported (an import alone can run code) — and a job that names anything else, or
carries callbacks or webhooks (the referee's jobs have none), is logged and failed, never performed.

A new kind of job (deliveries, deadlines, …) is added to :data:`ALLOWED_JOBS` beside its function.

The stock ``rq worker`` command gets the same check with
``--worker-class workers.allowlist.RefereeSimpleWorker`` (or ``workers.allowlist.RefereeWorker``).
"""

from __future__ import annotations

import logging
from typing import Any

from rq.job import Job
from rq.utils import now
from rq.worker import SimpleWorker, Worker

from .queue import REPLAY_JOB

log = logging.getLogger(__name__)

#: Dotted paths of the functions a referee worker runs; nothing else.
#: the notification jobs (``workers/deliveries.py``, ``workers/mailjobs.py``), named here as strings so that
#: the allow-list imports nothing of them
NOTIFY_JOBS = ("workers.deliveries.deliver_webhook", "workers.deliveries.deliver_mail",
               "workers.deliveries.send_confirmation", "workers.mailjobs.process_mail")
ALLOWED_JOBS: frozenset[str] = frozenset({REPLAY_JOB, *NOTIFY_JOBS})

_CALLBACKS = ("_success_callback_name", "_failure_callback_name", "_stopped_callback_name")


def refusal(job: Job) -> str | None:
    """Why ``job`` must not run (``None``: it may). Reads the job's stored fields only; imports nothing."""
    try:
        func_name = job.func_name
        instance = job.instance
    except Exception as exc:  # malformed data: refuse rather than guess
        return f"its data cannot be read ({type(exc).__name__})"
    if func_name not in ALLOWED_JOBS:
        return f"{func_name!r} is not one of the referee's jobs ({', '.join(sorted(ALLOWED_JOBS))})"
    if instance is not None:
        return "it names a method of an object"
    named = [getattr(job, attribute, None) for attribute in _CALLBACKS]
    if any(named):
        return f"it names callbacks ({', '.join(name for name in named if name)})"
    if getattr(job, "webhooks", None):
        return "it asks for webhooks"
    return None


class AllowListMixin:
    """``perform_job`` that refuses a job :func:`refusal` objects to, before anything of it runs."""

    def perform_job(self, job: Job, queue: Any, *args: Any, **kwargs: Any) -> bool:
        reason = refusal(job)
        if reason is None:
            return super().perform_job(job, queue, *args, **kwargs)  # type: ignore[misc]
        log.error("refused job %s from queue %s: %s", job.id, job.origin, reason)
        for attribute in _CALLBACKS:  # nothing of the job runs, not even on failure
            setattr(job, attribute, None)
        if hasattr(job, "webhooks"):
            job.webhooks = []
        job.retries_left = None
        job.ended_at = now()
        execution = args[0] if args else kwargs.get("execution")
        extra = {"execution": execution} if execution is not None else {}
        self.handle_job_failure(job, queue=queue, started_job_registry=queue.started_job_registry,  # type: ignore[attr-defined]
                                exc_string=f"refused by the referee's allow-list: {reason}", **extra)
        return False


class RefereeSimpleWorker(AllowListMixin, SimpleWorker):
    """RQ's ``SimpleWorker`` (jobs in the worker process) with the allow-list."""


class RefereeWorker(AllowListMixin, Worker):
    """RQ's forking ``Worker`` with the allow-list (checked in the work horse, before the job runs)."""
