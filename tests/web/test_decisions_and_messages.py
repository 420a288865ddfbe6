"""The players' own decisions and the messages on the game page, by clicks in Chromium (issue 22, item 4):
seat 0 resigns through the in-page confirmation (Escape cancels it first) and both pages show the result
with ``resigned`` and each seat's basis; a draw offered by clicks is accepted by the other seat by clicks;
a take-back is offered only to the seat whose move is the last one, an abort only before every seat moved, a
refusal is shown in words;
messages sent by clicks (public, private, NFC-normalised before signing) reach the other seat — on a phone
— and not a spectator; a muted seat's messages disappear. Every page watches for CSP violations and console
errors, and there must be none.

Each seat has its own browser context holding its key (as two players on two machines); the games are
created and accepted through the API, so that the clicks under test are the only thing the pages do.
"""

from __future__ import annotations

import unicodedata

import pytest
import requests
from browser_keys import keep_keys
from screens import shoot
from test_csp import WATCH_CSP, violations

from referee.protocol.signing import b64url_encode, generate_key, public_key_b64, sign

pytestmark = pytest.mark.web

STEP_MS = 20_000
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


def post(base_url: str, game: str, key, seat: int, *, ctx: str, path: str, **fields) -> dict:
    state = requests.get(f"{base_url}/games/{game}", timeout=10).json()
    envelope = {"v": 1, "ctx": ctx, "game": game, "seat": seat, "seq": state["seq"], "prev": state["head"], **fields}
    response = requests.post(f"{base_url}/games/{game}/{path}", json={"envelope": envelope, "sig": sign(key, envelope)},
                             timeout=15)
    assert response.status_code < 300, response.text
    return response.json()


def new_game(base_url: str, ruleset: str = "towerup"):
    """A two-seat game (Ann, Bea), accepted by both: active, nobody has moved."""
    keys = [generate_key(), generate_key()]
    created = requests.post(f"{base_url}/games", timeout=10, json={
        "ruleset": ruleset, "seats": [{"name": "Ann", "key": public_key_b64(keys[0])},
                                      {"name": "Bea", "key": public_key_b64(keys[1])}]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]
    for seat, key in enumerate(keys):
        post(base_url, game, key, seat, ctx="referee/accept", path="accept",
             entropy=b64url_encode(bytes([seat + 7]) * 32))
    return game, keys


def play_one(base_url: str, game: str, keys) -> int:
    """The seat to move plays its first legal move (through the API); returns that seat."""
    legal = requests.get(f"{base_url}/games/{game}/legal-moves", timeout=10).json()
    seat = legal["to_move"]
    post(base_url, game, keys[seat], seat, ctx="referee/move", path="moves?wait=5", move=legal["moves"][0])
    return seat


def open_page(browser, base_url: str, console_errors, game: str, key=None, *, name: str = "", **context_options):
    """The game page in a context of its own, holding `key` (a list: several keys; None: a spectator), watched
    for CSP violations."""
    context = browser.new_context(**(context_options or {"viewport": {"width": 1300, "height": 1000}}))
    context.add_init_script(WATCH_CSP)
    if key is not None:
        keep_keys(context, [(f"{name} {i}", k) for i, k in enumerate(key if isinstance(key, list) else [key])])
    page = console_errors.watch(context.new_page())
    page.goto(f"{base_url}/play/games/{game}")
    page.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)
    return context, page


def assert_clean(*pages) -> None:
    for page in pages:
        page.wait_for_timeout(50)  # violation events are dispatched asynchronously
        assert violations(page) == [], violations(page)


