"""A whole game against the house bot in Chromium (issue 25): a person creates a game with "Play against the
computer" on the new-game page, accepts it, and plays every one of their moves through the page's controls
(board elements and the move panel's buttons, signed in the browser) while the house bot, a real
``referee bot`` process with its own key file, accepts and answers each move, until the page shows the
final score. The log then holds signed moves of both seats and the bundle verifies with the referee's key.

Tower Up with two seats: its games are the shortest (about 40 moves, half of them the person's). The server
is the app of ``referee.app.create_app`` with a real RQ worker (as ``conftest.py``'s ``web_server``), named a
house bot as ``referee serve --house-bot`` does (``REFEREE_HOUSE_BOT_KEY``, the key in
``<REFEREE_VAR>/house-bot.key``, the bot run with ``serve``'s strategy and think time; only its poll interval
is shorter, so the test waits less).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import uuid
from pathlib import Path

import pytest
import requests
from forked_workers import referee_process, referee_worker, wait_for_worker
from live_server import serving

from referee.cli.operations import HOUSE_BOT_STRATEGY, HOUSE_BOT_THINK
from referee.protocol.signing import public_key_b64, read_or_create_key_file
from referee.verify import verify_bundle

pytestmark = pytest.mark.web

STEP_MS = 30_000  # an upper bound for one UI step (a hung page fails instead of hanging), not a timing check
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def house_server(redis_server, tmp_path_factory):
    """(base URL, house bot key, bot log path): the referee app, its RQ worker and a running house bot."""
    from referee.app import create_app

    var = tmp_path_factory.mktemp("house-var")
    bot_key = public_key_b64(read_or_create_key_file(var / "house-bot.key"))
    queue = f"house-{uuid.uuid4().hex[:8]}"
    settings = {"REDIS_URL": redis_server.url, "REFEREE_VAR": str(var), "REFEREE_QUEUE": queue}
    app = create_app({**settings, "REFEREE_HOUSE_BOT_KEY": bot_key, "WEB_POLL_MS": 250, "TESTING": True})
    env = {**os.environ, **settings, "PYTHONUNBUFFERED": "1"}
    worker_log, bot_log = var / "worker.log", var / "bot.log"
    children: list = []  # the worker's and the bot's processes (forks: tests/forked_workers.py)
    try:
        with serving(app) as url:
            children.append(referee_worker(["--url", redis_server.url, "--queue", queue, "--name", f"{queue}-worker"],
                                           env=env, stderr=worker_log))  # (a fork: tests/forked_workers.py)
            wait_for_worker(redis_server.url, children[0], f"{queue}-worker", worker_log)
            children.append(referee_process(
                ["bot", "--key", str(var / "house-bot.key"), "--strategy", HOUSE_BOT_STRATEGY, "--think",
                 str(HOUSE_BOT_THINK), "--poll", "0.3", "--server", url], cwd=REPO, env=env, stdout=bot_log,
                stderr="stdout"))
            yield url, bot_key, bot_log
    finally:
        for child in reversed(children):
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        app.extensions["referee.store"].close()


def _choose_and_submit(page, rng: random.Random) -> None:
    """A legal move chosen only with the page's controls (as a person would: board elements that act as buttons,
    the move panel's choices) until the move is complete; then signed and submitted."""
    submit = page.locator("#submit-move")
    for _ in range(200):
        if submit.is_enabled():
            break
        board = page.locator("#board [data-choice='1']")
        panel = page.locator("#move-controls button.choice")
        options = [board.nth(i) for i in range(board.count())] + [panel.nth(i) for i in range(panel.count())]
        assert options, "the page offers no way to continue the move"
        rng.choice(options).click()
    assert submit.is_enabled(), "the move never became complete"
    submit.click()


def test_a_person_plays_a_whole_game_against_the_house_bot(browser, house_server, console_errors):
    url, bot_key, bot_log = house_server
    rng = random.Random("house-bot-game")
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    page.set_viewport_size({"width": 1400, "height": 1000})

    page.goto(f"{url}/play/new")
    page.locator("input[name=ruleset][value=towerup]").check()
    seats = page.locator("#seats li")
    seats.nth(1).wait_for()
    assert seats.count() == 2
    seats.nth(0).locator(".seat-name").fill("Ann")
    seats.nth(0).get_by_role("button", name=re.compile("Generate a key")).click()
    page.wait_for_function("() => document.querySelector('#seats li .seat-key').value.length === 43")
    page.get_by_role("button", name="Play against the computer").click()
    assert seats.nth(1).locator(".seat-key").input_value() == bot_key
    page.get_by_role("button", name="Create the game").click()
    page.wait_for_url(re.compile(r"/play/games/[^/]+$"), timeout=STEP_MS)
    game_id = page.url.rsplit("/", 1)[1]
    page.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)
    # The house bot accepts as soon as it sees the game. When it does so while this click signs, the page's
    # acceptance is stale (409) and the page signs it again for the new position (game-page.js, accept); Chromium
    # logs the 409 all the same.
    with console_errors.tolerate("status of 409"):
        page.locator("#accept-buttons button").first.click(timeout=STEP_MS)
        page.wait_for_function("() => document.querySelector('#game').dataset.status === 'active'", timeout=STEP_MS)
    assert page.locator(".bot-mark").count() >= 1  # the page marks the bot's seat

    mine = 0
    while True:
        page.wait_for_function(
            "() => { const g = document.querySelector('#game');"
            " return g.dataset.myTurn === 'true' || g.dataset.status === 'finished'; }", timeout=STEP_MS)
        if page.get_attribute("#game", "data-status") == "finished":
            break
        seq = int(page.get_attribute("#game", "data-seq"))
        _choose_and_submit(page, rng)
        page.wait_for_function("seq => Number(document.querySelector('#game').dataset.seq) > seq", arg=seq,
                               timeout=STEP_MS)
        assert page.locator("#errors .error").count() == 0, page.locator("#errors").inner_text()
        mine += 1
        assert mine < 200, "the game does not end"

    page.wait_for_selector("#result-section:not([hidden]) table.score", timeout=STEP_MS)
    assert page.locator("#result table.score tbody tr").count() == 2
    console_errors.assert_none()
    context.close()

    game = requests.get(f"{url}/games/{game_id}", timeout=10).json()
    assert game["status"] == "finished"
    assert [s.get("bot") for s in game["seats"]] == [None, True] and game["seats"][1]["key"] == bot_key
    bundle = requests.get(f"{url}/games/{game_id}/export", timeout=10).json()
    movers = [entry["seat"] for entry in bundle["log"] if entry["type"] == "move"]
    assert movers.count(0) == mine and movers.count(1) >= 10  # the person's moves, and the bot's answers
    report = verify_bundle(bundle, referee_key=requests.get(f"{url}/referee-key", timeout=10).json()["key"])
    assert report.first_failure is None and report.status == "verified", report.to_dict()
    log = bot_log.read_text()
    assert f"{game_id}: seat 1 accepts" in log and f"{game_id}: seat 1 plays" in log
    # the bot and the person accepting at one log tip race: the later one meets 409 submission/stale and signs
    # again at the new tip (the referee's precedence, as for two bots: test_bot_cli.py); any other refusal is a fault
    refusals = [line for line in log.splitlines() if "refused" in line]
    assert all(line.endswith("accepts — refused: submission/stale") for line in refusals), log
