"""Correspondence clocks in the pages (docs/timecontrol.md, docs/web.md), in Chromium against real servers:

* the new-game form's time control (days and hours) becomes ``options.time_control`` in integer seconds,
  and a bad one is refused in the page before anything is sent;
* the game page shows the clock of the seat to move (deadline in local time, time left, highlighted
  under 24 h), and "Take vacation" signs a vacation in the browser: the log gets a ``vacation`` entry,
  the clock says "on vacation", and more than the allowance is refused with its code;
* a move whose seat's time ran out is refused with ``time/expired`` and the page says so and catches up;
* the replay lists the timeouts (with the referee's default move) and the forfeit, and the score table
  marks the forfeited seat.

Screenshots at 1280×800 and 390×844 go to ``test-artifacts/`` (``clock-*.png``).
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
import requests
from browser_keys import keep_keys
from live_server import serving
from screens import SHOOT
from test_keys_and_errors import accept_in_python, import_key

from referee.protocol.signing import VACATION_CTX, generate_key, public_key_b64, sign

pytestmark = pytest.mark.web

STEP_MS = 20_000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def shoot(page, artifacts, name: str) -> None:
    """The page at both sizes, for people (``test-artifacts/``), with ``REFEREE_SCREENSHOTS=1`` (``screens.py``)."""
    if not SHOOT:
        return
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        page.screenshot(path=str(artifacts / f"clock-{name}-{label}.png"), full_page=True)
    page.set_viewport_size(DESKTOP)


def create_timed_game(base_url: str, time_control: dict, keys) -> str:
    created = requests.post(f"{base_url}/games", timeout=10, json={
        "ruleset": "fivetowers", "options": {"time_control": time_control},
        "seats": [{"name": name, "key": public_key_b64(key)} for name, key in zip(("Ann", "Bea"), keys, strict=True)]})
    assert created.status_code == 201, created.text
    return created.json()["game"]


def fill_players(page, base_url: str, bea) -> None:
    """The new-game form with Ann (a key generated in this browser) and Bea (``bea``'s public key)."""
    page.goto(f"{base_url}/play/new")
    page.locator("input[name=ruleset][value=fivetowers]").check()
    seats = page.locator("#seats li")
    seats.nth(1).wait_for()
    seats.nth(0).locator(".seat-name").fill("Ann")
    seats.nth(0).get_by_role("button", name=re.compile("Generate a key")).click()
    page.wait_for_function("() => document.querySelector('#seats li .seat-key').value.length === 43")
    seats.nth(1).locator(".seat-name").fill("Bea")
    seats.nth(1).locator(".seat-key").fill(public_key_b64(bea))


def test_the_vacations_receipt_shows_when_the_live_stream_redrew_the_clocks_first(browser, web_server,
                                                                                  console_errors):
    """A race a loaded machine once showed: the live stream's notice of the vacation entry redrew the clocks before
    the answer to the vacation's POST came, and the redraw after the answer changed nothing — the status stayed
    "Signing and submitting…". Here the answer is held back (a route) until the stream has redrawn the clocks."""
    ann, bea = generate_key(), generate_key()
    game = create_timed_game(web_server, {"kind": "per_move", "per_move": 72000, "vacation": 259200}, (ann, bea))
    accept_in_python(web_server, game, 0, ann)
    accept_in_python(web_server, game, 1, bea)
    context = browser.new_context(viewport=DESKTOP)
    keep_keys(context, [("Ann", ann)])
    page = console_errors.watch(context.new_page())
    held = []
    page.route(re.compile(r"/games/[^/]+/vacation$"), lambda route: held.append((route, route.fetch())))
    page.goto(f"{web_server}/play/games/{game}")
    own = page.locator("#clocks .clock[data-seat='0']")
    own.locator("input.vacation-days").fill("1")
    own.get_by_role("button", name="Take vacation").click()
    # the entry is in the log (the route fetched the answer); the stream's notice redraws the clocks meanwhile
    own.locator(".badge-vacation").wait_for(timeout=STEP_MS)
    assert held and held[0][1].status == 202
    held[0][0].fulfill(response=held[0][1])
    page.wait_for_selector("#clocks .clock[data-seat='0'] .vacation-status[data-state=ok]", timeout=STEP_MS)
    assert "granted: log entry #" in own.locator(".vacation-status").inner_text()
    assert own.get_by_role("button", name="Take vacation").is_enabled()
    console_errors.assert_none()
    context.close()


def test_a_clock_set_in_days_and_hours_and_a_vacation_taken_in_the_page(browser, web_server, console_errors,
                                                                         artifacts):
    bea = generate_key()
    # The deadline is shown in the viewer's time zone.
    context = browser.new_context(viewport=DESKTOP, locale="en-US", timezone_id="America/New_York")
    page = console_errors.watch(context.new_page())
    fill_players(page, web_server, bea)
    # The time control has its own fieldset, not a JSON field among the engine's options.
    assert page.locator("[data-option=time_control]").count() == 0
    assert page.locator("#tc-per-move-days").is_hidden()

    # A bank whose maximum is below its start is refused in the page, before anything is sent.
    page.get_by_label("Time bank").check()
    page.locator("#tc-initial-days").fill("10")
    page.locator("#tc-max-days").fill("5")
    page.get_by_role("button", name="Create the game").click()
    error = page.locator("#errors .error[data-code='form/invalid']")
    error.wait_for()
    assert "maximum bank must be at least the initial bank" in error.inner_text()
    assert page.url.endswith("/play/new")

    page.get_by_label("Time per move").check()
    assert page.locator("#tc-per-move-days").input_value() == "3"  # the default
    page.locator("#tc-per-move-days").fill("0")
    page.locator("#tc-per-move-hours").fill("20")
    page.locator("#tc-vacation-days").fill("3")
    page.locator("#tc-max-auto").fill("2")
    shoot(page, artifacts, "new-game")
    page.get_by_role("button", name="Create the game").click()
    page.wait_for_url(re.compile(r"/play/games/[^/]+$"), timeout=STEP_MS)
    game = page.url.rsplit("/", 1)[1]
    state = requests.get(f"{web_server}/games/{game}", timeout=10).json()
    assert state["time_control"] == {"kind": "per_move", "per_move": 72000, "vacation": 259200,
                                     "on_timeout": "auto_move", "max_auto_moves": 2, "reminders": [86400, 3600]}

    page.locator("#accept-buttons button").first.click(timeout=STEP_MS)
    page.wait_for_function("() => document.querySelector('#game').dataset.status === 'waiting'"
                           " && document.querySelector('#accept-panel').hidden", timeout=STEP_MS)
    accept_in_python(web_server, game, 1, bea)
    page.wait_for_selector("#game[data-status=active]", timeout=STEP_MS)
    state = requests.get(f"{web_server}/games/{game}", timeout=10).json()
    to_move = state["to_move"]
    deadline = state["seats"][to_move]["clock"]["deadline"]
    assert deadline and state["seats"][1 - to_move]["clock"]["deadline"] is None

    # The clock of the seat to move: its deadline (local time), the time left, highlighted under 24 h.
    clock = page.locator(f"#clocks .clock[data-seat='{to_move}']")
    assert clock.locator("time.clock-deadline").get_attribute("datetime") == deadline
    local = datetime.fromisoformat(deadline.replace("Z", "+00:00")).astimezone(ZoneInfo("America/New_York"))
    shown = clock.locator("time.clock-deadline").inner_text()
    assert local.strftime("%I:%M:%S") in shown and re.search(r"\bE[SD]T\b", shown), shown
    assert re.fullmatch(r"19 h 59 min|20 h", clock.locator(".clock-left").inner_text())
    assert "clock-low" in clock.get_attribute("class")
    assert page.locator(f"#clocks .clock[data-seat='{1 - to_move}'] .clock-left").count() == 0
    assert "20 h per move" in page.locator("#clocks .tc-summary").inner_text()

    # Ann (seat 0, this browser) takes two days of vacation, signed in the page.
    own = page.locator("#clocks .clock[data-seat='0']")
    assert page.locator("#clocks .clock[data-seat='1'] .vacation-form").count() == 0  # not this browser's seat
    own.locator("input.vacation-days").fill("2")
    own.get_by_role("button", name="Take vacation").click()
    own = page.locator("#clocks .clock[data-seat='0']")
    page.wait_for_selector("#clocks .clock[data-seat='0'] .vacation-status[data-state=ok]", timeout=STEP_MS)
    assert "granted: log entry #" in own.locator(".vacation-status").inner_text()
    log = requests.get(f"{web_server}/games/{game}/log", timeout=10).json()["entries"]
    vacations = [e for e in log if e["type"] == "vacation"]
    assert [(e["seat"], e["submission"]["envelope"]["seconds"]) for e in vacations] == [(0, 172800)]
    assert "on vacation" in own.inner_text()
    assert "Vacation left: 1 d" in own.inner_text()
    if to_move == 0:
        assert "stopped: on vacation" in own.inner_text()
        moved = requests.get(f"{web_server}/games/{game}", timeout=10).json()["seats"][0]["clock"]["deadline"]
        assert own.locator("time.clock-deadline").get_attribute("datetime") == moved
        assert _seconds(moved) - _seconds(deadline) == pytest.approx(172800, abs=5)
    shoot(page, artifacts, "game-vacation")

    # More than the day left: 422 vacation/exceeded, shown; nothing appended.
    console_errors.expect("status of 422")
    own.locator("input.vacation-days").fill("5")
    own.get_by_role("button", name="Take vacation").click()
    page.locator("#errors .error[data-code='vacation/exceeded']").wait_for(timeout=STEP_MS)
    assert "vacation/exceeded" in own.locator(".vacation-status").inner_text()
    assert requests.get(f"{web_server}/games/{game}/log", timeout=10).json()["total"] == len(log)

    # Bea (another browser: signed here) takes 2 seconds of vacation: the page shows it, and shows it over
    # when it ends, though nothing is logged then (the clocks are re-read at every poll).
    state = requests.get(f"{web_server}/games/{game}", timeout=10).json()
    envelope = {"v": 1, "ctx": VACATION_CTX, "game": game, "seat": 1, "seq": state["seq"], "prev": state["head"],
                "seconds": 2}
    answer = requests.post(f"{web_server}/games/{game}/vacation", timeout=10,
                           json={"envelope": envelope, "sig": sign(bea, envelope)})
    assert answer.status_code == 202, answer.text
    page.wait_for_selector("#clocks .clock[data-seat='1'] .badge-vacation", timeout=STEP_MS)
    page.wait_for_selector("#clocks .clock[data-seat='1'] .badge-vacation", state="detached", timeout=STEP_MS)
    assert page.locator("#clocks .clock[data-seat='1'] small").inner_text() == "Vacation left: 2 d 23 h 59 min"

    # The replay lists the vacation.
    page.goto(f"{web_server}/play/games/{game}/replay")
    vacation = page.locator("#clock-entries li[data-type=vacation]")
    vacation.first.wait_for(timeout=STEP_MS)
    assert vacation.all_inner_texts() == [f"#{vacations[0]['seq']} Ann took 2 days of vacation",
                                          f"#{state['seq']} Bea took 2 s of vacation"]
    context.close()
    console_errors.assert_none()


def test_a_time_bank_from_the_form_and_each_seat_s_bank_on_the_game_page(browser, web_server, console_errors):
    bea = generate_key()
    context = browser.new_context(viewport=DESKTOP)
    page = console_errors.watch(context.new_page())
    fill_players(page, web_server, bea)
    page.get_by_label("Time bank").check()
    page.locator("#tc-initial-days").fill("1.5")
    page.locator("#tc-increment-days").fill("0")
    page.locator("#tc-increment-hours").fill("6")
    page.locator("#tc-max-days").fill("2")
    page.locator("#tc-vacation-days").fill("0")
    page.get_by_label("When time runs out").select_option("forfeit")
    assert page.locator("#tc-max-auto").is_disabled()  # only with default moves
    page.get_by_role("button", name="Create the game").click()
    page.wait_for_url(re.compile(r"/play/games/[^/]+$"), timeout=STEP_MS)
    game = page.url.rsplit("/", 1)[1]
    state = requests.get(f"{web_server}/games/{game}", timeout=10).json()
    assert state["time_control"] == {"kind": "bank", "initial": 129600, "increment": 21600, "max": 172800,
                                     "vacation": 0, "on_timeout": "forfeit", "max_auto_moves": 3,
                                     "reminders": [86400, 3600]}
    page.locator("#accept-buttons button").first.click(timeout=STEP_MS)
    page.wait_for_function("() => document.querySelector('#accept-panel').hidden", timeout=STEP_MS)
    accept_in_python(web_server, game, 1, bea)
    page.wait_for_selector("#game[data-status=active] #clocks .clock-bank", timeout=STEP_MS)
    state = requests.get(f"{web_server}/games/{game}", timeout=10).json()
    waiting = 1 - state["to_move"]
    assert page.locator(f"#clocks .clock[data-seat='{waiting}'] .clock-bank").inner_text() == "1 d 12 h"
    assert page.locator(f"#clocks .clock[data-seat='{state['to_move']}'] .clock-left").count() == 1
    assert "bank: 1 d 12 h to start, + 6 h per move, at most 2 d" in page.locator("#clocks .tc-summary").inner_text()
    assert page.locator("#clocks .vacation-form").count() == 0  # no vacation in this game
    context.close()
    console_errors.assert_none()


def test_the_replay_shows_timeouts_auto_moves_and_the_forfeit(browser, web_server, console_errors, artifacts):
    # 1 s per move, 2 timeouts in a row forfeit: the worker's deadline scheduler plays seat 0's and seat 1's
    # default moves, then seat 0 forfeits and the game ends (TC-F2).
    keys = [generate_key(), generate_key()]
    game = create_timed_game(web_server, {"kind": "per_move", "per_move": 1, "max_auto_moves": 2}, keys)
    accept_in_python(web_server, game, 0, keys[0])
    accept_in_python(web_server, game, 1, keys[1])
    finished = time.monotonic() + 20
    while requests.get(f"{web_server}/games/{game}", timeout=10).json()["status"] != "finished":
        assert time.monotonic() < finished, "the timeouts were not written"
        time.sleep(0.2)
    entries = requests.get(f"{web_server}/games/{game}/log", timeout=10).json()["entries"]
    timeouts = [e for e in entries if e["type"] == "timeout"]
    assert [t["action"] for t in timeouts] == ["auto_move", "auto_move", "forfeit"]

    context = browser.new_context(viewport=DESKTOP)
    page = console_errors.watch(context.new_page())
    page.goto(f"{web_server}/play/games/{game}/replay")
    page.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
    listed = page.locator("#clock-entries li")
    listed.first.wait_for(timeout=STEP_MS)
    texts = listed.all_inner_texts()
    assert [page.locator("#clock-entries li").nth(i).get_attribute("data-type") for i in range(len(texts))] == [
        "timeout", "timeout", "timeout", "forfeited"]
    first = timeouts[0]
    who = [("Ann", "Bea")[t["seat"]] for t in timeouts]
    assert re.search(rf"^#{first['seq']} {who[0]} ran out of time \(deadline .+\): the referee played its default "
                     r"move: (bids \d+|passes)$", texts[0]), texts[0]
    assert f"{who[1]} ran out of time" in texts[1] and who[1] != who[0]
    assert f"{who[2]} ran out of time" in texts[2] and "the seat forfeits" in texts[2]
    assert texts[3].startswith(f"#{timeouts[2]['seq'] + 1} {who[2]} forfeited (on time"), texts[3]

    # The list jumps to the entry, which is described the same way.
    listed.first.get_by_role("button").click()
    page.wait_for_function("seq => document.querySelector('#replay').dataset.at === String(seq)", arg=first["seq"])
    assert f"{who[0]} ran out of time" in page.locator("#entry").inner_text()

    # The score table (at the last entry) marks the forfeit and says the game ended early.
    page.get_by_role("button", name="Last »").click()
    page.wait_for_selector("#result-section:not([hidden]) tr[data-forfeited=true]", timeout=STEP_MS)
    loser = str(timeouts[2]["seat"])
    assert page.locator("#result tr[data-forfeited=true]").get_attribute("data-seat") == loser
    assert "forfeited [TC-F1]" in page.locator(f"#result tr[data-seat='{loser}']").inner_text()
    assert "TC-F2" in page.locator("#result .forfeit-note").inner_text()
    shoot(page, artifacts, "replay")

    # The game page's score table marks it too.
    page.goto(f"{web_server}/play/games/{game}")
    page.wait_for_selector("#result-section:not([hidden]) tr[data-forfeited=true]", timeout=STEP_MS)
    context.close()
    console_errors.assert_none()


@pytest.fixture(scope="module")
def unscheduled_server(request, tmp_path_factory):
    """A referee on the real Redis with no worker, so no deadline scheduler: a deadline passes unlogged
    until someone submits. Its own database (9), so that the schedulers of other servers' workers on the
    same redis-server do not see its timers."""
    from referee.app import create_app

    redis_server = request.getfixturevalue("redis_server")
    app = create_app({"REDIS_URL": redis_server.url.rsplit("/", 1)[0] + "/9",
                      "REFEREE_VAR": str(tmp_path_factory.mktemp("tc-var")), "REFEREE_QUEUE": "tc-nobody",
                      "WEB_POLL_MS": 250, "TESTING": True})
    with serving(app) as url:
        yield url
    app.extensions["referee.store"].close()


def test_a_move_after_the_deadline_is_refused_with_time_expired_and_the_page_catches_up(
        browser, unscheduled_server, console_errors, artifacts):
    keys = [generate_key(), generate_key()]
    game = create_timed_game(unscheduled_server, {"kind": "per_move", "per_move": 2, "on_timeout": "forfeit"}, keys)
    context = browser.new_context(viewport=DESKTOP)
    page = console_errors.watch(context.new_page())
    import_key(page, unscheduled_server, "Ann", keys[0])
    accept_in_python(unscheduled_server, game, 0, keys[0])
    accept_in_python(unscheduled_server, game, 1, keys[1])
    page.goto(f"{unscheduled_server}/play/games/{game}")
    page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
    state = requests.get(f"{unscheduled_server}/games/{game}", timeout=10).json()
    assert state["to_move"] == 0
    page.locator("#move-controls button[data-move=pass], #move-controls button[data-move=bid]").first.click()
    # Wait out the deadline (2 s from the start); the page's countdown runs out.
    page.wait_for_selector("#clocks .clock[data-seat='0'].clock-out", timeout=STEP_MS)
    pause = _seconds(state["seats"][0]["clock"]["deadline"]) - time.time() + 0.2
    if pause > 0:
        time.sleep(pause)
    console_errors.expect("status of 409")
    page.locator("#submit-move").click()
    error = page.locator("#errors .error[data-code='time/expired']")
    error.wait_for(timeout=STEP_MS)
    assert "Your time ran out" in error.inner_text()
    assert "TC-T1" in error.inner_text()
    assert f"entry #{state['seq']}" in error.inner_text()  # the timeout took the position the move asked for
    # The refused move wrote the timeout; the page follows: Ann forfeited, the game is over.
    page.wait_for_selector("#game[data-status=finished]", timeout=STEP_MS)
    assert page.locator("#clocks .clock[data-seat='0'] .badge-forfeited").inner_text() == "forfeited"
    assert page.locator("#clocks .clock-left").count() == 0  # no clock runs in a finished game
    log = requests.get(f"{unscheduled_server}/games/{game}/log", timeout=10).json()["entries"]
    assert [e["type"] for e in log if e["type"] in ("timeout", "forfeited", "move")] == ["timeout", "forfeited"]
    shoot(page, artifacts, "expired")
    context.close()
    console_errors.assert_none()


def _seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
