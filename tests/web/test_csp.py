"""Every page works under the Content-Security-Policy (issue 17): Chromium opens the lobby, the new-game
form, the keys page, a game page (accepting and playing a move in the browser), the game page and the
replay of a finished game (score table, chart), the join page of an open seat, and /docs; every page listens for
``securitypolicyviolation`` events and console errors, and there must be none. A page with a 64-character
player name must not grow wider than the window (ellipsis, full name on hover)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import requests
from test_play_by_web import STEP_MS, choose_and_submit, create_game, generate_key_on_keys_page

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from seat_helpers import create_open_game
from svc_helpers import Http, PlayedGame, accept_all, play_random
from svc_helpers import create_game as create_game_by_api

pytestmark = pytest.mark.web

LONG_NAME = "Bartholomew-Maximilian " + "W" * 41  # 64 characters, no space to break at in the second half
WATCH_CSP = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__cspViolations.push(
  `${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile || document.URL}:${e.lineNumber}`));
"""


def violations(page) -> list[str]:
    return page.evaluate("window.__cspViolations || []")


def assert_clean(page, what: str) -> None:
    page.wait_for_timeout(100)  # violation events are dispatched asynchronously
    assert violations(page) == [], (what, violations(page))
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), \
        f"{what}: the page is wider than the window"


@pytest.fixture
def csp_context(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.add_init_script(WATCH_CSP)
    yield context
    context.close()


def test_the_csp_is_enforced_and_the_listener_sees_a_violation(csp_context, web_server, console_errors):
    page = console_errors.watch(csp_context.new_page())
    response = page.goto(f"{web_server}/play/keys")
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    console_errors.expect("Content Security Policy")
    page.evaluate("""() => { const s = document.createElement("script");
        s.textContent = "window.__injected = true"; document.body.append(s); }""")
    page.wait_for_timeout(100)
    assert page.evaluate("window.__injected === undefined")  # an injected inline script does not run
    assert any("script-src" in v for v in violations(page)), violations(page)
    console_errors.assert_none()


def test_every_page_works_under_the_csp(csp_context, web_server, console_errors):
    page = console_errors.watch(csp_context.new_page())
    rng = random.Random("csp")

    # A finished game, played through the API: its game page and its replay show the score table and the
    # chart.
    http = Http(requests.Session(), web_server)
    finished = create_game_by_api(http, "fivetowers", 2)
    accept_all(http, finished)
    play_random(http, finished, rng)
    # a Tower Up game whose seat 1 has a 64-character name
    other = http.post("/games", {"ruleset": "towerup", "seats": [
        {"name": "Ann", "key": http_key(finished, 0)}, {"name": LONG_NAME, "key": http_key(finished, 1)}]})
    assert other[0] == 201, other
    towerup = PlayedGame(other[1]["game"], "towerup", finished.keys)
    accept_all(http, towerup)
    play_random(http, towerup, rng, max_moves=3)

    page.goto(f"{web_server}/play/")
    page.wait_for_selector(f"tr[data-game='{finished.game_id}']", timeout=STEP_MS)
    name_cell = page.locator(f"tr[data-game='{other[1]['game']}'] .name", has_text="Bartholomew")
    assert name_cell.get_attribute("title") == LONG_NAME
    assert_clean(page, "lobby")

    bob_key = generate_key_on_keys_page(page, web_server, "Bob")
    assert_clean(page, "keys")
    page.goto(f"{web_server}/play/new")
    page.locator("input[name=ruleset][value=towerup]").check()
    page.locator("#seats li").nth(1).wait_for(timeout=STEP_MS)
    assert_clean(page, "new game")
    game_id = create_game(page, web_server, "fivetowers", LONG_NAME, bob_key)  # through /play/new
    assert_clean(page, "game page")

    # both seats are this browser's: accept both, then play a move
    page.locator("#accept-buttons button").first.click(timeout=STEP_MS)
    page.wait_for_function("() => document.querySelectorAll('#accept-buttons button').length === 1", timeout=STEP_MS)
    page.locator("#accept-buttons button").first.click(timeout=STEP_MS)
    page.wait_for_selector("#game[data-status=active][data-my-turn=true]", timeout=STEP_MS)
    seq = int(page.get_attribute("#game", "data-seq"))
    choose_and_submit(page, rng)
    page.wait_for_function("seq => Number(document.querySelector('#game').dataset.seq) > seq", arg=seq,
                           timeout=STEP_MS)
    assert page.locator("#errors .error").count() == 0, page.locator("#errors").inner_text()
    seat_name = page.locator("#seat-list .name").nth(1)
    assert seat_name.get_attribute("title") == LONG_NAME
    assert page.evaluate("el => el.scrollWidth > el.clientWidth", seat_name.element_handle())  # cut: ellipsis
    assert_clean(page, "game page after a move")

    page.goto(f"{web_server}/play/games/{game_id}/replay")
    page.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
    assert_clean(page, "replay of a game in progress")

    page.goto(f"{web_server}/play/games/{finished.game_id}")
    page.wait_for_selector("#result-section:not([hidden]) table.score", timeout=STEP_MS)
    assert_clean(page, "game page of a finished game")
    page.goto(f"{web_server}/play/games/{finished.game_id}/replay")
    page.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
    total = int(page.get_attribute("#replay", "data-total"))
    page.locator("body").press("End")
    page.wait_for_selector(f"#replay[data-at='{total - 1}']", timeout=STEP_MS)
    page.wait_for_selector("#result-section:not([hidden]) table.score", timeout=STEP_MS)
    page.wait_for_selector("#chart svg path.series", state="attached", timeout=STEP_MS)
    assert_clean(page, "replay with the chart")

    page.goto(f"{web_server}/play/games/{towerup.game_id}")  # Tower Up's board: floor letters, seat names
    page.wait_for_selector("#game[data-loaded=true] #board svg", timeout=STEP_MS)
    label = page.locator("#board text.seat-name", has_text="Bartholomew").first
    shown, full = label.evaluate("t => [t.firstChild.nodeValue, t.querySelector('title').textContent]")
    assert "…" in shown and LONG_NAME not in shown and full == LONG_NAME, (shown, full)  # cut; hover: full
    assert_clean(page, "Tower Up game page")

    # the join page of a seat open to anyone (the invitation's, with its #fragment: test_invitations.py)
    page.goto(f"{web_server}/play/join/{create_open_game(http, 'fivetowers', ['key', 'open']).game_id}")
    page.wait_for_selector("#join[data-state=open]", timeout=STEP_MS)
    assert_clean(page, "join page")

    page.goto(f"{web_server}/docs")
    assert page.evaluate("getComputedStyle(document.body).maxWidth") == "1120px"  # docs.css applied
    assert_clean(page, "/docs")
    console_errors.assert_none()


def http_key(game, seat: int) -> str:
    from referee.protocol.signing import public_key_b64

    return public_key_b64(game.keys[seat])
