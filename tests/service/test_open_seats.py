"""Open seats and invitations (CONTRACT section 14, issue 36 item 1): a creator-signed game with seats open to an
invitation or to anyone, taken by signed ``seated`` entries, left and cancelled before the start; the game starts
once every seat is taken and accepted, and every later submission of a seat is checked against the key that took
it. On the suite's real Redis, with real signatures."""

from __future__ import annotations

import random

import pytest
import requests
from live_server import serving
from seat_helpers import cancel, create_open_game, leave, take, take_body, tip
from svc_helpers import Http, PlayedGame, accept_all, create_game, move_envelope, play_random, signed
from test_concurrency import race

from referee.protocol.logchain import first_broken_link
from referee.protocol.signing import ACCEPT_CTX, generate_key, public_key_b64, sign
from referee.verify import verify_bundle


def log_of(store, game_id):
    entries = store.read_log(game_id)
    assert first_broken_link(entries) is None
    return entries


def types(store, game_id):
    return [entry["type"] for entry in log_of(store, game_id)]


# -- creation ---------------------------------------------------------------------------------------------------
def test_a_game_with_open_seats_is_created_by_a_signed_request_and_keeps_it(http, store):
    game = create_open_game(http, "fivetowers", ["key", "invite", "open"])
    created = log_of(store, game.game_id)[0]
    assert created["creator"] == public_key_b64(game.creator) and isinstance(created["creator_sig"], str)
    assert created["seats"][1] == {"invite": public_key_b64(game.invites[1])} and created["seats"][2] == {"open": True}
    status, state = http.get(f"/games/{game.game_id}")
    assert status == 200 and state["status"] == "waiting"
    assert [(s["key"], s.get("open"), s.get("taken")) for s in state["seats"]] == [
        (public_key_b64(game.keys[0]), None, None), (None, "invite", False), (None, "anyone", False)]


def test_open_seats_without_a_creator_signature_are_refused(http, store):
    body = {"ruleset": "fivetowers", "seats": [{"name": "a", "key": public_key_b64(generate_key())}, {"open": True}]}
    status, error = http.post("/games", body)
    assert status == 401 and error["error"]["code"] == "creator/required"
    forger, creator = generate_key(), generate_key()
    status, error = http.post("/games", {**body, "creator": {"key": public_key_b64(creator), "sig": sign(
        forger, {"v": 1, "ctx": "referee/create", **body})}})
    assert status == 401 and error["error"]["code"] == "creator/bad_signature"
    status, error = create_open_game(http, "fivetowers", ["key", "open"], expect=400,
                                     deck=["sand-1", "sand-2"])
    assert error["error"]["code"] == "request/invalid" and error["error"]["details"]["problems"][0]["path"] == "$.deck"
    two_kinds = {"open": True, "name": "x", "key": body["seats"][0]["key"]}
    status, error = http.post("/games", {"ruleset": "fivetowers", "seats": [two_kinds, {"open": False}]})
    assert status == 400 and {p["path"] for p in error["error"]["details"]["problems"]} == {
        "$.seats[0]", "$.seats[1].open"}


def test_a_game_whose_seats_all_have_keys_is_created_as_before(http, store):
    game = create_game(http, "fivetowers", 2)
    created = log_of(store, game.game_id)[0]
    assert set(created) == {"v", "type", "seq", "at", "game", "ruleset", "seats", "options", "time_control",
                            "organiser", "mode", "commitment", "hash"}
    assert all(set(seat) == {"name", "key"} for seat in created["seats"])
    state = http.get(f"/games/{game.game_id}")[1]
    assert all(set(seat) == {"seat", "name", "key", "accepted"} for seat in state["seats"])


