"""The ``referee`` command: playing from a terminal against a live server, and ``referee serve``
(embedded Redis + worker + gunicorn) started and stopped like a user would."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from ports import free_port
from svc_helpers import REPO, wait_until
from svc_helpers import run_cli as run

from referee.cli import main as cli


def test_keygen_create_accept_move(server, tmp_path, store):
    keys = {}
    for name in ("alice", "bob"):
        code, out = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        assert code == 0
        keys[name] = out.strip()
        assert oct((tmp_path / f"{name}.key").stat().st_mode & 0o777) == "0o600"
    code, out = run("keygen", "--out", str(tmp_path / "alice.key"))
    assert code != 0 and "not overwriting" in out
    code, out = run("create", "fivetowers", "--seat", f"alice={keys['alice']}", "--seat", f"bob={keys['bob']}",
                    "--server", server)
    assert code == 0, out
    game_id = json.loads(out)["game"]
    for name in ("bob", "alice"):
        code, out = run("accept", game_id, "--key", str(tmp_path / f"{name}.key"), "--server", server)
        assert code == 0, out
    assert json.loads(out)["status"] == "active"
    code, out = run("legal-moves", game_id, "--server", server)
    legal = json.loads(out)
    assert code == 0 and legal["to_move"] == 0
    code, out = run("move", game_id, '{"type": "bid", "amount": 1}', "--key", str(tmp_path / "alice.key"),
                    "--wait", "0", "--server", server)
    assert code == 0, out
    assert json.loads(out)["position"] == 4
    code, out = run("move", game_id, '{"type": "bid", "amount": 99}', "--key", str(tmp_path / "bob.key"),
                    "--wait", "0", "--server", server)
    assert code == 1 and json.loads(out)["error"]["rule"] == "FT-R1"
    assert [e["type"] for e in store.read_log(game_id)] == ["created", "accepted", "accepted", "started", "move"]


def test_vacation_from_a_terminal_stops_the_seats_clock(server, tmp_path, store):
    """``referee vacation`` signs for the log's current position (after the other seat's move) and prints the
    referee's signed receipt; the vacation is in the log for that seat (TC-V1)."""
    keys = {}
    for name in ("alice", "bob"):
        code, out = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        keys[name] = out.strip()
    code, out = run("create", "fivetowers", "--seat", f"alice={keys['alice']}", "--seat", f"bob={keys['bob']}",
                    "--time-control", "per_move:1d", "--server", server)
    assert code == 0, out
    game_id = json.loads(out)["game"]
    for name in ("alice", "bob"):
        assert run("accept", game_id, "--key", str(tmp_path / f"{name}.key"), "--server", server)[0] == 0
    code, out = run("move", game_id, '{"type": "bid", "amount": 1}', "--key", str(tmp_path / "alice.key"),
                    "--wait", "0", "--server", server)
    assert code == 0, out
    code, out = run("vacation", game_id, "--days", "1", "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out
    answer = json.loads(out)
    assert answer["receipt"]["seq"] == answer["position"] == 5 and answer["receipt_sig"]
    vacation = store.read_log(game_id)[-1]
    assert vacation["type"] == "vacation" and vacation["seat"] == 0
    code, out = run("vacation", game_id, "--days", "0", "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code != 0 and "--days must be more than 0" in out


def test_reconcile_command(redis_url):
    code, out = run("reconcile", "--url", redis_url, "--queue", "cli-test")
    assert code == 0 and "queued 0 replay(s)" in out


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def assert_redis_locked(var, ports):
    """Issue 17: the embedded servers refuse a client without the password kept in var/redis-password
    (0600); their directories are 0700 and their files (the AOF among them) 0600."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    password_file = var / "redis-password"
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    password = password_file.read_text().strip()
    for port in ports:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:  # what any local process can do
            sock.sendall(b"PING\r\n")
            assert sock.recv(64).startswith(b"-NOAUTH")
        for wrong in (None, "not-the-password"):
            with pytest.raises(redis.AuthenticationError):
                redis.Redis(port=port, password=wrong, retry=Retry(NoBackoff(), 0)).ping()
        assert redis.Redis(port=port, password=password).ping()
    for name in ("redis", "redis-work"):
        assert stat.S_IMODE((var / name).stat().st_mode) == 0o700
    files = [path for path in (var / "redis").rglob("*") if path.is_file()]
    assert any("appendonly" in path.name for path in files), files
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert password not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=False).stdout


@pytest.mark.parametrize("option", ["--port", "--mail-gateway"])
def test_serve_refuses_a_port_another_server_listens_on(option, tmp_path, monkeypatch):
    """Before anything starts: otherwise serve would wait for its web server and hear the other one."""
    monkeypatch.setenv("REFEREE_VAR", str(tmp_path / "var"))
    with socket.socket() as other:
        other.bind(("127.0.0.1", free_port()))
        other.listen()
        taken = other.getsockname()[1]
        args = ["serve", "--port", str(taken)] if option == "--port" else \
            ["serve", "--port", str(free_port()), "--mail-gateway", str(taken)]
        done = CliRunner().invoke(cli, args)
    assert done.exit_code == 2, done.output
    assert f"{option} {taken}: 127.0.0.1:{taken} cannot be listened on (Address already in use)" in done.output
    assert not (tmp_path / "var").exists()  # nothing started, nothing made


def test_serve_starts_everything_and_stops_on_ctrl_c(tmp_path):
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(PYTHONPATH=REPO, REFEREE_VAR=str(tmp_path / "var"))
    out = open(tmp_path / "serve.log", "w+")
    process = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--port", str(port)], cwd=REPO,
                               env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until(lambda: "referee serving on" in (tmp_path / "serve.log").read_text(), timeout=60, every=0.2)
        health = requests.get(f"http://127.0.0.1:{port}/health", timeout=5).json()
        assert health["durability"] == {"appendonly": "yes", "appendfsync": "always"}
        log = (tmp_path / "serve.log").read_text()
        redis_ports = [int(part.split("/")[0]) for part in log.split("embedded Redis on redis://127.0.0.1:")[1:]]
        assert len(redis_ports) == 2  # the logs' (durable) and the queue's and projections'
        assert "(logs; AOF, appendfsync always)" in log
        assert "webhooks may reach loopback and private addresses (local use" in log  # issue 26: said at start
        assert (tmp_path / "var" / "redis").is_dir() and (tmp_path / "var" / "referee-key").exists()
        assert_redis_locked(tmp_path / "var", redis_ports)
        for name in ("redis", "redis-work"):  # each Redis is a redis-server child of serve, no Python beside it
            pid = int(re.search(rf"embedded Redis \({name}\) started \(pid (\d+)\)", log).group(1))
            assert Path(f"/proc/{pid}/exe").resolve().name == "redis-server"
            assert os.getpgid(pid) == pid  # a session of its own: Ctrl-C reaches serve, which stops it last
            redis_log = tmp_path / "var" / name / "redis.log"  # what it says goes there, not into serve's output
            assert redis_log.exists() and stat.S_IMODE(redis_log.stat().st_mode) == 0o600
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
        process.wait(30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        out.close()
    assert "referee stopped" in (tmp_path / "serve.log").read_text()
    time.sleep(0.5)
    assert not _port_open(port) and not any(_port_open(p) for p in redis_ports)
