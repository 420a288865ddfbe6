"""The pages read like a game site and work on a phone (issue 24, items 5 and 6), in Chromium at 360×740:

* no page scrolls sideways (``scrollWidth <= innerWidth``), every visible button and link is a 44 px tap target;
* the board's smallest text is at least 12 CSS px at 360 px width, without zooming, in both games;
* a game page is titled by its players and its game ("Ann vs Bea · 5 Towers"), says what to do next in words,
  and keeps the game's id and log length in a collapsed details line;
* no console error and no CSP violation (the ``console_errors`` fixture).

With ``REFEREE_SCREENSHOTS=1`` it also writes the screenshots of ``docs/web.md`` to ``docs/screens/``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import requests
from browser_keys import storage_state

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from screens import SHOOT
from signed_requests import submit
from svc_helpers import Http
from tournament_helpers import Players, join_all

from referee.protocol.signing import b64url_encode, generate_key, public_key_b64

pytestmark = pytest.mark.web

PHONE = {"viewport": {"width": 360, "height": 740}, "device_scale_factor": 1, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
STEP_MS = 20_000
SCREENS = Path(__file__).resolve().parents[2] / "docs" / "screens"


def play(base_url: str, ruleset: str, turns: int, *, accept: bool = True):
    """A game of Ann and Bea, accepted and ``turns`` moves in (builds preferred, so towers stand). Each move is
    signed at the position its legal-moves answer names (its ``seq`` and ``head``: no other read of the game),
    over one kept-alive session."""
    keys = [generate_key(), generate_key()]
    http = requests.Session()
    created = http.post(f"{base_url}/games", timeout=10, json={
        "ruleset": ruleset, "seats": [{"name": "Ann", "key": public_key_b64(keys[0])},
                                      {"name": "Bea", "key": public_key_b64(keys[1])}]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]
    for seat, key in enumerate(keys if accept else []):
        assert submit(base_url, game, key, seat, "referee/accept",
                      entropy=b64url_encode(bytes([seat]) * 32)).status_code == 202
    for _ in range(turns):
        legal = http.get(f"{base_url}/games/{game}/legal-moves", timeout=10).json()
        if legal["to_move"] is None:
            break  # the game is over
        by_type = {}
        for move in legal["moves"]:
            by_type.setdefault(move["type"], move)
        builds = [m for m in legal["moves"] if m["type"] == "build"]
        move = (max(builds, key=lambda m: len(m.get("cards", []))) if builds else None) or by_type.get(
            "place_start") or by_type.get("take") or by_type.get("bid") or legal["moves"][0]
        response = submit(base_url, game, keys[legal["to_move"]], legal["to_move"], "referee/move", at=legal,
                          http=http, move=move)
        assert response.status_code < 300, response.text
    to_move = http.get(f"{base_url}/games/{game}", timeout=10).json()["to_move"]
    http.close()
    return game, keys, to_move


@pytest.fixture(scope="module")
def games(web_server):
    return {"fivetowers": play(web_server, "fivetowers", 9), "towerup": play(web_server, "towerup", 12),
            "finished": play(web_server, "fivetowers", 1000), "waiting": play(web_server, "towerup", 0, accept=False)}


def open_as(browser, base_url, console_errors, size, *, key=None, name="Ann"):
    """A page of a new context whose localStorage holds ``key`` for the site's origin before any page loads
    (Playwright's ``storage_state``: the same entry the keys page keeps, without loading a page to write it)."""
    state = storage_state(base_url, [(name, key)]) if key is not None else None
    context = browser.new_context(**size, storage_state=state)
    page = console_errors.watch(context.new_page())
    return context, page


OVERFLOW = "() => document.documentElement.scrollWidth - innerWidth"
# Visible buttons, links and summaries outside the board's drawing whose box is less than 44 px tall.
SMALL_TARGETS = """() => [...document.querySelectorAll('button, a[href], summary, select, input[type=range]')]
  .filter(e => !e.closest('svg') && !e.closest('.skip') && e.getClientRects().length
          && getComputedStyle(e).visibility !== 'hidden')
  .filter(e => e.getBoundingClientRect().height < 44)
  .map(e => `${e.tagName} ${e.id || e.className} "${e.textContent.trim().slice(0, 30)}"`
            + ` ${e.getBoundingClientRect().height}`)"""
# The smallest text of the board as drawn on the screen: font size times the drawing's scale.
SMALLEST_TEXT = """() => [...document.querySelectorAll('#board svg text')]
  .filter(t => t.textContent.trim() && t.getClientRects().length)
  .map(t => [parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a, t.getAttribute('class'), t.textContent])
  .sort((a, b) => a[0] - b[0]).slice(0, 3)"""


def check_page(page, what: str) -> None:
    assert page.evaluate(OVERFLOW) <= 0, f"{what} scrolls sideways"
    assert page.evaluate(SMALL_TARGETS) == [], what


def shoot(page, name: str) -> None:
    if SHOOT:
        SCREENS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=os.environ.get("REFEREE_FULL_PAGE") == "1")


