"""The new-game form's "Play against the computer" (issue 25, item 3): shown only when ``GET /house-bot``
names a key; it fills the last seat with that key, and the game is created with that seat ``"bot": true``.
The new-tournament form's "Add the computer as a player" puts the house bot's key in a player row, once, and
the form sends that player as ``"bot": true``."""

from __future__ import annotations

import re

import pytest
import requests
from live_server import serving

from referee.app import create_app
from referee.protocol.signing import generate_key, public_key_b64

pytestmark = pytest.mark.web


@pytest.fixture
def house(redis_server, tmp_path):
    """The web app of a server whose house bot has a key of its own (no bot process runs): (URL, the key)."""
    bot_key = public_key_b64(generate_key())
    app = create_app({"REDIS_URL": redis_server.url, "REFEREE_VAR": str(tmp_path), "REFEREE_DISPATCH": "none",
                      "REFEREE_HOUSE_BOT_KEY": bot_key, "TESTING": True})
    with serving(app) as url:
        yield url, bot_key


def test_play_against_the_computer_seats_the_house_bot_as_a_bot(browser, house, console_errors):
    url, bot_key = house
    page = console_errors.watch(browser.new_context().new_page())
    page.goto(f"{url}/play/new")
    page.locator("#seats li").nth(1).wait_for()
    button = page.get_by_role("button", name="Play against the computer")
    button.wait_for()
    seats = page.locator("#seats li")
    seats.nth(0).get_by_role("button", name=re.compile("Generate a key")).click()
    page.wait_for_function("() => document.querySelector('#seats li .seat-key').value.length === 43")
    button.click()
    assert seats.nth(1).locator(".seat-key").input_value() == bot_key
    page.get_by_role("button", name="Create the game").click()
    page.wait_for_url(re.compile(r"/play/games/[^/]+$"), timeout=20000)
    page.locator(".bot-mark").first.wait_for(timeout=20000)  # the game page marks the seat
    game = requests.get(f"{url}/games/{page.url.rsplit('/', 1)[1]}", timeout=5).json()
    assert [s.get("bot") for s in game["seats"]] == [None, True]
    assert game["seats"][1]["key"] == bot_key


def test_a_tournament_player_with_the_house_bots_key_is_sent_as_a_bot(browser, house, console_errors):
    url, bot_key = house
    page = console_errors.watch(browser.new_context().new_page())
    page.goto(f"{url}/play/tournaments")
    page.check("input[name=t-ruleset][value=fivetowers]")
    rows = page.locator("#t-players li")
    while rows.count() > 2:
        page.click("#t-remove-player")
    rows.nth(0).locator(".seat-name").fill("Ann")
    rows.nth(0).locator(".seat-generate").click()
    page.wait_for_function("() => document.querySelector('#t-players .seat-key').value.length === 43")
    page.get_by_role("button", name="Add the computer as a player").click()  # into the first row without a key
    page.get_by_role("button", name="Add the computer as a player").click()  # once only
    assert rows.count() == 2 and rows.nth(1).locator(".seat-key").input_value() == bot_key
    page.click("#t-create")
    page.wait_for_url("**/play/tournaments/t_*", timeout=20000)
    page.locator("#t-player-list .bot-mark").first.wait_for(timeout=20000)  # the page marks the player
    tournament = requests.get(f"{url}/tournaments/{page.url.rsplit('/', 1)[1]}", timeout=5).json()
    assert [(p["name"], p.get("bot")) for p in tournament["players"]] == [("Ann", None), ("Computer", True)]