def test_a_seat_resigns_by_clicks_after_cancelling_once(browser, web_server, console_errors, artifacts):
    game, keys = new_game(web_server)
    ann_ctx, ann = open_page(browser, web_server, console_errors, game, keys[0], name="Ann")
    bea_ctx, bea = open_page(browser, web_server, console_errors, game, keys[1], name="Bea")
    panel = ann.locator("#decisions-panel")
    panel.wait_for(timeout=STEP_MS)
    # Nobody has moved: an abort may be offered, a take-back may not.
    assert panel.get_by_role("button", name="Offer to abort").is_visible()
    assert panel.get_by_role("button", name="Ask to take back").count() == 0

    resign = panel.get_by_role("button", name="Resign", exact=True)
    resign.click()
    confirm = ann.locator("#decision-confirm")
    confirm.wait_for()
    assert "Resign?" in confirm.inner_text() and "The other player wins" in confirm.inner_text()
    assert ann.evaluate("document.getElementById('decision-confirm').contains(document.activeElement)")
    ann.keyboard.press("Escape")  # cancels: nothing is signed, the focus goes back to the button
    confirm.wait_for(state="hidden")
    assert ann.evaluate("document.activeElement.dataset.action") == "resign:0"
    assert requests.get(f"{web_server}/games/{game}", timeout=10).json()["status"] == "active"

    resign.click()
    ann.get_by_role("button", name="Yes, resign").click()
    for page in (ann, bea):
        page.wait_for_selector("#game[data-status=finished]", timeout=STEP_MS)
        page.wait_for_selector("#result-section:not([hidden]) tr[data-seat='0'][data-resigned=true]", timeout=STEP_MS)
        basis = page.locator(".basis-list li[data-seat='0']")
        assert basis.get_attribute("data-resigned") == "true" and basis.get_attribute("data-rule") == "DC-R3"
        assert "resigned: yes" in basis.inner_text()
        assert "resigned: no" in page.locator(".basis-list li[data-seat='1']").inner_text()
        assert page.locator("#decisions-panel").is_hidden() or page.locator("#decision-buttons button").count() == 0
    result = requests.get(f"{web_server}/games/{game}/result", timeout=10).json()["result"]
    assert result["winners"] == [1] and result["seats"][0]["resigned"] is True
    shoot(ann.locator("#result-section"), artifacts / "resigned-result.png")
    # The replay names the entry.
    ann.goto(f"{web_server}/play/games/{game}/replay#{result['resignations'][0]['position']}")
    ann.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
    assert "Ann resigned" in ann.locator("#entry").inner_text()
    assert_clean(ann, bea)
    console_errors.assert_none()
    ann_ctx.close()
    bea_ctx.close()


