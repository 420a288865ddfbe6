"""Play by web, end to end in Chromium: two players on two browser contexts generate their keys in the
page, create a game, accept it and play its first moves through the pages (every move chosen with the page's
own controls and signed in the browser), an illegal move typed into the page shows its rule id; the rest of
the game is played by the same keys over HTTP (the browsers' own keys, read from their storage) while Ann's
page follows it live to the final score and Bea's, frozen meanwhile as a background tab, catches up to it
when it is active again, neither reloading; a spectator steps through the replay, and no page logs a console
error. A whole game played in the pages alone is the keyboard game of ``test_a11y.py`` (5 Towers) and the
game against the house bot of ``test_house_bot_game.py`` (Tower Up): this test's moves past ``ui_moves`` would
repeat them at a cost of about half a minute of CPU each. ``ui_moves`` is about where every kind of move has
been made in the pages (5 Towers: bid, pass, build; Tower Up: its start floors, take, build; the moves are
random); with screenshots asked for, the pages play on to the mid-game screenshot.

The server is real: the app of ``referee.app.create_app`` on a real Redis with a real RQ worker (see
``conftest.py``). Screenshots of the board mid-game and of the final score go to ``test-artifacts/`` (with
``REFEREE_SCREENSHOTS=1``).
"""

from __future__ import annotations

import json
import random
import re

import pytest
import requests
from screens import SHOOT, shoot
from signed_requests import submit

from referee.protocol.signing import load_private_key

pytestmark = pytest.mark.web

# How long one UI step may take before the test gives up (ms). Not a timing assertion: generous
# upper bounds so that a hung page fails instead of hanging the suite.
STEP_MS = 20_000


def game_attr(page, name: str) -> str:
    return page.get_attribute("#game", f"data-{name}") or ""


def generate_key_on_keys_page(page, base_url: str, name: str) -> str:
    page.goto(f"{base_url}/play/keys")
    page.locator("#gen-form").get_by_label("Name", exact=True).fill(name)
    page.get_by_role("button", name="Generate key in this browser").click()
    row = page.locator("#keys-body tr", has_text=name)
    row.wait_for()
    return row.locator("input.public-key").input_value()


def create_game(page, base_url: str, ruleset: str, other_name: str, other_key: str) -> str:
    page.goto(f"{base_url}/play/new")
    page.locator(f"input[name=ruleset][value={ruleset}]").check()
    seats = page.locator("#seats li")
    seats.nth(1).wait_for()
    assert seats.count() == 2
    seats.nth(0).locator(".seat-name").fill("Ann")
    seats.nth(0).get_by_role("button", name=re.compile("Generate a key")).click()
    page.wait_for_function("() => document.querySelector('#seats li .seat-key').value.length === 43")
    seats.nth(1).locator(".seat-name").fill(other_name)
    seats.nth(1).locator(".seat-key").fill(other_key)
    page.get_by_role("button", name="Create the game").click()
    page.wait_for_url(re.compile(r"/play/games/[^/]+$"), timeout=STEP_MS)
    page.wait_for_selector("#game[data-loaded=true]", timeout=STEP_MS)
    return page.url.rsplit("/", 1)[1]


def accept(page) -> None:
    page.locator("#accept-buttons button").first.click(timeout=STEP_MS)


def wait_my_turn(page, seq: int) -> None:
    page.wait_for_function(
        "seq => { const g = document.querySelector('#game'); return g && Number(g.dataset.seq) >= seq"
        " && (g.dataset.myTurn === 'true' || g.dataset.status === 'finished'); }",
        arg=seq, timeout=STEP_MS)


def choose_and_submit(page, rng: random.Random) -> None:
    """Pick a legal move only with the page's controls: board elements that act as buttons, and the
    choice buttons of the move panel, until the move is complete; then sign and submit it."""
    submit = page.locator("#submit-move")
    for _ in range(200):  # random clicks may start a choice again (another demolition clears the cards chosen)
        if submit.is_enabled():
            break
        board = page.locator("#board [data-choice='1']")
        panel = page.locator("#move-controls button.choice")
        # Prefer the board (sites, market cards, display cards) half of the time: both paths are real UI.
        options = [("board", i) for i in range(board.count())] + [("panel", i) for i in range(panel.count())]
        assert options, "the page offers no way to continue the move"
        where, i = rng.choice(options)
        target = board.nth(i) if where == "board" else panel.nth(i)
        if where == "board" and rng.random() < 0.5:
            target.focus()
            page.keyboard.press("Enter")  # keyboard use of the SVG board
        else:
            target.click()
    assert submit.is_enabled(), "the move never became complete"
    submit.click()


