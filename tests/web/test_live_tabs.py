"""One live connection per browser (issue 24 item 2) in Chromium against a real app on the session's real Redis:
twelve game pages open in one browser context share ONE event stream (``GET /players/events``, held by the tab
elected with Web Locks and relayed over a BroadcastChannel), the server counts exactly one open stream, and
each page shows a move of its game brought by that stream (the pages poll only once a minute here, and each page
says which path brought its last update). How soon is a figure of ``tests/bench/bench_live.py`` (the issue's
promise: within a second; its goal 0.3 s at p90), printed here, not asserted: no timed assertion in the suite.
Closing the leader's tab hands the stream to another tab. A hidden page's title and a notification,
asked for by a button and never on load, say that it is my turn: in two tabs of Debian's full Chromium (the
headless shell denies notifications), the twelve in the shell (a quarter of the full browser's CPU a page)."""

from __future__ import annotations

import time
import uuid

import pytest
import requests
from browser_keys import keep_keys
from live_server import serving

from referee.api.events import open_streams
from referee.protocol.signing import ACCEPT_CTX, MOVE_CTX, b64url_encode, generate_key, public_key_b64, sign

pytestmark = pytest.mark.web

STEP_MS = 20_000  # upper bound for one UI step (not a timing assertion)
TABS = 12

#: records the notifications a page shows and the permission requests it makes (the real API still runs)
NOTIFICATION_PROBE = """
window.__notes = []; window.__asked = 0;
if (window.Notification) {
  const Real = window.Notification;
  const ask = Real.requestPermission.bind(Real);
  class Recorded extends Real {
    constructor(title, options) { super(title, options); window.__notes.push(title); }
  }
  Recorded.requestPermission = (...args) => { window.__asked += 1; return ask(...args); };
  window.Notification = Recorded;
}
"""


@pytest.fixture(scope="module")
def live_app(redis_server, tmp_path_factory):
    from referee.app import create_app

    settings = {"REDIS_URL": redis_server.url, "REFEREE_VAR": str(tmp_path_factory.mktemp("tabs-var")),
                "REFEREE_QUEUE": f"tabs-{uuid.uuid4().hex[:8]}", "REFEREE_DISPATCH": "inline",
                "WEB_POLL_MS": 60_000, "REFEREE_SSE_HEARTBEAT": 1.0, "TESTING": True}
    app = create_app(settings)
    with serving(app) as url:
        yield app, url
    app.extensions["referee.store"].close()


def _post(url: str, body: dict) -> dict:
    response = requests.post(url, json=body, timeout=10)
    assert response.status_code in (201, 202), response.text
    return response.json()


def _started_game(base: str, keys: list) -> str:
    body = {"ruleset": "fivetowers", "seats": [{"name": f"P{i}", "key": public_key_b64(k)} for i, k in enumerate(keys)]}
    game = _post(f"{base}/games", body)["game"]
    for seat, key in enumerate(keys):
        state = requests.get(f"{base}/games/{game}", timeout=10).json()
        envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game, "seat": seat, "seq": state["seq"], "prev": state["head"],
                    "entropy": b64url_encode(bytes(32))}
        _post(f"{base}/games/{game}/accept", {"envelope": envelope, "sig": sign(key, envelope)})
    return game


def _move(base: str, game: str, keys: list) -> int:
    """The seat to move plays its first legal move; returns the new log length."""
    legal = requests.get(f"{base}/games/{game}/legal-moves", timeout=10).json()
    seat = legal["to_move"]
    envelope = {"v": 1, "ctx": MOVE_CTX, "game": game, "seat": seat, "seq": legal["seq"], "prev": legal["head"],
                "move": legal["moves"][0]}
    _post(f"{base}/games/{game}/moves", {"envelope": envelope, "sig": sign(keys[seat], envelope)})
    return legal["seq"] + 1


