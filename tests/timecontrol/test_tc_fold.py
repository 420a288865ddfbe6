"""The clock as a fold of the log (CONTRACT section 8): timeouts, forfeits, auto moves and vacations are
checked by the one fold the service, the workers and the verifier share. Rule ids: docs/timecontrol.md."""

from __future__ import annotations

import pytest
from tc_logs import SERVER_SEED, ClockLog, at

from referee.replay import ACTIVE, FINISHED, LogReplayer

PER_MINUTE = {"kind": "per_move", "per_move": 60}


def test_TC_D1_each_decision_has_its_allowance_from_the_entry_that_made_the_seat_to_move():
    log = ClockLog("fivetowers", 2, PER_MINUTE)
    replayer = log.replay()
    seat = replayer.to_move()
    assert replayer.clocks.view()[seat]["deadline"] == at(60)
    log.move(seat, replayer.game.legal_moves()[0], 25)
    replayer = log.replay()
    assert replayer.clocks.view()[replayer.to_move()]["deadline"] == at(25 + 60)


def test_TC_T1_a_timeout_at_its_deadline_plays_the_default_move_and_the_next_decision_starts_then():
    log = ClockLog("fivetowers", 2, PER_MINUTE)
    before = log.replay()
    seat, default = before.to_move(), before.game.default_move()
    entry = log.timeout(60)
    assert entry["seat"] == seat and entry["deadline"] == at(60) and entry["action"] == "auto_move"
    assert entry["move"] == default
    replayer = log.replay()
    assert replayer.verdicts[-1].status == "applied"
    expected = before.game.copy()
    expected.play(seat, default)
    assert replayer.game.view() == expected.view()
    assert replayer.clocks.view()[replayer.to_move()]["deadline"] == at(120)


@pytest.mark.parametrize("override, code", [
    ({}, "time/early"),  # written a millisecond before the deadline
    ({"move": {"type": "bid", "amount": 0}}, "time/wrong_move"),
    ({"deadline": at(61)}, "time/wrong_deadline"),
    ({"action": "forfeit"}, "time/wrong_action"),
    ({"seat": 1}, "time/wrong_seat"),
])
def test_TC_T1_a_timeout_that_does_not_hold_is_rejected_and_changes_nothing(override, code):
    log = ClockLog("fivetowers", 2, PER_MINUTE)
    before = log.replay()
    if code == "time/wrong_seat":
        override = {"seat": 1 - before.to_move()}
    if code == "time/wrong_move" and before.game.default_move() == override["move"]:
        override = {"move": {"type": "bid", "amount": 1}}
    log.timeout(59.999 if code == "time/early" else 60, **override)
    replayer = log.replay()
    verdict = replayer.verdicts[-1]
    assert verdict.status == "rejected" and verdict.error["code"] == code
    assert replayer.game.view() == before.game.view() and replayer.to_move() == before.to_move()


def test_TC_T1_a_move_logged_after_its_deadline_is_rejected_one_at_the_deadline_applies():
    log = ClockLog("fivetowers", 2, PER_MINUTE)
    replayer = log.replay()
    seat, move = replayer.to_move(), replayer.game.legal_moves()[0]
    log.move(seat, move, 60.001)
    late = log.replay().verdicts[-1]
    assert late.status == "rejected" and late.error["code"] == "time/expired" and late.error["rule"] == "TC-T1"
    log.entries.pop()
    log.move(seat, move, 60)
    assert log.replay().verdicts[-1].status == "applied"


def test_TC_F1_TC_F2_a_two_player_game_ends_at_once_when_a_seat_forfeits():
    log = ClockLog("fivetowers", 2, {**PER_MINUTE, "on_timeout": "forfeit"})
    seat = log.replay().to_move()
    entry = log.timeout(60)
    assert entry["action"] == "forfeit" and entry["move"] is None
    assert log.referee_entries(60.01) == ["forfeited", "revealed"]
    replayer = log.replay()
    assert replayer.status == FINISHED and all(v.status != "rejected" for v in replayer.verdicts)
    result = replayer.result()
    ranks = {s["seat"]: (s["rank"], s["forfeited"]) for s in result["seats"]}
    assert ranks == {seat: (2, True), 1 - seat: (1, False)}
    assert result["winners"] == [1 - seat] and result["ended_by"]["rule"] == "TC-F2"
    assert result["provisional"] is True  # scored as the position stood
    assert result["seats"][seat]["forfeit"]["rule"] == "TC-F1"


