"""Every position the verifier reports is the index of a real entry of the bundle's log, or null where
``docs/verification.md`` says the failure concerns the bundle as a whole: one test per check, then a
sweep over many ways of breaking a bundle."""

from __future__ import annotations

import copy

import pytest
from gamelogs import finished_log, make_game_log, reseal

from referee.verify import CHECK_ORDER, verify_bundle
from referee.verify.bundle import build_bundle, sign_bundle


def positions_are_real(report, bundle):
    """Every position is a real entry of the log (of the carried messages for the ``messages`` check)."""
    def length(name):
        return len(bundle[name]) if isinstance(bundle, dict) and isinstance(bundle.get(name), list) else 0

    for check in report.checks:
        entries = length("messages" if check.name == "messages" else "log")
        assert check.position is None or 0 <= check.position < entries, (check.name, check.position, entries)
    first = report.to_dict()["first_failure"]
    entries = length("messages" if first and first["check"] == "messages" else "log")
    assert first is None or first["position"] is None or 0 <= first["position"] < entries


def failed(bundle, name):
    report = verify_bundle(bundle)
    positions_are_real(report, bundle)
    check = report.check(name)
    assert check.status == "failed", check.to_dict()
    return check


def finished(referee_key, seed=7):
    return build_bundle(finished_log("fivetowers", 3, seed).entries, referee_key)


def test_format(referee_key):
    bundle = finished(referee_key)
    assert failed(sign_bundle({**bundle, "format": "other"}, referee_key), "format").position is None
    assert failed(sign_bundle({**bundle, "ruleset": {"name": "x", "version": "y"}}, referee_key),
                  "format").position == 0
    interim = sign_bundle({**bundle, "interim": True, "result": None}, referee_key)
    assert failed(interim, "format").position == len(bundle["log"]) - 1  # the revealed entry


def test_referee_signature(referee_key):
    bundle = finished(referee_key)
    assert failed({**bundle, "referee_sig": "AAAA"}, "referee_signature").position is None


def test_hash_chain(referee_key):
    entries = finished_log("fivetowers", 3).entries
    entries[-1]["server_seed"] = "00" * 32
    assert failed(build_bundle(entries, referee_key), "hash_chain").position == len(entries) - 1


def test_organiser_signature(referee_key):
    entries = finished_log("fivetowers", 3).entries
    entries[0]["organiser"] = entries[0]["seats"][0]["key"]
    entries[0]["organiser_sig"] = "AAAA"
    assert failed(build_bundle(reseal(entries), referee_key), "organiser_signature").position == 0


def test_seat_signatures(referee_key):
    entries = finished_log("fivetowers", 3).entries
    last_move = max(i for i, e in enumerate(entries) if e["type"] == "move")
    entries[last_move]["submission"]["sig"] = entries[last_move - 1]["submission"]["sig"]
    assert failed(build_bundle(reseal(entries), referee_key), "seat_signatures").position == last_move


def test_seed_commitment_of_a_bundle_with_its_last_entry_dropped_is_not_one_past_the_end(referee_key):
    """The reported case: the reveal (last entry) dropped and the bundle re-signed. Nothing in the log is
    wrong, the bundle as a whole lacks an entry: position null, not len(log)."""
    bundle = finished(referee_key)
    dropped = sign_bundle({**bundle, "log": bundle["log"][:-1]}, referee_key)
    check = failed(dropped, "seed_commitment")
    assert check.position is None and "reveals no server seed" in check.reason
    report = verify_bundle(dropped)
    assert report.to_dict()["first_failure"] == {"check": "seed_commitment", "position": None,
                                                 "reason": check.reason}
    entries = finished_log("fivetowers", 3).entries
    entries[-1]["server_seed"] = "11" * 32
    assert failed(build_bundle(reseal(entries), referee_key), "seed_commitment").position == len(entries) - 1


