"""Live pages (issue 11 items 6 and 7) in Chromium against a real app on the session's real Redis: a
move made in one browser shows on the other browser's open game page without a reload, over the event
stream (the pages' polling is set to a minute here, so only the stream can bring it in time); the
lobby shows this browser's games first, those waiting for me on top with their deadline, and the count
in the tab title."""

from __future__ import annotations

import json
import uuid

import pytest
import requests
from browser_keys import keep_keys
from live_server import serving
from screens import shoot

from referee.protocol.signing import ACCEPT_CTX, MOVE_CTX, b64url_encode, generate_key, public_key_b64, sign

pytestmark = pytest.mark.web

STEP_MS = 20_000  # upper bound for one UI step (not a timing assertion)


@pytest.fixture(scope="module")
def live_server(redis_server, tmp_path_factory):
    from referee.app import create_app

    settings = {"REDIS_URL": redis_server.url, "REFEREE_VAR": str(tmp_path_factory.mktemp("live-var")),
                "REFEREE_QUEUE": f"live-{uuid.uuid4().hex[:8]}", "REFEREE_DISPATCH": "inline",
                "WEB_POLL_MS": 60_000, "TESTING": True}
    app = create_app(settings)
    with serving(app) as url:
        yield url
    app.extensions["referee.store"].close()


def _post(url: str, body: dict) -> dict:
    response = requests.post(url, json=body, timeout=10)
    assert response.status_code in (201, 202), response.text
    return response.json()


def _started_game(base: str, keys: list, **options) -> str:
    body = {"ruleset": "fivetowers", "seats": [{"name": f"P{i}", "key": public_key_b64(k)} for i, k in enumerate(keys)]}
    if options:
        body["options"] = options
    game = _post(f"{base}/games", body)["game"]
    for seat, key in enumerate(keys):
        state = requests.get(f"{base}/games/{game}", timeout=10).json()
        envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game, "seat": seat, "seq": state["seq"], "prev": state["head"],
                    "entropy": b64url_encode(bytes(32))}
        _post(f"{base}/games/{game}/accept", {"envelope": envelope, "sig": sign(key, envelope)})
    return game


def _browser_with_key(browser, console_errors, key, name: str):
    context = browser.new_context()
    keep_keys(context, [(name, key)])
    return context, console_errors.watch(context.new_page())


def test_a_move_in_one_browser_shows_on_the_other_over_the_event_stream(browser, live_server, console_errors):
    keys = [generate_key(), generate_key()]
    game = _started_game(live_server, keys)
    state = requests.get(f"{live_server}/games/{game}", timeout=10).json()
    mover = state["to_move"]
    contexts = []
    try:
        pages = []
        for seat, key in enumerate(keys):
            context, page = _browser_with_key(browser, console_errors, key, f"P{seat}")
            contexts.append(context)
            page.goto(f"{live_server}/play/games/{game}")
            page.wait_for_selector("#game[data-live=sse]", timeout=STEP_MS)
            pages.append(page)
        watcher = pages[1 - mover]
        assert watcher.get_attribute("#game", "data-seq") == str(state["seq"])
        legal = requests.get(f"{live_server}/games/{game}/legal-moves", timeout=10).json()
        page = pages[mover]
        page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
        page.click("#manual summary")
        page.fill("#manual-json", json.dumps(legal["moves"][0]))
        page.click("#manual-submit")
        # the watcher's page shows the new position without a reload, brought by the stream
        watcher.wait_for_selector(f"#game[data-seq='{state['seq'] + 1}']", timeout=STEP_MS)
        assert watcher.get_attribute("#game", "data-live-last") == "sse"
        assert int(watcher.get_attribute("#game", "data-live-events")) >= 1
        assert watcher.get_attribute("#game", "data-live") == "sse"
        assert watcher.get_attribute("#game", "data-my-turn") == "true"
        # the replay page of a live game follows it too
        replay = watcher.context.new_page()
        replay.goto(f"{live_server}/play/games/{game}/replay")
        replay.wait_for_selector("#replay[data-live=sse]", timeout=STEP_MS)
        total = int(replay.get_attribute("#replay", "data-total"))
        legal = requests.get(f"{live_server}/games/{game}/legal-moves", timeout=10).json()
        envelope = {"v": 1, "ctx": MOVE_CTX, "game": game, "seat": legal["to_move"], "seq": legal["seq"],
                    "prev": legal["head"], "move": legal["moves"][0]}
        _post(f"{live_server}/games/{game}/moves",
              {"envelope": envelope, "sig": sign(keys[legal["to_move"]], envelope)})
        replay.wait_for_selector(f"#replay[data-total='{total + 1}']", timeout=STEP_MS)
        assert replay.get_attribute("#replay", "data-live-last") == "sse"
        replay.close()
    finally:
        for context in contexts:
            context.close()
    console_errors.assert_none()


def test_the_lobby_shows_my_games_first_waiting_for_me_on_top_and_counts_them(browser, live_server, console_errors,
                                                                             artifacts):
    me, other, third = generate_key(), generate_key(), generate_key()
    clock = {"kind": "per_move", "per_move": 3600}
    waiting_for_me = _started_game(live_server, [me, other], time_control=clock)
    mine_not_waiting = _started_game(live_server, [other, me], time_control=clock)
    assert requests.get(f"{live_server}/games/{waiting_for_me}", timeout=10).json()["to_move"] == 0
    assert requests.get(f"{live_server}/games/{mine_not_waiting}", timeout=10).json()["to_move"] == 0
    strangers = _started_game(live_server, [other, third])
    context, page = _browser_with_key(browser, console_errors, me, "me")
    try:
        page.goto(f"{live_server}/play/")
        page.wait_for_selector("#my-games li", timeout=STEP_MS)
        rows = page.locator("#my-games li")
        games = [rows.nth(i).get_attribute("data-game") for i in range(rows.count())]
        assert strangers not in games
        assert games.index(waiting_for_me) < games.index(mine_not_waiting)
        first = rows.first
        assert first.get_attribute("data-waiting") == "true"
        assert "deadline in" in first.inner_text()
        count = int(page.get_attribute("#my-games", "data-waiting"))
        assert count >= 1
        assert page.title().startswith(f"({count}) ")
        # the other player moves in the game where I was not on turn: the lobby hears it over its stream
        page.wait_for_selector("#my-games[data-live=sse]", timeout=STEP_MS)
        legal = requests.get(f"{live_server}/games/{mine_not_waiting}/legal-moves", timeout=10).json()
        envelope = {"v": 1, "ctx": MOVE_CTX, "game": mine_not_waiting, "seat": 0, "seq": legal["seq"],
                    "prev": legal["head"], "move": legal["moves"][0]}
        _post(f"{live_server}/games/{mine_not_waiting}/moves", {"envelope": envelope, "sig": sign(other, envelope)})
        page.wait_for_selector(f"#my-games[data-waiting='{count + 1}']", timeout=STEP_MS)
        assert page.title().startswith(f"({count + 1}) ")
        assert int(page.get_attribute("#my-games", "data-live-events")) >= 1
        shoot(page, artifacts / "lobby-my-games.png", full_page=True)
    finally:
        context.close()
    console_errors.assert_none()
