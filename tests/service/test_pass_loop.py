"""``workers.looping.PassLoop``, the thread of every background loop of ``referee worker``: a failing pass
(an unreachable Redis, or a bug) is logged and the loop goes on; ``stop`` ends it after the current pass."""

from __future__ import annotations

import logging

from redis.exceptions import ConnectionError as RedisConnectionError
from svc_helpers import wait_until

from workers.looping import PassLoop


def test_a_failing_pass_is_logged_and_the_loop_goes_on_until_stopped(caplog):
    passes: list[int] = []

    def one_pass() -> None:
        passes.append(len(passes))
        if len(passes) == 1:
            raise RedisConnectionError("Redis is restarting")
        if len(passes) == 2:
            raise ValueError("a bug in one pass")

    loop = PassLoop("test-loop", one_pass, pause=0.01, retry=0.01)
    with caplog.at_level(logging.WARNING, logger="workers.looping"):
        loop.start()
        wait_until(lambda: len(passes) >= 5, timeout=10)
        loop.stop()
    count = len(passes)
    assert not loop._thread.is_alive()
    assert len(passes) == count  # nothing runs after stop
    warnings = [r for r in caplog.records if r.name == "workers.looping"]
    assert "Redis is unavailable" in warnings[0].getMessage() and warnings[0].exc_info is None
    assert "a pass failed" in warnings[1].getMessage() and warnings[1].exc_info is not None
