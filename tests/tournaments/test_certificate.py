"""The certificate: Merkle root, signature, and every tampering named by the check that catches it.

The tournament here is played with real games: each table's game is a real signed game log of the
tables' players, its head and ranks written into the tournament log, its bundle checked by --games.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from referee.cli.verification import verify_tournament_command
from referee.protocol.signing import generate_key, public_key_b64, sign
from referee.replay import replay_log
from referee.tournaments.certificate import (
    CertificateError,
    build_certificate,
    merkle_leaf,
    merkle_root,
    verify_certificate,
)
from referee.tournaments.log import finished_payload
from referee.verify import unsigned_part
from referee.verify.bundle import build_bundle

from .helpers import Builder, play_game

REFEREE = generate_key()


@functools.cache
def _played() -> tuple[list, dict]:
    b = Builder(5, fmt={"kind": "swiss", "rounds": 2, "table_sizes": [2]}, tournament="t_cert")
    b.join_all()
    bundles = {}
    for _ in range(2):
        assert b.pair().status == "ok"
        rnd = b.replayer.rounds[-1]
        for t in rnd.tables:
            log = play_game("fivetowers", t["game"], [b.key_of(k) for k in t["players"]])
            payload = finished_payload(t["game"], log[-1]["hash"], replay_log(log).game.result())
            assert b.append("game_finished", **payload).status == "ok"
            bundles[t["game"]] = build_bundle(log, REFEREE)
        assert b.append("round_closed", round=rnd.number, reason="complete").status == "ok"
    b.append("finished")
    b.append("revealed", server_seed=b.server_seed.hex(), reason="finished")
    return b.log, bundles


def played() -> tuple[list, dict]:
    log, bundles = _played()
    return copy.deepcopy(log), copy.deepcopy(bundles)


@functools.cache
def _certificate_text() -> str:
    return json.dumps(build_certificate(_played()[0], REFEREE))


def certificate() -> dict:
    """A fresh copy of the genuine certificate (tests tamper with it)."""
    return json.loads(_certificate_text())


def resign(cert: dict) -> dict:
    """What a forger holding the referee key would do after changing something."""
    unsigned = unsigned_part(cert)
    return {**unsigned, "referee_sig": sign(REFEREE, unsigned)}


def reseal(log: list, start: int) -> list:
    from referee.protocol.logchain import seal
    out = [dict(e) for e in log]
    for i in range(start, len(out)):
        out[i] = seal(out[i], out[i - 1]["hash"])
    return out


def failure(report) -> tuple[str, int | None]:
    first = report.first_failure
    assert first is not None, report.to_dict()
    return first.name, first.position


# -- Merkle --------------------------------------------------------------------------------------
def test_merkle_leaves_nodes_and_odd_promotion_as_documented():
    games = [{"id": f"g{i}", "head": hashlib.sha256(bytes([i])).hexdigest()} for i in range(3)]
    leaves = [hashlib.sha256(b"\x00" + g["id"].encode() + b"\x00" + bytes.fromhex(g["head"])).digest() for g in games]
    assert [merkle_leaf(g["id"], g["head"]) for g in games] == leaves

    def node(a, b):
        return hashlib.sha256(b"\x01" + a + b).digest()

    assert merkle_root(games[:1]) == leaves[0].hex()
    assert merkle_root(games[:2]) == node(leaves[0], leaves[1]).hex()
    assert merkle_root(games) == node(node(leaves[0], leaves[1]), leaves[2]).hex()
    assert merkle_root(games[::-1]) != merkle_root(games)  # order matters
    with pytest.raises(ValueError):
        merkle_leaf("a\x00b", games[0]["head"])


# -- a genuine certificate -----------------------------------------------------------------------
def test_a_genuine_certificate_verifies_with_and_without_its_games():
    log, bundles = played()
    cert = build_certificate(log, REFEREE)
    assert set(cert) == {"format", "log", "games", "merkle_root", "standings", "referee_key", "referee_sig"}
    assert len(cert["games"]) == 4 and cert["merkle_root"] == merkle_root(cert["games"])
    report = verify_certificate(cert, referee_key=public_key_b64(REFEREE))
    assert report.ok and report.exit_code == 0, report.to_dict()
    assert report.check("game_bundles").status == "skipped"
    full = verify_certificate(cert, bundles)
    assert full.ok and full.check("game_bundles").status == "passed", full.to_dict()
    assert [c.name for c in full.checks] == ["format", "referee_signature", "hash_chain", "seed_commitment",
                                             "replay", "games", "merkle_root", "standings", "game_bundles"]


def test_a_running_tournament_has_no_certificate():
    b = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]})
    b.join_all()
    with pytest.raises(CertificateError):
        build_certificate(b.log, REFEREE)


# -- tampering -----------------------------------------------------------------------------------
def test_an_altered_standing_fails_the_standings_check_naming_the_path():
    cert = certificate()
    cert["standings"][0]["points"] = 99
    assert failure(verify_certificate(resign(cert))) == ("standings", None)
    assert "$[0].points" in verify_certificate(resign(cert)).first_failure.reason
    cert = certificate()
    cert["standings"][2]["tie_breaks"]["lot"] = 5
    assert "$[2].tie_breaks.lot" in verify_certificate(resign(cert)).first_failure.reason
    swapped = certificate()
    swapped["standings"][0], swapped["standings"][1] = swapped["standings"][1], swapped["standings"][0]
    assert failure(verify_certificate(resign(swapped)))[0] == "standings"


def test_a_changed_rank_in_the_log_is_caught():
    cert = certificate()
    # the last game: its result changes the standings, but no later pairing
    position = max(i for i, e in enumerate(cert["log"]) if e["type"] == "game_finished")
    cert["log"][position]["ranks"] = cert["log"][position]["ranks"][::-1]
    assert failure(verify_certificate(resign(cert))) == ("hash_chain", position)  # the chain breaks there
    cert["log"] = reseal(cert["log"], position)  # a forger rewrites the chain too …
    report = verify_certificate(resign(cert))
    assert failure(report)[0] == "standings"  # … and the recomputed standings differ
    # a first-round result also changes the Swiss pairing of round 2: the replay names that entry
    cert = certificate()
    first = min(i for i, e in enumerate(cert["log"]) if e["type"] == "game_finished")
    cert["log"][first]["ranks"] = cert["log"][first]["ranks"][::-1]
    cert["log"] = reseal(cert["log"], first)
    report = verify_certificate(resign(cert))
    assert failure(report)[0] in ("replay", "standings")


def test_a_swapped_pairing_fails_the_replay_at_the_paired_entry():
    cert = certificate()
    position = next(i for i, e in enumerate(cert["log"]) if e["type"] == "paired")
    tables = cert["log"][position]["tables"]
    tables[0]["players"][0], tables[1]["players"][0] = tables[1]["players"][0], tables[0]["players"][0]
    cert["log"] = reseal(cert["log"], position)
    report = verify_certificate(resign(cert))
    assert failure(report) == ("replay", position)
    assert "paired/mismatch" in report.first_failure.reason


def test_a_changed_game_head_fails_games_and_merkle_root():
    cert = certificate()
    cert["games"][1]["head"] = "00" * 32
    report = verify_certificate(resign(cert))
    assert failure(report)[0] == "games"
    assert report.check("merkle_root").status == "failed"
    cert["merkle_root"] = merkle_root(cert["games"])  # a consistent root does not help
    assert failure(verify_certificate(resign(cert)))[0] == "games"


def test_a_changed_merkle_root_or_an_unsigned_change_is_caught():
    cert = certificate()
    cert["merkle_root"] = "ab" * 32
    assert failure(verify_certificate(resign(cert)))[0] == "merkle_root"
    cert = certificate()
    cert["standings"][0]["name"] = "Mallory"  # not re-signed
    assert failure(verify_certificate(cert))[0] == "referee_signature"
    other = generate_key()
    assert failure(verify_certificate(certificate(), referee_key=public_key_b64(other)))[0] == "referee_signature"


def test_a_wrong_revealed_seed_is_caught():
    cert = certificate()
    cert["log"][-1]["server_seed"] = "11" * 32
    cert["log"] = reseal(cert["log"], len(cert["log"]) - 1)
    report = verify_certificate(resign(cert))
    assert failure(report) == ("seed_commitment", len(cert["log"]) - 1)


def test_game_bundles_must_verify_and_match_the_recorded_heads():
    log, bundles = played()
    cert = build_certificate(log, REFEREE)
    games = [g["id"] for g in cert["games"]]
    missing = {k: v for k, v in bundles.items() if k != games[0]}
    assert "no bundle" in verify_certificate(cert, missing).first_failure.reason
    swapped = {**bundles, games[0]: bundles[games[1]]}
    assert verify_certificate(cert, swapped).first_failure.name == "game_bundles"
    tampered = copy.deepcopy(bundles)
    tampered[games[2]]["log"][5]["at"] = "2030-01-01T00:00:00Z"
    report = verify_certificate(cert, tampered)
    assert failure(report)[0] == "game_bundles" and "does not verify" in report.first_failure.reason


def test_unusable_certificates_fail_format_and_skip_the_rest():
    for bad in (None, [], {"log": []}, {"log": [{"type": "created", "game": "g"}]}):
        report = verify_certificate(bad)
        assert failure(report)[0] == "format"
        assert all(c.status == "skipped" for c in report.checks[1:])


# -- the command ---------------------------------------------------------------------------------
def test_verify_tournament_command_exit_status(tmp_path):
    log, bundles = played()
    cert = build_certificate(log, REFEREE)
    good = tmp_path / "cert.json"
    good.write_text(json.dumps(cert))
    games = tmp_path / "games"
    games.mkdir()
    for game_id, bundle in bundles.items():
        (games / f"{game_id}.json").write_text(json.dumps(bundle))
    runner = CliRunner()
    ok = runner.invoke(verify_tournament_command, [str(good), "--games", str(games),
                                                   "--referee-key", public_key_b64(REFEREE)])
    assert ok.exit_code == 0, ok.output
    assert "VERIFIED" in ok.output and "[pass] game_bundles" in ok.output
    cert["standings"][0]["points"] = 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(resign(cert)))
    failed = runner.invoke(verify_tournament_command, [str(bad)])
    assert failed.exit_code == 1 and "FAILED: first failure: standings" in failed.output
    as_json = runner.invoke(verify_tournament_command, [str(bad), "--json"])
    assert json.loads(as_json.output)["first_failure"]["check"] == "standings"
    junk = tmp_path / "junk.json"
    junk.write_text('{"a": 1.5}')
    assert runner.invoke(verify_tournament_command, [str(junk)]).exit_code == 1


# -- hostile certificates ------------------------------------------------------------------------
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                       max_size=3), max_leaves=5)
#: fields whose change the referee's word alone vouches for (its signature and the hash chain)
UNCHECKED = {"at"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_forged_field_anywhere_in_the_log_never_crashes_the_verifier_and_fails(data):
    cert = certificate()
    position = data.draw(st.integers(0, len(cert["log"]) - 1), label="position")
    entry = cert["log"][position]
    field = data.draw(st.sampled_from(sorted(k for k in entry if k not in ("hash", "seq", "v", *UNCHECKED))),
                      label="field")
    value = data.draw(JSON_VALUES, label="value")
    assume(value != entry[field])
    entry[field] = value
    if position == 0:
        cert["log"] = reseal([_seal_first(entry), *cert["log"][1:]], 1)
    else:
        cert["log"] = reseal(cert["log"], position)
    report = verify_certificate(resign(cert))
    assert not report.ok, (position, field, value)
    assert report.first_failure.name in ("format", "hash_chain", "seed_commitment", "replay", "games",
                                         "standings")


def _seal_first(entry):
    from referee.protocol.logchain import GENESIS, seal
    return seal(entry, GENESIS)
