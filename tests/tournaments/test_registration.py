"""Open registration in the tournament fold (CONTRACT section 14): joins by keys not listed, by invitation,
the closing of the registration (full, at ``closes``, the organiser's signed start), a cancelled
tournament, and the certificate of an open tournament."""

from __future__ import annotations

import copy
import hashlib

import pytest

from referee.protocol.logchain import seal
from referee.protocol.signing import b64url_encode, generate_key, public_key_b64, sign
from referee.replay import LogError
from referee.tournaments.certificate import build_certificate, verify_certificate
from referee.tournaments.log import JOIN_CTX, START_CTX, TournamentReplayer, replay_tournament
from referee.tournaments.spec import SpecError, resolve_tournament

from .helpers import KEYS, ORGANISER, Builder, at, by_key_order
from .test_log import all_ok, refused

INVITE = generate_key()


def open_builder(fmt=None, keys=(), **extra) -> Builder:
    extra.setdefault("registration", {"open": True})
    fmt = fmt or {"kind": "swiss", "rounds": 3, "table_sizes": [2]}
    return Builder(0, keys=list(keys), fmt=fmt, organiser=True, **extra)


def open_join(b: Builder, key, name: str, *, invite=None, entropy: bytes | None = None, **override):
    entropy = entropy or hashlib.sha256(public_key_b64(key).encode()).digest()
    env = b.envelope(JOIN_CTX, key=public_key_b64(key), name=name, at=at(len(b.log)),
                     entropy=b64url_encode(entropy))
    env.update(override)
    submission = {"envelope": env, "sig": sign(key, env)}
    if invite is not None:
        submission["invite_sig"] = sign(invite, env)
    return b.entry("joined", key=public_key_b64(key), submission=submission)


def start_entry(b: Builder, signer=ORGANISER, **override):
    env = b.envelope(START_CTX, **override)
    return b.entry("registration_closed", reason="organiser", submission={"envelope": env, "sig": sign(signer, env)})


def test_an_open_swiss_fills_from_unlisted_keys_and_closes_when_full():
    b = open_builder(max_players=6, fmt={"kind": "swiss", "table_sizes": [2]})
    created = b.created_payload
    assert created["registration"] == {"open": True} and created["max_players"] == 6 and created["closes"] is None
    assert created["players"] == [] and created["format"]["rounds"] == 3  # ⌈log2 6⌉, planned for max_players
    for i in range(6):
        assert b.replayer.due() is None
        assert b.add(open_join(b, KEYS[i], f"joiner {i}")).status == "ok"
    assert b.replayer.status == "waiting" and b.replayer.due() == {"type": "registration_closed", "reason": "full"}
    refused(b, open_join(b, KEYS[7], "late"), "registration/full")
    assert b.append("registration_closed", reason="full").status == "ok"
    assert b.replayer.status == "active"
    assert b.replayer.keys == [public_key_b64(k) for k in KEYS[:6]]  # join order
    assert [p["name"] for p in b.replayer.players] == [f"joiner {i}" for i in range(6)]
    refused(b, open_join(b, KEYS[7], "late"), "registration/closed")
    b.play_out(by_key_order)
    again = replay_tournament(b.log)
    assert all_ok(again) and again.status == "finished"
    assert [row["name"] for row in again.standings()] and len(again.standings()) == 6


def test_the_joins_of_an_open_registration_are_checked():
    b = open_builder(max_players=4)
    refused(b, open_join(b, KEYS[0], ""), "join/name")
    bad_sig = open_join(b, KEYS[0], "x")
    bad_sig["submission"]["sig"] = sign(KEYS[1], bad_sig["submission"]["envelope"])
    refused(b, bad_sig, "submission/bad_signature")
    assert b.add(open_join(b, KEYS[0], "Alice")).status == "ok"
    refused(b, open_join(b, KEYS[1], "ALICE"), "registration/name_taken")
    refused(b, open_join(b, KEYS[0], "Alice again"), "join/duplicate")
    refused(b, b.entry("registration_closed", reason="full"), "registration/not_full")
    refused(b, b.entry("registration_closed", reason="closes"), "registration/not_closed")
    refused(b, b.entry("paired", round=1, tables=[], byes=[]), "tournament/not_active")


def test_a_listed_player_may_join_beside_the_open_registration():
    b = open_builder(max_players=3, keys=[KEYS[5]])  # listed as "P0"
    refused(b, open_join(b, KEYS[0], "p0"), "registration/name_taken")
    assert b.join(0).status == "ok"  # a listed player joins with the plain envelope, no name, no invitation
    assert b.add(open_join(b, KEYS[0], "A")).status == "ok"
    assert b.add(open_join(b, KEYS[1], "B")).status == "ok"
    assert b.append("registration_closed", reason="full").status == "ok"
    assert [p["name"] for p in b.replayer.players] == ["P0", "A", "B"]


def test_by_invitation_a_join_needs_the_invitation_signature():
    b = open_builder(registration={"invite": public_key_b64(INVITE)}, max_players=2)
    refused(b, open_join(b, KEYS[0], "A"), "registration/bad_invite")
    refused(b, open_join(b, KEYS[0], "A", invite=generate_key()), "registration/bad_invite")
    assert b.add(open_join(b, KEYS[0], "A", invite=INVITE)).status == "ok"
    # an invitation signature over another envelope (the name changed after signing) does not hold
    forged = open_join(b, KEYS[1], "B", invite=INVITE)
    forged["submission"]["envelope"]["name"] = "C"
    forged["submission"]["sig"] = sign(KEYS[1], forged["submission"]["envelope"])
    refused(b, forged, "registration/bad_invite")


