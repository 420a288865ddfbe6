"""Tampering is caught, each at the right log position.

The forger in most of these tests is the referee itself (it holds the referee key, so it can re-sign
the bundle and even recompute the hash chain): what it cannot forge are the seats' signatures and the
commitment it published at creation. Without re-signing, the referee signature check catches every edit.
"""

from __future__ import annotations

import copy
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from gamelogs import GAMES, finished_log, make_game_log, reseal
from hypothesis import given
from hypothesis import strategies as st

from referee.protocol.canonical import canonical_bytes
from referee.protocol.signing import MOVE_CTX, b64url_decode, b64url_encode, sign
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle, sign_bundle


def first_failure(bundle):
    report = verify_bundle(bundle)
    first = report.first_failure
    assert first is not None and not report.ok and report.exit_code == 1, report.to_dict()
    return first.name, first.position


def move_positions(entries):
    return [i for i, e in enumerate(entries) if e["type"] == "move"]


def other_legal_move(entries, position, ruleset_name, players):
    """A legal move, different from the logged one, for the seat that moved at ``position``."""
    from referee.replay import replay_log

    before = replay_log(entries[:position], server_seed=bytes.fromhex(entries[-1]["server_seed"]))
    logged = entries[position]["submission"]["envelope"]["move"]
    return next(m for m in before.game.legal_moves() if m != logged)


@pytest.fixture(params=GAMES, ids=[g[0] for g in GAMES])
def game(request):
    ruleset_name, players = request.param
    return finished_log(ruleset_name, players), ruleset_name, players


def test_changed_move_is_caught_by_the_chain_at_its_position(game, referee_key):
    log, name, players = game
    entries = log.entries
    p = move_positions(entries)[5]
    entries[p]["submission"]["envelope"]["move"] = other_legal_move(entries, p, name, players)
    bundle = build_bundle(entries, referee_key)  # re-signed by the (dishonest) referee
    assert first_failure(bundle) == ("hash_chain", p)
    sigs = verify_bundle(bundle).check("seat_signatures")
    assert sigs.position == p and "signature" in sigs.reason


def test_changed_move_with_a_recomputed_chain_is_caught_by_the_seat_signature(game, referee_key):
    log, name, players = game
    entries = log.entries
    p = move_positions(entries)[5]
    entries[p]["submission"]["envelope"]["move"] = other_legal_move(entries, p, name, players)
    bundle = build_bundle(reseal(entries), referee_key)
    assert first_failure(bundle) == ("seat_signatures", p)
    assert verify_bundle(bundle).check("hash_chain").status == "passed"


def test_changed_move_without_re_signing_fails_the_referee_signature(game, referee_key):
    log, name, players = game
    bundle = build_bundle(log.entries, referee_key)
    p = move_positions(bundle["log"])[3]
    bundle["log"][p]["submission"]["envelope"]["move"] = other_legal_move(bundle["log"], p, name, players)
    assert first_failure(bundle) == ("referee_signature", None)
    assert verify_bundle(bundle).check("hash_chain").position == p


@pytest.mark.parametrize("recompute_chain", [False, True])
def test_removed_entry(game, referee_key, recompute_chain):
    log, _, _ = game
    entries = log.entries
    p = move_positions(entries)[4]
    del entries[p]
    if recompute_chain:
        entries = reseal(entries)
    expected = ("seat_signatures" if recompute_chain else "hash_chain", p)
    assert first_failure(build_bundle(entries, referee_key)) == expected


@pytest.mark.parametrize("recompute_chain", [False, True])
def test_swapped_entries(game, referee_key, recompute_chain):
    log, _, _ = game
    entries = log.entries
    p = move_positions(entries)[6]
    entries[p], entries[p + 1] = entries[p + 1], entries[p]
    if recompute_chain:
        entries = reseal(entries)
    expected = ("seat_signatures" if recompute_chain else "hash_chain", p)
    assert first_failure(build_bundle(entries, referee_key)) == expected


def test_move_re_signed_by_the_wrong_seat(game, referee_key):
    """A move signed with another seat's key, the chain recomputed: only the seat signature check sees it."""
    log, _, players = game
    entries = log.entries
    p = move_positions(entries)[7]
    submission = entries[p]["submission"]
    wrong = log.keys[(entries[p]["seat"] + 1) % players]
    submission["sig"] = sign(wrong, submission["envelope"])
    bundle = build_bundle(reseal(entries), referee_key)
    report = verify_bundle(bundle)
    assert report.check("hash_chain").status == "passed"
    assert (report.first_failure.name, report.first_failure.position) == ("seat_signatures", p)
    assert "bad_signature" in report.first_failure.reason
    # the replay (the same fold as the service) rejects that move too
    rejected = report.check("replay").details.get("rejected_entries", [])
    assert rejected and rejected[0]["position"] == p and rejected[0]["code"] == "submission/bad_signature"


def test_move_of_another_game_is_caught_by_its_binding(game, referee_key):
    log, _, _ = game
    entries = log.entries
    p = move_positions(entries)[2]
    seat = entries[p]["seat"]
    envelope = {**entries[p]["submission"]["envelope"], "game": "g_other"}
    entries[p]["submission"] = {"envelope": envelope, "sig": sign(log.keys[seat], envelope)}
    report = verify_bundle(build_bundle(reseal(entries), referee_key))
    assert (report.first_failure.name, report.first_failure.position) == ("seat_signatures", p)
    assert "wrong_game" in report.first_failure.reason