def test_a_draw_offered_by_clicks_is_accepted_by_the_other_seat(browser, web_server, console_errors, artifacts):
    game, keys = new_game(web_server)
    moved = {play_one(web_server, game, keys)}
    last = None
    while len(moved) < 2:  # until both seats have moved: no abort any more
        last = play_one(web_server, game, keys)
        moved.add(last)
    ann_ctx, ann = open_page(browser, web_server, console_errors, game, keys[0], name="Ann")
    bea_ctx, bea = open_page(browser, web_server, console_errors, game, keys[1], name="Bea")
    pages = [ann, bea]
    for seat, page in enumerate(pages):
        buttons = page.locator("#decision-buttons")
        buttons.get_by_role("button", name="Offer draw").wait_for(timeout=STEP_MS)
        assert buttons.get_by_role("button", name="Offer to abort").count() == 0
        # Only the seat whose move is the last applied one may ask to take it back.
        assert buttons.get_by_role("button", name="Ask to take back").count() == (1 if seat == last else 0)

    # A refusal is shown in words: its rule, code and message (the referee's answer stubbed here).
    refusal = {"error": {"code": "offer/not_allowed", "rule": "DC-T2", "message": "the move revealed something hidden"}}
    ann.route("**/offers", lambda route: route.fulfill(status=409, json=refusal))
    console_errors.expect("status of 409")
    ann.locator("#decision-buttons").get_by_role("button", name="Offer to end").click()
    ann.get_by_role("button", name="Yes, offer to end").click()
    error = ann.locator("#errors .error[data-code='offer/not_allowed']")
    error.wait_for(timeout=STEP_MS)
    assert "Your offer was refused" in error.inner_text() and "revealed something hidden" in error.inner_text()
    assert error.locator(".rule").inner_text() == "DC-T2"
    ann.unroute("**/offers")
    error.locator(".dismiss").click()

    ann.locator("#decision-buttons").get_by_role("button", name="Offer draw").click()
    ann.get_by_role("button", name="Yes, offer draw").click()
    for page in pages:
        page.wait_for_selector("#decisions-panel[data-pending=draw]", timeout=STEP_MS)
        assert "Ann offers a draw." in page.locator("#pending-offer").inner_text()
    ann.locator("#decision-buttons").get_by_role("button", name="Withdraw").wait_for(timeout=STEP_MS)
    assert ann.locator("#decision-buttons").get_by_role("button", name="Accept").count() == 0
    assert bea.locator("#decision-buttons").get_by_role("button", name="Offer draw").count() == 0  # one at a time

    bea.locator("#decision-buttons").get_by_role("button", name="Accept").click()
    assert "last answer needed" in bea.locator("#decision-confirm").inner_text()
    shoot(bea.locator("#decisions-panel"), artifacts / "draw-offer-confirm.png")
    bea.get_by_role("button", name="Yes, accept").click()
    for page in pages:
        page.wait_for_selector("#game[data-status=finished]", timeout=STEP_MS)
        page.wait_for_selector("#result-section:not([hidden]) .basis-list li[data-rule='DC-D1']", timeout=STEP_MS)
        assert page.locator(".basis-list li[data-rule='DC-D1']").count() == 2
        assert "Shared victory" in page.locator("#result").inner_text()
    result = requests.get(f"{web_server}/games/{game}/result", timeout=10).json()["result"]
    assert sorted(result["winners"]) == [0, 1] and result["ended_by"]["rule"] == "DC-D1"
    assert_clean(ann, bea)
    console_errors.assert_none()
    ann_ctx.close()
    bea_ctx.close()


def test_one_browser_holding_both_seats_aborts_by_agreement(browser, web_server, console_errors):
    """Hot seat: every button names its seat; an abort offered as Ann is accepted as Bea on the same page."""
    game, keys = new_game(web_server)
    ctx, page = open_page(browser, web_server, console_errors, game, keys, name="both")
    buttons = page.locator("#decision-buttons")
    buttons.get_by_role("button", name="Offer to abort as Ann").click()
    page.get_by_role("button", name="Yes, offer to abort").click()
    page.wait_for_selector("#decisions-panel[data-pending=abort]", timeout=STEP_MS)
    assert buttons.get_by_role("button", name="Withdraw as Ann").is_visible()
    buttons.get_by_role("button", name="Accept as Bea").click()
    page.get_by_role("button", name="Yes, accept").click()
    page.wait_for_selector("#game[data-status=aborted]", timeout=STEP_MS)
    page.locator("#pending-offer", has_text="aborted by agreement").wait_for(timeout=STEP_MS)
    assert page.locator("#result-section").is_hidden()  # an aborted game has no result
    assert requests.get(f"{web_server}/games/{game}", timeout=10).json()["status"] == "aborted"
    assert_clean(page)
    console_errors.assert_none()
    ctx.close()