NAMES = {"fivetowers": "5 Towers", "towerup": "Tower Up"}


@pytest.mark.parametrize("ruleset", ["fivetowers", "towerup"])
def test_a_game_page_on_a_phone(browser, web_server, games, console_errors, ruleset):
    game_name = NAMES[ruleset]
    game, keys, to_move = games[ruleset]
    context, page = open_as(browser, web_server, console_errors, PHONE, key=keys[to_move], name=["Ann", "Bea"][to_move])
    page.goto(f"{web_server}/play/games/{game}")
    page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
    # titled by its players and its game; the next step in words; the id and log length folded away
    assert page.locator("#game-title").inner_text() == f"Ann vs Bea · {game_name}"
    assert page.title() == f"Your turn · Ann vs Bea · {game_name} · the referee"
    assert page.locator("#status-line").inner_text().startswith("Your turn: ")
    assert "log length" not in page.locator("#status-line").inner_text()
    details = page.locator("#game-details")
    assert details.get_attribute("open") is None and not page.locator("#detail-id").is_visible()
    assert page.locator("#detail-id").text_content() == game
    check_page(page, f"the {ruleset} game page")
    check_menu(page, f"/play/games/{game}")
    shoot(page, f"phone-{ruleset}-game")
    smallest = page.evaluate(SMALLEST_TEXT)
    assert smallest[0][0] >= 12, f"the {game_name} board's smallest texts at 360 px: {smallest}"
    page.get_by_role("button", name=f"Zoom in on the {'board' if ruleset == 'fivetowers' else 'city'}").click()
    assert page.evaluate(OVERFLOW) <= 0  # the board grows in its frame, not the page
    page.goto(f"{web_server}/play/games/{game}/replay")
    page.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
    check_page(page, f"the {ruleset} replay")
    check_menu(page, f"/play/games/{game}/replay")
    assert game_name in page.locator("#ruleset-name").inner_text()
    if ruleset == "fivetowers" and SHOOT:
        page.locator("#last").click()
        page.wait_for_timeout(300)
        shoot(page, "phone-replay")
    context.close()
    # the other player's page: "Waiting for …"
    context, page = open_as(browser, web_server, console_errors, PHONE, key=keys[1 - to_move],
                            name=["Ann", "Bea"][1 - to_move])
    page.goto(f"{web_server}/play/games/{game}")
    page.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)
    assert page.locator("#status-line").inner_text() == f"Waiting for {['Ann', 'Bea'][to_move]}"
    assert page.title() == f"Ann vs Bea · {game_name} · the referee"
    context.close()
    console_errors.assert_none()


