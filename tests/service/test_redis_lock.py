"""The locked Redis (issue 17): embedded servers require a password and keep their files private; an
external Redis with a password works (in the URL or through ``REFEREE_REDIS_PASSWORD_FILE``); workers run
only the referee's own job functions. (``test_cli.py`` checks the servers ``referee serve`` starts.)"""

from __future__ import annotations

import logging
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import redis as redis_lib
from logging_state import kept
from ports import free_port
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Callback, Queue
from rq.job import JobStatus
from rq.serializers import JSONSerializer
from rq.worker import SimpleWorker
from svc_helpers import Http, accept_all, create_game

from referee.config import load_config
from referee.running.embedded_redis import EmbeddedRedis
from workers import jobs
from workers.allowlist import RefereeSimpleWorker, refusal
from workers.queue import REPLAY_JOB, enqueue_replay

REPO = str(Path(__file__).resolve().parents[2])


def touch_marker(*_args):
    """A callback an attacker might name: it leaves a file behind if it ever runs."""
    Path(os.environ["REFEREE_TEST_MARKER"]).touch()


def no_retry(url: str) -> redis_lib.Redis:
    return redis_lib.Redis.from_url(url, retry=Retry(NoBackoff(), 0))


# -- the password --------------------------------------------------------------------------------------------
def test_a_connection_without_the_password_is_refused(redis_server):
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=2) as sock:
        sock.sendall(b"PING\r\nGET referee:games\r\n")
        assert sock.recv(256).startswith(b"-NOAUTH")
    for url in (redis_server.public_url, redis_server.public_url.replace("redis://", "redis://:wrong@")):
        with pytest.raises(redis_lib.AuthenticationError):
            no_retry(url).ping()
    assert no_retry(redis_server.url).ping()


def test_the_app_on_a_passworded_redis_with_and_without_the_password(make_app, redis_url, redis_server, tmp_path):
    locked_out = make_app(REDIS_URL=redis_server.public_url)
    status, body = Http(locked_out.test_client()).get("/health")
    assert status == 503 and body["ok"] is False
    password_file = tmp_path / "redis-password"
    password_file.write_text(redis_server.password + "\n")
    config = load_config({"REDIS_URL": redis_server.public_url, "REFEREE_REDIS_PASSWORD_FILE": str(password_file)},
                         environ={})
    assert config["REDIS_URL"] == redis_url and config["REFEREE_WORK_REDIS_URL"] == redis_url
    app = make_app(REDIS_URL=redis_server.public_url, REFEREE_REDIS_PASSWORD_FILE=str(password_file))
    http = Http(app.test_client())
    assert http.get("/health")[0] == 200
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    assert http.get(f"/games/{game.game_id}")[1]["status"] == "active"


