"""Decisions around time control (issue 37, item 10; DC-O2, DC-T1, DC-A1, TC-D3), in the fold the service, the
workers and the verifier share: an offer lapses at any entry that changes the position or who is in the game
(a timeout's default move, a forfeited seat's auto move, a withdrawal too), so neither an answer nor an
``agreed`` can pass it afterwards; an agreed take-back counts the seats
that have moved again and gives the seat's clock back only what the voided move earned."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tc_logs import SERVER_SEED, ClockLog, at

from referee.timecontrol import Clocks, resolve
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle

REFEREE = Ed25519PrivateKey.from_private_bytes(bytes(32))
PER_MINUTE = {"kind": "per_move", "per_move": 60}
BANK = {"kind": "bank", "initial": 100, "increment": 30, "max": 500}


def _draw_offered_then_timed_out() -> tuple[ClockLog, int, int, int]:
    """Seat to move ``mover`` is offered a draw by the other seat, then times out: the log, the mover, the
    offer's position and the timeout's."""
    log = ClockLog("fivetowers", 2, PER_MINUTE)
    mover = log.replay().to_move()
    offer = log.offer(1 - mover, "draw", 10)["seq"]
    timeout = log.timeout(60)["seq"]  # auto_move: the referee plays the mover's default move
    return log, mover, offer, timeout


def test_DC_O2_a_timeouts_default_move_lapses_a_pending_draw_and_an_answer_after_it_is_refused():
    log, mover, offer, timeout = _draw_offered_then_timed_out()
    replayer = log.replay()
    assert replayer.verdicts[timeout].status == "applied"
    assert replayer.decisions.pending is None
    assert replayer.decisions.last == {"offer": offer, "kind": "draw", "outcome": "lapsed", "position": timeout}
    assert replayer.agreement_due() is None
    answered = log.answer(mover, offer, True, 61)["seq"]
    verdict = log.replay().verdicts[answered]
    assert verdict.status == "rejected" and verdict.error["code"] == "offer/none_pending", verdict
    assert f"it lapsed at position {timeout}" in verdict.error["message"]
    assert log.replay().status == "active"


def test_DC_O2_a_forfeit_that_ends_the_game_lapses_the_offer_too():
    log = ClockLog("fivetowers", 2, {**PER_MINUTE, "on_timeout": "forfeit"})
    mover = log.replay().to_move()
    offer = log.offer(mover, "end", 10)["seq"]
    timeout = log.timeout(60)["seq"]
    replayer = log.replay()
    assert replayer.status == "finished" and replayer.decisions.pending is None
    assert replayer.decisions.last["outcome"] == "lapsed" and replayer.decisions.last["offer"] == offer
    assert replayer.decisions.last["position"] == timeout and replayer.decisions.ended is None


def _finish(log: ClockLog, seconds: float) -> None:
    log.referee_entries(seconds)
    if log.entries[-1]["type"] != "revealed":
        log.append("revealed", seconds, server_seed=SERVER_SEED.hex(), reason="finished")


def test_the_verifier_fails_an_agreed_that_names_an_offer_a_timeout_lapsed():
    """A log where the referee let a draw pass after the offer lapsed: the mover's acceptance came before its
    deadline, the ``agreed`` after the timeout's default move (an honest referee writes ``agreed`` at once)."""
    log = ClockLog("fivetowers", 2, PER_MINUTE)
    mover = log.replay().to_move()
    offer = log.offer(1 - mover, "draw", 10)["seq"]
    log.answer(mover, offer, True, 20)
    assert log.replay().agreement_due() == offer
    log.timeout(60)
    agreed = log.append("agreed", 60.5, offer=offer)["seq"]
    _finish(log, 61)
    report = verify_bundle(build_bundle(log.entries, REFEREE, result=None))
    replay = report.check("replay")
    assert not report.ok and replay.position == agreed, report.to_dict()
    assert "agreement/no_offer" in replay.reason


def test_the_verifier_fails_an_answer_to_an_offer_a_timeout_lapsed():
    log, mover, offer, _timeout = _draw_offered_then_timed_out()
    answered = log.answer(mover, offer, True, 61)["seq"]
    log.append("agreed", 61, offer=offer)
    _finish(log, 62)
    report = verify_bundle(build_bundle(log.entries, REFEREE, result=None))
    replay = report.check("replay")
    assert not report.ok and replay.position == answered, report.to_dict()
    assert "offer/none_pending" in replay.reason and "lapsed" in replay.reason


def _takeback_of_the_second_seats_bid(time_control: dict) -> tuple[ClockLog, int, int]:
    """5 Towers, two seats: the first seat bids at 10 s, the second bids at 20 s (a quiet move) and takes it
    back (offer at 25 s, accepted at 30 s, ``agreed`` at 30 s). Returns the log, the first seat and the second."""
    log = ClockLog("fivetowers", 2, time_control)
    first = log.replay().to_move()
    log.move(first, {"type": "bid", "amount": 0}, 10)
    second = log.replay().to_move()
    assert second != first
    log.move(second, {"type": "bid", "amount": 1}, 20)
    offer = log.offer(second, "takeback", 25)["seq"]
    log.answer(first, offer, True, 30)
    assert log.referee_entries(30) == ["agreed"]
    return log, first, second


