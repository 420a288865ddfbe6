"""Invitation links and open seats in the pages (issue 36, item 2; CONTRACT section 14), in Chromium under the CSP:

* Ann, from the lobby's "Start a new game", creates a 5 Towers game in the new-game form with seat 2 "invite by
  link"; the form shows the link (the invitation's seed only in its #fragment) with a copy button, and her game
  page keeps showing it;
* Bea, in a fresh browser context with no key, on a 390×844 phone, opens the link: the join page shows the game,
  she types her name and takes the seat with one click (a key made in her browser), lands on the game page, which
  says once how to keep the key; Ann accepts and both play a move. Every click and choice of each player is
  counted on the way (typing is not): Ann 8 to have the game accepted, Bea 1 to sit down, and each move's clicks,
  asserted and printed (the evidence of issue 36's closing note);
* Cy, in a third context, opening the same link is told the seat is taken;
* a seat open to anyone is taken without a fragment, left with the page's button, and the creator cancels the game;
  the join page then says so in German;
* an invitation past its game's `accept_by` (the browser's clock a week and a day on) is said lapsed, in French,
  with no form to take the seat.

Zero console errors and zero CSP violations. Screenshots (test-artifacts/): ``new-game-form.png`` (the seats'
choices), ``invitation-link.png`` (the link after creating), ``join-page-phone.png`` (390×844)."""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from datetime import UTC, datetime

import pytest
import requests
from screens import shoot
from test_csp import WATCH_CSP, violations
from test_play_by_web import STEP_MS, choose_and_submit
from test_site import PHONE, check_page

pytestmark = pytest.mark.web

DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE_390 = {**PHONE, "viewport": {"width": 390, "height": 844}}


def context_of(browser, size, **extra):
    context = browser.new_context(**size, **extra)
    context.add_init_script(WATCH_CSP)
    return context


def create_in_form(page, base_url: str, kinds: list[str], shot: str | None = None,
                   clicks: Counter | None = None) -> str:
    """Ann creates a 5 Towers game in the form, seat 1 hers (a key generated here), the others of ``kinds``. With
    ``clicks``, she comes from the lobby's "Start a new game", and each click or choice of hers is counted there."""
    tally = clicks if clicks is not None else Counter()
    if clicks is not None:
        page.goto(f"{base_url}/play/")
        page.get_by_role("link", name="Start a new game").click()
        tally["Ann"] += 1
        page.wait_for_url(f"{base_url}/play/new")
    else:
        page.goto(f"{base_url}/play/new")
    page.locator("input[name=ruleset][value=fivetowers]").check()
    tally["Ann"] += 1
    seats = page.locator("#seats li")
    seats.nth(len(kinds)).wait_for()
    seats.nth(0).locator(".seat-name").fill("Ann")
    seats.nth(0).get_by_role("button", name=re.compile("Generate a key")).click()
    tally["Ann"] += 1
    page.wait_for_function("() => document.querySelector('#seats li .seat-key').value.length === 43")
    for i, kind in enumerate(kinds, start=1):
        seats.nth(i).locator(".seat-kind").select_option(kind)
        tally["Ann"] += 1
    if shot:
        shoot(page.locator("#new-form fieldset").nth(1), shot)
    page.get_by_role("button", name="Create the game").click()
    tally["Ann"] += 1
    page.wait_for_selector("#created:not([hidden]) #seat-offers:not([hidden])", timeout=STEP_MS)
    return page.locator("#go-to-game").get_attribute("href").rsplit("/", 1)[1]


def play_one_move(page) -> None:
    seq = int(page.get_attribute("#game", "data-seq"))
    choose_and_submit(page, random.Random("invite"))
    page.wait_for_function("seq => Number(document.querySelector('#game').dataset.seq) > seq", arg=seq, timeout=STEP_MS)
    assert page.locator("#errors .error").count() == 0, page.locator("#errors").inner_text()


def click_a_move(page) -> int:
    """A move made by clicks only (the first choice the page offers each time, then "Sign and submit"): their count."""
    seq = int(page.get_attribute("#game", "data-seq"))
    submit = page.locator("#submit-move")
    clicks = 0
    while not submit.is_enabled():
        assert clicks < 30, "the move never became complete"
        choice = page.locator("#board [data-choice='1'], #move-controls button.choice").first
        choice.click()
        clicks += 1
    submit.click()
    page.wait_for_function("seq => Number(document.querySelector('#game').dataset.seq) > seq", arg=seq, timeout=STEP_MS)
    assert page.locator("#errors .error").count() == 0, page.locator("#errors").inner_text()
    return clicks + 1


