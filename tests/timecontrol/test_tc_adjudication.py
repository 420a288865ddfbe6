"""Adjudication of a running game (CONTRACT section 10): an ``adjudicated`` entry in the game's own log,
checked by the one fold — ``provisional`` scores the position as it stands, ``organiser`` takes the ranks of
the adjudicator's signed decision. The verifier re-checks it."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from tc_logs import SERVER_SEED, ClockLog

from referee.protocol.logchain import seal
from referee.protocol.signing import public_key_b64, sign
from referee.replay import ADJUDICATE_CTX, FINISHED
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle

ADJUDICATOR = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"adjudicator").digest())
REFEREE = Ed25519PrivateKey.from_private_bytes(bytes(32))


def running_game(players: int = 3, moves: int = 6) -> ClockLog:
    log = ClockLog("fivetowers", players, {"kind": "none"})
    created = {k: v for k, v in log.entries[0].items() if k != "hash"}
    created["adjudicator"] = public_key_b64(ADJUDICATOR)
    log.entries[0] = seal(created, "0" * 64)
    for i in range(1, len(log.entries)):  # re-chain the acceptances after the changed created entry
        body = {k: v for k, v in log.entries[i].items() if k != "hash"}
        if "submission" in body:
            envelope = {**body["submission"]["envelope"], "prev": log.entries[i - 1]["hash"]}
            body["submission"] = {"envelope": envelope, "sig": sign(log.keys[body["seat"]], envelope)}
        log.entries[i] = seal(body, log.entries[i - 1]["hash"])
    for n in range(moves):
        replayer = log.current()
        log.move(replayer.to_move(), replayer.game.legal_moves()[0], n + 1)
    return log


def decision(log: ClockLog, ranks: list[int], reason: str, key=ADJUDICATOR) -> dict:
    envelope = {"v": 1, "ctx": ADJUDICATE_CTX, "game": log.game_id, "ranks": ranks, "reason": reason}
    return {"envelope": envelope, "sig": sign(key, envelope)}


def test_a_provisional_adjudication_scores_the_position_as_it_stands_and_verifies():
    log = running_game()
    expected = log.current().game.provisional_result()
    position = log.seq
    log.append("adjudicated", 100, method="provisional", reason="round deadline passed")
    log.append("revealed", 101, server_seed=SERVER_SEED.hex(), reason="finished")
    replayer = log.replay()
    assert replayer.status == FINISHED and all(v.status != "rejected" for v in replayer.verdicts)
    result = replayer.result()
    assert [s["rank"] for s in result["seats"]] == [s["rank"] for s in expected["seats"]]
    assert result["adjudicated"] == {"method": "provisional", "reason": "round deadline passed",
                                    "position": position}
    assert verify_bundle(build_bundle(log.entries, REFEREE)).ok


def test_an_organisers_adjudication_takes_the_signed_ranks():
    log = running_game()
    log.append("adjudicated", 100, method="organiser", reason="agreed by the players", ranks=[2, 1, 2],
               decision=decision(log, [2, 1, 2], "agreed by the players"))
    result = log.replay().result()
    assert [s["rank"] for s in result["seats"]] == [2, 1, 2] and result["winners"] == [1]


@pytest.mark.parametrize("case, code", [
    ("forged", "adjudication/bad_signature"),
    ("other_ranks", "adjudication/decision"),
    ("bad_ranks", "adjudication/ranks"),
    ("no_reason", "adjudication/reason"),
])
def test_an_adjudication_that_does_not_hold_is_rejected_and_the_verifier_fails_it(case, code):
    log = running_game()
    ranks, reason = [1, 2, 3], "the organiser decided"
    signed = decision(log, ranks, reason, key=Ed25519PrivateKey.generate() if case == "forged" else ADJUDICATOR)
    entry_ranks = {"other_ranks": [3, 2, 1], "bad_ranks": [1, 1, 1, 4]}.get(case, ranks)
    if case == "bad_ranks":
        signed = decision(log, entry_ranks, reason)
    position = log.seq
    log.append("adjudicated", 100, method="organiser", reason="" if case == "no_reason" else reason,
               ranks=entry_ranks, decision=signed)
    verdict = log.replay().verdicts[-1]
    assert verdict.status == "rejected" and verdict.error["code"] == code
    report = verify_bundle(build_bundle(log.entries, REFEREE, result=None))
    replay = next(c for c in report.checks if c.name == "replay")
    assert replay.status == "failed" and replay.position == position
