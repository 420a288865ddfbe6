"""The organiser moves a player to a new key (``POST /tournaments/{id}/rekey``, CONTRACT section 15 "Afterwards"):
the next round pairs the new key in the old one's place with the same points, the old key is no player any more,
the certificate verifies; every refusal is a 4xx that stores nothing."""

from __future__ import annotations

from svc_helpers import signed
from tournament_helpers import Players, join_all, tournament_state, withdraw

from referee.games_service.players import tournament_rows
from referee.protocol.signing import generate_key, public_key_b64, sign
from referee.tournaments.certificate import verify_certificate


def _decide_round(http, tid, organiser) -> None:
    """The organiser decides every game of the open round: the first seat wins."""
    for table in tournament_state(http, tid)["rounds"][-1]["tables"]:
        state = tournament_state(http, tid)
        envelope = {"v": 1, "ctx": "referee/adjudicate", "tournament": tid, "game": table["game"], "ranks": [1, 2],
                    "reason": "decided", "seq": state["seq"], "prev": state["head"]}
        status, answer = http.post(f"/tournaments/{tid}/adjudicate", signed(organiser, envelope))
        assert status == 202, answer


def _rekey(http, tid, player: str, new, *, signer, new_signer=None, headers=None, **override):
    state = tournament_state(http, tid)
    envelope = {"v": 1, "ctx": "referee/rekey", "tournament": tid, "player": player, "key": public_key_b64(new),
                "seq": state["seq"], "prev": state["head"], **override}
    return http.post(f"/tournaments/{tid}/rekey", {"envelope": envelope, "sig": sign(signer, envelope),
                                                    "new_sig": sign(new_signer or new, envelope)},
                     headers=headers or {})


def test_the_organiser_moves_a_player_to_a_new_key_for_the_rounds_to_come(http, store):
    organiser, new = generate_key(), generate_key()
    players = Players(4)
    body = players.body(format={"kind": "swiss", "rounds": 2, "table_sizes": [2]}, adjudication="organiser")
    body["organiser"] = {"key": public_key_b64(organiser),
                         "sig": sign(organiser, {"v": 1, "ctx": "referee/tournament", **body})}
    status, created = http.post("/tournaments", body)
    assert status == 201, created
    tid = created["tournament"]
    old = players.public[0]
    status, error = _rekey(http, tid, old, new, signer=organiser)  # not started: no rounds yet
    assert status == 409 and error["error"]["code"] == "tournament/not_active"
    join_all(http, tid, players)
    round_one = tournament_state(http, tid)["rounds"][0]
    seq = tournament_state(http, tid)["seq"]
    refused = [
        (_rekey(http, tid, old, new, signer=players.keys[0]), 401, "submission/bad_signature"),  # not the organiser
        (_rekey(http, tid, old, new, signer=organiser, new_signer=generate_key()), 401, "submission/bad_signature"),
        (_rekey(http, tid, old, players.keys[1], signer=organiser), 409, "rekey/key_taken"),
        (_rekey(http, tid, public_key_b64(generate_key()), new, signer=organiser), 404, "rekey/not_player"),
        (_rekey(http, tid, old, new, signer=organiser, seq=seq - 1), 409, "submission/stale"),
        (_rekey(http, tid, old, new, signer=organiser, tournament="t_other"), 403, "submission/wrong_tournament"),
    ]
    for (status, error), want, code in refused:
        assert (status, error["error"]["code"]) == (want, code), error
    for language, words in (("de", "gehört oder gehörte"), ("fr", "est, ou a été")):  # an organiser's error, in words
        status, error = _rekey(http, tid, old, players.keys[2], signer=organiser, headers={"Accept-Language": language})
        assert status == 409 and words in error["error"]["message"], error
    assert tournament_state(http, tid)["seq"] == seq  # nothing stored
    status, receipt = _rekey(http, tid, old, new, signer=organiser)
    assert status == 202, receipt
    entry = http.get(f"/tournaments/{tid}/log?from={receipt['position']}&limit=1")[1]["entries"][0]
    assert (entry["type"], entry["player"], entry["key"], entry["by"]) == ("rekeyed", old, public_key_b64(new),
                                                                            "organiser")
    state = tournament_state(http, tid)
    assert state["rounds"][0] == {**round_one, "paired_at": state["rounds"][0]["paired_at"]}  # running games kept
    assert state["players"][0] == {"name": "player 0", "key": public_key_b64(new), "joined": True, "withdrawn": False,
                                   "former_keys": [old]}
    assert all("former_keys" not in p for p in state["players"][1:])
    status, error = withdraw(http, tid, players.keys[0])  # the old key is no player any more
    assert status == 403 and error["error"]["code"] == "withdraw/not_player"
    status, listed = http.get(f"/players/{public_key_b64(new)}/tournaments")
    assert status == 200 and [t["tournament"] for t in listed["tournaments"]] == [tid]
    rows = tournament_rows(tid, store.read_tournament(tid)[0])  # what `referee rebuild` lists it under
    assert {public_key_b64(new), old} <= {key for key, _tid, _at in rows}
    _decide_round(http, tid, organiser)
    state = tournament_state(http, tid)
    won = {k for t in state["rounds"][0]["tables"] for k in t["players"][:1]}
    row = next(r for r in state["standings"] if r["key"] == public_key_b64(new))
    assert row["points"] == state["points"]["2"][0 if old in won else 1]  # the old key's game counts for the new
    seated = [k for t in state["rounds"][1]["tables"] for k in t["players"]]
    assert public_key_b64(new) in seated and old not in seated
    _decide_round(http, tid, organiser)
    assert tournament_state(http, tid)["status"] == "finished"
    status, error = _rekey(http, tid, public_key_b64(new), generate_key(), signer=organiser)
    assert status == 409 and error["error"]["code"] == "tournament/not_active"
    status, certificate = http.get(f"/tournaments/{tid}/export")
    assert status == 200 and verify_certificate(certificate).ok
    assert [e["type"] for e in certificate["log"]].count("rekeyed") == 1


def test_a_moved_player_withdraws_with_the_new_key_and_forfeits_the_seat_its_old_key_holds(http, store):
    import random

    from tournament_helpers import start_game

    organiser, new = generate_key(), generate_key()
    players = Players(3)
    body = players.body(format={"kind": "series", "rounds": 1, "table_sizes": [3]})
    body["organiser"] = {"key": public_key_b64(organiser),
                         "sig": sign(organiser, {"v": 1, "ctx": "referee/tournament", **body})}
    status, created = http.post("/tournaments", body)
    assert status == 201, created
    tid = created["tournament"]
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][0]["tables"][0]
    game = start_game(http, table, players, random.Random(5))  # running, its seat still the old key's
    quitter = table["players"][1]
    status, receipt = _rekey(http, tid, quitter, new, signer=organiser)
    assert status == 202, receipt
    status, receipt = withdraw(http, tid, new)
    assert status == 202, receipt
    forfeits = [e for e in store.read_log(game.game_id) if e["type"] == "forfeited"]
    assert [(e["seat"], e["reason"]) for e in forfeits] == [(1, "withdrawn")]