def test_a_friend_takes_an_invited_seat_by_one_click_and_both_move(browser, web_server, artifacts, console_errors):
    ann_ctx, bea_ctx, cy_ctx = context_of(browser, DESKTOP), context_of(browser, PHONE_390), context_of(browser, PHONE)
    ann, bea, cy = (console_errors.watch(ctx.new_page()) for ctx in (ann_ctx, bea_ctx, cy_ctx))
    clicks: Counter = Counter()  # every click or choice of each player (typing a name is not counted)

    game = create_in_form(ann, web_server, ["invite"], str(artifacts / "new-game-form.png"), clicks)
    link = ann.locator("#invite-link-1").input_value()
    assert re.fullmatch(rf"{re.escape(web_server)}/play/join/{game}#[A-Za-z0-9_-]{{43}}", link), link
    seed = link.split("#", 1)[1]
    assert ann.locator("#seat-offers button.copy-link").count() == 1
    ann.locator("#seat-offers button.copy-link").click()  # the link to send Bea (by any chat or mail)
    clicks["Ann"] += 1
    shoot(ann, artifacts / "invitation-link.png", full_page=True)
    # the server never had the seed: not in the log, not in the game
    assert seed not in requests.get(f"{web_server}/games/{game}/log", timeout=10).text
    assert seed not in requests.get(f"{web_server}/games/{game}", timeout=10).text

    # the creator's game page keeps the link (from this browser) and offers to cancel
    ann.locator("#go-to-game").click()
    clicks["Ann"] += 1
    ann.wait_for_selector("#game[data-loaded=true] #seat-offers:not([hidden])", timeout=STEP_MS)
    assert ann.locator("#invite-link-1").input_value() == link
    assert ann.locator("#cancel-game").is_visible()

    # Bea: a fresh browser, no key, on a phone
    bea.goto(link)
    bea.wait_for_selector("#join[data-loaded=true][data-state=open]", timeout=STEP_MS)
    assert bea.evaluate("() => localStorage.getItem('referee.keys.v1')") is None
    assert bea.locator("#join-game").inner_text() == "5 Towers"
    assert "Ann" in bea.locator("#join-players").inner_text()
    assert bea.locator("#join-clock").inner_text() == "No time control"
    bea.locator("#join-name").fill("Bea")
    check_page(bea, "join page")
    shoot(bea, artifacts / "join-page-phone.png", full_page=True)
    assert bea.viewport_size == {"width": 390, "height": 844}
    bea.get_by_role("button", name="Take the seat").click()  # the one click
    clicks["Bea"] += 1
    bea.wait_for_url(f"{web_server}/play/games/{game}", timeout=STEP_MS)
    bea.wait_for_selector("#game[data-loaded=true] #key-notice", timeout=STEP_MS)
    assert "export" in bea.locator("#key-notice").inner_text()
    assert "(you)" in bea.locator("#seat-list li[data-seat='1']").inner_text()
    keys = bea.evaluate("() => JSON.parse(localStorage.getItem('referee.keys.v1'))")
    assert [k["name"] for k in keys] == ["Bea"]
    check_page(bea, "game page after joining")

    # Ann accepts (the seat taken is Bea's acceptance); the links are gone, and both play a move
    ann.locator("#accept-buttons button").first.click(timeout=STEP_MS)
    clicks["Ann"] += 1
    for page in (ann, bea):
        page.wait_for_selector("#game[data-status=active]", timeout=STEP_MS)
    assert ann.locator("#seat-offers").is_hidden()
    to_start = dict(clicks)
    assert to_start == {"Ann": 8, "Bea": 1}, to_start  # from the lobby to a started game; Bea: one click
    first = ann if ann.get_attribute("#game", "data-my-turn") == "true" else bea
    second = bea if first is ann else ann
    moves = {}
    for page in (first, second):
        who = "Ann" if page is ann else "Bea"
        page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
        moves[who] = click_a_move(page)
        clicks[who] += moves[who]
    assert all(2 <= n <= 12 for n in moves.values()), moves  # a choice or a few, and "Sign and submit"
    assert clicks == Counter({"Ann": 8 + moves["Ann"], "Bea": 1 + moves["Bea"]})
    print(f"\nclicks from the lobby's New game to both having moved: Ann {clicks['Ann']} ({to_start['Ann']} to a "
          f"started game, {moves['Ann']} for her move), Bea {clicks['Bea']} (1 to take the seat, {moves['Bea']} for "
          "her move); typing a name not counted")

    # the key notice is said once
    bea.reload()
    bea.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)
    assert bea.locator("#key-notice").count() == 0

    # Cy opens the same link: the seat is taken, and no key is made
    cy.goto(link)
    cy.wait_for_selector("#join[data-loaded=true][data-state]", timeout=STEP_MS)
    assert cy.get_attribute("#join", "data-state") == "started"  # taken, and the game has started since
    assert "no seat is free" in cy.locator("#join-state").inner_text()
    assert cy.locator("#join-form").is_hidden()
    assert cy.evaluate("() => localStorage.getItem('referee.keys.v1')") is None

    for page, what in ((ann, "Ann"), (bea, "Bea"), (cy, "Cy")):
        page.wait_for_timeout(100)
        assert violations(page) == [], (what, violations(page))
    console_errors.assert_none()
    for ctx in (ann_ctx, bea_ctx, cy_ctx):
        ctx.close()


