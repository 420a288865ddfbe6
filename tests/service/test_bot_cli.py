"""``referee bot``: two bot processes, each with its own key, play whole games against a live referee (the test
app's, and ``referee serve`` as a user runs it); the bundles verify with the referee's key; a bot killed
mid-game picks its game up again; Ctrl-C stops it."""

from __future__ import annotations

import os
import signal
import uuid

import pytest
import redis
import requests
from forked_workers import referee_process, referee_worker
from live_server import serving
from svc_helpers import REPO, stop_process, wait_until
from svc_helpers import run_cli as run
from test_serve_supervision import Serve

from referee.app import create_app
from referee.verify import verify_bundle


@pytest.fixture(scope="module")
def server(redis_server, tmp_path_factory):
    """The test app (``make_app``'s config, on the session's Redis, flushed first) on a real threaded HTTP server,
    with one real ``referee worker`` subprocess on its queue (the verdicts; ``spawn_worker``'s command and
    environment), shared by this file's tests that play on the test app: one app and one worker for the file, not one
    per test (a worker's start is ~0.5 CPU-s). The tests do not disturb each other: each seats keys of its own, and a
    bot only plays the games its key is seated in (the others' finished games in the lobby are not its own)."""
    conn = redis.Redis.from_url(redis_server.url)
    conn.flushall()
    conn.close()
    var = tmp_path_factory.mktemp("bot-cli-app")
    queue = f"test-{uuid.uuid4().hex[:8]}"
    app = create_app({"REDIS_URL": redis_server.url, "REFEREE_VAR": str(var / "var"), "TESTING": True,
                      "REFEREE_QUEUE": queue})
    environment = {**os.environ, "PYTHONPATH": REPO, "REDIS_URL": redis_server.url,
                   "REFEREE_RECONCILE_EVERY": "0.5", "REFEREE_STALE_AFTER": "2"}
    worker = referee_worker(["--url", redis_server.url, "--queue", queue], env=environment, cwd=REPO,
                            stdout=var / "worker.log", stderr="stdout", new_session=True)  # (tests/forked_workers.py)
    try:
        with serving(app) as url:
            yield url
    finally:  # killed with its job processes, as spawn_worker kills its default worker (the next test flushes)
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        app.extensions["referee.store"].close()


def _keys(tmp_path):
    keys = {}
    for name in ("ada", "bob"):
        code, out = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        assert code == 0, out
        keys[name] = out.strip()
    return keys


def _bot(tmp_path, server, name, strategy="greedy", tag=""):
    """``referee bot …`` in a process of its own (a fork: tests/forked_workers.py), and the path of its log."""
    path = tmp_path / f"bot-{name}{tag}.log"
    process = referee_process(
        ["bot", "--key", str(tmp_path / f"{name}.key"), "--strategy", strategy, "--think", "0.05", "--poll", "0.3",
         "--server", server], cwd=REPO, env={**os.environ, "PYTHONPATH": REPO, "PYTHONUNBUFFERED": "1"},
        stdout=path, stderr="stdout")
    return process, path


def _create(server, ruleset, keys):
    body = {"ruleset": ruleset, "options": {}, "seats": [{"name": n, "key": k} for n, k in keys.items()]}
    response = requests.post(f"{server}/games", json=body, timeout=10)
    assert response.status_code == 201, response.text
    return response.json()["game"]


def _state(server, game_id):
    return requests.get(f"{server}/games/{game_id}", timeout=10).json()


@pytest.mark.parametrize("ruleset,strategy", [("fivetowers", "greedy"), ("towerup", "random")])
def test_two_bots_play_a_whole_game_that_verifies(server, tmp_path, ruleset, strategy):
    _two_bots_play(server, tmp_path, ruleset, strategy)


def test_two_bots_play_a_whole_game_through_referee_serve(tmp_path):
    serve = Serve(tmp_path)  # its embedded Redis, its workers, its web server: as a user runs it
    try:
        # its log says when it serves (a read of a file every 0.2 s, not an HTTP request every 0.05 s)
        wait_until(lambda: "referee serving on" in serve.log or serve.process.poll() is not None, timeout=60,
                   every=0.2)
        assert serve.process.poll() is None, serve.log
        wait_until(serve.api_answers, timeout=15)
        serve.remember_processes()  # its workers run in sessions of their own: stop() kills them too
        _two_bots_play(f"http://127.0.0.1:{serve.port}", tmp_path, "towerup", "greedy")
    finally:
        serve.remember_processes()
        if serve.process.poll() is None:  # Ctrl-C, as a user stops it: serve stops what it started
            os.killpg(serve.process.pid, signal.SIGINT)
            serve.process.wait(30)
        serve.stop()


