"""The "My games" page (issue 24 item 1) in Chromium against a real app on the session's real Redis: every game
of the browser's keys, however many (150 here: two pages of ``GET /players/{key}/games`` per key), the ones
waiting for me first, then by deadline; a browser holding both seats of each game sees each game once; the
lobby's section links to the page."""

from __future__ import annotations

import uuid

import pytest
import requests
from browser_keys import keep_keys
from live_server import serving
from screens import shoot

from referee.protocol.signing import generate_key, public_key_b64

pytestmark = pytest.mark.web

STEP_MS = 30_000  # upper bound for one UI step (not a timing assertion)
GAMES = 150


@pytest.fixture(scope="module")
def many_games(redis_server, tmp_path_factory):
    """A live app and 150 recorded 5 Towers games of "me" against "them" (created through the service, projected
    inline): me in seat 0 (to move) in every third game, each game with its own per-move time."""
    from referee.app import create_app
    from referee.games import ruleset

    settings = {"REDIS_URL": redis_server.url, "REFEREE_VAR": str(tmp_path_factory.mktemp("me-var")),
                "REFEREE_QUEUE": f"me-{uuid.uuid4().hex[:8]}", "REFEREE_DISPATCH": "inline",
                "WEB_POLL_MS": 60_000, "TESTING": True}
    app = create_app(settings)
    service = app.extensions["referee.service"]
    me, them = generate_key(), generate_key()
    deck = [c["id"] for c in ruleset("fivetowers").components()["cards"] if c["min_players"] <= 2]
    made = []
    for i in range(GAMES):
        seats = [{"name": "Me", "key": public_key_b64(me)}, {"name": "Them", "key": public_key_b64(them)}]
        if i % 3:
            seats.reverse()
        tc = {"kind": "per_move", "per_move": 3600 * (1 + (i * 7) % 11)}
        made.append(service.create_game({"ruleset": "fivetowers", "seats": seats, "deck": deck,
                                         "options": {"time_control": tc}})["game"])
    players = [{"name": f"P{i}", "key": public_key_b64(k)} for i, k in enumerate([me, them, generate_key()])]
    tournament = app.extensions["referee.tournaments"].create(
        {"ruleset": "towerup", "players": players, "format": {"kind": "round_robin"}})["tournament"]
    with serving(app) as url:
        yield url, me, them, made, tournament
    app.extensions["referee.store"].close()


def _browser_with_keys(browser, console_errors, *keys):
    context = browser.new_context()
    keep_keys(context, [(f"k{i}", k) for i, k in enumerate(keys)])
    return context, console_errors.watch(context.new_page())