def _streams_become(app, expected: dict, timeout: float = 10.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        now = open_streams(app).snapshot()
        if all(now[k] == v for k, v in expected.items()) or time.monotonic() > deadline:
            return now
        time.sleep(0.05)


def _my_turn_games(base: str, keys: list, count: int) -> list[str]:
    """``count`` started games, each waiting for the other player: each move below makes it my turn."""
    games = [_started_game(base, keys) for _ in range(count)]
    for game in games:
        if requests.get(f"{base}/games/{game}", timeout=10).json()["to_move"] == 0:
            _move(base, game, keys)
    return games


def _live_pages(context, base: str, games: list[str], console_errors) -> list:
    pages = []
    for game in games:
        page = console_errors.watch(context.new_page())
        page.goto(f"{base}/play/games/{game}")
        page.wait_for_selector("#game[data-live=sse][data-loaded=true]", timeout=STEP_MS)
        pages.append(page)
    return pages


LEADER = "() => document.documentElement.dataset.liveLeader"


def test_twelve_tabs_share_one_stream_and_each_sees_its_move_over_it(browser, live_app, console_errors):
    app, base = live_app
    me, other = generate_key(), generate_key()
    mine = public_key_b64(me)
    keys = [me, other]
    games = _my_turn_games(base, keys, TABS)
    context = browser.new_context()
    keep_keys(context, [("me", me)])
    try:
        pages = _live_pages(context, base, games, console_errors)
        # the server holds one stream for the twelve pages: the browser's, over its key
        now = _streams_become(app, {"players": 1, "game": 0, "lobby": 0})
        assert (now["players"], now["game"], now["lobby"], now["player_keys"]) == (1, 0, 0, [[mine]])
        leaders = [i for i, p in enumerate(pages) if p.evaluate(LEADER) == "true"]
        assert len(leaders) == 1

        latencies = []
        for page, game in zip(pages, games, strict=True):
            started_ms = time.time() * 1000
            seq = _move(base, game, keys)
            page.wait_for_selector(f"#game[data-seq='{seq}']", timeout=STEP_MS)
            latencies.append(int(page.get_attribute("#game", "data-live-at")) - started_ms)
            assert page.get_attribute("#game", "data-live-last") == "sse"
            mine_now = requests.get(f"{base}/games/{game}", timeout=10).json()["to_move"] == 0
            assert page.get_attribute("#game", "data-my-turn") == ("true" if mine_now else "false")
        print("live-update latency per tab (ms; bench_live.py measures it):", [round(x) for x in latencies])
        assert open_streams(app).snapshot()["players"] == 1

        # the leader's tab goes away: another tab takes the stream over and the pages stay live
        pages.pop(leaders[0]).close()
        games.pop(leaders[0])
        deadline = time.monotonic() + STEP_MS / 1000
        while sum(p.evaluate(LEADER) == "true" for p in pages) != 1:
            assert time.monotonic() < deadline, "no tab took the stream over"
            time.sleep(0.05)
        pages[0].wait_for_selector("#game[data-live=sse]", timeout=STEP_MS)
        time.sleep(1.5)  # the old stream is noticed gone at its next heartbeat (1 s here)
        now = _streams_become(app, {"players": 1})
        assert (now["players"], now["game"], now["player_keys"]) == (1, 0, [[mine]])
        page, game = pages[0], games[0]
        seq = _move(base, game, keys)
        page.wait_for_selector(f"#game[data-seq='{seq}']", timeout=STEP_MS)
        assert page.get_attribute("#game", "data-live-last") == "sse"
    finally:
        context.close()
    console_errors.assert_none()


def test_a_hidden_tab_says_my_turn_in_its_title_and_a_notification_asked_for_by_a_button(full_browser, live_app,
                                                                                         console_errors):
    """In Debian's full Chromium: the headless shell's notifications are denied. Two tabs share the stream; the
    hidden one says it is my turn, the visible one does not notify."""
    app, base = live_app
    me, other = generate_key(), generate_key()
    keys = [me, other]
    games = _my_turn_games(base, keys, 2)
    context = full_browser.new_context()
    keep_keys(context, [("me", me)])
    context.add_init_script(NOTIFICATION_PROBE)
    try:
        visible, watched = _live_pages(context, base, games, console_errors)
        assert sum(p.evaluate(LEADER) == "true" for p in (visible, watched)) == 1  # one stream for both
        assert _streams_become(app, {"players": 1})["players"] == 1
        # a button asks for the permission (nothing asked on load); a hidden page's title and a notification
        assert watched.evaluate("() => [Notification.permission, window.__asked]") == ["default", 0]
        assert watched.locator("#notify-turn").is_visible()
        context.grant_permissions(["notifications"], origin=base)
        watched.click("#notify-turn")
        watched.wait_for_function("() => window.__asked === 1 && Notification.permission === 'granted'",
                                  timeout=STEP_MS)
        watched.wait_for_selector("#notify-turn", state="detached", timeout=STEP_MS)  # asked once: the button goes
        watched.evaluate("""() => {
          Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
          Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
        }""")
        assert not watched.title().startswith("Your turn")
        seq = _move(base, games[0], keys)  # the visible page's game becomes my turn: no notification
        visible.wait_for_selector(f"#game[data-seq='{seq}']", timeout=STEP_MS)
        assert visible.get_attribute("#game", "data-live-last") == "sse"

        # the hidden page: play on until its game has become my turn twice
        turns = 0
        for _ in range(30):
            if turns >= 2:
                break
            seq = _move(base, games[1], keys)
            watched.wait_for_selector(f"#game[data-seq='{seq}']", timeout=STEP_MS)
            if requests.get(f"{base}/games/{games[1]}", timeout=10).json()["to_move"] == 0:
                turns += 1
                assert watched.title().startswith("Your turn · ")
        assert turns == 2
        assert watched.evaluate("() => window.__notes") == [watched.title()] * turns
        assert visible.evaluate("() => window.__notes") == []  # a visible page does not notify
    finally:
        context.close()
    console_errors.assert_none()
