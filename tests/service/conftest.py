"""Fixtures of the service tests: apps on the session's real Redis (see ``tests/conftest.py``), an
in-process RQ burst worker, and helpers to play games through the API."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid

import pytest
from forked_workers import referee_worker
from logging_state import kept
from svc_helpers import REPO, Http, stop_process

from referee.app import create_app
from workers import jobs


@pytest.fixture
def make_app(tmp_path, redis_url):
    """``make_app(**config)``: an app on the test's (flushed) Redis with its own queue and key file."""
    apps = []

    def make(**overrides):
        config = {"REDIS_URL": redis_url, "REFEREE_VAR": str(tmp_path / "var"), "TESTING": True,
                  "REFEREE_QUEUE": f"test-{uuid.uuid4().hex[:8]}", **overrides}
        app = create_app(config)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.extensions["referee.store"].close()


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def http(app):
    return Http(app.test_client())


@pytest.fixture
def store(app):
    return app.extensions["referee.store"]


@pytest.fixture
def run_worker(app, redis_url):
    """``run_worker(queue=None)``: an in-process burst worker on ``queue`` (default: the ``app`` fixture's
    queue): its ready list drained by the replay loop, then RQ's jobs (``workers.jobs.work_burst``)."""
    jobs._PROJECTORS.clear()
    jobs.configure(redis_url)

    def run(queue=None) -> bool:
        with kept():  # (RQ's worker sets its loggers' levels)
            return jobs.work_burst([queue or app.extensions["referee.queue"]])

    yield run
    jobs._PROJECTORS.clear()
    jobs._URLS.clear()


@pytest.fixture
def spawn_worker(app, redis_url, tmp_path):
    """``spawn_worker(args=None, env=None)``: a real worker subprocess (default ``referee worker`` on the
    app's queue); at the end of the test, the default one is killed with its job processes (this test's queue,
    flushed before the next: a graceful stop would wait ~1.8 s for RQ and its loops' blocking reads), others are
    stopped (SIGTERM, then SIGKILL)."""
    processes = []

    def spawn(args: list[str] | None = None, env: dict[str, str] | None = None) -> subprocess.Popen:
        environment = {**os.environ, "PYTHONPATH": REPO, "REDIS_URL": redis_url, "REFEREE_RECONCILE_EVERY": "0.5",
                       "REFEREE_STALE_AFTER": "2", **(env or {})}
        log = tmp_path / f"worker-{len(processes)}.log"
        if args is None:  # the default worker, a fork (tests/forked_workers.py); the tests of a worker's own
            # process pass their command line and get a ``python -m referee.cli`` of their own
            process = referee_worker(["--url", redis_url, "--queue", app.config["REFEREE_QUEUE"]], env=environment,
                                     cwd=REPO, stdout=log, stderr="stdout", new_session=True)
            processes.append((process, None, True))
            return process
        out = open(log, "wb")
        process = subprocess.Popen(args, env=environment, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        processes.append((process, out, False))
        return process

    yield spawn
    for process, out, default in processes:
        if default and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        else:
            stop_process(process)
        if out is not None:
            out.close()


@pytest.fixture
def server(app):
    """The ``app`` fixture's app on a real HTTP server in a thread (``live_server.serving``): its URL."""
    from live_server import serving

    with serving(app) as url:
        yield url
