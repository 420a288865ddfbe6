"""``referee serve`` supervises its children: a replay worker or web server that dies is restarted
(with backoff, logged) while the API keeps answering; only Ctrl-C / SIGTERM, or the embedded work Redis
that is gone, stops everything — and then no process is left behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import redis
import requests
from ports import free_port
from svc_helpers import wait_until

from referee.config import with_password
from referee.running.supervise import Backoff, Supervisor

REPO = str(Path(__file__).resolve().parents[2])




def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead (it only waits for its parent to reap it)
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def descendants(pid):
    """Every live process whose ancestry leads to ``pid`` (from /proc)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().split(")")[-1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return {p for p in found if alive(p)}


class Serve:
    """``referee serve`` in a subprocess, in a temporary working directory, on a free port."""

    def __init__(self, tmp_path, *extra, env=None):
        self.port = free_port()
        self.cwd = tmp_path
        self.log_path = tmp_path / "serve.log"
        settings = env or {}
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "REFEREE_WORK_REDIS_URL")}
        env.update({"PYTHONPATH": REPO, "REFEREE_VAR": str(tmp_path / "var"), **settings})
        self.out = open(self.log_path, "w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "serve", "--port", str(self.port), "--web-workers", "1",
             *extra],
            cwd=tmp_path, env=env, stdout=self.out, stderr=subprocess.STDOUT, start_new_session=True)
        self.pids = set()

    @property
    def log(self):
        return self.log_path.read_text()

    def pid_of(self, name, event="started"):
        found = re.findall(rf"serve: {re.escape(name)} {event} \(pid (\d+)", self.log)
        return int(found[-1]) if found else None

    def api_answers(self):
        try:
            return requests.get(f"http://127.0.0.1:{self.port}/health", timeout=2).json()["ok"] is True
        except (requests.RequestException, ValueError):
            return False

    def remember_processes(self):
        self.pids |= descendants(self.process.pid)

    def stop(self):
        if self.process.poll() is None:
            self.remember_processes()  # a child in a session of its own (a restarted Redis) is not in serve's group
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        for pid in self.pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.out.close()


@pytest.fixture
def serve(tmp_path):
    server = Serve(tmp_path)
    try:
        wait_until(lambda: "referee serving on" in server.log or server.process.poll() is not None, timeout=60)
        assert server.process.poll() is None, server.log
        yield server
    finally:
        server.stop()


def test_a_killed_worker_and_web_server_are_restarted_and_ctrl_c_leaves_nothing_behind(serve):
    serve.remember_processes()
    worker = serve.pid_of("replay worker 0")
    web = serve.pid_of("web server")
    assert worker and web and serve.api_answers()

    os.kill(worker, signal.SIGKILL)
    wait_until(lambda: serve.pid_of("replay worker 0", "restarted"), timeout=10)
    assert re.search(rf"serve: replay worker 0 \(pid {worker}\) killed by SIGKILL after [\d.]+ s; "
                     r"restarting it in 0.25 s", serve.log), serve.log
    restarted = serve.pid_of("replay worker 0", "restarted")
    assert restarted != worker and alive(restarted) and not alive(worker)
    assert serve.api_answers() and serve.process.poll() is None
    # the new worker is live: it registers with the queue's Redis under a fresh name
    work_url = re.findall(r"embedded Redis on (redis://\S+) \(queue", serve.log)[0]
    password_file = re.findall(r"password in (\S+)", serve.log)[0]  # serve prints URLs without the password
    work_url = with_password(work_url, (serve.cwd / password_file).read_text().strip())
    names = wait_until(lambda: {n.decode() for n in redis.Redis.from_url(work_url).smembers("rq:workers")
                           if n.decode().endswith("-0-r1")}, timeout=10)
    assert names

    os.kill(web, signal.SIGKILL)
    wait_until(lambda: serve.pid_of("web server", "restarted"), timeout=10)
    wait_until(serve.api_answers, timeout=15)
    assert "stopping" not in serve.log and serve.process.poll() is None

    serve.remember_processes()
    os.killpg(serve.process.pid, signal.SIGINT)  # Ctrl-C in a terminal
    serve.process.wait(20)
    assert "referee stopped" in serve.log
    assert not [pid for pid in serve.pids if alive(pid)], serve.log