def _play_until(log: ClockLog, t: float, seat: int, stop) -> float:
    """Every other seat moves 10 s after the last entry (first legal move); ``seat`` is handled by ``stop``
    (called with the fold and the time; returns False to stop). Returns the time of the last entry."""
    for _ in range(500):
        replayer = log.current()
        if replayer.status != ACTIVE:
            return t
        if replayer.to_move() == seat:
            if not stop(replayer, t):
                return t
        else:
            t += 10
            log.move(replayer.to_move(), replayer.game.legal_moves()[0], t)
    raise AssertionError("the game went on too long")


def test_TC_F1_max_auto_moves_timeouts_in_a_row_forfeit():
    log = ClockLog("fivetowers", 2, {**PER_MINUTE, "max_auto_moves": 2})
    first = log.current().to_move()
    actions: list[str] = []

    def time_out(replayer: LogReplayer, t: float) -> bool:
        actions.append(log.timeout(t + 60)["action"])
        log.referee_entries(t + 60)
        return len(actions) < 2

    _play_until(log, 0, first, time_out)
    assert actions == ["auto_move", "forfeit"]
    assert log.current().clocks.forfeited(first)


def test_TC_F1_a_seats_own_move_resets_its_timeouts_in_a_row():
    log = ClockLog("fivetowers", 2, {**PER_MINUTE, "max_auto_moves": 2})
    first = log.current().to_move()
    script = iter(["timeout", "move", "timeout"])
    actions: list[str] = []

    def act(replayer: LogReplayer, t: float) -> bool:
        step = next(script, None)
        if step is None:
            return False
        if step == "timeout":
            actions.append(log.timeout(t + 60)["action"])
        else:
            log.move(first, replayer.game.legal_moves()[0], t + 5)
        return True

    _play_until(log, 0, first, act)
    assert actions == ["auto_move", "auto_move"]
    assert not log.current().clocks.forfeited(first)


def test_TC_F1_in_a_five_player_game_the_forfeited_seat_is_played_by_default_moves_and_ranks_last():
    log = ClockLog("fivetowers", 5, {**PER_MINUTE, "on_timeout": "forfeit"})
    quitter = log.current().to_move()
    log.timeout(60)
    t = 60.0
    kinds = log.referee_entries(t)
    assert kinds[0] == "forfeited"
    for _ in range(3000):  # everyone else plays the first legal move, 1 s apart, until the game ends
        replayer = log.current()
        if replayer.status != ACTIVE:
            break
        t += 1
        seat = replayer.to_move()
        assert seat != quitter, "the forfeited seat's turn was not played by the referee"
        log.move(seat, replayer.game.legal_moves()[0], t)
        kinds += log.referee_entries(t)
    replayer = log.replay()
    assert replayer.status == FINISHED and "auto_move" in kinds
    assert all(v.status != "rejected" for v in replayer.verdicts)
    result = replayer.result()
    seats = {s["seat"]: s for s in result["seats"]}
    assert seats[quitter]["forfeited"] and seats[quitter]["rank"] == 5
    assert all(s["rank"] < 5 and not s["forfeited"] for seat, s in seats.items() if seat != quitter)
    assert "ended_by" not in result and "provisional" not in result  # played to the end


