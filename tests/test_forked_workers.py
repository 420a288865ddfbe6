"""The tests' forked ``referee worker`` processes (``forked_workers.py``): each is the real command in a process of
its own, with the environment, session and output it was given, signalled and waited for like a ``Popen``."""

from __future__ import annotations

import os
import signal
import time
import uuid

import redis
from forked_workers import referee_worker
from rq import Worker


def test_a_forked_worker_serves_with_its_own_environment_session_and_exit(redis_server, tmp_path):
    name = f"forked-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "REFEREE_QUEUE": f"{name}-queue"}  # no --queue: the worker's queue is its environment's
    worker = referee_worker(["--url", redis_server.url, "--name", name], env=env,
                            stderr=tmp_path / "worker.log", new_session=True)
    conn = redis.Redis.from_url(redis_server.url)
    try:
        deadline = time.monotonic() + 30
        while not (registered := [w for w in Worker.all(connection=conn) if w.name == name]):
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()
            assert time.monotonic() < deadline, "the forked worker did not register with RQ"
            time.sleep(0.05)
        assert os.getpgid(worker.pid) == worker.pid  # a session of its own: killpg reaches its job processes
        assert f"{name}-queue" in registered[0].queue_names()
        os.killpg(worker.pid, signal.SIGKILL)
        assert worker.wait(10) == -signal.SIGKILL and worker.poll() == -signal.SIGKILL
    finally:
        if worker.poll() is None:
            worker.kill()
        conn.close()


def test_a_forked_worker_that_fails_exits_with_its_code_and_says_why(tmp_path):
    worker = referee_worker(["--url", "redis://127.0.0.1:1/0", "--queue", "nowhere", "--burst"], env=dict(os.environ),
                            stderr=tmp_path / "worker.log")
    assert (tmp_path / "worker.log").exists()  # made before the fork: there as soon as the pid is known
    assert worker.wait(60) == 1
    assert "Connection refused" in (tmp_path / "worker.log").read_text()