def test_a_worker_started_on_its_own_finds_the_password_file(app, redis_server, tmp_path):
    """What ``referee serve`` prints for more workers: bare URLs and REFEREE_REDIS_PASSWORD_FILE."""
    http = Http(app.test_client())
    game = create_game(http, "fivetowers", 2)
    password_file = tmp_path / "redis-password"
    password_file.write_text(redis_server.password + "\n")
    env = {**os.environ, "PYTHONPATH": REPO, "REDIS_URL": redis_server.public_url,
           "REFEREE_REDIS_PASSWORD_FILE": str(password_file)}
    env.pop("REFEREE_WORK_REDIS_URL", None)
    done = subprocess.run([sys.executable, "-m", "referee.cli", "worker", "--burst", "--queue",
                           app.config["REFEREE_QUEUE"]], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert app.extensions["referee.store"].read_projection(game.game_id)["seq"] == 1
    code = subprocess.run([sys.executable, "-m", "referee.cli", "reconcile", "--url", redis_server.public_url,
                           "--queue", app.config["REFEREE_QUEUE"]], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert code.returncode == 0 and "queued 0 replay(s)" in code.stdout, code.stderr[-2000:]


def test_embedded_redis_files_are_private(tmp_path):
    directory = tmp_path / "redis"
    directory.mkdir(mode=0o755)
    stray = directory / "left-by-an-older-version.aof"
    stray.write_text("x")
    stray.chmod(0o644)
    password_file = tmp_path / "redis-password"
    with EmbeddedRedis(port=free_port(), directory=directory, durable=True, password_file=password_file) as server:
        connection = no_retry(server.url)
        connection.set("k", "v")
        connection.config_set("appendfsync", "always")
        connection.bgrewriteaof()
        connection.close()
        assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
        assert server.password == password_file.read_text().strip()
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        paths = list(directory.rglob("*"))
        assert any("appendonly" in path.name for path in paths), paths
        for path in paths:
            assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600), path
        assert (directory / "redis.conf").read_text().count(server.password) == 1  # in the 0600 file only,
        assert server.password not in subprocess.run(["ps", "-eo", "args"], capture_output=True,  # never in argv
                                                     text=True, check=False).stdout
    with EmbeddedRedis(port=free_port(), directory=directory, durable=True, password_file=password_file) as again:
        assert again.password == server.password  # kept between runs
        assert no_retry(again.url).get("k") == b"v"


# -- the allow-list of job functions -------------------------------------------------------------------------
@pytest.fixture
def work_queue(redis_url):
    connection = redis_lib.Redis.from_url(redis_url)
    yield Queue("lock-test", connection=connection, serializer=JSONSerializer)
    connection.close()


def _burst(worker_class, queue):
    jobs._PROJECTORS.clear()
    worker = worker_class([queue], connection=queue.connection, serializer=JSONSerializer)
    with kept():  # (RQ's worker sets its loggers' levels)
        worker.work(burst=True, logging_level="WARNING")


def test_a_job_naming_os_mkdir_is_not_run(work_queue, tmp_path, caplog):
    target = tmp_path / "made-by-a-job"
    job = work_queue.enqueue("os.mkdir", str(target))
    with caplog.at_level(logging.ERROR, logger="workers.allowlist"):
        _burst(RefereeSimpleWorker, work_queue)
    assert not target.exists()
    assert job.get_status(refresh=True) == JobStatus.FAILED
    assert "refused" in caplog.text and "'os.mkdir' is not one of the referee's jobs" in caplog.text
    # and the stock worker is what the review attacked: it runs the same job
    work_queue.enqueue("os.mkdir", str(target))
    _burst(SimpleWorker, work_queue)
    assert target.is_dir()


@pytest.mark.parametrize("worker_class", ["simple", "fork"])
def test_referee_worker_command_refuses_a_foreign_job(work_queue, redis_url, tmp_path, worker_class):
    target = tmp_path / f"made-by-a-{worker_class}-worker"
    job = work_queue.enqueue("os.mkdir", str(target))
    env = {**os.environ, "PYTHONPATH": REPO, "REDIS_URL": redis_url}
    done = subprocess.run([sys.executable, "-m", "referee.cli", "worker", "--burst", "--queue", "lock-test",
                           "--worker-class", worker_class], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not target.exists()
    assert job.get_status(refresh=True) == JobStatus.FAILED
    assert "refused job" in done.stderr


def test_an_allowed_function_with_an_attackers_callback_is_refused(work_queue, tmp_path, monkeypatch):
    marker = tmp_path / "callback-ran"
    monkeypatch.setenv("REFEREE_TEST_MARKER", str(marker))
    named = f"{__name__}.touch_marker"
    job = work_queue.enqueue(REPLAY_JOB, "no-such-game", on_failure=Callback(named), on_success=Callback(named))
    assert refusal(job) is not None and "callbacks" in refusal(job)
    _burst(RefereeSimpleWorker, work_queue)
    assert job.get_status(refresh=True) == JobStatus.FAILED
    assert not marker.exists()


def test_the_referees_own_jobs_still_run(app, redis_url):
    http = Http(app.test_client())
    game = create_game(http, "fivetowers", 2)
    queue = app.extensions["referee.queue"]
    enqueue_replay(queue, game.game_id, f"retry-{game.game_id}")  # as the replay loop does after a failure
    assert [refusal(job) for job in queue.jobs] == [None]
    jobs.configure(redis_url)
    try:
        _burst(RefereeSimpleWorker, queue)
    finally:
        jobs._URLS.clear()
    assert app.extensions["referee.store"].read_projection(game.game_id)["seq"] == 1
