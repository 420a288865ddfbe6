"""The lobby's open games, play now and the rematch button (issue 36, items 3 and 4), in Chromium under the CSP:

* an open game (a seat open to anyone) is listed in the lobby's "Open games" with its game, players, clock,
  creator and age; its creator sees "Your game", and a second browser context with no key (a 360×740 phone)
  takes the seat from the lobby's "Take a seat" (the join page) and lands on the game page.

* "Play now" in two browser contexts with no key puts them in one game: the first finds no open Tower Up game of
  two players with no clock and opens one (a key made in its browser), whose page waits; the second, with the
  same choices, takes that game's seat in the same click (signed by a key made in its browser, under the name
  beside the button) and lands on the game page, and the first's page shows it taken;
* "Play now" pressed in two browsers at the same moment (three times over, fresh browsers each time) makes one game:
  both land on the same game page, both sit in it, and no open game of theirs is left listed;
* a finished game (set up and resigned through the API): one seat's "Rematch" button asks for the rematch and goes
  to the new game, where she accepts it with one click; the other seat's page of the finished game, open all along,
  says at once "Ann asks for a rematch" (the browser's live stream), and its one click accepts the rematch and goes
  there, which starts it.

Zero console errors and zero CSP violations. One web server for the module."""

from __future__ import annotations

import re
import time

import pytest
import requests
from signed_requests import start
from test_csp import violations
from test_decisions_and_messages import open_page
from test_invitations import DESKTOP, context_of, create_in_form
from test_phone import box, page_width
from test_play_by_web import STEP_MS
from test_site import PHONE

from referee.protocol.signing import sign

pytestmark = pytest.mark.web


def test_an_open_game_is_listed_in_the_lobby_and_taken_from_it(browser, web_server, console_errors):
    ann_ctx, bea_ctx = context_of(browser, DESKTOP), context_of(browser, PHONE)
    ann, bea = (console_errors.watch(ctx.new_page()) for ctx in (ann_ctx, bea_ctx))
    game = create_in_form(ann, web_server, ["open"])

    ann.goto(f"{web_server}/play/")
    row = ann.locator(f"#open-games-body tr[data-open-game='{game}']")
    row.wait_for(timeout=STEP_MS)
    assert "Ann (you)" in row.inner_text() and row.locator(".take-seat").count() == 0

    bea.goto(f"{web_server}/play/")
    row = bea.locator(f"#open-games-body tr[data-open-game='{game}']")
    row.wait_for(timeout=STEP_MS)
    text = row.inner_text()
    assert "5 Towers" in text and "Ann" in text and "1 of 2 seated, 1 open" in text and "No time control" in text
    assert page_width(bea) <= 390 and box(row)["right"] <= 390  # a 360 px phone: one card, nothing wider
    take = row.get_by_role("link", name="Take a seat")
    assert box(take)["height"] >= 44
    take.click()
    bea.wait_for_url(f"{web_server}/play/join/{game}", timeout=STEP_MS)
    bea.wait_for_selector("#join[data-state=open]", timeout=STEP_MS)
    bea.locator("#join-name").fill("Bea")
    bea.locator("#join-take").click()
    bea.wait_for_url(f"{web_server}/play/games/{game}", timeout=STEP_MS)

    # taken: the game leaves the open games
    bea.goto(f"{web_server}/play/")
    bea.wait_for_selector("#open-games[aria-busy=false]", timeout=STEP_MS)
    assert bea.locator(f"#open-games-body tr[data-open-game='{game}']").count() == 0

    for page in (ann, bea):
        assert violations(page) == []
    console_errors.assert_none()
    for ctx in (ann_ctx, bea_ctx):
        ctx.close()


def finished_game(base: str) -> tuple[str, list]:
    """A Tower Up game of Ann and Bea, accepted by both, that Ann resigns at once (through the API)."""
    game, keys = start(base, "towerup", [{"name": "Ann"}, {"name": "Bea"}])
    state = requests.get(f"{base}/games/{game}", timeout=10).json()
    envelope = {"v": 1, "ctx": "referee/resign", "game": game, "seat": 0, "seq": state["seq"], "prev": state["head"]}
    resigned = requests.post(f"{base}/games/{game}/resign", json={"envelope": envelope, "sig": sign(keys[0], envelope)},
                             timeout=10)
    assert resigned.status_code == 202, resigned.text
    deadline = time.monotonic() + 15
    while requests.get(f"{base}/games/{game}", timeout=10).json()["status"] != "finished":
        assert time.monotonic() < deadline, "the resignation was not replayed"
        time.sleep(0.1)
    return game, keys


