"""The offline verifier re-checks every timeout, vacation and forfeit (CONTRACT section 8): a bundle whose
clock entries hold verifies; one with an early timeout, a vacation past its allowance or a move after its
deadline fails at that entry's position. And ``referee verify-receipt`` checks a receipt offline."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tc_logs import SERVER_SEED, ClockLog, at

from referee.cli import main
from referee.protocol.signing import RECEIPT_CTX, public_key_b64, sign
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle

REFEREE = Ed25519PrivateKey.from_private_bytes(bytes(32))


def finished_by_forfeit(vacation_seconds: int = 0, late_move: bool = False) -> tuple[ClockLog, int]:
    """A 2-player game whose first seat to move takes a vacation (or moves late), then times out and forfeits;
    the game ends (TC-F2). Returns the log and the position of the vacation or late move."""
    log = ClockLog("fivetowers", 2, {"kind": "per_move", "per_move": 60, "on_timeout": "forfeit", "vacation": 120})
    replayer = log.current()
    seat = replayer.to_move()
    position = log.seq
    if vacation_seconds:
        log.vacation(seat, vacation_seconds, 10)
    elif late_move:
        log.move(seat, replayer.game.legal_moves()[0], 61)
    deadline = 60 + min(vacation_seconds, 120) if vacation_seconds <= 120 else 60
    log.timeout(deadline)
    log.referee_entries(deadline + 0.5)
    return log, position


def test_a_game_ended_by_a_timeout_verifies():
    log, _ = finished_by_forfeit(vacation_seconds=100)
    entries = log.entries
    assert [e["type"] for e in entries][-4:] == ["vacation", "timeout", "forfeited", "revealed"]
    report = verify_bundle(build_bundle(entries, REFEREE))
    assert report.ok, [c.to_dict() for c in report.checks if not c.ok]


@pytest.mark.parametrize("case", ["early_timeout", "vacation_past_allowance", "move_after_deadline"])
def test_the_verifier_fails_a_clock_entry_that_does_not_hold_at_its_position(case):
    if case == "early_timeout":
        log = ClockLog("fivetowers", 2, {"kind": "per_move", "per_move": 60, "on_timeout": "forfeit"})
        position = log.seq
        log.timeout(30)  # the fold computes 60: this one came half a minute early
    elif case == "vacation_past_allowance":
        log, position = finished_by_forfeit(vacation_seconds=121)
    else:
        log, position = finished_by_forfeit(late_move=True)
    log.referee_entries(200)
    if log.entries[-1]["type"] != "revealed":
        log.append("revealed", 300, server_seed=SERVER_SEED.hex(), reason="finished")
    report = verify_bundle(build_bundle(log.entries, REFEREE, result=None))
    failure = next(c for c in report.checks if c.name == "replay")
    assert failure.status == "failed" and failure.position == position, failure.to_dict()
    code = {"early_timeout": "time/early", "vacation_past_allowance": "vacation/exceeded",
            "move_after_deadline": "time/expired"}[case]
    assert code in failure.reason


def test_verify_receipt_command_accepts_the_referees_receipt_and_refuses_a_forged_one(tmp_path):
    log, _ = finished_by_forfeit()
    entry = log.entries[5]
    receipt = {"ctx": RECEIPT_CTX, "game": log.game_id, "seq": 5, "hash": entry["hash"], "at": entry["at"]}
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"receipt": receipt, "receipt_sig": sign(REFEREE, receipt)}))
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(build_bundle(log.entries, REFEREE)))
    runner = CliRunner()
    ok = runner.invoke(main, ["verify-receipt", str(answer), "--referee-key", public_key_b64(REFEREE),
                              "--bundle", str(bundle)])
    assert ok.exit_code == 0 and "OK" in ok.output
    forged = {**receipt, "at": at(0)}
    answer.write_text(json.dumps({"receipt": forged, "receipt_sig": sign(Ed25519PrivateKey.generate(), forged)}))
    bad = runner.invoke(main, ["verify-receipt", str(answer), "--referee-key", public_key_b64(REFEREE)])
    assert bad.exit_code == 1 and "not the referee's" in bad.output
    answer.write_text(json.dumps({"receipt": forged, "receipt_sig": sign(REFEREE, forged)}))
    moved = runner.invoke(main, ["verify-receipt", str(answer), "--referee-key", public_key_b64(REFEREE),
                                 "--bundle", str(bundle)])
    assert moved.exit_code == 1 and "has at" in moved.output
