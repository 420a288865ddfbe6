"""Security and bad input: every refusal is a clear 4xx naming the problem, and leaves the log exactly
as it was (checked against the store after each request)."""

from __future__ import annotations

import json

import pytest
from ports import free_port
from svc_helpers import Http, accept_all, create_game, move_envelope, random_entropy, signed

from referee.protocol.signing import generate_key, public_key_b64, sign


@pytest.fixture
def active(http, store):
    """An active 2-player 5 Towers game: (game, its current legal-moves document)."""
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    return game, legal


@pytest.fixture
def unchanged(store):
    """``with unchanged(game_id): ...`` asserts the game's log is byte-for-byte the same afterwards."""
    from contextlib import contextmanager

    @contextmanager
    def check(*game_ids):
        before = {g: store.read_log(g) for g in game_ids}
        tips = {g: store.tip(g) for g in game_ids}
        yield
        for g in game_ids:
            assert store.read_log(g) == before[g]
            assert store.tip(g) == tips[g]

    return check


def good_move(game, legal, **extra):
    seat = legal["to_move"]
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], {"type": "bid", "amount": 1}, **extra)
    return seat, envelope


def post_move(http, game_id, body=None, data=None):
    return http.post(f"/games/{game_id}/moves", body, data=data)


def test_forged_signature(http, active, unchanged):
    game, legal = active
    _seat, envelope = good_move(game, legal)
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(generate_key(), envelope))
    assert status == 401 and body["error"]["code"] == "submission/bad_signature"
    tampered = signed(game.keys[0], envelope)
    tampered["envelope"] = {**envelope, "move": {"type": "bid", "amount": 2}}
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, tampered)
    assert status == 401 and body["error"]["code"] == "submission/bad_signature"


def test_good_signature_by_another_seats_key(http, active, unchanged):
    game, legal = active
    seat, envelope = good_move(game, legal)
    other = 1 - seat
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(game.keys[other], envelope))
    assert status == 403 and body["error"]["code"] == "submission/wrong_key"
    assert body["error"]["details"] == {"seat": seat, "signed_by": other}


def test_seat_not_on_turn(http, active, unchanged):
    game, legal = active
    seat = legal["to_move"]
    other = 1 - seat
    envelope = move_envelope(game.game_id, other, legal["seq"], legal["head"], {"type": "pass"})
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(game.keys[other], envelope))
    assert status == 403 and body["error"]["code"] == "move/not_your_turn"
    assert body["error"]["details"] == {"to_move": seat}


def test_seat_that_does_not_exist(http, active, unchanged):
    game, legal = active
    envelope = move_envelope(game.game_id, 7, legal["seq"], legal["head"], {"type": "pass"})
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(game.keys[0], envelope))
    assert status == 403 and body["error"]["code"] == "submission/wrong_seat"


def test_move_replayed_into_another_game(http, active, unchanged):
    game, legal = active
    twin = create_game(http, "fivetowers", 2, keys=game.keys)  # same players, same keys
    accept_all(http, twin)
    seat, envelope = good_move(game, legal)
    submission = signed(game.keys[seat], envelope)
    with unchanged(game.game_id, twin.game_id):
        status, body = post_move(http, twin.game_id, submission)
    assert status == 403 and body["error"]["code"] == "submission/wrong_game"
    # re-pointing the envelope at the other game breaks the signature
    moved = {"envelope": {**envelope, "game": twin.game_id}, "sig": submission["sig"]}
    with unchanged(game.game_id, twin.game_id):
        status, body = post_move(http, twin.game_id, moved)
    assert status == 401 and body["error"]["code"] == "submission/bad_signature"