def test_when_the_embedded_work_redis_is_gone_everything_stops(serve):
    redis_pid = serve.pid_of("embedded Redis (redis-work)")
    serve.remember_processes()
    os.kill(redis_pid, signal.SIGKILL)
    serve.process.wait(20)
    assert re.search(rf"serve: embedded Redis \(redis-work\) \(pid {redis_pid}\) killed by SIGKILL; "
                     "the service cannot run without it: stopping", serve.log), serve.log
    assert "restarted" not in serve.log and "referee stopped" in serve.log
    assert not [pid for pid in serve.pids if alive(pid)]


def test_backoff_doubles_up_to_its_maximum():
    backoff = Backoff(initial=0.25, factor=2, maximum=2)
    assert [backoff.delay(n) for n in range(1, 7)] == [0.25, 0.5, 1, 2, 2, 2]


def test_quick_deaths_back_off_and_a_stable_run_starts_again_from_the_shortest_delay():
    """The supervisor on real (short-lived) processes, with a clock the test moves."""
    now = [0.0]
    logged = []
    supervisor = Supervisor(partial(subprocess.Popen, start_new_session=True), logged.append, clock=lambda: now[0],
                            backoff=Backoff(initial=0.25, factor=2, maximum=1), stable_after=10)
    child = supervisor.start("crasher", lambda restarts: [sys.executable, "-c", f"raise SystemExit({restarts + 3})"])

    def die_and_restart(after):
        assert child.process is not None
        child.process.wait()
        now[0] += after
        supervisor.poll()  # notices the death, schedules the restart
        delay = child.restart_at - now[0]
        supervisor.poll()  # too early: nothing
        assert child.restart_at is not None
        now[0] += delay
        supervisor.poll()  # starts it again
        assert child.restart_at is None
        return delay

    assert [die_and_restart(1) for _ in range(4)] == [0.25, 0.5, 1, 1]
    assert die_and_restart(11) == 0.25  # it ran for longer than stable_after
    assert child.restarts == 5 and len(set(child.history)) == 6
    assert logged[1].startswith(f"crasher (pid {child.history[0]}) exited with status 3 after 1.0 s; "
                                "restarting it in 0.25 s")
    assert logged[2] == f"crasher restarted (pid {child.history[1]}, was {child.history[0]}; restart 1)"
    supervisor.stop()
    assert child.process.poll() is not None


def test_a_child_that_cannot_start_is_given_up_after_its_quick_deaths_and_then_everything_stops():
    """The log's Redis is restarted (``give_up_after``), but one that dies at each start is given up: then
    ``essential_exited`` names it and serve stops (a Redis that cannot start at all still stops the service)."""
    now = [0.0]
    logged = []
    supervisor = Supervisor(partial(subprocess.Popen, start_new_session=True), logged.append, clock=lambda: now[0],
                            backoff=Backoff(initial=0.25, factor=2, maximum=1), stable_after=10)
    child = supervisor.start("embedded Redis (redis)", lambda _restarts: [sys.executable, "-c", "raise SystemExit(1)"],
                             give_up_after=2)
    for _ in range(3):
        assert supervisor.essential_exited() is None
        child.process.wait()
        now[0] += 1
        supervisor.poll()  # notices the death: a restart is due, or (the third) gives up
        now[0] += 1
        supervisor.poll()
    assert child.gave_up and child.restarts == 2 and supervisor.essential_exited() is child
    assert logged[-1].endswith("quick death number 3 in a row: not starting it again")
    supervisor.stop()
