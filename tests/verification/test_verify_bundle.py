"""Bundles of real games verify: finished (each ruleset), interim, recorded-mode and aborted games."""

from __future__ import annotations

import random

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from gamelogs import GAMES, finished_log, make_game_log, reseal

from referee.games import ruleset
from referee.protocol.canonical import canonical_bytes
from referee.protocol.signing import b64url_decode, public_key_b64
from referee.verify import CHECK_ORDER, verify_bundle
from referee.verify.bundle import BundleError, build_bundle, is_final, sign_bundle


@pytest.mark.parametrize(("ruleset_name", "players"), GAMES)
def test_finished_game_of_each_ruleset_verifies(ruleset_name, players, referee_key):
    log = finished_log(ruleset_name, players)
    bundle = build_bundle(log.entries, referee_key)
    report = verify_bundle(bundle, referee_key=public_key_b64(referee_key))
    assert [c.name for c in report.checks] == list(CHECK_ORDER)
    statuses = {c.name: c.status for c in report.checks}
    assert statuses == {**dict.fromkeys(CHECK_ORDER, "passed"), "organiser_signature": "skipped"}, report.to_dict()
    assert report.check("organiser_signature").applicable is False and report.summary["organiser"] is None
    assert report.ok and report.status == "verified" and report.exit_code == 0
    assert report.first_failure is None
    assert report.summary["game"] == log.game_id and report.summary["entries"] == len(log.entries)
    replay = report.check("replay")
    assert replay.details["applied"] == sum(1 for e in log.entries if e["type"] == "move")
    assert replay.details["final_status"] == "finished"


@pytest.mark.parametrize(("ruleset_name", "players"), GAMES)
def test_bundle_carries_the_full_log_and_the_engines_result(ruleset_name, players, referee_key):
    log = finished_log(ruleset_name, players)
    bundle = build_bundle(log.entries, referee_key)
    assert bundle["format"] == "referee-bundle/1" and bundle["ctx"] == "referee/bundle"
    assert bundle["game"] == log.game_id
    assert bundle["ruleset"] == {"name": ruleset_name, "version": ruleset(ruleset_name).version}
    assert bundle["interim"] is False
    assert bundle["log"] == log.entries and bundle["log"][-1]["type"] == "revealed"
    assert bundle["result"] == log.game.result()
    assert bundle["referee_key"] == public_key_b64(referee_key)
    # The signature is plain Ed25519 over the RFC 8785 bytes of everything but referee_sig.
    rest = {k: v for k, v in bundle.items() if k != "referee_sig"}
    referee_key.public_key().verify(b64url_decode(bundle["referee_sig"]), canonical_bytes(rest))


def test_the_published_result_is_what_the_bundle_claims(referee_key):
    log = finished_log("fivetowers", 3)
    published = log.game.result()
    assert build_bundle(log.entries, referee_key, result=published)["result"] == published
    wrong = {**published, "extra": 1}
    report = verify_bundle(build_bundle(log.entries, referee_key, result=wrong))
    assert report.first_failure.name == "result"


def test_expected_referee_key(make_bundle, referee_key):
    bundle = make_bundle()
    assert verify_bundle(bundle, referee_key=public_key_b64(referee_key)).ok
    other = public_key_b64(Ed25519PrivateKey.generate())
    check = verify_bundle(bundle, referee_key=other).check("referee_signature")
    assert check.status == "failed" and other in check.reason and check.position is None
    assert verify_bundle(bundle, referee_key="not base64!").check("referee_signature").status == "failed"


def test_interim_bundle_of_a_running_game_is_incomplete_not_failed(referee_key):
    log = make_game_log("fivetowers", 3, seed=3, moves=12)
    assert not is_final(log.entries)
    bundle = build_bundle(log.entries, referee_key)
    assert bundle["interim"] is True and bundle["result"] is None
    assert all(e["type"] != "revealed" for e in bundle["log"])
    report = verify_bundle(bundle)
    statuses = {c.name: c.status for c in report.checks}
    assert statuses == {"format": "passed", "referee_signature": "passed", "hash_chain": "passed",
                        "organiser_signature": "skipped", "seat_signatures": "passed", "seed_commitment": "skipped",
                        "ruleset_version": "passed", "replay": "skipped", "result": "skipped",
                        "messages": "passed"}
    assert report.check("seed_commitment").reason.startswith("skipped (interim)")
    replay = report.check("replay")
    assert "12 moves were checked for signature and binding but not applied" in replay.reason
    assert replay.details["not_applied"] == 12
    assert report.status == "incomplete" and not report.ok and report.exit_code == 3
    assert report.check("seat_signatures").details["checked"] == 3 + 12