# -- taking a seat -----------------------------------------------------------------------------------------------
def test_an_invite_seat_is_taken_only_with_its_invitation(http, store):
    game = create_open_game(http, "fivetowers", ["key", "invite"])
    joiner = generate_key()
    before = len(log_of(store, game.game_id))
    for invite in (None, generate_key()):  # no invitation signature, another invitation's
        body = take_body(game.game_id, 1, joiner, "Bea", tip(http, game.game_id), invite=invite)
        status, error = http.post(f"/games/{game.game_id}/seat", body)
        assert status == 403 and error["error"]["code"] == "seat/bad_invite", error
    status, error = take(http, game, 1, joiner, "Bea", invite=game.invites[1], entropy=None)
    assert status == 202, error
    entries = log_of(store, game.game_id)
    assert len(entries) == before + 1
    seated = entries[-1]
    assert seated["type"] == "seated" and seated["seat"] == 1
    assert set(seated["submission"]) == {"envelope", "sig", "invite_sig"}
    assert seated["submission"]["envelope"]["key"] == public_key_b64(joiner)
    state = http.get(f"/games/{game.game_id}")[1]
    assert state["seats"][1] == {"seat": 1, "name": "Bea", "key": public_key_b64(joiner), "accepted": True,
                                 "open": "invite", "taken": True} and state["status"] == "waiting"


def test_refusals_of_a_take_change_nothing(http, store):
    game = create_open_game(http, "fivetowers", ["key", "open", "open"])
    first, second = generate_key(), generate_key()
    assert take(http, game, 1, first, "Ann")[0] == 202
    length = len(log_of(store, game.game_id))
    cases = [
        (take(http, game, 1, second, "Bob"), 409, "seat/taken"),
        (take(http, game, 2, first, "Bob"), 409, "seat/same_key"),
        (take(http, game, 0, second, "Bob"), 409, "seat/taken"),  # given to a key at creation
        (take(http, game, 2, second, "ann"), 409, "seat/name_taken"),
        (take(http, game, 5, second, "Bob"), 403, "submission/wrong_seat"),
    ]
    bad_sig = take_body(game.game_id, 2, second, "Bob", tip(http, game.game_id))
    bad_sig["sig"] = sign(first, bad_sig["envelope"])
    cases.append((http.post(f"/games/{game.game_id}/seat", bad_sig), 401, "submission/bad_signature"))
    stale = take_body(game.game_id, 2, second, "Bob", (1, "0" * 64))
    cases.append((http.post(f"/games/{game.game_id}/seat", stale), 409, "submission/stale"))
    for (status, answer), expected_status, code in cases:
        assert (status, answer["error"]["code"]) == (expected_status, code), answer
    assert len(log_of(store, game.game_id)) == length


def test_refusals_of_a_take_speak_german_and_french(app, http):
    game = create_open_game(http, "fivetowers", ["key", "invite"])
    assert take(http, game, 1, generate_key(), "Bea")[0] == 202
    body = take_body(game.game_id, 1, generate_key(), "Cy", tip(http, game.game_id), invite=game.invites[1])
    messages = {}
    for language in ("en", "de", "fr"):
        answer = app.test_client().post(f"/games/{game.game_id}/seat", json=body,
                                        headers={"Accept-Language": language})
        assert answer.status_code == 409 and answer.json["error"]["code"] == "seat/taken"
        messages[language] = answer.json["error"]["message"]
    assert messages == {"en": "seat 1 is taken already", "de": "Platz 1 ist schon besetzt",
                        "fr": "la place 1 est déjà prise"}


def test_the_game_starts_once_every_seat_is_taken_and_accepted_and_holders_sign_its_moves(http, store):
    game = create_open_game(http, "fivetowers", ["key", "open"])
    seq, head = tip(http, game.game_id)
    envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game.game_id, "seat": 0, "seq": seq, "prev": head,
                "entropy": take_body(game.game_id, 0, game.keys[0], "x", (0, "0" * 64))["envelope"]["entropy"]}
    assert http.post(f"/games/{game.game_id}/accept", signed(game.keys[0], envelope))[0] == 202
    assert http.get(f"/games/{game.game_id}")[1]["status"] == "waiting"  # the open seat blocks the start
    joiner = generate_key()
    status, receipt = take(http, game, 1, joiner, "Jo")
    assert status == 202 and receipt["status"] == "active", receipt
    assert types(store, game.game_id)[-2:] == ["seated", "started"]
    # the seated entry's entropy counts for the seed: the engine's own game from it has the logged game's state
    state = http.get(f"/games/{game.game_id}")[1]
    played = PlayedGame(game.game_id, "fivetowers", [game.keys[0], joiner])
    seat = state["to_move"]
    legal = http.get(f"/games/{game.game_id}/legal-moves")[1]
    impostor = move_envelope(game.game_id, 1, legal["seq"], legal["head"], legal["moves"][0]) if seat == 1 else None
    if impostor is not None:  # a move of seat 1 signed by another key than the one that took it
        status, error = http.post(f"/games/{game.game_id}/moves", signed(generate_key(), impostor))
        assert status == 401 and error["error"]["code"] == "submission/bad_signature"
    assert play_random(http, played, random.Random(3)) > 0
    assert http.get(f"/games/{game.game_id}")[1]["status"] == "finished"
    bundle = http.get(f"/games/{game.game_id}/export")[1]
    report = verify_bundle(bundle)
    assert report.ok, report.to_dict()
    seats = report.check("seat_signatures")
    assert seats.details["checked"] >= len(played.moves) + 2
    # the take is also the acceptance: taking a started game's seat, or leaving it, is refused
    status, error = take(http, game, 1, generate_key(), "Late")
    assert status == 409 and error["error"]["code"] == "game/not_waiting"