def test_ruleset_version(referee_key):
    bundle = build_bundle(make_game_log("fivetowers", 2, seed=2, version="0000000000000000").entries, referee_key)
    assert failed(bundle, "ruleset_version").position == 0


def test_replay(referee_key):
    """A final bundle of a game still running: the failure is at its last entry (a real one)."""
    from referee.games import ruleset

    deck = [c["id"] for c in ruleset("fivetowers").components()["cards"] if c["min_players"] <= 2]
    entries = make_game_log("fivetowers", 2, seed=5, deck=deck, moves=6).entries
    bundle = sign_bundle({**build_bundle(entries, referee_key), "interim": False}, referee_key)
    assert failed(bundle, "replay").position == len(entries) - 1
    # a seeded game without its reveal: at the `started` entry it cannot get past
    seeded = finished(referee_key)
    dropped = sign_bundle({**seeded, "log": seeded["log"][:-1]}, referee_key)
    started = next(i for i, e in enumerate(seeded["log"]) if e["type"] == "started")
    assert failed(dropped, "replay").position == started


def test_result_is_null_as_documented(referee_key):
    bundle = finished(referee_key)
    result = copy.deepcopy(bundle["result"])
    result["seats"][0]["total"] += 1
    check = failed(sign_bundle({**bundle, "result": result}, referee_key), "result")
    assert check.position is None and check.details["ended_at"] == len(bundle["log"]) - 2


def test_messages(referee_key):
    """A changed public message is reported at its position in the message stream (its hash no longer
    matches), and a message dropped from the stream where the next one chains from it."""
    from referee.clock import now
    from referee.protocol.logchain import GENESIS, seal
    from referee.protocol.signing import MESSAGE_CTX, sign

    game = finished_log("fivetowers", 3)
    entries = game.entries
    stored, prev = [], GENESIS
    for seat, text, to in ((0, "hello", None), (1, "psst", [2]), (2, "gg", None)):
        envelope = {"v": 1, "ctx": MESSAGE_CTX, "game": entries[0]["game"], "seat": seat, "text": text, "to": to,
                    "at": now()}
        stored.append(seal({"v": 1, "type": "message", "seq": len(stored), "prev": prev, "at": now(),
                            "log_seq": len(entries), "submission": {"envelope": envelope,
                                                                    "sig": sign(game.keys[seat], envelope)}}, prev))
        prev = stored[-1]["hash"]
    bundle = build_bundle(entries, referee_key, messages=stored)
    assert verify_bundle(bundle).check("messages").status == "passed"
    changed = copy.deepcopy(bundle)
    changed["messages"][2]["submission"]["envelope"]["text"] = "GG"
    assert failed(sign_bundle(changed, referee_key), "messages").position == 2
    dropped = copy.deepcopy(bundle)
    del dropped["messages"][0]
    assert failed(sign_bundle(dropped, referee_key), "messages").position == 0
    assert failed(sign_bundle({**bundle, "messages": [*bundle["messages"][:2], {"seq": 2}]}, referee_key),
                  "messages").position == 2


def test_every_check_has_a_position_test():
    names = {name.removeprefix("test_").split("_of_")[0].split("_is_")[0] for name in globals()
             if name.startswith("test_")}
    assert set(CHECK_ORDER) <= names


@pytest.mark.parametrize("cut", [1, 2, 3, 5, 10])
def test_truncated_and_edited_bundles_report_only_real_positions(referee_key, cut):
    bundle = finished(referee_key, seed=8)
    truncated = sign_bundle({**bundle, "log": bundle["log"][:-cut]}, referee_key)
    positions_are_real(verify_bundle(truncated), truncated)
    resealed = build_bundle(reseal(bundle["log"][:-cut]), referee_key)
    positions_are_real(verify_bundle(resealed), resealed)
    for p in range(0, len(bundle["log"]), 7):
        edited = copy.deepcopy(bundle)
        edited["log"][p]["seq"] = 10_000
        edited = sign_bundle(edited, referee_key)
        positions_are_real(verify_bundle(edited), edited)
