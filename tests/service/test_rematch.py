"""Rematch (CONTRACT section 14, issue 36 item 4): ``POST /games/{id}/rematch`` with a seat's signed ask on a finished
game makes one new game — same ruleset, options, clock and keys, the seats rotated by one, ``rematch_of`` in its
``created`` — whichever seat asks and however often; the verifier checks what a bundle alone can of it."""

from __future__ import annotations

import requests
from live_server import serving
from svc_helpers import Http, create_game, signed
from test_archive import _resigned
from test_concurrency import race

from referee.clock import now
from referee.protocol.signing import generate_key, public_key_b64
from referee.rulings.rematch import REMATCH_CTX, rematch_game_id
from referee.verify import verify_bundle


def ask(played, seat: int, key=None, **changes) -> dict:
    envelope = {"v": 1, "ctx": REMATCH_CTX, "game": played.game_id, "seat": seat, "at": now(), **changes}
    return signed(key or played.keys[seat], envelope)


def test_a_rematch_is_one_new_game_with_the_seats_rotated_whichever_seat_asks(http, store):
    game = _resigned(http)
    old = http.get(f"/games/{game.game_id}")[1]
    assert old["rematch"] is None
    status, first = http.post(f"/games/{game.game_id}/rematch", ask(game, 0))
    assert status == 201, first
    assert http.get(f"/games/{game.game_id}")[1]["rematch"] == first["game"]  # the finished game's page links it
    assert http.get(f"/games/{first['game']}")[1]["rematch_of"] == {"game": game.game_id, "head": old["head"]}
    assert first["rematch_of"] == {"game": game.game_id, "head": old["head"]}
    assert first["game"] == rematch_game_id(game.game_id, old["head"]) and first["status"] == "waiting"
    created = store.read_log(first["game"], 0, 1)[0]
    assert created["rematch_of"] == first["rematch_of"] and created["rematch"]["envelope"]["seat"] == 0
    assert [seat["key"] for seat in created["seats"]] == [public_key_b64(game.keys[1]), public_key_b64(game.keys[0])]
    assert [seat["name"] for seat in created["seats"]] == [old["seats"][1]["name"], old["seats"][0]["name"]]
    assert created["ruleset"]["name"] == "towerup" and created["options"] == {}
    assert created.get("creator") is None and created.get("organiser") is None
    for seat in (1, 0):  # again, by either seat: the same game, 200
        status, again = http.post(f"/games/{game.game_id}/rematch", ask(game, seat))
        assert (status, again["game"], again["rematch_of"]) == (200, first["game"], first["rematch_of"]), again
    assert [g for g in store.live_games() if g == first["game"]] == [first["game"]]
    # the new game is played like any: its seats accept (seat 0 is the finished game's seat 1)
    state = http.get(f"/games/{first['game']}")[1]
    assert [s["key"] for s in state["seats"]] == [public_key_b64(game.keys[1]), public_key_b64(game.keys[0])]


def test_a_rematch_is_refused_before_the_end_and_to_anyone_but_a_seat(http):
    game = create_game(http, "towerup", 2)
    status, error = http.post(f"/games/{game.game_id}/rematch", ask(game, 0))
    assert status == 409 and error["error"]["code"] == "game/not_finished", error
    done = _resigned(http)
    status, error = http.post(f"/games/{done.game_id}/rematch", ask(done, 0, generate_key()))
    assert status == 401 and error["error"]["code"] == "submission/bad_signature"
    status, error = http.post(f"/games/{done.game_id}/rematch", ask(done, 5, done.keys[0]))
    assert status == 403 and error["error"]["code"] == "submission/wrong_seat"
    status, error = http.post(f"/games/{done.game_id}/rematch", ask(done, 0, game=game.game_id))
    assert status == 403 and error["error"]["code"] == "submission/wrong_game"
    status, error = http.post(f"/games/{done.game_id}/rematch", ask(done, 0, ctx="referee/move"))
    assert status == 400
    status, error = http.post("/games/g_nothing/rematch", ask(done, 0, game="g_nothing"))
    assert status == 404


def test_the_refusals_of_a_rematch_speak_german_and_french(app, http):
    game = create_game(http, "towerup", 2)
    for lang, words in (("de", "beendet"), ("fr", "terminée")):
        response = app.test_client().post(f"/games/{game.game_id}/rematch", json=ask(game, 0),
                                          headers={"Accept-Language": lang})
        assert response.status_code == 409
        assert words in response.get_json()["error"]["message"], response.get_json()