def test_a_holder_leaves_and_the_seat_is_open_again(http, store):
    game = create_open_game(http, "fivetowers", ["key", "open"])
    first, second = generate_key(), generate_key()
    assert take(http, game, 1, first, "Ann")[0] == 202
    status, error = leave(http, game.game_id, 1, second)
    assert status == 401 and error["error"]["code"] == "submission/bad_signature"
    status, error = leave(http, game.game_id, 0, game.keys[0])
    assert status == 409 and error["error"]["code"] == "seat/not_open"
    assert leave(http, game.game_id, 1, first)[0] == 202
    state = http.get(f"/games/{game.game_id}")[1]
    assert state["seats"][1]["key"] is None and state["seats"][1]["accepted"] is False
    status, answer = take(http, game, 1, second, "Ann")  # the name is free again too
    assert status == 202, answer
    assert types(store, game.game_id)[-3:] == ["seated", "left", "seated"]


def test_the_creator_cancels_a_waiting_game(http, store):
    game = create_open_game(http, "fivetowers", ["key", "invite"])
    status, error = cancel(http, game.game_id, generate_key())
    assert status == 401 and error["error"]["code"] == "submission/bad_signature"
    status, receipt = cancel(http, game.game_id, game.creator)
    assert status == 202 and receipt["status"] == "cancelled", receipt
    assert types(store, game.game_id)[-2:] == ["cancelled", "revealed"]
    status, error = take(http, game, 1, generate_key(), "Bea")
    assert status == 409 and error["error"]["code"] == "game/cancelled"
    status, error = cancel(http, game.game_id, game.creator)
    assert status == 409 and error["error"]["code"] == "game/cancelled"
    assert game.game_id not in [g["game"] for g in http.get("/games")[1]["games"]]
    report = verify_bundle(http.get(f"/games/{game.game_id}/export")[1])
    assert report.ok, report.to_dict()


def test_a_game_without_a_creator_cannot_be_cancelled(http):
    game = create_game(http, "fivetowers", 2)
    status, error = cancel(http, game.game_id, game.keys[0])
    assert status == 403 and error["error"]["code"] == "cancel/no_creator"


def test_the_replay_workers_fold_agrees(http, store, run_worker):
    game = create_open_game(http, "fivetowers", ["key", "invite"])
    joiner = generate_key()
    assert take(http, game, 1, joiner, "Bea")[0] == 202
    run_worker()
    projection = store.read_projection(game.game_id, with_verdicts=True)
    assert projection["seq"] == len(log_of(store, game.game_id)) and projection["accepted"] == [1]
    assert [v["status"] for v in projection["verdicts"]] == ["ok", "ok"]


# -- one take of a seat, whichever process answers ---------------------------------------------------------------
def test_fifty_concurrent_takes_of_one_seat_give_exactly_one_seat(app, make_app, server, store):
    """50 signed takes of one open seat, for the same log position, at once, through two server processes' apps
    (two caches of folds): exactly one 2xx, every other take 409 ``seat/taken``, one ``seated`` in the log."""
    other = make_app(REFEREE_QUEUE=app.config["REFEREE_QUEUE"])
    http = Http(requests, server)
    game = create_open_game(http, "fivetowers", ["key", "open"])
    seq, prev = tip(http, game.game_id)
    Http(requests, server).get(f"/games/{game.game_id}")
    bodies = [take_body(game.game_id, 1, generate_key(), f"racer {i}", (seq, prev)) for i in range(50)]
    with serving(other) as second:
        Http(requests, second).get(f"/games/{game.game_id}")  # both processes hold a fold at this position
        results = race([f"{base}/games/{game.game_id}/seat" for base in (server, second)], bodies)
    assert all(result is not None for result in results)
    winners = [i for i, (status, _body) in enumerate(results) if 200 <= status < 300]
    assert len(winners) == 1, results
    assert sorted({(status, body["error"]["code"]) for status, body in results if status >= 300}) == [
        (409, "seat/taken")]
    entries = log_of(store, game.game_id)
    seated = [entry for entry in entries if entry["type"] == "seated"]
    assert len(seated) == 1 and seated[0]["submission"] == bodies[winners[0]]