def test_the_registration_closes_at_closes_by_the_entries_times():
    closes = at(4)  # the fourth entry's time
    b = open_builder(closes=closes)
    assert b.created_payload["closes"] == closes
    assert b.add(open_join(b, KEYS[0], "A")).status == "ok"
    assert b.add(open_join(b, KEYS[1], "B")).status == "ok"
    refused(b, b.entry("registration_closed", reason="closes"), "registration/not_closed")  # seq 3: before
    assert b.add(open_join(b, KEYS[2], "C")).status == "ok"
    refused(b, open_join(b, KEYS[3], "D"), "registration/closed")  # its `at` is `closes`
    assert b.append("registration_closed", reason="closes").status == "ok"
    assert b.replayer.status == "active" and len(b.replayer.keys) == 3
    assert b.replayer.due()["type"] == "paired"


def test_the_organisers_signed_start_closes_it_and_too_few_cancel_it():
    b = open_builder()
    assert b.add(open_join(b, KEYS[0], "A")).status == "ok"
    refused(b, start_entry(b, signer=KEYS[0]), "submission/bad_signature")
    refused(b, start_entry(b, seq=0), "submission/stale")
    refused(b, b.entry("registration_closed", reason="organiser"), "submission/malformed")
    assert b.add(start_entry(b)).status == "ok"
    assert b.replayer.status == "cancelled"
    due = b.replayer.due()
    assert due == {"type": "revealed", "server_seed": b.server_seed.hex(), "reason": "cancelled"}
    refused(b, b.entry("paired", round=1, tables=[], byes=[]), "tournament/not_active")
    assert b.append("revealed", server_seed=b.server_seed.hex(), reason="cancelled").status == "ok"
    again = replay_tournament(b.log)
    assert all_ok(again) and again.status == "cancelled" and again.revealed
    certificate = build_certificate(b.log, generate_key())
    assert certificate["games"] == [] and [r["name"] for r in certificate["standings"]] == ["A"]
    assert verify_certificate(certificate).ok


def test_a_created_entry_of_an_open_registration_needs_its_organiser():
    body = {"ruleset": "fivetowers", "registration": {"open": True}, "max_players": 4,
            "format": {"kind": "swiss"}}
    resolved = resolve_tournament(body)
    entry = seal({"v": 1, "type": "created", "seq": 0, "at": at(0), "tournament": "t_x", **resolved,
                  "commitment": "0" * 64, "organiser": None}, "0" * 64)
    with pytest.raises(LogError, match="organiser"):
        TournamentReplayer().feed(entry)


@pytest.mark.parametrize(("extra", "path"), [
    ({"max_players": 1}, "$.max_players"),
    ({"max_players": 2, "format": {"kind": "swiss", "table_sizes": [4, 3]}}, "$.max_players"),
    ({"max_players": 7, "format": {"kind": "series"}}, "$.format"),  # 5 Towers seats 5 at most
    ({"max_players": None, "format": {"kind": "series", "rounds": 2}}, "$.max_players"),
    ({"max_players": None, "format": {"kind": "swiss"}}, "$.format.rounds"),
    ({"closes": "tomorrow"}, "$.closes"),
    ({"registration": {"invite": "nope"}}, "$.registration.invite"),
    ({"registration": {"open": False}}, "$.registration"),
])
def test_bad_open_registrations_name_the_problem(extra, path):
    body = {"ruleset": "fivetowers", "registration": {"open": True}, "max_players": 8,
            "format": {"kind": "swiss"}, **extra}
    with pytest.raises(SpecError) as caught:
        resolve_tournament(body)
    assert path in [p["path"] for p in caught.value.problems], caught.value.problems


def test_max_players_without_registration_is_refused():
    with pytest.raises(SpecError) as caught:
        resolve_tournament({"ruleset": "fivetowers", "players": [{"name": "a", "key": public_key_b64(KEYS[0])},
                                                                 {"name": "b", "key": public_key_b64(KEYS[1])}],
                            "format": {"kind": "swiss"}, "max_players": 4})
    assert caught.value.problems[0]["path"] == "$.registration"


def test_the_certificate_of_an_open_tournament_verifies_and_a_swapped_join_fails_at_its_position():
    b = open_builder(max_players=4, fmt={"kind": "swiss", "rounds": 2, "table_sizes": [2]})
    for i in range(4):
        assert b.add(open_join(b, KEYS[i], f"J{i}")).status == "ok"
    assert b.append("registration_closed", reason="full").status == "ok"
    b.play_out(by_key_order)
    referee = generate_key()
    cert = build_certificate(b.log, referee)
    assert verify_certificate(cert).ok
    # another key in the second join: the envelope and its signature no longer match (re-signed by the referee,
    # so that the log's own hash chain and the referee's signature are not what fails)
    tampered = copy.deepcopy(b.log)
    tampered[2]["key"] = public_key_b64(KEYS[9])
    tampered[2]["submission"]["envelope"]["key"] = public_key_b64(KEYS[9])
    prev = "0" * 64
    for i, entry in enumerate(tampered):  # the chain sealed again: only the join itself is wrong
        tampered[i] = seal({k: v for k, v in entry.items() if k != "hash"}, prev)
        prev = tampered[i]["hash"]
    report = verify_certificate({**cert, "log": tampered})
    first = report.first_failure
    assert first is not None and first.name == "referee_signature"
    unsigned = {k: v for k, v in cert.items() if k != "referee_sig"} | {"log": tampered}
    report = verify_certificate({**unsigned, "referee_sig": sign(referee, unsigned)})  # even re-signed
    first = report.first_failure
    assert first is not None and first.name == "replay" and first.position == 2, report.to_dict()
    assert "signature" in (first.reason or ""), first.reason