def test_stale_seq_and_prev(http, store, active, unchanged):
    game, legal = active
    seat, envelope = good_move(game, legal)
    old = {**envelope, "seq": legal["seq"] - 1}
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(game.keys[seat], old))
    assert status == 409 and body["error"]["code"] == "submission/stale"
    assert body["error"]["details"] == {"seq": legal["seq"], "head": legal["head"]}
    assert body["error"]["message"] == (f"stale seq: the envelope is for seq {legal['seq'] - 1}, but the log is at "
                                        f"seq {legal['seq']} with head {legal['head']}")
    wrong_prev = {**envelope, "prev": "ab" * 32}
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(game.keys[seat], wrong_prev))
    assert status == 409 and body["error"]["code"] == "submission/stale"
    # seq matches: the message says prev is stale (not "for seq 12 but the log is at seq 12") and agrees with details
    assert body["error"]["details"] == {"seq": legal["seq"], "head": legal["head"]}
    assert body["error"]["message"] == (f"stale prev: the envelope's prev {'ab' * 32} is not the log's head; "
                                        f"the log is at seq {legal['seq']} with head {legal['head']}")


def test_the_same_submission_twice_is_logged_once(http, store, active):
    game, legal = active
    seat, envelope = good_move(game, legal)
    submission = signed(game.keys[seat], envelope)
    status, receipt = post_move(http, game.game_id, submission)
    assert status == 202
    before = store.read_log(game.game_id)
    status, body = post_move(http, game.game_id, submission)
    assert status == 409 and body["error"]["code"] == "submission/duplicate"
    assert body["error"]["details"]["position"] == receipt["position"]
    assert store.read_log(game.game_id) == before


def test_illegal_move_names_its_rule(http, active, unchanged):
    game, legal = active
    seat = legal["to_move"]
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], {"type": "bid", "amount": 99})
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(game.keys[seat], envelope))
    assert status == 422
    assert body["error"]["code"] == "bid/out_of_range" and body["error"]["rule"] == "FT-R1"
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], {"type": "fly"})
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(game.keys[seat], envelope))
    assert status == 422 and body["error"]["code"]


@pytest.mark.parametrize(("raw", "path", "problem"), [
    (b'{"envelope": {"v": 1,', "$", "not valid JSON"),
    (b"\xff\xfe not utf-8", "$", "the body is not UTF-8"),
    (b"", "$", "empty"),
    (b'{"envelope": {"v": 1.0}, "sig": "x"}', "$.envelope.v", "floats are not allowed"),
    (b'{"envelope": {}, "sig": "a", "sig": "b"}', "$", "duplicate key 'sig'"),
    (b'{"envelope": {"seq": 9007199254740993}, "sig": "x"}', "$.envelope.seq", "integer outside"),
    (b'{"envelope": {"v": NaN}, "sig": "x"}', "$", "not valid JSON"),
    (b"[1, 2]", "$", "Invalid input type"),
])
def test_malformed_bodies(http, active, unchanged, raw, path, problem):  # noqa: PLR0917 - parametrised
    game, _legal = active
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, data=raw)
    assert status == 400 and body["error"]["code"] == "request/invalid"
    problems = body["error"]["details"]["problems"]
    assert any(p["path"] == path and problem in p["problem"] for p in problems), problems


def test_every_bad_field_is_listed(http, active, unchanged):
    game, _legal = active
    body = {"envelope": {"v": 2, "ctx": "referee/accept", "game": "no{pe}", "seat": True, "seq": "3",
                         "prev": "XYZ", "move": [], "colour": "red"},
            "sig": "!!", "extra": 1}
    with unchanged(game.game_id):
        status, reply = post_move(http, game.game_id, body)
    assert status == 400
    paths = {p["path"] for p in reply["error"]["details"]["problems"]}
    assert paths >= {"$.envelope.v", "$.envelope.ctx", "$.envelope.game", "$.envelope.seat", "$.envelope.seq",
                     "$.envelope.prev", "$.envelope.move", "$.envelope.colour", "$.sig", "$.extra"}


def test_floats_anywhere_are_refused_before_the_signature(http, active, unchanged):
    game, legal = active
    seat, envelope = good_move(game, legal)
    raw = json.dumps(signed(game.keys[seat], envelope)).replace('"amount": 1', '"amount": 1.0').encode()
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, data=raw)
    assert status == 400
    assert body["error"]["details"]["problems"] == [{"path": "$.envelope.move.amount",
                                                     "problem": "floats are not allowed"}]


def test_two_megabyte_body(http, active, unchanged, app):
    game, _legal = active
    raw = b'{"envelope": {"pad": "' + b"x" * (2 * 1024 * 1024) + b'"}}'
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, data=raw)
    assert status == 413 and body["error"]["code"] == "request/too_large"
    assert body["error"]["details"]["limit"] == app.config["REFEREE_MAX_BODY"]