@pytest.mark.parametrize("recompute_chain", [False, True])
def test_changed_revealed_seed(game, referee_key, recompute_chain):
    log, _, _ = game
    entries = log.entries
    p = len(entries) - 1
    assert entries[p]["type"] == "revealed"
    entries[p]["server_seed"] = "11" * 32
    if recompute_chain:
        entries = reseal(entries)
    expected = ("seed_commitment" if recompute_chain else "hash_chain", p)
    assert first_failure(build_bundle(entries, referee_key)) == expected
    assert verify_bundle(build_bundle(entries, referee_key)).check("seed_commitment").position == p


def test_changed_claimed_result(game, referee_key):
    log, _, _ = game
    bundle = build_bundle(log.entries, referee_key)
    result = copy.deepcopy(bundle["result"])
    result["seats"][0]["total"] += 1
    forged = sign_bundle({**bundle, "result": result}, referee_key)
    ended_at = len(log.entries) - 2  # the last move ended the game; the reveal follows it
    # the claimed result is a field of the bundle, not a log entry: no position (docs/verification.md)
    assert first_failure(forged) == ("result", None)
    check = verify_bundle(forged).check("result")
    assert check.details["ended_at"] == ended_at
    assert "differs from the recomputed one at $.seats[0].total" in check.reason
    assert check.details["differences"] == ["$.seats[0].total"]
    assert check.details["recomputed"] == log.game.result()
    # not re-signed: the referee signature check fails first
    assert first_failure({**bundle, "result": result}) == ("referee_signature", None)


@pytest.mark.parametrize("signature", [b64url_encode(b"\x00" * 64), "flipped", "not base64url!", ""])
def test_changed_referee_signature(game, referee_key, signature):
    log, _, _ = game
    bundle = build_bundle(log.entries, referee_key)
    if signature == "flipped":  # one bit of the real signature
        raw = bytearray(b64url_decode(bundle["referee_sig"]))
        raw[10] ^= 1
        signature = b64url_encode(bytes(raw))
    bundle["referee_sig"] = signature
    assert first_failure(bundle) == ("referee_signature", None)
    report = verify_bundle(bundle)
    assert [c.name for c in report.checks if c.status == "failed"] == ["referee_signature"]


def test_a_bundle_signed_by_another_key_is_caught_only_with_the_expected_key(game, referee_key):
    log, _, _ = game
    impostor = build_bundle(log.entries, Ed25519PrivateKey.generate())
    assert verify_bundle(impostor).ok  # self-consistent: the signature is the impostor's own
    report = verify_bundle(impostor, referee_key=b64url_encode(referee_key.public_key().public_bytes_raw()))
    assert (report.first_failure.name, report.first_failure.position) == ("referee_signature", None)


def test_every_position_of_the_log_is_covered_by_the_chain(referee_key):
    """Change any entry (keeping the bundle signed): the chain fails at exactly that entry."""
    bundle = build_bundle(make_game_log("fivetowers", 3, seed=11, moves=30).entries, referee_key)
    for p in range(len(bundle["log"])):
        forged = copy.deepcopy(bundle)
        forged["log"][p]["at"] = "2026-11-21T10:00:01Z"
        assert first_failure(sign_bundle(forged, referee_key)) == ("hash_chain", p)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)


@given(JSON)
def test_junk_never_crashes_the_verifier(value):
    report = verify_bundle(value)
    assert report.status == "failed" and report.first_failure.name == "format"
    json.dumps(report.to_dict())


HOSTILE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(32))
REAL_BUNDLE = build_bundle(finished_log("fivetowers", 2, seed=3).entries, HOSTILE_KEY)


@given(st.data())
def test_hostile_edits_of_a_real_bundle_never_crash_and_never_verify(data):
    key = HOSTILE_KEY
    bundle = copy.deepcopy(REAL_BUNDLE)
    original = canonical_bytes(bundle)
    p = data.draw(st.integers(0, len(bundle["log"]) - 1), label="position")
    entry = bundle["log"][p]
    field = data.draw(st.sampled_from(sorted(entry)), label="field")
    entry[field] = data.draw(JSON.filter(lambda v, old=entry[field]: v != old), label="value")
    forged = sign_bundle(bundle, key)
    assert canonical_bytes(forged) != original
    report = verify_bundle(forged)
    json.dumps(report.to_dict())
    assert not report.ok
    assert report.first_failure.position is not None and report.first_failure.position <= p


def test_a_move_signature_of_the_right_seat_for_another_position_is_refused(referee_key):
    """Replaying an old signed move at a later position: its binding (seq, prev) gives it away."""
    log = finished_log("fivetowers", 3)
    entries = log.entries
    moves = move_positions(entries)
    old, p = moves[0], moves[3]
    entries[p] = {**entries[p], "seat": entries[old]["seat"], "submission": entries[old]["submission"]}
    report = verify_bundle(build_bundle(reseal(entries), referee_key))
    assert (report.first_failure.name, report.first_failure.position) == ("seat_signatures", p)
    assert "stale" in report.first_failure.reason
    assert MOVE_CTX == entries[p]["submission"]["envelope"]["ctx"]
