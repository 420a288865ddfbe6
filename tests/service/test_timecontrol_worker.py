"""The deadline scheduler for real: ``referee worker`` subprocesses on the real Redis, clocks of a second
or two. An idle seat is timed out, never before its deadline, and the game goes on to its end (how soon after
the deadline is a figure of ``tests/bench/bench_timecontrol.py``'s lag phase, not a timed assertion here: on a
loaded machine a pass came 2.6 s late); a worker
killed while a deadline is pending loses nothing, and the next one fires it once."""

from __future__ import annotations

import signal

from svc_helpers import accept_all, create_game, wait_until

from referee.timecontrol import parse_ms
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle

FAST = {"REFEREE_DEADLINES_EVERY": "0.1"}


def test_idle_seats_are_timed_out_after_their_deadlines_and_the_game_goes_on_to_its_end(app, http, store, spawn_worker):
    game = create_game(http, "fivetowers", 2, options={"time_control": {
        "kind": "per_move", "per_move": 1, "on_timeout": "auto_move", "max_auto_moves": 2, "vacation": 0}})
    accept_all(http, game)
    spawn_worker(env=FAST)
    entries = wait_until(lambda: (log := store.read_log(game.game_id)) and log[-1]["type"] == "revealed" and log,
                         timeout=20)
    kinds = [e["type"] for e in entries]
    assert kinds.count("timeout") == 3 and kinds.count("forfeited") == 1  # auto, auto, then the 2nd in a row
    for entry in entries:
        if entry["type"] == "timeout":
            lag = parse_ms(entry["at"]) - parse_ms(entry["deadline"])
            assert lag >= 0, entry
    report = verify_bundle(build_bundle(entries, app.extensions["referee.key"]))
    assert report.ok, [c.to_dict() for c in report.checks if not c.ok]
    projection = wait_until(lambda: (p := store.read_projection(game.game_id)) and p["seq"] == len(entries) and p)
    assert projection["status"] == "finished"
    assert any(e["type"] == "timeout" for e in store.read_outbox())


def test_a_deadline_that_passes_while_no_worker_runs_fires_once_after_the_restart(app, http, store, spawn_worker):
    # 4 s: the first worker must start and project the game before the deadline passes (on a loaded machine a
    # worker's start took over 2 s, and it then fired the timeout itself before it was killed)
    game = create_game(http, "fivetowers", 2, options={"time_control": {
        "kind": "per_move", "per_move": 4, "on_timeout": "forfeit", "vacation": 0}})
    accept_all(http, game)
    first = spawn_worker(env=FAST)
    wait_until(lambda: store.read_projection(game.game_id) is not None)
    first.send_signal(signal.SIGKILL)  # killed with the deadline pending
    first.wait()
    deadline = store.due_timers(10**15)
    assert [g for g, _ in deadline] == [game.game_id]  # the timer survives (it is on the log's Redis)
    wait_until(lambda: store.due_timers(_now_ms()), timeout=10)  # the deadline passes with no worker
    assert not any(e["type"] == "timeout" for e in store.read_log(game.game_id))
    spawn_worker(env=FAST)
    spawn_worker(env=FAST)  # two schedulers at once: still one timeout
    entries = wait_until(lambda: (log := store.read_log(game.game_id)) and log[-1]["type"] == "revealed" and log,
                         timeout=15)
    assert [e["type"] for e in entries].count("timeout") == 1
    # the scheduler drops the timer right after its last append (and its events): wait for that step
    wait_until(lambda: store.due_timers(10**15) == [], timeout=5)


def _now_ms() -> int:
    from referee.clock import now_ms

    return now_ms()