def test_both_seats_asking_at_once_through_two_servers_make_one_game(app, make_app, server, store):
    other = make_app(REFEREE_QUEUE=app.config["REFEREE_QUEUE"])
    http = Http(requests, server)
    for _round in range(3):
        game = _resigned(http)
        with serving(other) as second:
            results = race([f"{base}/games/{game.game_id}/rematch" for base in (server, second)],
                           [ask(game, 0), ask(game, 1), ask(game, 0), ask(game, 1)])
        assert sorted(status for status, _body in results) == [200, 200, 200, 201], results
        assert len({body["game"] for _status, body in results}) == 1
        rematch = results[0][1]["game"]
        assert [g for g in store.live_games() if g == rematch] == [rematch]
        assert [e["type"] for e in store.read_log(rematch)] == ["created"]


def test_the_verifier_checks_a_rematch_as_far_as_a_bundle_can(http):
    game = _resigned(http)
    rematch = http.post(f"/games/{game.game_id}/rematch", ask(game, 1))[1]["game"]
    bundle = http.get(f"/games/{rematch}/export")[1]

    def creation(bundle):
        return next(check for check in verify_bundle(bundle).checks if check.name == "organiser_signature")

    check = creation(bundle)
    assert check.status == "passed" and "rematch" in check.reason, check
    assert check.details["rematch_of"] == {"game": game.game_id, "head": http.get(f"/games/{game.game_id}")[1]["head"]}
    from referee.protocol.logchain import seal

    def tampered(**changes):
        entry = {k: v for k, v in bundle["log"][0].items() if k != "hash"}
        entry.update(changes)
        return {**bundle, "log": [seal(entry, "0" * 64), *bundle["log"][1:]]}

    of = bundle["log"][0]["rematch_of"]
    assert creation(tampered(rematch_of={**of, "head": "1" * 64})).status == "failed"  # another id than its own
    ask_ = bundle["log"][0]["rematch"]
    assert creation(tampered(rematch={**ask_, "sig": ask(game, 1)["sig"]})).status == "failed"  # a sig over other bytes
    stranger = ask(game, 1, generate_key())
    assert creation(tampered(rematch=stranger)).status == "failed"  # signed by no seat of the game


def test_with_the_finished_games_bundle_the_rematch_of_claim_is_checked(http):
    from referee.verify import check_rematch_of

    game = _resigned(http)
    rematch = http.post(f"/games/{game.game_id}/rematch", ask(game, 0))[1]["game"]
    new, old = http.get(f"/games/{rematch}/export")[1], http.get(f"/games/{game.game_id}/export")[1]
    assert check_rematch_of(new, old) is None
    other = http.get(f"/games/{_resigned(http).game_id}/export")[1]
    assert "last entry" in check_rematch_of(new, other)
    swapped = {**new, "log": [{**new["log"][0], "seats": list(reversed(new["log"][0]["seats"]))}, *new["log"][1:]]}
    assert "rotated" in check_rematch_of(swapped, old)


def test_a_rematch_played_to_its_end_verifies_and_rematches_again(http):
    from svc_helpers import PlayedGame, accept_all

    from referee.protocol.signing import RESIGN_CTX

    game = _resigned(http)
    rematch = http.post(f"/games/{game.game_id}/rematch", ask(game, 0))[1]["game"]
    played = PlayedGame(rematch, "towerup", [game.keys[1], game.keys[0]])  # the seats rotated
    accept_all(http, played)
    state = http.get(f"/games/{rematch}")[1]
    assert state["status"] == "active"
    envelope = {"v": 1, "ctx": RESIGN_CTX, "game": rematch, "seat": 1, "seq": state["seq"], "prev": state["head"]}
    assert http.post(f"/games/{rematch}/resign", signed(game.keys[0], envelope))[0] == 202
    report = verify_bundle(http.get(f"/games/{rematch}/export")[1])
    assert report.ok, report.to_dict()
    status, third = http.post(f"/games/{rematch}/rematch", ask(played, 1))  # a rematch of the rematch
    assert status == 201 and third["game"] not in (game.game_id, rematch)