@pytest.mark.parametrize("kind", ["invite", "open"])
def test_a_retried_take_is_a_duplicate(http, kind):
    game = create_open_game(http, "towerup", ["key", kind])
    body = take_body(game.game_id, 1, generate_key(), "Bea", tip(http, game.game_id), invite=game.invites.get(1))
    assert http.post(f"/games/{game.game_id}/seat", body)[0] == 202
    status, error = http.post(f"/games/{game.game_id}/seat", body)
    assert status == 409 and error["error"]["code"] == "submission/duplicate"


def test_accepting_an_open_seat_is_refused(http):
    game = create_open_game(http, "fivetowers", ["key", "open"])
    played = PlayedGame(game.game_id, "fivetowers", [game.keys[0], generate_key()])
    with pytest.raises(AssertionError):
        accept_all(http, played)


def test_a_seat_taken_lists_the_game_among_the_keys_games_until_it_leaves(http):
    game = create_open_game(http, "fivetowers", ["key", "open"])
    joiner = generate_key()
    key = public_key_b64(joiner)
    assert http.get(f"/players/{key}/games")[1]["games"] == []
    assert take(http, game, 1, joiner, "Jo")[0] == 202
    rows = http.get(f"/players/{key}/games")[1]["games"]
    assert [(row["game"], row["my_seats"], row["awaiting_acceptance"]) for row in rows] == [(game.game_id, [1], [])]
    assert leave(http, game.game_id, 1, joiner)[0] == 202
    assert http.get(f"/players/{key}/games")[1]["games"] == []


def test_precedence_of_a_takes_refusals(http, store):
    """CONTRACT section 6: 401 before 403 before 409 state before 409 stale."""
    game = create_open_game(http, "fivetowers", ["key", "invite", "open"])
    assert take(http, game, 1, generate_key(), "Bea")[0] == 202
    stale = (1, "0" * 64)
    joiner = generate_key()
    unsigned = take_body(game.game_id, 1, joiner, "Cy", stale)  # stale, taken, and without its invitation
    status, error = http.post(f"/games/{game.game_id}/seat", unsigned)
    assert (status, error["error"]["code"]) == (403, "seat/bad_invite")
    unsigned["sig"] = sign(generate_key(), unsigned["envelope"])
    status, error = http.post(f"/games/{game.game_id}/seat", unsigned)
    assert (status, error["error"]["code"]) == (401, "submission/bad_signature")
    invited = take_body(game.game_id, 1, joiner, "Cy", stale, invite=game.invites[1])
    status, error = http.post(f"/games/{game.game_id}/seat", invited)
    assert (status, error["error"]["code"]) == (409, "seat/taken")
    status, error = http.post(f"/games/{game.game_id}/seat", take_body(game.game_id, 2, joiner, "Cy", stale))
    assert (status, error["error"]["code"]) == (409, "submission/stale")
    assert error["error"]["details"]["seq"] == len(log_of(store, game.game_id))


def test_an_invitation_lapses_with_the_games_accept_by(make_app):
    import time

    app = make_app(REFEREE_ACCEPT_WITHIN=1)
    http = Http(app.test_client())
    game = create_open_game(http, "fivetowers", ["key", "invite"])
    body = take_body(game.game_id, 1, generate_key(), "Bea", tip(http, game.game_id), invite=game.invites[1])
    time.sleep(1.2)
    status, error = http.post(f"/games/{game.game_id}/seat", body)
    assert (status, error["error"]["code"]) == (409, "game/expired"), error
    assert [e["type"] for e in app.extensions["referee.store"].read_log(game.game_id)] == ["created"]