def test_every_other_page_on_a_phone(browser, web_server, games, console_errors):
    game, keys, _ = games["fivetowers"]
    http = Http(requests.Session(), web_server)
    players = Players(3)
    status, created = http.post("/tournaments", players.body(format={"kind": "round_robin", "table_sizes": [2]}))
    assert status == 201, created
    join_all(http, created["tournament"], players)
    context, page = open_as(browser, web_server, console_errors, PHONE, key=keys[0])
    for path, ready, name in (("/play/new", "#seats li", "new"), ("/play/keys", "#keys-body tr[data-public]", "keys"),
                              ("/play/me", "#all-my-games[aria-busy=false]", "my-games"),
                              ("/play/tournaments", "#t-ruleset-choices input", "tournaments"),
                              (f"/play/tournaments/{created['tournament']}", ".round[data-round='1']", "tournament"),
                              ("/play/", f"tr[data-game='{game}']", "lobby")):  # last: the keyboard starts there
        page.goto(f"{web_server}{path}")
        page.wait_for_selector(ready, timeout=STEP_MS)
        page.wait_for_timeout(300)  # (not "networkidle": the pages hold an event stream open)
        check_page(page, path)
        check_menu(page, path)
        shoot(page, f"phone-{name}")
        if name == "lobby":  # the lobby names the games, not their ruleset ids
            assert page.locator(f"tr[data-game='{game}'] td.game-name").inner_text() == "5 Towers"
            assert page.locator(f"tr[data-game='{games['towerup'][0]}'] td.game-name").inner_text() == "Tower Up"
            assert "fivetowers" not in page.locator("#games-body").inner_text()
    check_menu_by_keyboard(page, web_server, "My games")
    context.close()
    console_errors.assert_none()


MENU_ITEM = """() => [...document.querySelectorAll('header.top nav a')].map(a => ({
  text: a.textContent.trim(), href: new URL(a.href).pathname, current: a.getAttribute('aria-current'),
  height: a.getBoundingClientRect().height, right: a.getBoundingClientRect().right}))"""


def check_menu(page, path: str, lang: str = "en", label: str = "My games") -> None:
    """A player's home (/play/me) is one tap away: in the menu, in the page's language, a 44 px target within
    the 360 px screen, marked as the current page on itself only."""
    assert page.get_attribute("html", "lang") == lang, path
    links = page.evaluate(MENU_ITEM)
    mine = [a for a in links if a["href"] == "/play/me"]
    assert [a["text"] for a in mine] == [label], (path, links)
    assert mine[0]["height"] >= 44 and mine[0]["right"] <= 360, (path, mine)
    current = [a["href"] for a in links if a["current"] == "page"]
    assert ("/play/me" in current) == (path == "/play/me") and len(current) <= 1, (path, current)


def check_menu_by_keyboard(page, web_server: str, label: str) -> None:
    """From the top of the lobby (just loaded, nothing focused yet) Tab reaches "My games" (after the skip link, the
    brand and the lobby), and Enter opens it."""
    assert page.evaluate("() => document.activeElement === document.body"), "the lobby starts with no focus"
    for _ in range(6):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.getAttribute('href')") == "/play/me":
            break
    assert page.evaluate("() => document.activeElement.textContent.trim()") == label
    page.keyboard.press("Enter")
    page.wait_for_url(f"{web_server}/play/me", timeout=STEP_MS)
    assert page.get_attribute("header.top nav a[href='/play/me']", "aria-current") == "page"


@pytest.mark.parametrize("lang,label", [("de", "Meine Partien"), ("fr", "Mes parties")])
def test_my_games_is_in_the_menu_in_german_and_french(browser, web_server, console_errors, *, lang, label):
    """The menu's "My games" in the page's language still fits the phone (every page's menu is the same template:
    the English walk of ``test_every_other_page_on_a_phone`` and the game pages check it on every page)."""
    context = browser.new_context(**PHONE, locale=lang)
    page = console_errors.watch(context.new_page())
    for path in ("/play/me", "/play/"):  # the lobby last: the keyboard starts from its top
        page.goto(f"{web_server}{path}")
        check_menu(page, path, lang, label)
        assert page.evaluate(OVERFLOW) <= 0, f"{path} scrolls sideways"
    check_menu_by_keyboard(page, web_server, label)
    context.close()
    console_errors.assert_none()


