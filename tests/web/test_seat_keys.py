"""A seat's new key in the pages (CONTRACT section 15): a second browser asks to recover a seat of a 2-seat game, the
other seat's page shows the request live and accepts, and after the wait the new browser moves (its new key made by
a passkey: Chromium's virtual authenticator); the page holding the old key says the seat moved. The keys page moves
every seat of the browser's other keys to one key. (The rules, the scheduler and the verifier: tests/service/
test_rekey.py.)"""

from __future__ import annotations

import json

import pytest
import requests
from browser_keys import keep_keys
from screens import shoot
from signed_requests import start
from test_every_device import move_by_hand, with_authenticator

from referee.protocol.signing import generate_key, public_key_b64

pytestmark = pytest.mark.web
STEP_MS = 20_000  # upper bound for one UI step (not a timing assertion)
WAIT = 3  # the recovery's wait of recovering_server (tests/web/conftest.py), seconds


def test_a_lost_key_is_recovered_with_the_other_seats_answer_and_the_new_browser_moves(browser, recovering_server,
                                                                                        console_errors, artifacts):
    base = recovering_server
    game, keys = start(base, "fivetowers", [{"name": "Ann"}, {"name": "Bo"}])
    other = browser.new_context()
    keep_keys(other, [("Bo", keys[1])])
    bo = console_errors.watch(other.new_page())
    bo.goto(f"{base}/play/games/{game}")
    bo.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)

    fresh = browser.new_context(viewport={"width": 360, "height": 740})
    ann = console_errors.watch(fresh.new_page())
    with_authenticator(fresh, ann)
    ann.goto(f"{base}/play/games/{game}")
    ann.locator("#bring-key-panel").wait_for(timeout=STEP_MS)
    ann.get_by_role("button", name="I lost my key").click()
    ann.locator(".lost-key-seat[data-seat='0']").click()
    ann.locator("#seat-keys .recovery[data-seat='0']").wait_for(timeout=STEP_MS)  # "your request waits"
    new_key = next(k for k in json.loads(ann.evaluate("localStorage.getItem('referee.keys.v1')")) if k.get("passkey"))

    # the other seat's page shows the request without a reload, and accepts it
    request = bo.locator("#seat-keys .recovery[data-seat='0']")
    request.wait_for(timeout=STEP_MS)
    shoot(bo, artifacts / "seat-keys-recovery-request.png", full_page=True)
    assert "Someone asks to take over" in request.inner_text()
    request.get_by_role("button", name="Accept").click()
    # after the wait the scheduler completes it: the seat's key is the new one, and the new browser moves
    ann.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS + WAIT * 1000)
    move_by_hand(ann, {"type": "bid", "amount": 1})
    ann.wait_for_function("() => Number(document.querySelector('#game').dataset.seq) >= 8", timeout=STEP_MS)
    entries = requests.get(f"{base}/games/{game}/log", timeout=10).json()["entries"]
    kinds = [e["type"] for e in entries]
    assert kinds[-4:] == ["recovery", "answered", "rekeyed", "move"], kinds
    assert entries[-2]["key"] == new_key["public"] and entries[-2]["reason"] == "recovered"

    # a page that still holds the old key says the seat moved
    old = browser.new_context()
    keep_keys(old, [("Ann", keys[0])])
    gone = console_errors.watch(old.new_page())
    gone.goto(f"{base}/play/games/{game}")
    gone.locator(".seat-moved[data-seat='0']").wait_for(timeout=STEP_MS)
    for context in (other, fresh, old):
        context.close()
    console_errors.assert_none()


def test_the_keys_page_moves_every_seat_of_the_other_keys_to_one_key(browser, recovering_server, console_errors):
    base = recovering_server
    game, keys = start(base, "fivetowers", [{"name": "Ann"}, {"name": "Bo"}])
    target = generate_key()
    context = browser.new_context()
    keep_keys(context, [("Ann", keys[0]), ("Ann's passkey", target)])
    page = console_errors.watch(context.new_page())
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{base}/play/keys")
    row = page.locator("#keys-body tr", has_text="Ann's passkey")
    row.get_by_role("button", name="Move my seats to this key").click()
    page.locator("#move-said").filter(has_text="1 of 1 seats moved").wait_for(timeout=STEP_MS)
    seats = requests.get(f"{base}/games/{game}", timeout=10).json()["seats"]
    assert seats[0]["key"] == public_key_b64(target) and seats[1]["key"] == public_key_b64(keys[1])
    context.close()
    console_errors.assert_none()