def _two_bots_play(server, tmp_path, ruleset, strategy):
    """Two ``referee bot`` processes with keys of their own play a whole game at ``server``: their logs show
    accepts and moves and no refusal but a stale tip; Ctrl-C stops them; the bundle verifies."""
    keys = _keys(tmp_path)
    game_id = _create(server, ruleset, keys)
    bots = [_bot(tmp_path, server, name, strategy) for name in keys]
    try:
        wait_until(lambda: _state(server, game_id)["status"] == "finished", timeout=150, every=0.5)
    finally:
        for process, _log in bots:
            process.send_signal(signal.SIGINT)
        for process, _log in bots:
            assert process.wait(15) == 0
    for _process, log in bots:
        out = log.read_text()
        # two bots accepting at one log tip race: the later one meets 409 submission/stale and signs again at the
        # new tip (the referee's precedence, not a bot's fault); any other refusal would be one
        refusals = [line for line in out.splitlines() if "refused" in line]
        assert all("refused: submission/stale" in line for line in refusals), refusals
        assert "accepts" in out and " plays " in out, out[-2000:]
        assert out.rstrip().endswith("bot stopped")
    referee_key = requests.get(f"{server}/referee-key", timeout=10).json()["key"]
    bundle = requests.get(f"{server}/games/{game_id}/export", timeout=10).json()
    report = verify_bundle(bundle, referee_key=referee_key)
    assert report.first_failure is None and report.status == "verified", report.to_dict()
    seats = {entry["seat"] for entry in bundle["log"] if entry["type"] == "move"}
    assert seats == {0, 1}  # every move signed by a bot's own key, checked by the verifier


def test_a_bot_killed_mid_game_picks_its_game_up_again(server, tmp_path):
    keys = _keys(tmp_path)
    game_id = _create(server, "fivetowers", keys)
    ada, _ada_log = _bot(tmp_path, server, "ada", "random")
    bob, _bob_log = _bot(tmp_path, server, "bob", "random")
    try:
        wait_until(lambda: _state(server, game_id)["seq"] >= 12, timeout=60, every=0.2)
        bob.kill()  # no goodbye
        bob.wait(10)
        stalled = _state(server, game_id)
        assert stalled["status"] == "active"
        bob, again_log = _bot(tmp_path, server, "bob", "random", tag="-again")
        wait_until(lambda: _state(server, game_id)["status"] == "finished", timeout=120, every=0.5)
        again = again_log.read_text()
        assert " plays " in again, again
    finally:
        for process in (ada, bob):
            stop_process(process)


def test_a_bot_waits_for_an_unreachable_referee(tmp_path):
    _keys(tmp_path)
    process, log = _bot(tmp_path, "http://127.0.0.1:9", "ada")
    try:
        wait_until(lambda: "unreachable" in log.read_text(), timeout=20, every=0.2)
        assert process.poll() is None  # still running, backing off
        process.send_signal(signal.SIGINT)
        assert process.wait(10) == 0
    finally:
        stop_process(process)
    assert log.read_text().rstrip().endswith("bot stopped")


def test_bot_answers_offers_by_its_policy(server, tmp_path):
    """Take-backs are declined; a draw is declined by a bot that is not behind (at the start, level)."""
    from referee.cli.client import load_key
    from referee.protocol.signing import OFFER_CTX, sign

    keys = _keys(tmp_path)
    game_id = _create(server, "fivetowers", keys)
    for name in keys:
        assert run("accept", game_id, "--key", str(tmp_path / f"{name}.key"), "--server", server)[0] == 0
    ada = load_key(str(tmp_path / "ada.key"))
    state = _state(server, game_id)
    envelope = {"v": 1, "ctx": OFFER_CTX, "game": game_id, "seat": 0, "seq": state["seq"], "prev": state["head"],
                "offer": "draw"}
    submission = {"envelope": envelope, "sig": sign(ada, envelope)}
    response = requests.post(f"{server}/games/{game_id}/offers", json=submission, timeout=10)
    assert response.status_code < 300, response.text
    bob, log = _bot(tmp_path, server, "bob", "random")
    try:
        wait_until(lambda: (_state(server, game_id)["decisions"]["last"] or {}).get("outcome") is not None,
                   timeout=30, every=0.2)
        assert _state(server, game_id)["decisions"]["last"]["outcome"] == "declined"
    finally:
        bob.send_signal(signal.SIGINT)
        assert bob.wait(10) == 0
    assert "declines seat 0's draw offer" in log.read_text()