@pytest.mark.skipif(not SHOOT, reason="screenshots only with REFEREE_SCREENSHOTS=1")
def test_desktop_screenshots(browser, web_server, games, console_errors):
    http = Http(requests.Session(), web_server)
    players = Players(3)
    status, created = http.post("/tournaments", players.body(format={"kind": "round_robin", "table_sizes": [2]}))
    assert status == 201, created
    tournament = created["tournament"]
    join_all(http, tournament, players)
    context, page = open_as(browser, web_server, console_errors, DESKTOP, key=games["fivetowers"][1][0])
    for path, ready, name in (("/play/", "tr[data-game]", "lobby"), ("/play/new", "#seats li", "new"),
                              ("/play/tournaments", "#t-ruleset-choices input", "tournaments"),
                              (f"/play/games/{games['fivetowers'][0]}", "#game[data-loaded=true]", "fivetowers-game"),
                              (f"/play/games/{games['towerup'][0]}", "#game[data-loaded=true]", "towerup-game"),
                              (f"/play/games/{games['fivetowers'][0]}/replay", "#replay[data-ready=true]", "replay"),
                              ("/play/keys", "#keys-body tr[data-public]", "keys"),
                              ("/play/me", "#all-my-games[aria-busy=false]", "my-games"),
                              ("/play/tournaments/" + tournament, ".round[data-round='1']", "tournament")):
        page.goto(f"{web_server}{path}")
        page.wait_for_selector(ready, timeout=STEP_MS)
        page.wait_for_timeout(300)  # (not "networkidle": the pages hold an event stream open)
        if name == "replay":
            page.locator("#last").click()
            page.wait_for_timeout(300)
        shoot(page, f"desktop-{name}")
    context.close()
    console_errors.assert_none()


def test_a_finished_game_on_a_phone(browser, web_server, games, console_errors):
    """The final score (a wide table) and the replay's chart stay within the screen."""
    game, keys, _ = games["finished"]
    context, page = open_as(browser, web_server, console_errors, PHONE, key=keys[0])
    page.goto(f"{web_server}/play/games/{game}")
    page.wait_for_selector("#result-section:not([hidden])", timeout=STEP_MS)
    page.wait_for_function("() => document.querySelector('#status-line').textContent.startsWith('Game over: ')",
                           timeout=STEP_MS)
    assert page.locator("#status-line").inner_text().endswith((" won", " share first place"))
    check_page(page, "a finished game")
    shoot(page, "phone-finished-game")
    page.goto(f"{web_server}/play/games/{game}/replay")
    page.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
    page.locator("#last").click()
    page.wait_for_selector("#result-section:not([hidden])", timeout=STEP_MS)
    check_page(page, "a finished game's replay")
    context.close()
    console_errors.assert_none()


def test_a_game_waiting_for_acceptances_on_a_phone(browser, web_server, games, console_errors):
    game, keys, _ = games["waiting"]
    context, page = open_as(browser, web_server, console_errors, PHONE, key=keys[0])
    page.goto(f"{web_server}/play/games/{game}")
    page.wait_for_selector("#accept-panel:not([hidden])", timeout=STEP_MS)
    assert page.locator("#status-line").inner_text() == "Your turn: accept the game (also waiting for Bea)"
    # on one column the accept panel comes first, above the players
    assert box_top(page, "#accept-panel") < box_top(page, "#seats-panel")
    check_page(page, "a game waiting for acceptances")
    context.close()
    context, page = open_as(browser, web_server, console_errors, PHONE)
    page.goto(f"{web_server}/play/games/{game}")
    page.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)
    assert page.locator("#status-line").inner_text() == "Waiting for Ann, Bea to accept"
    context.close()
    console_errors.assert_none()


def box_top(page, selector: str) -> float:
    return page.locator(selector).evaluate("e => e.getBoundingClientRect().top")