def play_in_the_pages(pages, console_errors, rng: random.Random, case: dict, screenshot: str) -> int:
    """Alternate between the players' pages until the illegal move was refused and ``case["ui_moves"]`` moves
    are made, or the game is over. Returns the number of moves made."""
    moves = 0
    illegal_done = False
    ui_moves = max(case["ui_moves"], case["screenshot_at"] + 1) if SHOOT else case["ui_moves"]
    first = pages[0]
    first.wait_for_function("() => document.querySelector('#game').dataset.status === 'active'", timeout=STEP_MS)
    while True:
        seq = max(int(game_attr(p, "seq") or 0) for p in pages)
        status = [game_attr(p, "status") for p in pages]
        if "finished" in status or (illegal_done and moves >= ui_moves):
            break
        to_move = game_attr(first, "to-move")
        # Both pages follow the game; the one whose seat is to move shows the move panel.
        page = None
        for candidate in pages:
            candidate.wait_for_function(
                "seq => Number(document.querySelector('#game').dataset.seq) >= seq", arg=seq, timeout=STEP_MS)
        for candidate in pages:
            if game_attr(candidate, "my-turn") == "true" or game_attr(candidate, "status") == "finished":
                page = candidate
                break
        if page is None:
            wait_my_turn(pages[int(to_move or 0) % len(pages)], seq)
            continue
        if game_attr(page, "status") == "finished":
            break
        if not illegal_done and moves >= 5 and page.locator(case["illegal_when"]).count():
            # A move typed by hand is signed and submitted as is: the referee refuses it with its rule id.
            page.locator("#manual summary").click()
            page.locator("#manual-json").fill(json.dumps(case["illegal_move"]))
            console_errors.expect("status of 422")
            page.get_by_role("button", name="Sign and submit this move").click()
            error = page.locator("#errors .error").last
            error.wait_for(timeout=STEP_MS)
            assert error.locator(".rule").inner_text() == case["illegal_rule"]
            assert error.get_attribute("data-rule") == case["illegal_rule"]
            page.locator("#errors .dismiss").first.click()
            page.locator("#manual summary").click()
            assert int(game_attr(page, "seq")) == seq, "a refused move must not change the log"
            illegal_done = True
            page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
        if moves == case["screenshot_at"]:
            shoot(page, screenshot, full_page=True)
            shoot(page.locator("#board svg > g").first, screenshot.replace(".png", "-detail.png"))
        choose_and_submit(page, rng)
        page.wait_for_function("seq => Number(document.querySelector('#game').dataset.seq) > seq", arg=seq,
                               timeout=STEP_MS)
        assert page.locator("#errors .error").count() == 0, page.locator("#errors").inner_text()
        moves += 1
    assert illegal_done
    return moves


def browser_key(page, public: str):
    """The private key this browser keeps for ``public`` (``localStorage``, as the keys page stores it)."""
    stored = json.loads(page.evaluate("() => localStorage.getItem('referee.keys.v1')") or "[]")
    return load_private_key(next(k["private"] for k in stored if k["public"] == public))


def finish_over_http(base: str, game_id: str, keys: dict, rng: random.Random) -> int:
    """Random legal moves of the seats to move, signed with their keys, until the game is over."""
    moves = 0
    for _ in range(1000):
        legal = requests.get(f"{base}/games/{game_id}/legal-moves", timeout=10).json()
        if legal["to_move"] is None:
            return moves
        seat = legal["to_move"]
        response = submit(base, game_id, keys[seat], seat, "referee/move", move=rng.choice(legal["moves"]))
        assert response.status_code < 300, response.text
        moves += 1
    raise AssertionError("the game did not end within 1000 moves")


CASES = {
    # A bid above the display size, typed while bidding (FT-R1).
    "fivetowers": {"illegal_move": {"type": "bid", "amount": 9}, "illegal_rule": "FT-R1",
                   "illegal_when": "#move-controls button[data-move=bid]", "screenshot_at": 12, "ui_moves": 8},
    # A pass while a card can be taken (TU-G8), typed once the start floors are placed.
    "towerup": {"illegal_move": {"type": "pass"}, "illegal_rule": "TU-G8",
                "illegal_when": "#board [data-slot]", "screenshot_at": 20, "ui_moves": 10},
}