def test_interim_bundle_still_catches_a_bad_signature(referee_key):
    log = make_game_log("fivetowers", 3, seed=3, moves=6)
    entries = log.entries
    entries[-1]["submission"]["sig"] = entries[-2]["submission"]["sig"]
    report = verify_bundle(build_bundle(reseal(entries), referee_key))
    assert report.status == "failed"
    assert (report.first_failure.name, report.first_failure.position) == ("seat_signatures", len(entries) - 1)


def test_an_interim_bundle_cannot_smuggle_a_seed_or_a_result(make_bundle, referee_key):
    bundle = make_bundle()
    forged = sign_bundle({**bundle, "interim": True}, referee_key)
    report = verify_bundle(forged)
    fmt = report.check("format")
    assert fmt.status == "failed" and fmt.position == len(bundle["log"]) - 1
    assert "must not contain a revealed seed" in fmt.reason and "claims no result" in fmt.reason


def test_recorded_mode_game_verifies(referee_key):
    rules = ruleset("fivetowers")
    deck = [c["id"] for c in rules.components()["cards"] if c["min_players"] <= 2]
    random.Random(5).shuffle(deck)
    log = make_game_log("fivetowers", 2, seed=5, deck=deck)
    assert log.game.is_over() and all(e["type"] != "revealed" for e in log.entries)
    bundle = build_bundle(log.entries, referee_key)
    assert bundle["interim"] is False and bundle["result"] == log.game.result()
    report = verify_bundle(bundle)
    assert report.ok, report.to_dict()
    assert "recorded game" in report.check("seed_commitment").reason
    running = build_bundle(log.entries[:10], referee_key)
    assert running["interim"] is True
    # a recorded game's deck is public, so even its interim replay applies every move
    interim = verify_bundle(running)
    assert interim.check("replay").status == "passed" and interim.status == "incomplete"


def test_aborted_game_verifies_with_no_result(referee_key):
    """A seat's signed abort of a game that has not started (one seat of three accepted): what it is for."""
    log = make_game_log("fivetowers", 3, seed=4, accepted=1, reveal=False)
    log.reveal("aborted")
    bundle = build_bundle(log.entries, referee_key)
    assert bundle["interim"] is False and bundle["result"] is None
    report = verify_bundle(bundle)
    assert report.ok, report.to_dict()
    assert report.check("seat_signatures").details["checked"] == 1 + 1  # the acceptance, the abort
    assert report.check("replay").details["final_status"] == "aborted"
    assert "no result claimed" in report.check("result").reason


def test_a_seats_lone_abort_of_a_game_under_way_fails_the_replay_at_its_position(referee_key):
    """Issue 37, item 1: once the game has started, a seat alone cannot abort it (an abort is then an offer the
    others accept, DC-A1): a log holding such an abort fails, however well it is signed."""
    log = make_game_log("fivetowers", 3, seed=4, moves=9, reveal=False)
    log.reveal("aborted")
    report = verify_bundle(build_bundle(log.entries, referee_key))
    first = report.first_failure
    assert (first.name, first.position) == ("replay", len(log.entries) - 1), report.to_dict()
    assert "abort/started" in first.reason


@pytest.mark.parametrize("how", ["outsider", "unsigned", "rebound"])
def test_an_abort_must_be_signed_by_a_seat_or_the_organiser(referee_key, how):
    log = make_game_log("fivetowers", 3, seed=4, moves=9, reveal=False)
    if how == "outsider":
        log.reveal("aborted", abort_key=Ed25519PrivateKey.generate())
    else:
        log.reveal("aborted")
        entries = log.entries
        if how == "unsigned":
            del entries[-1]["abort"]
        else:  # a real abort of this game, but signed for another position
            envelope = {**entries[-1]["abort"]["envelope"], "seq": 3}
            entries[-1]["abort"] = {"envelope": envelope, "sig": log.signed(envelope, log.keys[1])["sig"]}
        log.entries = reseal(entries)
    report = verify_bundle(build_bundle(log.entries, referee_key))
    first = report.first_failure
    assert (first.name, first.position) == ("seat_signatures", len(log.entries) - 1)
    expected = {"outsider": "the abort signature is not any seat's", "unsigned": "without a signed abort",
                "rebound": "the abort is bound to seq 3"}[how]
    assert expected in first.reason


def test_a_final_bundle_of_an_unfinished_game_fails_the_replay(referee_key):
    log = make_game_log("fivetowers", 3, seed=4, moves=9, reveal=False)
    log.reveal("finished")  # the referee claims the game ended, but it has not
    report = verify_bundle(build_bundle(log.entries, referee_key))
    replay = report.check("replay")
    assert replay.status == "failed" and replay.position == len(log.entries) - 1
    assert "replayed game is active" in replay.reason


def test_build_bundle_refuses_a_log_without_created(referee_key):
    with pytest.raises(BundleError, match="created"):
        build_bundle([], referee_key)
    log = finished_log("fivetowers", 3)
    with pytest.raises(BundleError, match="created"):
        build_bundle(log.entries[1:], referee_key)
