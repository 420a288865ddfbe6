"""The pages on a phone (390×844, a touch screen, headless Chromium): nothing is wider than the screen, the
Tower Up city's frame fills the width (the city starts zoomed in, readable) with every player's board below it
and zooms, the tab title says when it is
your turn, and a refused move's message is scrolled into view. Screenshots go to ``test-artifacts/`` (with
``REFEREE_SCREENSHOTS=1``)."""

from __future__ import annotations

import json

import pytest
import requests
from browser_keys import storage_state
from screens import shoot
from signed_requests import submit

from referee.protocol.signing import b64url_encode, generate_key, public_key_b64

pytestmark = pytest.mark.web

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
STEP_MS = 20_000


@pytest.fixture(scope="module")
def towerup_game(web_server):
    """A Tower Up game a few turns in (buildings on the board), Ann (seat 0) to move."""
    keys = [generate_key(), generate_key()]
    created = requests.post(f"{web_server}/games", timeout=10, json={
        "ruleset": "towerup", "seats": [{"name": "Ann", "key": public_key_b64(keys[0])},
                                        {"name": "Bea", "key": public_key_b64(keys[1])}]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]
    for seat, key in enumerate(keys):
        response = submit(web_server, game, key, seat, "referee/accept", entropy=b64url_encode(bytes([seat]) * 32))
        assert response.status_code == 202, response.text
    for turn in range(40):
        legal = requests.get(f"{web_server}/games/{game}/legal-moves", timeout=10).json()
        if turn >= 10 and legal["to_move"] == 0:
            break
        by_type = {}
        for move in legal["moves"]:
            by_type.setdefault(move["type"], move)
        move = by_type.get("build") or by_type.get("place_start") or by_type.get("take") or legal["moves"][0]
        response = submit(web_server, game, keys[legal["to_move"]], legal["to_move"], "referee/move", move=move)
        assert response.status_code < 300, response.text
    return game, keys


def phone_page(browser, base_url: str, console_errors, key=None, name="Ann"):
    # the key in the browser's storage from the start, as the keys page keeps it (no page loaded for it)
    state = storage_state(base_url, [(name, key)]) if key is not None else None
    context = browser.new_context(**PHONE, storage_state=state)
    page = console_errors.watch(context.new_page())
    return context, page


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def box(locator) -> dict:
    return locator.evaluate("e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, "
                            "top: r.top, bottom: r.bottom, width: r.width, height: r.height}; }")


def test_the_lobby_fits_a_phone(browser, web_server, towerup_game, console_errors, artifacts):
    game, _ = towerup_game
    context, page = phone_page(browser, web_server, console_errors)
    page.goto(f"{web_server}/play/")
    row = page.locator(f"tr[data-game='{game}']")
    row.wait_for(timeout=STEP_MS)
    assert page_width(page) <= 390
    assert box(row)["right"] <= 390
    # one card per game, each value labelled with its column's name (the header row is hidden)
    labels = row.evaluate("e => [...e.querySelectorAll('td')].map(td => getComputedStyle(td, '::before').content)")
    assert labels[1:4] == ['"Game: "', '"Status: "', '"Whose turn: "']
    assert row.locator("td.game-name").inner_text() == "Tower Up"  # the game's name, not its ruleset id
    assert row.locator("td.players").inner_text() == "Ann vs Bea"
    assert box(row.locator("td").nth(3))["left"] < 60  # the cells stack, not side by side
    shoot(page, artifacts / "phone-lobby.png", full_page=True)
    for path in ("/play/keys", "/play/new"):
        page.goto(f"{web_server}{path}")
        page.wait_for_load_state("networkidle")
        assert page_width(page) <= 390, path
    context.close()
    console_errors.assert_none()


def test_the_tower_up_board_on_a_phone(browser, web_server, towerup_game, console_errors, artifacts):
    game, keys = towerup_game
    context, page = phone_page(browser, web_server, console_errors, keys[0])
    page.goto(f"{web_server}/play/games/{game}")
    page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
    assert page.title() == "Your turn · Ann vs Bea · Tower Up · the referee"
    assert page_width(page) <= 390

    city = page.locator("#board svg.tu-city")
    seats = page.locator("#board svg.tu-seat")
    assert seats.count() == 2
    # The city's frame fills the width; the city starts zoomed in so that its text is readable (1 unit >= 1 px)
    frame = page.locator("#board .zoom-frame")
    city_box = box(frame)
    assert city_box["width"] >= 350 and city_box["right"] <= 390  # the city's frame fills the width...
    assert page.get_attribute("#board .zoom-frame", "data-zoom") == "3"
    assert box(city)["width"] >= 930
    for i in range(2):  # ...and the players' boards come below it, each as wide as the screen allows
        seat_box = box(seats.nth(i))
        assert seat_box["top"] >= city_box["bottom"] and seat_box["right"] <= 390 and seat_box["width"] >= 350
        assert box(seats.nth(i).locator(".seat-name"))["height"] >= 10  # was about 3 px in one 336 px drawing
    # a style set by the board's script (the letter of a black floor is white) holds under the pages' CSP, which
    # has no 'unsafe-inline' (every page of every browser test has it: a refused style or script is a console error)
    fill = page.locator("#board svg.tu-seat .floor[data-color=black] .floor-letter").first.evaluate(
        "e => getComputedStyle(e).fill")
    assert fill == "rgb(255, 255, 255)"
    shoot(page, artifacts / "phone-towerup-game.png", full_page=True)

    # Zoom: the city grows inside its frame; the page does not get wider.
    page.get_by_role("button", name="Fit the city to the screen").click()
    assert box(city)["width"] <= 390
    label = page.locator("#board svg.tu-city .site-label").first
    small = box(label)["height"]
    zoom_in = page.get_by_role("button", name="Zoom in on the city")
    zoom_in.click()
    assert city.evaluate("e => e.style.width") == "150%"  # set by the script, under the CSP
    for _ in range(2):
        zoom_in.click()
    assert page.get_attribute("#board .zoom-frame", "data-zoom") == "3"
    assert box(label)["height"] >= 2.5 * small and box(label)["height"] >= 8
    assert page_width(page) <= 390 and box(page.locator("#board .zoom-frame"))["right"] <= 390
    page.locator("#board .zoom-frame").evaluate("f => { f.scrollLeft = 300; }")
    shoot(page.locator("#board .zoomable"), artifacts / "phone-towerup-city-zoomed.png")
    # A choice redraws the board: the zoom and the scroll position stay.
    page.locator("#move-controls button.choice").first.click()
    assert page.get_attribute("#board .zoom-frame", "data-zoom") == "3"
    assert page.locator("#board .zoom-frame").evaluate("f => f.scrollLeft") >= 290
    page.get_by_role("button", name="Fit the city to the screen").click()
    assert page.get_attribute("#board .zoom-frame", "data-zoom") == "1"
    assert page.get_by_role("button", name="Zoom out of the city").is_disabled()

    # Bea's page in the same moment: not her turn, no prefix.
    bea_context, bea = phone_page(browser, web_server, console_errors, keys[1], "Bea")
    bea.goto(f"{web_server}/play/games/{game}")
    bea.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)
    assert bea.title() == "Ann vs Bea · Tower Up · the referee"
    bea_context.close()
    context.close()
    console_errors.assert_none()


def test_a_refused_move_is_scrolled_into_view_on_a_phone(browser, web_server, towerup_game, console_errors,
                                                          artifacts):
    game, keys = towerup_game
    context, page = phone_page(browser, web_server, console_errors, keys[0])
    page.goto(f"{web_server}/play/games/{game}")
    page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
    seq = page.get_attribute("#game", "data-seq")
    page.locator("#manual summary").click()
    page.locator("#manual-json").fill(json.dumps({"type": "pass"}))  # a pass while a card can be taken
    console_errors.expect("status of 422")
    page.get_by_role("button", name="Sign and submit this move").click()
    error = page.locator("#errors .error")
    error.wait_for(timeout=STEP_MS)
    assert error.get_attribute("data-rule") == "TU-G8"
    page.wait_for_function("() => !document.querySelector('#move-prompt').textContent.startsWith('Signing')",
                           timeout=STEP_MS)
    where = box(error)
    assert where["top"] >= 0 and where["bottom"] <= 844, where
    shoot(page, artifacts / "phone-refused-move.png")
    assert page.get_attribute("#game", "data-seq") == seq
    context.close()
    console_errors.assert_none()
