"""Metrics and request logs of the web app, set up once where the app is made (``create_app``), never in
a blueprint (CONTRACT section 13).

:func:`init_app` registers:

* a ``before_request`` hook that starts the request's clock and gives it a request id, bound to every log
  line of the request (``referee.host.logs.bind``: ``request_id``, and ``game_id`` when the route names one) and
  put into the WSGI environ for gunicorn's access log (``referee/running/gunicorn_conf.py``);
* an ``after_request`` hook that counts the answer (``referee_http_requests_total`` by endpoint, method and
  status; for a signed submission ``referee_submissions_total`` by kind and outcome and
  ``referee_submit_seconds``) and sends ``X-Request-Id``;
* ``GET /metrics`` (``referee.host.metrics.exposition``), outside the OpenAPI document like ``/docs``, answered
  only to the client addresses of ``REFEREE_METRICS_ALLOW`` (loopback by default); to any other address it
  is the 404 of an unknown route. The client address is ``request.remote_addr``: the socket's peer, or
  what a proxy of ``REFEREE_TRUSTED_PROXIES`` forwarded (``referee/web/defences.py``), so a trusted proxy's
  own loopback address does not open it to the proxy's clients.

**The request id** is made here (a random 128-bit hex string) for every request. An incoming
``X-Request-Id`` is taken only from a proxy of ``REFEREE_TRUSTED_PROXIES`` (the same peers whose
``X-Forwarded-For`` is believed), and only when it is 1–64 letters, digits, ``.``, ``_`` or ``-``: from
anyone else it could forge or split log lines, or tie a stranger's requests together.

With ``REFEREE_METRICS=0`` nothing is counted and ``/metrics`` does not exist; the request id and its logs
stay.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from typing import Any

from flask import Flask, Response, abort, current_app, g, request

from .addresses import networks, within
from .error_texts import DISK_FULL
from .errors import ServiceError
from .host import logs, metrics
from .host.diskspace import LogDisk, free_bytes, log_disk

REQUEST_ID_HEADER = "X-Request-Id"
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
#: the submissions blueprint: a POST to any of its endpoints is a signed submission (its kind: the view's name)
SUBMISSION_BLUEPRINTS = frozenset({"submissions"})


def _peer(environ: dict[str, Any]) -> str | None:
    """The socket's peer, before any forwarded header was applied (werkzeug's ``ProxyFix`` keeps it)."""
    original = environ.get("werkzeug.proxy_fix.orig") or {}
    return original.get("REMOTE_ADDR") or environ.get("REMOTE_ADDR")


def request_id() -> str:
    """The current request's id: a trusted proxy's ``X-Request-Id``, else a fresh one."""
    incoming = request.headers.get(REQUEST_ID_HEADER)
    if incoming and _SAFE_ID.fullmatch(incoming) and within(_peer(request.environ),
                                                             current_app.extensions["referee.trusted_proxies"]):
        return incoming
    return uuid.uuid4().hex


def _start() -> None:
    g.referee_started = time.perf_counter()
    rid = request_id()
    game_id = (request.view_args or {}).get("game_id")
    environ = request.environ
    environ["referee.request_id"] = rid
    if game_id:
        environ["referee.game_id"] = game_id
    g.referee_log_token = logs.bind(request_id=rid, game_id=game_id)


#: what a write below the disk floor is told to wait before it tries again (seconds)
DISK_FULL_RETRY_AFTER = 30
#: requests with an unsafe method that write nothing (a bundle checked): answered below the floor too
READ_ONLY_POSTS = frozenset({"verification.Verify"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _floor() -> None:
    """A write while the log's disk is below ``REFEREE_MIN_FREE_DISK`` (``referee/host/diskspace.py``): 503
    ``log/disk_full`` with ``Retry-After``, before anything is written. Reads go on."""
    if request.method in SAFE_METHODS or request.endpoint is None or request.endpoint in READ_ONLY_POSTS:
        return  # (no route: its 404 or 405 as ever)
    disk: LogDisk | None = current_app.extensions.get("referee.log_disk")
    if disk is not None and disk.full():
        g.referee_disk_full = True
        raise ServiceError(503, "log/disk_full", DISK_FULL, details={"retry_after": DISK_FULL_RETRY_AFTER})


def _finish(response: Response) -> Response:
    rid = request.environ.get("referee.request_id")
    if rid:
        response.headers[REQUEST_ID_HEADER] = rid
    if g.get("referee_disk_full"):
        response.headers["Retry-After"] = str(DISK_FULL_RETRY_AFTER)
    if not current_app.extensions.get("referee.metrics"):
        return response
    rule = request.url_rule
    endpoint = rule.endpoint if rule is not None else "none"
    status = response.status_code
    metrics.REQUESTS.labels(endpoint, request.method, str(status)).inc()
    if request.method == "POST" and request.blueprint in SUBMISSION_BLUEPRINTS:
        kind = endpoint.rsplit(".", 1)[-1].lower()
        metrics.SUBMISSIONS.labels(kind, metrics.outcome_of(status)).inc()
        started = g.get("referee_started")
        if started is not None:
            metrics.SUBMIT_SECONDS.labels(kind).observe(time.perf_counter() - started)
    return response


def _unbind(_error: BaseException | None) -> None:
    token = g.pop("referee_log_token", None)
    if token is not None:
        try:
            logs.unbind(token)
        except (ValueError, RuntimeError):  # made in another context (a streamed answer): it goes with it
            pass


def _collectors(app: Flask) -> list[Any]:
    """The gauges read from Redis at scrape time: a handful of commands, whatever the number of games."""
    store = app.extensions.get("referee.store")
    queue = app.extensions.get("referee.queue")
    found: list[Any] = [metrics.ReadAtScrape(
        "referee_disk_free_bytes", "Free bytes on the log Redis's disk (log) and the archive's where it is another",
        lambda: _disks_free(app), labels=["disk"])]
    if store is None or not hasattr(store, "redis"):
        return found
    if queue is not None:
        from workers.queue import ready_count  # noqa: PLC0415

        found.append(metrics.ReadAtScrape("referee_ready_games", "Games waiting for a replay worker (the ready list)",
                                          lambda: ready_count(store, queue)))
    found.append(metrics.ReadAtScrape(
        "referee_games", "Games by status: in Redis by their projection's (new: not projected yet), and archived",
        lambda: {(status,): n for status, n in store.games_by_status().items()}, labels=["status"]))
    servers = {"log": store.redis}
    work = getattr(store, "queue_redis", None)
    if work is not None and work is not store.redis:
        servers["work"] = work

    def memory(field: str) -> Any:
        def read() -> dict[tuple[str, ...], float]:
            values: dict[tuple[str, ...], float] = {}
            for name, client in servers.items():
                info = client.info("memory")
                if isinstance(info, dict) and field in info:  # a cluster client answers per node: left out
                    values[(name,)] = float(info[field])
            return values

        return read

    found.append(metrics.ReadAtScrape("referee_redis_used_memory_bytes", "used_memory of each Redis",
                                      memory("used_memory"), labels=["redis"]))
    found.append(metrics.ReadAtScrape("referee_redis_maxmemory_bytes", "maxmemory of each Redis (0: no limit)",
                                      memory("maxmemory"), labels=["redis"]))
    return found


def _disks_free(app: Flask) -> dict[tuple[str, ...], float]:
    values: dict[tuple[str, ...], float] = {}
    disk: LogDisk | None = app.extensions.get("referee.log_disk")
    log_path = disk.path() if disk is not None else None
    log_free = free_bytes(log_path) if log_path else None
    if log_free is not None:
        values[("log",)] = float(log_free)
    archive = str(app.config.get("REFEREE_ARCHIVE_DIR") or "")
    archive_free = free_bytes(archive) if archive else None
    if archive_free is not None and (log_path is None or _device(archive) != _device(log_path)):
        values[("archive",)] = float(archive_free)
    return values


def _device(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def metrics_view() -> Response:
    if not within(request.remote_addr, current_app.extensions["referee.metrics_allow"]):
        abort(404)
    body = metrics.exposition(current_app.extensions["referee.metrics_collectors"])
    return Response(body, content_type=metrics.CONTENT_TYPE)


def init_app(app: Flask) -> None:
    """Register the request hooks and, unless ``REFEREE_METRICS=0``, ``GET /metrics``."""
    config = app.config
    app.extensions["referee.trusted_proxies"] = networks(config["REFEREE_TRUSTED_PROXIES"])
    app.extensions["referee.metrics"] = bool(config["REFEREE_METRICS"])
    store = app.extensions.get("referee.store")
    app.extensions["referee.log_disk"] = log_disk(config, getattr(store, "redis", None))
    app.before_request(_start)
    app.before_request(_floor)
    app.after_request(_finish)
    app.teardown_request(_unbind)
    if config["REFEREE_METRICS"]:
        app.extensions["referee.metrics_allow"] = networks(config["REFEREE_METRICS_ALLOW"])
        app.extensions["referee.metrics_collectors"] = _collectors(app)
        app.add_url_rule("/metrics", "metrics", metrics_view, methods=["GET"])
