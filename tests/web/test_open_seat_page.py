"""The game page of a game with open seats (CONTRACT section 14): a seat nobody holds has no key; the page says it
is open to anyone or invited, in the reader's language, instead of a key (real server, real Chromium)."""

from __future__ import annotations

import pytest
import requests
import test_live_pages

from referee.protocol.signing import CREATE_CTX, generate_key, public_key_b64, sign

STEP_MS = test_live_pages.STEP_MS
live_server = test_live_pages.live_server  # the live pages' server (a module's app on a real HTTP server)


def _open_game(base: str) -> str:
    creator = generate_key()
    body = {"ruleset": "fivetowers", "seats": [{"name": "Ann", "key": public_key_b64(creator)}, {"open": True},
                                               {"invite": public_key_b64(generate_key())}]}
    signed = {**body, "creator": {"key": public_key_b64(creator), "sig": sign(creator, {"v": 1, "ctx": CREATE_CTX,
                                                                                         **body})}}
    response = requests.post(f"{base}/games", json=signed, timeout=10)
    assert response.status_code == 201, response.text
    return response.json()["game"]


@pytest.mark.parametrize("words", [("en-US", "open to anyone", "invited"), ("de-DE", "offen für alle", "eingeladen"),
                                   ("fr-FR", "ouverte à tous", "sur invitation")])
def test_an_open_seat_is_shown_as_open_or_invited(browser, live_server, console_errors, words):
    locale, anyone, invited = words
    game = _open_game(live_server)
    context = browser.new_context(locale=locale)
    try:
        page = console_errors.watch(context.new_page())
        page.goto(f"{live_server}/play/games/{game}")
        page.wait_for_selector("#seat-list li[data-seat='2'] .seat-open", timeout=STEP_MS)
        seats = [page.inner_text(f"#seat-list li[data-seat='{i}']") for i in range(3)]
        assert "Ann" in seats[0] and anyone in seats[1] and invited in seats[2], seats
        assert page.locator("#seat-list .seat-open").count() == 2
    finally:
        context.close()
    console_errors.assert_none()


def test_a_seat_taken_shows_on_an_open_game_page_over_the_event_stream(browser, live_server, console_errors):
    from referee.protocol.signing import SEAT_CTX, b64url_encode

    game = _open_game(live_server)
    context = browser.new_context()
    try:
        page = console_errors.watch(context.new_page())
        page.goto(f"{live_server}/play/games/{game}")
        page.wait_for_selector("#seat-list li[data-seat='1'] .seat-open", timeout=STEP_MS)
        state = requests.get(f"{live_server}/games/{game}", timeout=10).json()
        joiner = generate_key()
        envelope = {"v": 1, "ctx": SEAT_CTX, "game": game, "seat": 1, "key": public_key_b64(joiner), "name": "Bea",
                    "entropy": b64url_encode(bytes(32)), "seq": state["seq"], "prev": state["head"]}
        response = requests.post(f"{live_server}/games/{game}/seat", json={"envelope": envelope,
                                                                           "sig": sign(joiner, envelope)}, timeout=10)
        assert response.status_code == 202, response.text
        # the page polls once a minute here: the seat's new holder comes by the stream's seated entry
        page.locator("#seat-list li[data-seat='1']", has_text="Bea").wait_for(timeout=STEP_MS)
        assert page.locator("#seat-list .seat-open").count() == 1
    finally:
        context.close()
    console_errors.assert_none()
