"""A player's new key in a tournament (``rekeyed``, CONTRACT section 15 "Afterwards"): signed by the organiser and
by the new key; from its position on the player is the new key — same points, same history, same place in the
lot — and the certificate's verifier re-checks both signatures and the pairings after it."""

from __future__ import annotations

import copy

import pytest

from referee.protocol.logchain import seal
from referee.protocol.signing import REKEY_CTX, generate_key, public_key_b64, sign
from referee.tournaments.certificate import build_certificate, verify_certificate
from referee.tournaments.ratings import rated_results
from referee.verify import unsigned_part

from .helpers import ORGANISER, Builder, by_key_order

REFEREE = generate_key()
NEW = generate_key()


def rekey_entry(b: Builder, player: str, new=NEW, *, signer=ORGANISER, new_signer=None, **override):
    env = b.envelope(REKEY_CTX, **{"player": player, "key": public_key_b64(new), **override})
    return b.entry("rekeyed", player=player, key=public_key_b64(new), by="organiser",
                   submission={"envelope": env, "sig": sign(signer, env), "new_sig": sign(new_signer or new, env)})


def after_one_round() -> Builder:
    b = Builder(6, fmt={"kind": "swiss", "rounds": 3, "table_sizes": [2]}, organiser=True, tournament="t_rekey")
    b.join_all()
    b.play_round(by_key_order)
    return b


def partners(pairing, key: str) -> set[str]:
    return next(set(t) - {key} for t in pairing.tables if key in t)


def test_the_new_key_plays_on_as_the_player_and_the_certificate_verifies():
    b = after_one_round()
    old, new = b.public[0], public_key_b64(NEW)
    before = copy.deepcopy(b.replayer)
    row = next(r for r in before.standings(public=False) if r["key"] == old)
    assert b.add(rekey_entry(b, old)).status == "ok"
    now = {r["key"]: r for r in b.replayer.standings(public=False)}
    assert old not in now and {**now[new], "key": old} == row  # same rank, points, every tie-break value
    assert b.replayer.keys[0] == new and b.replayer.players[0]["name"] == "P0"
    assert b.pair().status == "ok"  # the recomputed pairing, with the new key in the old one's place
    paired = b.replayer.rounds[-1]
    seated = [k for t in paired.tables for k in t["players"]] + paired.byes
    assert new in seated and old not in seated
    would = before.expected_pairing()
    assert {k for t in paired.tables if new in t["players"] for k in t["players"]} - {new} == partners(would, old)
    # the old key is no player any more: no withdrawal, no bye, no second rekey by it
    withdraw = b.envelope("referee/withdraw", key=old)
    refused, _ = b.attempt(b.entry("withdrawn", key=old, submission={"envelope": withdraw,
                                                                     "sig": sign(ORGANISER, withdraw)}))
    assert refused.error["code"] == "withdraw/not_player"
    again, _ = b.attempt(rekey_entry(b, old, generate_key()))
    assert again.error["code"] == "rekey/not_player"
    for table in paired.tables:
        assert b.finish_game(table["game"], *by_key_order(table["players"])).status == "ok"
    assert b.append("round_closed", round=paired.number, reason="complete").status == "ok"
    third = generate_key()  # and once more: the player's first two rounds count under the third key
    assert b.add(rekey_entry(b, new, third)).status == "ok"
    assert b.replayer.moved == {old: public_key_b64(third), new: public_key_b64(third)}
    again, _ = b.attempt(rekey_entry(b, public_key_b64(third), NEW))  # a key that was a player's is taken
    assert again.error["code"] == "rekey/key_taken"
    b.play_out(by_key_order)
    cert = build_certificate(b.log, REFEREE)
    report = verify_certificate(cert)
    assert report.ok, report.to_dict()
    keys = [r["key"] for r in cert["standings"]]
    assert public_key_b64(third) in keys and old not in keys and new not in keys
    assert b.replayer.recomputed_standings() == cert["standings"]
    # ratings: each game under the keys it was paired with (docs/tournaments.md section 7)
    rated = rated_results("t_rekey", b.replayer, b.log)
    assert [sorted({old, new, public_key_b64(third)} & set(g["players"])) for g in rated
            if {old, new, public_key_b64(third)} & set(g["players"])] == [[old], [new], [public_key_b64(third)]]
    as_bot = copy.deepcopy(b.replayer)  # had P0 been declared a bot, its games stay in the bot pool under every key
    as_bot.created["players"][0]["bot"] = True
    assert [g.get("bots") for g in rated_results("t_rekey", as_bot, b.log) if "bots" in g] == \
        [[old], [new], [public_key_b64(third)]]


@pytest.mark.parametrize("forgery", ["sig", "new_sig"])
def test_a_forged_rekeyed_fails_verification_at_its_position(forgery):
    b = after_one_round()
    old = b.public[1]
    mallory = generate_key()
    entry = rekey_entry(b, old, signer=mallory if forgery == "sig" else ORGANISER,
                        new_signer=mallory if forgery == "new_sig" else None)
    position = len(b.log)
    verdict, _ = b.attempt(entry)
    assert verdict.status == "rejected" and verdict.error["code"] == "submission/bad_signature"
    # a forger with the referee's key writes it in anyway, the pairings after it with the new key
    genuine = rekey_entry(b, old)
    assert b.add(genuine).status == "ok"
    b.play_out(by_key_order)
    log = [dict(e) for e in b.log]
    log[position] = {**log[position], "submission": entry["submission"]}
    for i in range(position, len(log)):
        log[i] = seal(log[i], log[i - 1]["hash"])
    cert = build_certificate(b.log, REFEREE)
    cert["log"] = log
    forged = {**unsigned_part(cert), "referee_sig": sign(REFEREE, unsigned_part(cert))}
    first = verify_certificate(forged).first_failure
    assert first is not None and (first.name, first.position) == ("replay", position)
    assert "bad_signature" in first.reason


def test_refused_rekeys_change_nothing():
    b = after_one_round()
    old, other = b.public[0], b.public[1]
    cases = {
        "rekey/key_taken": rekey_entry(b, old, b.keys[1]),
        "rekey/not_player": rekey_entry(b, public_key_b64(generate_key())),
        "submission/wrong_key": rekey_entry(b, old, key=other),
        "submission/stale": rekey_entry(b, old, seq=len(b.log) - 1),
    }
    for code, entry in cases.items():
        verdict, replica = b.attempt(entry)
        assert verdict.error["code"] == code
        assert replica.keys == b.replayer.keys and replica.moved == {}
    plain = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]}, tournament="t_plain")
    plain.join_all()
    verdict, _ = plain.attempt(rekey_entry(plain, plain.public[0]))
    assert verdict.error["code"] == "rekey/no_organiser"
    while b.replayer.due()["type"] == "paired":
        b.play_round(by_key_order)
    assert b.append("finished").status == "ok"
    verdict, _ = b.attempt(rekey_entry(b, old))
    assert verdict.error["code"] == "tournament/not_active"
