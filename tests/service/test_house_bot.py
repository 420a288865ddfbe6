"""``referee serve --house-bot`` (issue 25, item 3): one ``referee bot`` with a key of its own (0600, created
once), named by ``GET /house-bot``, supervised like the other children. Bounded: the bot accepts a game created
against it and plays its moves, is killed, restarted by serve, and plays on (not a whole game: a 2-seat game
against greedy takes minutes at the bot's poll interval)."""

from __future__ import annotations

import os
import random
import signal
import stat

import pytest
import requests
from svc_helpers import move_envelope, signed, wait_until
from test_serve_supervision import Serve

from referee.protocol.signing import ACCEPT_CTX, b64url_encode, generate_key, public_key_b64


@pytest.fixture
def house(tmp_path):
    server = Serve(tmp_path, "--house-bot")
    try:
        wait_until(lambda: "serve: house bot started" in server.log or server.process.poll() is not None,
                   timeout=60)
        assert server.process.poll() is None, server.log
        yield server
    finally:
        server.stop()


def test_serve_runs_the_house_bot_which_accepts_and_plays_and_is_restarted(house, tmp_path):
    base = f"http://127.0.0.1:{house.port}"
    key_file = tmp_path / "var" / "house-bot.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    bot_key = requests.get(f"{base}/house-bot", timeout=5).json()["key"]
    assert f"house bot key {bot_key}" in house.log
    me = generate_key()
    body = {"ruleset": "towerup", "seats": [{"name": "me", "key": public_key_b64(me)},
                                           {"name": "house", "key": bot_key, "bot": True}]}
    created = requests.post(f"{base}/games", json=body, timeout=5).json()
    game, rng = created["game"], random.Random(1)

    def state():
        return requests.get(f"{base}/games/{game}", timeout=5).json()

    now = state()
    envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game, "seat": 0, "seq": now["seq"], "prev": now["head"],
                "entropy": b64url_encode(os.urandom(32))}
    assert requests.post(f"{base}/games/{game}/accept", json=signed(me, envelope), timeout=5).status_code == 202
    wait_until(lambda: state()["status"] != "waiting", timeout=30)  # the bot accepted

    def bot_moves():
        log = requests.get(f"{base}/games/{game}/log", timeout=5).json()
        return sum(1 for e in log["entries"] if e["type"] == "move" and e["seat"] == 1)

    def play_until_bot_moved(count):
        while bot_moves() < count:
            legal = requests.get(f"{base}/games/{game}/legal-moves", timeout=5).json()
            assert legal["to_move"] is not None, "the game ended early"
            if legal["to_move"] == 0:
                move = rng.choice(legal["moves"])
                envelope = move_envelope(game, 0, legal["seq"], legal["head"], move)
                assert requests.post(f"{base}/games/{game}/moves", json=signed(me, envelope),
                                     timeout=5).status_code in (200, 202)
            else:
                wait_until(lambda: state()["to_move"] != 1 or bot_moves() >= count, timeout=30)

    play_until_bot_moved(2)
    bot = house.pid_of("house bot")
    os.kill(bot, signal.SIGKILL)
    wait_until(lambda: house.pid_of("house bot", "restarted"), timeout=15)
    play_until_bot_moved(bot_moves() + 2)  # the restarted bot picks its game up again
    house.remember_processes()
    os.killpg(house.process.pid, signal.SIGINT)
    house.process.wait(30)
    assert "referee stopped" in house.log


def test_no_house_bot_answers_404(http):
    status, body = http.get("/house-bot")
    assert status == 404 and body["error"]["code"] == "house_bot/none"