def test_unknown_game(http, active):
    game, legal = active
    seat, envelope = good_move(game, legal)
    status, body = post_move(http, "g_doesnotexist", signed(game.keys[seat], {**envelope, "game": "g_doesnotexist"}))
    assert status == 404 and body["error"]["code"] == "game/not_found"
    for game_id in ("g_doesnotexist", "bad{id}", "x" * 100):
        status, body = post_move(http, game_id, signed(game.keys[seat], envelope))
        assert status == 404, body
        assert http.get(f"/games/{game_id}")[0] == 404
        assert http.get(f"/games/{game_id}/log")[0] == 404
        assert http.get(f"/games/{game_id}/replay")[0] == 404
        assert http.get(f"/games/{game_id}/result")[0] == 404
        assert http.get(f"/games/{game_id}/legal-moves")[0] == 404
    status, body = http.get("/games/g_doesnotexist")
    assert body["error"]["code"] == "game/not_found"


def test_moves_before_the_start_and_after_the_end(http, store, unchanged):
    game = create_game(http, "fivetowers", 2)
    _status, state = http.get(f"/games/{game.game_id}")
    envelope = move_envelope(game.game_id, 0, state["seq"], state["head"], {"type": "bid", "amount": 1})
    with unchanged(game.game_id):
        status, body = post_move(http, game.game_id, signed(game.keys[0], envelope))
    assert status == 409 and body["error"]["code"] == "game/not_active"
    assert http.get(f"/games/{game.game_id}/result")[1]["error"]["code"] == "game/not_finished"


def acceptance(http, game, seat, key, **changes):
    _status, state = http.get(f"/games/{game.game_id}")
    envelope = {"v": 1, "ctx": "referee/accept", "game": game.game_id, "seat": seat, "seq": state["seq"],
                "prev": state["head"], "entropy": random_entropy(), **changes}
    return signed(key, envelope)


def test_acceptance_errors(http, store, unchanged):
    game = create_game(http, "fivetowers", 2)
    url = f"/games/{game.game_id}/accept"
    with unchanged(game.game_id):
        status, body = http.post(url, acceptance(http, game, 0, game.keys[0], entropy="AAAA"))
        assert status == 400 and body["error"]["details"]["problems"][0]["path"] == "$.envelope.entropy"
        status, body = http.post(url, acceptance(http, game, 0, game.keys[1]))
        assert status == 403 and body["error"]["code"] == "submission/wrong_key"
        status, body = http.post(url, acceptance(http, game, 0, game.keys[0], ctx="referee/move"))
        assert status == 400 and body["error"]["details"]["problems"][0]["path"] == "$.envelope.ctx"
    assert http.post(url, acceptance(http, game, 0, game.keys[0]))[0] == 202
    with unchanged(game.game_id):
        status, body = http.post(url, acceptance(http, game, 0, game.keys[0]))
        assert status == 409 and body["error"]["code"] == "accept/duplicate"
    recorded = create_game(http, "fivetowers", 2, deck=_deck())
    with unchanged(recorded.game_id):
        status, body = http.post(f"/games/{recorded.game_id}/accept", acceptance(http, recorded, 0, recorded.keys[0]))
        assert status == 409 and body["error"]["code"] == "game/not_waiting"


def _deck():
    from referee.games import ruleset

    return [c["id"] for c in ruleset("fivetowers").components()["cards"] if c["min_players"] <= 2]


def test_bad_game_creation(http, store):
    key = public_key_b64(generate_key())
    two = [{"name": "a", "key": key}, {"name": "b", "key": key}]  # names differ (CONTRACT section 11)
    cases = [
        ({"ruleset": "chess", "seats": two}, "$.ruleset"),
        ({"ruleset": "fivetowers", "seats": [{"name": "a", "key": key}]}, "$.seats"),
        ({"ruleset": "fivetowers", "seats": [{"name": "a", "key": "short"}] * 2}, "$.seats[0].key"),
        ({"ruleset": "fivetowers", "seats": two, "options": {"speed": 3}}, "$.options"),
        ({"ruleset": "towerup", "seats": two, "deck": ["c01"]}, "$.deck"),
        ({"ruleset": "fivetowers", "seats": two, "colour": "red"}, "$.colour"),
    ]
    for body, path in cases:
        status, reply = http.post("/games", body)
        assert status == 400, (body, reply)
        assert path in {p["path"] for p in reply["error"]["details"]["problems"]}, reply
    assert store.list_games() == []