def test_every_game_of_my_key_is_on_the_page_waiting_for_me_first_by_deadline(browser, many_games, console_errors,
                                                                               artifacts):
    url, me, _them, made, tournament = many_games
    context, page = _browser_with_keys(browser, console_errors, me)
    try:
        page.goto(f"{url}/play/me")
        page.wait_for_selector(f"#all-my-games[data-total='{GAMES}'][aria-busy=false]", timeout=STEP_MS)
        rows = page.locator("#all-my-games-body tr")
        assert rows.count() == GAMES
        found = page.eval_on_selector_all("#all-my-games-body tr", """rows => rows.map(r => ({
            game: r.dataset.game, mine: r.dataset.yourTurn === "true",
            deadline: (r.querySelector(".deadline") || {}).title || null}))""")
        assert sorted(r["game"] for r in found) == sorted(made)
        waiting = GAMES // 3
        assert [r["mine"] for r in found] == [True] * waiting + [False] * (GAMES - waiting)
        for block in (found[:waiting], found[waiting:]):
            deadlines = [r["deadline"] for r in block]
            assert all(deadlines) and deadlines == sorted(deadlines)
        assert page.get_attribute("#all-my-games", "data-waiting") == str(waiting)
        assert page.title().startswith(f"({waiting}) My games")
        assert "your move" in rows.first.inner_text() and "Me (you) vs Them" in rows.first.inner_text()
        # a game is named by its players and its game; its id is folded into a details line, as on the game page
        first = found[0]["game"]
        assert first not in rows.first.inner_text() and "5 Towers" in rows.first.inner_text()
        assert rows.first.locator("a").first.get_attribute("aria-label") == "Me (you) vs Them · 5 Towers"
        details = rows.first.locator("details.details-line")
        assert details.get_attribute("open") is None and not details.locator(".game-id").is_visible()
        details.locator("summary").click()
        assert details.locator(".game-id").inner_text() == first
        # the order is the API's
        api, offset = [], 0
        while offset is not None:
            body = requests.get(f"{url}/players/{public_key_b64(me)}/games?offset={offset}", timeout=10).json()
            api += [g["game"] for g in body["games"]]
            offset = body["next"]
        assert [r["game"] for r in found] == api
        shoot(page, artifacts / "my-games-page.png", full_page=False)
        # my tournaments, below
        page.wait_for_selector("#my-tournaments-section[aria-busy=false]", timeout=STEP_MS)
        assert page.get_attribute("#my-tournaments-section", "data-total") == "1"
        item = page.locator(f"#my-tournaments li[data-tournament='{tournament}']")
        assert "Tower Up" in item.inner_text() and "waiting" in item.inner_text()
        # the lobby's section: every game waiting for me, a few others, and a link to all
        page.goto(f"{url}/play/")
        page.wait_for_selector(f"#my-games[data-total='{GAMES}']", timeout=STEP_MS)
        assert page.get_attribute("#my-games", "data-waiting") == str(waiting)
        assert page.locator("#my-games li[data-waiting=true]").count() == waiting
        item = page.locator("#my-games li").first
        assert item.inner_text().startswith("Me (you) vs Them · 5 Towers · your move")
        assert item.get_attribute("data-game") not in item.inner_text()
        assert page.inner_text("#my-games a.all-my-games") == f"All my games ({GAMES}) →"
    finally:
        context.close()
    console_errors.assert_none()


def test_a_browser_holding_both_seats_sees_each_game_once_and_every_one_waiting(browser, many_games, console_errors):
    url, me, them, made, _tournament = many_games
    context, page = _browser_with_keys(browser, console_errors, me, them)
    try:
        page.goto(f"{url}/play/me")
        page.wait_for_selector(f"#all-my-games[data-total='{GAMES}'][aria-busy=false]", timeout=STEP_MS)
        games = page.eval_on_selector_all("#all-my-games-body tr", "rows => rows.map(r => r.dataset.game)")
        assert sorted(games) == sorted(made)
        assert page.get_attribute("#all-my-games", "data-waiting") == str(GAMES)
    finally:
        context.close()
    console_errors.assert_none()


def test_without_keys_the_page_says_where_to_get_one(browser, many_games, console_errors):
    url, *_ = many_games
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    try:
        page.goto(f"{url}/play/me")
        page.wait_for_selector("#all-my-games[aria-busy=false]", timeout=STEP_MS)
        assert "No keys in this browser" in page.inner_text("#all-my-games-summary")
    finally:
        context.close()
    console_errors.assert_none()


def test_the_page_fits_a_phone_without_horizontal_scroll(browser, many_games, console_errors, artifacts):
    url, me, *_ = many_games
    context = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    keep_keys(context, [("me", me)])
    page = console_errors.watch(context.new_page())
    try:
        page.goto(f"{url}/play/me")
        page.wait_for_selector(f"#all-my-games[data-total='{GAMES}'][aria-busy=false]", timeout=STEP_MS)
        page.wait_for_selector("#my-tournaments-section[aria-busy=false]", timeout=STEP_MS)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        shoot(page, artifacts / "phone-my-games.png")
    finally:
        context.close()
    console_errors.assert_none()
