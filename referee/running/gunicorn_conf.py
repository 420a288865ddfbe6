"""gunicorn settings of ``referee serve`` and the ``Procfile`` (``gunicorn -c python:referee.running.gunicorn_conf
'referee.app:create_app()'``): the worker model, and which forwarded headers are believed.

**gevent workers** (``docs/service.md``, "Worker model"): each connection is a greenlet, not a thread,
so an open event stream (``GET /games/{id}/events``, waiting in ``XREAD BLOCK``) or a client trickling
its request costs some memory and one socket, never one of a fixed number of threads. gunicorn's gevent
worker monkey-patches the standard library before it loads the app, so redis-py's sockets, RQ and the
locks of the app's caches yield to the hub instead of blocking it.

Settings (environment): ``WEB_CONCURRENCY`` worker processes (default 2: one per core of the small
machines the referee runs on), ``REFEREE_WORKER_CONNECTIONS`` open connections per worker (default
2000), ``REFEREE_WORKER_CLASS`` to force another class (``gthread`` is the fallback when gevent is
not installed). Command-line options (``--workers``, ``--bind``) override this file.

**Heap**: once a worker has loaded the app, ``post_worker_init`` freezes its start-up objects out of the
garbage collector's full passes (``referee/host/runtime.py``: they were the tail of the move → verdict latency).

**Forwarded headers**: gunicorn by default believes ``X-Forwarded-Proto`` and header-borne ``SCRIPT_NAME``
from 127.0.0.1, so any local process could make the pages' links point at another host
(``SCRIPT_NAME: //evil.example``). Here only the proxies named in ``REFEREE_TRUSTED_PROXIES`` (none by
default) are trusted, and a header with an underscore from anyone else is dropped (the request is still
answered). The app applies the same setting itself (``referee/web/defences.py``).

**Metrics and logs** (``docs/operations.md``): ``child_exit`` tells prometheus_client's multi-process view
that a web worker is gone (``referee.host.metrics.mark_process_dead``). With ``REFEREE_LOG_FORMAT=json``
gunicorn's own messages and its access log (on, to stderr) are JSON lines of the root logger
(``referee.host.logs``): :class:`JsonLogger` writes one line per request with its method, path, status,
duration, request id and game id (from the WSGI environ, where ``referee/observability.py`` put them).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from gunicorn.glogging import Logger

from referee.addresses import with_mapped_forms
from referee.config import load_config
from referee.host.logs import configure_logging

_config = load_config()
_default_class = "gevent" if importlib.util.find_spec("gevent") is not None else "gthread"

worker_class = os.environ.get("REFEREE_WORKER_CLASS", _default_class)
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
#: open connections per gevent worker: 1,000 event streams + slow clients + the API, with room to spare
worker_connections = int(os.environ.get("REFEREE_WORKER_CONNECTIONS", "2000"))
#: gthread fallback only (gevent ignores it)
threads = 8
#: gevent workers read the request line and headers under this timeout (gunicorn's keep-alive timer),
#: so a client trickling its headers is cut after 5 s
keepalive = 5
#: a worker that misses heartbeats this long is restarted; event streams do not block the heartbeat
timeout = 30
#: on restart, open event streams get this long before they are cut (clients reconnect with Last-Event-ID)
graceful_timeout = 10
backlog = 2048

#: "" is: nobody; a proxy that connects IPv4-mapped (``::ffff:10.1.2.3``) is the IPv4 proxy (``referee.addresses``)
forwarded_allow_ips = ",".join(with_mapped_forms(_config["REFEREE_TRUSTED_PROXIES"]))
header_map = "drop"


def post_worker_init(worker: object) -> None:
    """Once the app is loaded in a worker: its start-up objects out of every full garbage collection
    (``referee.host.runtime.settle_heap``: ~45 ms less per collection, the tail of the latency)."""
    from referee.host.runtime import settle_heap  # noqa: PLC0415

    settle_heap()


def child_exit(server: object, worker: Any) -> None:
    """A web worker is gone: its live gauges leave the multi-process view of ``GET /metrics``."""
    from referee.host.metrics import mark_process_dead  # noqa: PLC0415 - after PROMETHEUS_MULTIPROC_DIR is read

    mark_process_dead(worker.pid)


class JsonLogger(Logger):  # type: ignore[misc]
    """gunicorn's logger, writing through the root logger's JSON lines (``referee.host.logs``): its error log as
    is, its access log one line per request with the request's fields."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for logger in (self.error_log, self.access_log):
            for handler in [h for h in logger.handlers if getattr(h, "_gunicorn", False)]:
                logger.removeHandler(handler)
            logger.propagate = True

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> None:
        status = getattr(resp, "status_code", None)
        fields = {"method": environ.get("REQUEST_METHOD"), "path": environ.get("PATH_INFO"), "status": status,
                  "duration_ms": round(request_time.total_seconds() * 1000, 3),
                  "remote": environ.get("REMOTE_ADDR"), "bytes": getattr(resp, "sent", None)}
        for name in ("request_id", "game_id"):
            value = environ.get(f"referee.{name}")
            if value:
                fields[name] = value
        self.access_log.info("%s %s %s", fields["method"], fields["path"], status, extra=fields)


if _config["REFEREE_LOG_FORMAT"] == "json":
    configure_logging(_config, process="web")
    logger_class = JsonLogger
    accesslog = "-"