def test_TC_V1_a_vacation_moves_the_deadline_out_and_spends_the_allowance():
    log = ClockLog("fivetowers", 2, {**PER_MINUTE, "vacation": 3600})
    seat = log.replay().to_move()
    log.vacation(seat, 600, 30)  # 30 s used, then 10 minutes off
    replayer = log.replay()
    assert replayer.verdicts[-1].status == "ok"
    clock = replayer.clocks.view()[seat]
    assert clock["deadline"] == at(60 + 600) and clock["vacation_left"] == 3000
    other = 1 - seat
    log.vacation(other, 3000, 31)  # the other seat plans ahead: its next decision starts on vacation
    log.move(seat, replayer.game.legal_moves()[0], 100)
    replayer = log.replay()
    assert replayer.clocks.view()[other]["deadline"] == at(31 + 3000 + 60)


def test_TC_V1_a_vacation_past_the_allowance_or_not_signed_by_the_seat_is_rejected():
    log = ClockLog("fivetowers", 2, {**PER_MINUTE, "vacation": 600})
    seat = log.replay().to_move()
    log.vacation(seat, 601, 10)
    verdict = log.replay().verdicts[-1]
    assert verdict.status == "rejected" and verdict.error["code"] == "vacation/exceeded"
    log.entries.pop()
    entry = log.vacation(seat, 60, 10)
    entry["submission"]["sig"] = log.entries[-2]["submission"]["sig"] if "submission" in log.entries[-2] else "x"
    from referee.protocol.logchain import seal

    log.entries[-1] = seal({k: v for k, v in entry.items() if k != "hash"}, log.entries[-2]["hash"])
    verdict = log.replay().verdicts[-1]
    assert verdict.status == "rejected" and verdict.error["code"].startswith("submission/")


def test_TC_D2_bank_first_decision_has_initial_then_keeps_the_rest_plus_increment_capped():
    log = ClockLog("fivetowers", 2, {"kind": "bank", "initial": 100, "increment": 30, "max": 120})
    replayer = log.replay()
    seat = replayer.to_move()
    assert replayer.clocks.view()[seat]["deadline"] == at(100)
    log.move(seat, replayer.game.legal_moves()[0], 10)  # used 10 of 100: 90 + 30 = 120 (the cap)
    replayer = log.replay()
    assert replayer.clocks.bank[seat] == 120_000
    other = replayer.to_move()
    log.move(other, replayer.game.legal_moves()[0], 100)  # used 90: 10 + 30 = 40
    replayer = log.replay()
    assert replayer.clocks.bank[other] == 40_000
    if replayer.to_move() is not None:
        nxt = replayer.to_move()
        start = 100
        assert replayer.clocks.view()[nxt]["deadline"] == at(start + replayer.clocks.bank[nxt] / 1000)


def test_TC_D2_a_timed_out_bank_keeps_only_the_increment():
    log = ClockLog("fivetowers", 2, {"kind": "bank", "initial": 100, "increment": 30, "max": 500})
    seat = log.replay().to_move()
    log.timeout(100)
    assert log.replay().clocks.bank[seat] == 30_000


def test_a_game_without_a_clock_has_no_deadline_and_cannot_time_out():
    log = ClockLog("fivetowers", 2, {"kind": "none"})
    replayer = log.replay()
    assert replayer.deadline_ms() is None and replayer.expected_timeout() is None
    log.append("timeout", 10**6, seat=replayer.to_move(), deadline=at(0), action="auto_move",
               move=replayer.game.default_move())
    assert log.replay().verdicts[-1].error["code"] == "time/no_clock"


def test_logs_without_a_time_control_fold_and_score_as_before():
    """Games logged before clocks existed have no time_control in their options: no clock, and their result
    is the engine's, unchanged (so their signed bundles still verify)."""
    log = ClockLog("fivetowers", 2, {"kind": "none"})
    created = {k: v for k, v in log.entries[0].items() if k != "time_control"}
    created["options"] = {}
    from referee.protocol.logchain import seal

    entries = [seal({k: v for k, v in created.items() if k != "hash"}, "0" * 64)]
    replayer = LogReplayer(server_seed=SERVER_SEED)
    replayer.feed(entries[0])
    assert replayer.clocks is not None and not replayer.clocks.running