@pytest.mark.parametrize("ruleset", sorted(CASES))
def test_two_players_play_a_full_game_and_a_spectator_replays_it(browser, web_server, artifacts, console_errors,
                                                                 ruleset):
    case = CASES[ruleset]
    rng = random.Random(f"web-{ruleset}")
    ann_ctx, bea_ctx, spectator_ctx = browser.new_context(), browser.new_context(), browser.new_context()
    ann, bea, spectator = (console_errors.watch(ctx.new_page()) for ctx in (ann_ctx, bea_ctx, spectator_ctx))
    for page in (ann, bea, spectator):
        page.set_viewport_size({"width": 1400, "height": 1000})

    bea_key = generate_key_on_keys_page(bea, web_server, "Bea")
    assert len(bea_key) == 43
    game_id = create_game(ann, web_server, ruleset, "Bea", bea_key)

    bea.goto(f"{web_server}/play/games/{game_id}")
    bea.wait_for_selector("#game[data-loaded=true]")
    accept(ann)
    ann.wait_for_selector("#accept-panel[hidden]", state="attached", timeout=STEP_MS)
    accept(bea)

    moves = play_in_the_pages([ann, bea], console_errors, rng, case, str(artifacts / f"{ruleset}-mid-game.png"))
    assert moves >= case["ui_moves"]
    seats = requests.get(f"{web_server}/games/{game_id}", timeout=10).json()["seats"]
    keys = {seat: browser_key(page, seats[seat]["key"]) for seat, page in enumerate((ann, bea))}
    # Ann's page follows the rest of the game live, move by move. Bea's tab is in the background meanwhile, and
    # frozen, as Chrome freezes background tabs (CDP's Page.setWebLifecycleState): no script of it runs until
    # she comes back, when it catches up by itself (and the pages' CPU for the last moves is halved).
    bea.evaluate("() => { window.sameDocument = true; }")  # gone if the page reloads
    frozen_at = int(game_attr(bea, "seq"))
    bea_tab = bea_ctx.new_cdp_session(bea)
    bea_tab.send("Page.setWebLifecycleState", {"state": "frozen"})
    moves += finish_over_http(web_server, game_id, keys, rng)
    bea_tab.send("Page.setWebLifecycleState", {"state": "active"})

    # Both players see the final score without reloading.
    for page in (ann, bea):
        page.wait_for_selector("#result-section:not([hidden]) table.score", timeout=STEP_MS)
    assert bea.evaluate("() => window.sameDocument === true")  # caught up, not reloaded
    assert int(game_attr(bea, "seq")) > frozen_at
    rows = ann.locator("#result table.score tbody tr")
    assert rows.count() == 2
    shoot(ann.locator("#result-section"), artifacts / f"{ruleset}-final-score-game-page.png")

    # The lobby lists the finished game.
    spectator.goto(f"{web_server}/play/")
    spectator.locator(f"tr[data-game='{game_id}']").wait_for(timeout=STEP_MS)
    assert spectator.locator(f"tr[data-game='{game_id}'] td.status-finished").inner_text() == "finished"

    # A spectator steps through the replay with the keyboard, the buttons and the slider.
    spectator.goto(f"{web_server}/play/games/{game_id}/replay")
    spectator.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
    total = int(spectator.get_attribute("#replay", "data-total"))
    assert total > moves
    assert "created" in spectator.locator("#entry").inner_text()
    spectator.locator("body").press("ArrowRight")
    spectator.wait_for_selector("#replay[data-at='1']")
    spectator.get_by_role("button", name="Next entry").click()
    spectator.wait_for_selector("#replay[data-at='2']")
    spectator.get_by_role("button", name="Previous entry").click()
    spectator.wait_for_selector("#replay[data-at='1']")
    # The slider: move it to the middle of the game, then step with the arrow keys.
    middle = total // 2
    spectator.locator("#step").fill(str(middle))
    spectator.wait_for_selector(f"#replay[data-at='{middle}']")
    assert spectator.locator("#board svg[data-ruleset]").count() == 1  # one board (Tower Up: in parts, one city)
    assert spectator.locator("#entry .verdict").get_attribute("data-status") in {"applied", "ok", "rejected"}
    spectator.locator("body").press("End")
    spectator.wait_for_selector(f"#replay[data-at='{total - 1}']")
    spectator.wait_for_selector("#result-section:not([hidden]) table.score", timeout=STEP_MS)
    spectator.wait_for_selector("#chart svg path.series", state="attached")  # a flat line has no height
    assert "revealed" in spectator.locator("#entry").inner_text()
    assert spectator.locator("#result .tiebreak").count() == 1
    shoot(spectator, artifacts / f"{ruleset}-final-score-replay.png", full_page=True)

    console_errors.assert_none()
    for ctx in (ann_ctx, bea_ctx, spectator_ctx):
        ctx.close()