def test_messages_by_clicks_reach_the_other_seat_on_a_phone(browser, messages_server, console_errors, artifacts):
    web_server = messages_server  # (its pages read the messages every second)
    game, keys = new_game(web_server, "fivetowers")
    ann_ctx, ann = open_page(browser, web_server, console_errors, game, keys[0], name="Ann")
    bea_ctx, bea = open_page(browser, web_server, console_errors, game, keys[1], name="Bea", **PHONE)
    spy_ctx, spy = open_page(browser, web_server, console_errors, game)
    spy.locator("#messages-panel").wait_for(timeout=STEP_MS)
    assert spy.locator("#message-form").is_hidden()  # a spectator reads the public messages only

    # A public message, typed with a decomposed é: the page signs it NFC-normalised.
    typed = "Good luck, Be\u0301a!\nHave fun."
    ann.get_by_label("Your message").fill(typed)
    ann.get_by_role("button", name="Send").click()
    for page in (ann, bea, spy):
        page.locator("#message-list li.message", has_text="Good luck, Béa!").wait_for(timeout=STEP_MS)
    stored = requests.get(f"{web_server}/games/{game}/messages", timeout=10).json()["messages"]
    assert [m["text"] for m in stored] == [unicodedata.normalize("NFC", typed)]

    # A private message from Bea, on her phone, to Ann only.
    bea.get_by_label("Your message").fill("Only for you")
    bea.locator("#message-to").get_by_label("Ann").check()
    bea.get_by_role("button", name="Send").click()
    private = ann.locator("#message-list li.message[data-private=true]", has_text="Only for you")
    private.wait_for(timeout=STEP_MS)
    assert "to Ann (you)" in private.inner_text()
    bea.locator("#message-list li.message[data-private=true]", has_text="Only for you").wait_for(timeout=STEP_MS)
    assert bea.evaluate("document.documentElement.scrollWidth") <= 390, "the phone page scrolls sideways"
    shoot(bea.locator("#messages-panel"), artifacts / "messages-phone.png")

    # Bea mutes Ann: Ann's next message reaches the spectator, not Bea.
    mute = bea.locator("#message-mutes").get_by_role("button", name="Mute Ann")
    mute.click()
    bea.locator("#message-mutes button.mute[aria-pressed=true]").wait_for(timeout=STEP_MS)
    assert bea.locator("#message-list li.message[data-seat='0']").count() == 0  # muted: hidden for Bea only
    ann.get_by_label("Your message").fill("Are you there?")
    ann.get_by_role("button", name="Send").click()
    spy.locator("#message-list li.message", has_text="Are you there?").wait_for(timeout=STEP_MS)
    # Bea's page reads the messages after the message was stored (the spectator has it), and reads again: the
    # answer of the first read is drawn by then (one read at a time: messages.js)
    def read(request) -> bool:
        return request.method == "GET" and f"/games/{game}/messages?" in request.url
    for _ in range(2):
        bea.wait_for_event("request", read, timeout=STEP_MS)
    assert bea.locator("#message-list li.message", has_text="Are you there?").count() == 0
    assert spy.locator("#message-list li.message", has_text="Only for you").count() == 0  # never to others

    assert_clean(ann, bea, spy)
    console_errors.assert_none()
    for ctx in (ann_ctx, bea_ctx, spy_ctx):
        ctx.close()


TEXTS = ["gg\nwell played", "Be\u0301a", "a\u202eb", "tab\there", "x" * 2000, "y" * 2001, "😀" * 2000, "\u200d",
         "  padded  ", "", "\r\nwindows\r\nline ends", "\ufb01 ligature", "Å", "\u0041\u030a"]


def test_the_page_prepares_and_checks_a_text_as_the_referee_does(static_page):
    """messages.js normalises a text (NFC, line feeds, trimmed) and refuses it exactly when the referee's own
    check (schemas.common.message_text_problem) would refuse the prepared text."""
    from schemas.common import message_text_problem

    page_says = static_page.evaluate("""async (texts) => { const m = await import('./static/pages/messages.js');
        return texts.map((t) => { const p = m.prepareText(t); return [p, m.textProblem(p)]; }); }""", TEXTS)
    for raw, (prepared, problem) in zip(TEXTS, page_says, strict=True):
        expected = unicodedata.normalize("NFC", raw.replace("\r\n", "\n").strip())
        assert prepared == expected, raw
        assert (problem is None) == (message_text_problem(prepared) is None), (raw, problem)