def test_an_open_seat_is_taken_left_and_the_game_cancelled(browser, web_server, console_errors):
    ann_ctx = context_of(browser, DESKTOP)
    dan_ctx = context_of(browser, PHONE, locale="de-DE", extra_http_headers={"Accept-Language": "de-DE"})
    eve_ctx = context_of(browser, DESKTOP)
    ann, dan, eve = (console_errors.watch(ctx.new_page()) for ctx in (ann_ctx, dan_ctx, eve_ctx))

    game = create_in_form(ann, web_server, ["open"])
    link = ann.locator("#open-link-1").input_value()
    assert link == f"{web_server}/play/join/{game}"
    ann.locator("#go-to-game").click()
    ann.wait_for_selector("#game[data-loaded=true] #cancel-game", timeout=STEP_MS)

    # Dan (German) takes the open seat without a fragment, then leaves it from the game page
    dan.goto(link)
    dan.wait_for_selector("#join[data-loaded=true][data-state=open]", timeout=STEP_MS)
    assert dan.locator("html").get_attribute("lang") == "de"
    dan.locator("#join-name").fill("Dan")
    dan.locator("#join-take").click()
    dan.wait_for_url(f"{web_server}/play/games/{game}", timeout=STEP_MS)
    dan.locator("button.leave-seat").click(timeout=STEP_MS)
    dan.wait_for_selector("#seat-list li[data-seat='1']:not(:has-text('Dan'))", timeout=STEP_MS)

    # Eve takes it: taking the place of one who left; then Ann cancels, and the join page says so in German
    eve.goto(link)
    eve.wait_for_selector("#join[data-state=open]", timeout=STEP_MS)
    eve.locator("#join-name").fill("Eve")
    eve.locator("#join-take").click()
    eve.wait_for_url(f"{web_server}/play/games/{game}", timeout=STEP_MS)
    ann.locator("#cancel-game").click()
    ann.wait_for_selector("#game[data-status=cancelled]", timeout=STEP_MS)
    assert ann.locator("#status-line").inner_text() == "Game cancelled"
    assert requests.get(f"{web_server}/games/{game}", timeout=10).json()["status"] == "cancelled"
    dan.goto(link)
    dan.wait_for_selector("#join[data-state=cancelled]", timeout=STEP_MS)
    assert "abgesagt" in dan.locator("#join-state").inner_text()

    for page in (ann, dan, eve):
        assert violations(page) == []
    console_errors.assert_none()
    for ctx in (ann_ctx, dan_ctx, eve_ctx):
        ctx.close()


def test_a_lapsed_invitation_is_said_in_french(browser, lapsing_server, console_errors):
    ann_ctx = context_of(browser, DESKTOP)
    fr_ctx = context_of(browser, PHONE_390, locale="fr-FR", extra_http_headers={"Accept-Language": "fr-FR"})
    ann, flo = (console_errors.watch(ctx.new_page()) for ctx in (ann_ctx, fr_ctx))
    game = create_in_form(ann, lapsing_server, ["invite"])
    link = ann.locator("#invite-link-1").input_value()
    accept_by = requests.get(f"{lapsing_server}/games/{game}/log", timeout=10).json()["entries"][0]["accept_by"]
    lapsed = datetime.fromisoformat(accept_by.replace("Z", "+00:00"))
    time.sleep(max(0.0, (lapsed - datetime.now(UTC)).total_seconds()) + 0.2)

    # Flo opens the link after the game's accept_by: the invitation lapsed, said in French, no seat to take
    flo.goto(link)
    flo.wait_for_selector("#join[data-loaded=true][data-state=expired]", timeout=STEP_MS)
    assert flo.locator("html").get_attribute("lang") == "fr"
    said = flo.locator("#join-state").inner_text()
    assert said.startswith("Cette invitation a expiré"), said
    assert flo.locator("#join-form").is_hidden()
    assert flo.evaluate("() => localStorage.getItem('referee.keys.v1')") is None
    check_page(flo, "lapsed join page")

    for page in (ann, flo):
        assert violations(page) == []
    console_errors.assert_none()
    for ctx in (ann_ctx, fr_ctx):
        ctx.close()