def test_organiser_keys(make_app):
    organiser, stranger = generate_key(), generate_key()
    app = make_app(REFEREE_ORGANISER_KEYS=public_key_b64(organiser))
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    spec = {"ruleset": "fivetowers", "seats": [{"name": n, "key": public_key_b64(generate_key())} for n in "ab"]}
    status, body = http.post("/games", spec)
    assert status == 401 and body["error"]["code"] == "organiser/required"
    by_stranger = {**spec, "organiser": {"key": public_key_b64(stranger),
                                         "sig": sign(stranger, {"v": 1, "ctx": "referee/create", **spec})}}
    status, body = http.post("/games", by_stranger)
    assert status == 403 and body["error"]["code"] == "organiser/not_allowed"
    forged = {**spec, "organiser": {"key": public_key_b64(organiser), "sig": by_stranger["organiser"]["sig"]}}
    status, body = http.post("/games", forged)
    assert status == 401 and body["error"]["code"] == "organiser/bad_signature"
    assert store.list_games() == []
    good = {**spec, "organiser": {"key": public_key_b64(organiser),
                                  "sig": sign(organiser, {"v": 1, "ctx": "referee/create", **spec})}}
    status, created = http.post("/games", good)
    assert status == 201
    entry = store.read_log(created["game"])[0]
    assert entry["organiser"] == public_key_b64(organiser) and entry["organiser_sig"] == good["organiser"]["sig"]
    status, body = http.post("/games", good)  # the same signed request again: no second game
    assert status == 409 and body["error"]["details"]["game"] == created["game"]
    assert store.list_games() == [created["game"]]


def test_redis_down_is_503(make_app):
    app = make_app(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    http = Http(app.test_client())
    key = public_key_b64(generate_key())
    seats = [{"name": "a", "key": key}, {"name": "b", "key": key}]
    status, body = http.post("/games", {"ruleset": "fivetowers", "seats": seats})
    assert status == 503 and body["error"]["code"] == "log/unavailable"
    status, body = http.get("/games/g_whatever")
    assert status == 503 and body["error"]["code"] == "store/unavailable"
    assert http.get("/health")[0] == 503


@pytest.mark.parametrize("which", ["seat not on turn", "illegal move"])
def test_precedence_does_not_depend_on_which_process_answers(make_app, which):
    """Issue 26, item 3: two web processes over one log; the first folded the game (and cached the fold)
    before the second took a move. A stale envelope that is also from the seat not on turn, or also
    illegal, is 409 ``submission/stale`` from both (section 6), never 403/422 from the one that is behind."""
    behind, current = make_app(), make_app()
    http_behind, http_current = Http(behind.test_client()), Http(current.test_client())
    game = create_game(http_behind, "fivetowers", 2)
    accept_all(http_behind, game)  # ``behind`` caches the fold at the start
    _status, old = http_behind.get(f"/games/{game.game_id}/legal-moves")
    on_turn = old["to_move"]
    status, _receipt = post_move(http_current, game.game_id, signed(game.keys[on_turn], move_envelope(
        game.game_id, on_turn, old["seq"], old["head"], old["moves"][0])))
    assert status == 202
    if which == "seat not on turn":
        seat, move = 1 - on_turn, old["moves"][0]
    else:
        seat, move = on_turn, {"type": "bid", "amount": 10_000}
    late = signed(game.keys[seat], move_envelope(game.game_id, seat, old["seq"], old["head"], move))
    answers = {name: post_move(http, game.game_id, late) for name, http in
               (("behind", http_behind), ("current", http_current))}
    assert {name: (status, body["error"]["code"]) for name, (status, body) in answers.items()} == {
        "behind": (409, "submission/stale"), "current": (409, "submission/stale")}, answers