def test_DC_T1_DC_A1_after_an_agreed_takeback_the_voided_seat_has_not_moved_and_an_abort_may_be_offered():
    log, first, second = _takeback_of_the_second_seats_bid(PER_MINUTE)
    replayer = log.replay()
    assert replayer.to_move() == second and replayer.moved == frozenset({first})
    abort = log.offer(first, "abort", 31)["seq"]
    assert log.replay().verdicts[abort].status == "ok", log.replay().verdicts[abort]
    log.answer(second, abort, True, 32)
    assert log.referee_entries(32) == ["agreed", "revealed"]
    assert log.replay().status == "aborted"
    assert verify_bundle(build_bundle(log.entries, REFEREE, result=None)).ok


def test_DC_A1_once_the_voided_seat_moves_again_every_seat_has_moved_and_an_abort_is_refused():
    log, first, second = _takeback_of_the_second_seats_bid(PER_MINUTE)
    log.move(second, {"type": "bid", "amount": 1}, 40)
    assert log.replay().moved == frozenset({first, second})
    abort = log.offer(first, "abort", 41)["seq"]
    verdict = log.replay().verdicts[abort]
    assert verdict.status == "rejected" and verdict.error["code"] == "offer/not_allowed"
    assert verdict.error["rule"] == "DC-A1"


def test_TC_D3_an_agreed_takeback_gives_back_the_increment_and_nothing_else():
    log, first, second = _takeback_of_the_second_seats_bid(BANK)
    replayer = log.replay()
    clocks = replayer.clocks
    # the second seat's decision ran 10 s → 20 s: 90 s of its 100 were left when it moved (the increment, 30 s,
    # is void with the move); its decision starts again at the agreement (30 s)
    assert clocks.bank[second] == 90_000
    assert clocks.view()[second]["deadline"] == at(30 + 90) and clocks.view()[second]["bank"] == 90
    # the first seat's bank is what its own move left it (10 s used: 90 + 30), untouched by the take-back
    assert clocks.bank[first] == 120_000
    # the same as a log where the second seat's clock simply stopped at 20 s and went on at 30 s: no move, no
    # increment; it times out at 120 s, not at 150 s as it did with the increment kept
    assert replayer.deadline_ms() == replayer.clocks.since + 90_000
    timeout = log.timeout(120)["seq"]
    assert log.replay().verdicts[timeout].status == "applied"


def test_TC_D3_a_capped_bank_gets_back_what_was_left_before_the_cap_not_the_cap():
    log, _first, second = _takeback_of_the_second_seats_bid({**BANK, "max": 100})
    # 90 s left + 30 s increment was capped at 100 s; without the move it is 90 s
    assert log.replay().clocks.bank[second] == 90_000


def test_TC_D3_the_timeouts_in_a_row_a_voided_move_reset_are_back():
    clocks = Clocks.start(resolve({**PER_MINUTE, "max_auto_moves": 3}), players=2)
    clocks.timeouts_in_row[1] = 2
    clocks.begin(1, 1_000, 5)
    point = clocks.undo_point(1, 2_000)
    clocks.timeouts_in_row[1] = 0  # the seat's own move
    clocks.finish(2_000)
    clocks.take_back(1, point)
    assert clocks.timeouts_in_row[1] == 2 and clocks.timeout_action(1) == "forfeit"


def test_DC_O2_a_forfeited_seats_auto_move_lapses_a_pending_offer():
    log = ClockLog("fivetowers", 3, {**PER_MINUTE, "on_timeout": "forfeit"})
    gone = log.replay().to_move()
    log.timeout(60)  # a forfeit in a three-seat game: the default move is played and the game goes on
    log.referee_entries(60)
    t = 60.0
    while (replayer := log.replay()).to_move() != gone:  # play on until the forfeited seat is to move again
        t += 1
        log.move(replayer.to_move(), replayer.game.legal_moves()[0], t)
    standing = next(seat for seat in range(3) if seat != gone)
    offer = log.offer(standing, "draw", t + 0.5)["seq"]  # between the move and the auto move it calls for
    assert log.replay().decisions.pending is not None
    assert log.referee_entries(t + 0.5)[0] == "auto_move"
    auto = next(e["seq"] for e in log.entries if e["type"] == "auto_move" and e["seq"] > offer)
    replayer = log.replay()
    assert replayer.verdicts[auto].status == "applied" and replayer.decisions.pending is None
    assert replayer.decisions.last == {"offer": offer, "kind": "draw", "outcome": "lapsed", "position": auto}


def test_DC_O2_a_withdrawal_from_the_tournament_lapses_a_pending_offer():
    log = ClockLog("fivetowers", 3, PER_MINUTE, tournament="t_cup")
    mover = log.replay().to_move()
    offer = log.offer(mover, "draw", 5)["seq"]
    withdrawn = log.append("forfeited", 6, seat=(mover + 1) % 3, reason="withdrawn", tournament="t_cup")["seq"]
    replayer = log.replay()
    assert replayer.verdicts[withdrawn].status == "ok" and replayer.status == "active"
    assert replayer.decisions.last == {"offer": offer, "kind": "draw", "outcome": "lapsed", "position": withdrawn}
