"""Every metric of the referee, defined here and nowhere else (CONTRACT section 13, "Metrics").

The web app (``referee/observability.py``), the replay loop (``workers/projector.py``), the deadline
scheduler and the deliveries count into the series below; ``GET /metrics`` answers them in the Prometheus
text format, one view over every process:

* **multi-process mode** (prometheus_client's, when ``PROMETHEUS_MULTIPROC_DIR`` is set before the process
  imports this module): every process writes its values into files of its own in that directory, and a
  scrape adds them up (``MultiProcessCollector``). ``referee serve`` makes the directory
  (:func:`default_directory`: on ``/dev/shm``, else ``<REFEREE_VAR>/metrics``), empties it at start and
  hands it to every child (:func:`prepare_directory`);
  gunicorn's ``child_exit`` marks a dead web worker (:func:`mark_process_dead`). Counters and histograms
  of a process that died stay counted, as they should. No gauge is kept in the files: the gauges are read
  from Redis at scrape time (:class:`ReadAtScrape`), by whichever web worker answers.
* otherwise (a single process, the tests' apps) the process's own values.

=================================== ========= ==================================================
series                              type      what
=================================== ========= ==================================================
``referee_http_requests_total``     counter   answers of the web app by ``endpoint`` (Flask's
                                              endpoint, ``none`` for an unknown route), ``method``,
                                              ``status``
``referee_submissions_total``       counter   signed submissions (``POST`` to the submissions
                                              endpoints) by ``kind`` (``moves``, ``accept``, …) and
                                              ``outcome`` (``accepted``, ``illegal``, ``conflict``,
                                              ``refused``, ``limited``, ``unavailable``, ``error``)
``referee_submit_seconds``          histogram time in the app of a submission, by ``kind``
``referee_replay_lag_seconds``      histogram append → projection: from a log entry's ``at`` to the
                                              replay worker's projection holding it
``referee_ready_games``             gauge     games waiting for a replay worker (the ready list)
``referee_games``                   gauge     games stored (the games index; by status: not kept)
``referee_deliveries_total``        counter   webhook, mail and confirmation deliveries by ``kind``
                                              and ``outcome`` (``ok``, ``failed``, ``skipped``,
                                              ``disabled``)
``referee_timeouts_total``          counter   ``timeout`` entries the deadline scheduler appended
``referee_archived_games_total``    counter   games moved to the archive (``referee archive``, the
                                              replay workers' archiving passes)
``referee_redis_used_memory_bytes`` gauge     ``used_memory`` of each Redis (``redis`` = ``log``,
                                              ``work``)
``referee_redis_maxmemory_bytes``   gauge     its ``maxmemory`` (0: no limit)
=================================== ========= ==================================================
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

log = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST

REQUESTS = Counter("referee_http_requests", "Answers of the web app by endpoint, method and status",
                   ["endpoint", "method", "status"])
SUBMISSIONS = Counter("referee_submissions", "Signed submissions by kind and outcome", ["kind", "outcome"])
SUBMIT_SECONDS = Histogram("referee_submit_seconds", "Time in the app of a signed submission, by kind", ["kind"],
                           buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
REPLAY_LAG = Histogram("referee_replay_lag_seconds",
                       "From a log entry's 'at' to the replay worker's projection holding it",
                       buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0))
DELIVERIES = Counter("referee_deliveries", "Deliveries (webhook, mail, confirm) by kind and outcome",
                     ["kind", "outcome"])
TIMEOUTS = Counter("referee_timeouts", "Timeout entries appended by the deadline scheduler")
ARCHIVED = Counter("referee_archived_games", "Finished games moved to the archive")


def outcome_of(status: int) -> str:
    """A submission's outcome from its HTTP status.

    >>> [outcome_of(s) for s in (200, 202, 422, 409, 429, 503, 400, 500)]
    ['accepted', 'accepted', 'illegal', 'conflict', 'limited', 'unavailable', 'refused', 'error']
    """
    if status < 300:
        return "accepted"
    return {422: "illegal", 409: "conflict", 429: "limited", 503: "unavailable"}.get(
        status, "refused" if status < 500 else "error")


def multiprocess_directory() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


#: a memory-backed file system, where it is: the multi-process files' home under ``referee serve``
SHARED_MEMORY = Path("/dev/shm")


def default_directory(var: str | os.PathLike[str]) -> Path:
    """Where ``referee serve`` keeps the multi-process files unless ``PROMETHEUS_MULTIPROC_DIR`` says: on
    ``/dev/shm`` (memory), in a folder named by the user and ``var``, so that a full data disk never reaches
    them — prometheus_client memory-maps them, and a page of a mapped file that the full disk cannot hold is a
    ``SIGBUS`` that kills the process (issue 50); ``<var>/metrics`` where there is no ``/dev/shm``."""
    if SHARED_MEMORY.is_dir() and os.access(SHARED_MEMORY, os.W_OK):
        tag = hashlib.sha256(str(Path(var).resolve()).encode()).hexdigest()[:12]
        return SHARED_MEMORY / f"referee-metrics-{os.getuid()}-{tag}"
    return Path(var) / "metrics"


def prepare_directory(path: str | os.PathLike[str]) -> Path:
    """Make the multi-process directory, or empty it of a previous run's files (prometheus_client: it must be
    wiped between runs). Only ``*.db`` files are removed."""
    directory = Path(path)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink(missing_ok=True)
    return directory.resolve()


def mark_process_dead(pid: int) -> None:
    """A process of the multi-process view is gone (gunicorn's ``child_exit``): its live gauges' files go."""
    if multiprocess_directory():
        from prometheus_client import multiprocess  # noqa: PLC0415

        multiprocess.mark_process_dead(pid)


class ReadAtScrape:
    """A gauge read when it is scraped (from Redis: a few commands a scrape, whatever the number of games).
    ``read()`` returns a number, or ``{label values: number}`` for a gauge with ``labels``; a read that fails
    leaves the gauge out of that scrape (logged)."""

    def __init__(self, name: str, documentation: str, read: Callable[[], float | Mapping[tuple[str, ...], float]],
                 labels: Iterable[str] = ()):
        self.name, self.documentation, self.read, self.labels = name, documentation, read, list(labels)

    def collect(self) -> Iterator[Metric]:
        try:
            value = self.read()
        except Exception as exc:  # Redis down: the scrape still answers the rest
            log.warning("metric %s not read: %s", self.name, exc)
            return
        family = GaugeMetricFamily(self.name, self.documentation, labels=self.labels or None)
        if isinstance(value, Mapping):
            for label_values, number in value.items():
                family.add_metric(list(label_values), float(number))
        else:
            family.add_metric([], float(value))
        yield family


class _ThisProcess:
    """This process's own metrics (the default registry), when there is no multi-process directory."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def exposition(collectors: Iterable[Any] = ()) -> bytes:
    """The text format of every metric: the sum over every process of the multi-process directory (or this
    process's own), and ``collectors`` read now."""
    registry = CollectorRegistry(auto_describe=False)
    directory = multiprocess_directory()
    if directory:
        from prometheus_client.multiprocess import MultiProcessCollector  # noqa: PLC0415

        MultiProcessCollector(registry, path=directory)
    else:
        registry.register(_ThisProcess())  # type: ignore[arg-type]
    for collector in collectors:
        registry.register(collector)
    return generate_latest(registry)