def test_a_finished_games_rematch_is_asked_by_one_button_and_accepted_by_one_click(browser, web_server,
                                                                                   console_errors):
    game, keys = finished_game(web_server)
    ann_ctx, ann = open_page(browser, web_server, console_errors, game, keys[0], name="Ann")
    bea_ctx, bea = open_page(browser, web_server, console_errors, game, keys[1], name="Bea", **PHONE)

    button = ann.locator("#rematch")
    button.wait_for(timeout=STEP_MS)
    assert button.inner_text() == "Rematch"
    button.click()
    ann.wait_for_url(re.compile(r"/play/games/(?!" + re.escape(game) + r"$)[^/]+$"), timeout=STEP_MS)
    rematch = ann.url.rsplit("/", 1)[1]
    assert requests.get(f"{web_server}/games/{game}", timeout=10).json()["rematch"] == rematch
    # the rematch waits for every seat's acceptance, the asker's too: one click each
    ann.wait_for_selector("#game[data-loaded=true][data-status=waiting]", timeout=STEP_MS)
    ann.locator("#accept-buttons button.accept").click(timeout=STEP_MS)

    # Bea's page of the finished game, open all along, learns it from the live stream (no reload): one click accepts
    bea.wait_for_selector("#rematch-panel[data-state=asked]", timeout=STEP_MS)
    assert bea.locator("#rematch-ask").inner_text() == "Ann asks for a rematch"
    accept = bea.get_by_role("button", name="Accept the rematch")
    assert box(accept)["height"] >= 44 and page_width(bea) <= 390
    accept.click()
    bea.wait_for_url(f"{web_server}/play/games/{rematch}", timeout=STEP_MS)
    bea.wait_for_selector("#game[data-status=active]", timeout=STEP_MS)
    ann.wait_for_selector("#game[data-status=active]", timeout=STEP_MS)

    for page in (ann, bea):
        assert violations(page) == []
    console_errors.assert_none()
    for ctx in (ann_ctx, bea_ctx):
        ctx.close()


def play_now(page, base: str, name: str) -> None:
    page.goto(f"{base}/play/")
    page.wait_for_selector("#play-now[data-ready=true]", timeout=STEP_MS)
    page.locator("#pn-name").fill(name)
    page.locator("#pn-ruleset").select_option("towerup")
    page.locator("#pn-players").select_option("2")
    page.locator("#pn-clock").select_option("none")
    assert page_width(page) <= page.viewport_size["width"] + 30  # nothing wider than the screen (360 px phone)
    page.get_by_role("button", name="Play now").click()


def test_play_now_in_two_browsers_puts_them_in_one_game(browser, web_server, console_errors):
    cy_ctx, dee_ctx = context_of(browser, DESKTOP), context_of(browser, PHONE)
    cy, dee = (console_errors.watch(ctx.new_page()) for ctx in (cy_ctx, dee_ctx))

    play_now(cy, web_server, "Cy")
    cy.wait_for_url(re.compile(r"/play/games/[^/]+$"), timeout=STEP_MS)
    game = cy.url.rsplit("/", 1)[1]
    cy.wait_for_selector("#game[data-loaded=true][data-status=waiting]", timeout=STEP_MS)
    created = requests.get(f"{web_server}/games/{game}", timeout=10).json()
    assert created["seats"][0]["name"] == "Cy" and created["seats"][1]["open"] == "anyone"
    assert cy.evaluate("() => JSON.parse(localStorage.getItem('referee.keys.v1')).length") == 1

    play_now(dee, web_server, "Dee")  # one click: the seat is taken, no join page, the name not asked again
    dee.wait_for_url(f"{web_server}/play/games/{game}", timeout=STEP_MS)
    dee.wait_for_selector("#game[data-loaded=true] #key-notice", timeout=STEP_MS)  # how to keep the new key
    assert "(you)" in dee.locator("#seat-list li[data-seat='1']").inner_text()
    assert dee.evaluate("() => JSON.parse(localStorage.getItem('referee.keys.v1')).map((k) => k.name)") == ["Dee"]
    cy.wait_for_selector("#seat-list li[data-seat='1']:has-text('Dee')", timeout=STEP_MS)  # redrawn live

    for page in (cy, dee):
        assert violations(page) == []
    console_errors.assert_none()
    for ctx in (cy_ctx, dee_ctx):
        ctx.close()


def browser_key(page) -> str:
    return page.evaluate("() => JSON.parse(localStorage.getItem('referee.keys.v1'))[0].public")


def test_play_now_pressed_in_two_browsers_at_once_makes_one_game(browser, web_server, console_errors):
    for round_ in range(3):
        contexts = [context_of(browser, DESKTOP), context_of(browser, PHONE)]
        pages = [console_errors.watch(ctx.new_page()) for ctx in contexts]
        for page, name in zip(pages, ("Fay", "Gus"), strict=True):
            page.goto(f"{web_server}/play/")
            page.wait_for_selector("#play-now[data-ready=true]", timeout=STEP_MS)
            page.locator("#pn-name").fill(name)
            page.locator("#pn-ruleset").select_option("towerup")
            page.locator("#pn-players").select_option("2")
            page.locator("#pn-clock").select_option("none")
        # the same moment in both: a click scheduled at one time of the (shared) clock
        at = pages[0].evaluate("() => Date.now() + 400")
        for page in pages:
            page.evaluate("at => setTimeout(() => document.getElementById('pn-go').click(), at - Date.now())", at)
        for page in pages:
            page.wait_for_url(re.compile(r"/play/games/[^/]+$"), timeout=STEP_MS)
        games = [page.url.rsplit("/", 1)[1] for page in pages]
        assert games[0] == games[1], (round_, games)
        keys = {browser_key(page) for page in pages}
        seats = requests.get(f"{web_server}/games/{games[0]}", timeout=10).json()["seats"]
        assert {s["key"] for s in seats} == keys, (round_, seats)  # one `created` both sit in
        log = requests.get(f"{web_server}/games/{games[0]}/log", timeout=10).json()["entries"]
        assert [e["type"] for e in log].count("created") == 1 and [e["type"] for e in log].count("seated") == 1
        listed = requests.get(f"{web_server}/games?open=true", timeout=10).json()["games"]
        assert not [g for g in listed if (g.get("creator") or {}).get("key") in keys], (round_, listed)
        for page in pages:
            page.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)
            assert violations(page) == []
        for ctx in contexts:
            ctx.close()
    console_errors.assert_none()
