"""Open seats are re-checked offline (CONTRACT section 14): who took each seat is a signed ``seated`` entry, and a
forged or altered one fails at its position; every later submission of a seat is checked against the key that
took it; the creator's signed request (which declared the seats open) and its cancel are checked too.

The games are played through the real API (an in-memory app): ``POST /games`` with ``creator``, ``/seat``,
``/leave``, ``/accept``, ``/moves``, ``/cancel``, then ``/export``. The forger is the referee itself (it holds the
referee key, re-seals the chain and re-signs the bundle): what it cannot forge are the joiners', the invitations'
and the creator's signatures.
"""

from __future__ import annotations

import copy
import json
import random

import pytest
from gamelogs import reseal

from referee.app import create_app
from referee.protocol.signing import (
    ACCEPT_CTX,
    CANCEL_CTX,
    CREATE_CTX,
    LEAVE_CTX,
    MOVE_CTX,
    SEAT_CTX,
    b64url_encode,
    generate_key,
    public_key_b64,
    sign,
)
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle


class Api:
    def __init__(self, client):
        self.client = client

    def post(self, path, body, expect=202):
        response = self.client.post(path, data=json.dumps(body), content_type="application/json")
        assert response.status_code == expect, response.get_json()
        return response.get_json()

    def get(self, path):
        response = self.client.get(path)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def envelope(self, game, ctx, **fields):
        state = self.get(f"/games/{game}")
        return {"v": 1, "ctx": ctx, "game": game, "seq": state["seq"], "prev": state["head"], **fields}


def entropy(rng):
    return b64url_encode(bytes(rng.randrange(256) for _ in range(32)))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A 3-seat 5 Towers game: seat 0 given to a key, seat 1 by invitation, seat 2 open (taken, left, taken again),
    played to its end; and a second game cancelled by its creator. Their bundles and keys."""
    app = create_app({"REFEREE_STORE": "memory", "TESTING": True,
                      "REFEREE_KEY_FILE": str(tmp_path_factory.mktemp("seats") / "referee-key")})
    api, rng = Api(app.test_client()), random.Random(36)
    creator, owner, invite, invited, passer, opener = (generate_key() for _ in range(6))
    body = {"ruleset": "fivetowers", "seats": [{"name": "Owner", "key": public_key_b64(owner)},
                                               {"invite": public_key_b64(invite)}, {"open": True}]}
    game = api.post("/games", {**body, "creator": {"key": public_key_b64(creator),
                                                   "sig": sign(creator, {"v": 1, "ctx": CREATE_CTX, **body})}},
                    expect=201)["game"]
    envelope = api.envelope(game, SEAT_CTX, seat=2, key=public_key_b64(passer), name="Passer", entropy=entropy(rng))
    api.post(f"/games/{game}/seat", {"envelope": envelope, "sig": sign(passer, envelope)})
    envelope = api.envelope(game, LEAVE_CTX, seat=2)
    api.post(f"/games/{game}/leave", {"envelope": envelope, "sig": sign(passer, envelope)})
    envelope = api.envelope(game, ACCEPT_CTX, seat=0, entropy=entropy(rng))
    api.post(f"/games/{game}/accept", {"envelope": envelope, "sig": sign(owner, envelope)})
    envelope = api.envelope(game, SEAT_CTX, seat=1, key=public_key_b64(invited), name="Invited", entropy=entropy(rng))
    api.post(f"/games/{game}/seat", {"envelope": envelope, "sig": sign(invited, envelope),
                                     "invite_sig": sign(invite, envelope)})
    envelope = api.envelope(game, SEAT_CTX, seat=2, key=public_key_b64(opener), name="Opener", entropy=entropy(rng))
    api.post(f"/games/{game}/seat", {"envelope": envelope, "sig": sign(opener, envelope)})
    holders = [owner, invited, opener]
    for _ in range(2000):
        legal = api.get(f"/games/{game}/legal-moves")
        if legal["to_move"] is None:
            break
        seat = legal["to_move"]
        envelope = api.envelope(game, MOVE_CTX, seat=seat, move=rng.choice(legal["moves"]))
        api.post(f"/games/{game}/moves", {"envelope": envelope, "sig": sign(holders[seat], envelope)})
    bundle = api.get(f"/games/{game}/export")

    cancel_body = {"ruleset": "towerup", "seats": [{"name": "Owner", "key": public_key_b64(owner)}, {"open": True}]}
    cancelled = api.post("/games", {**cancel_body, "creator": {"key": public_key_b64(creator), "sig": sign(
        creator, {"v": 1, "ctx": CREATE_CTX, **cancel_body})}}, expect=201)["game"]
    envelope = api.envelope(cancelled, CANCEL_CTX)
    api.post(f"/games/{cancelled}/cancel", {"envelope": envelope, "sig": sign(creator, envelope)})
    return {"bundle": bundle, "cancelled": api.get(f"/games/{cancelled}/export"), "holders": holders,
            "invite": invite, "passer": passer}


def log_of(played, which="bundle"):
    return copy.deepcopy(played[which]["log"])


def positions(entries, kind, seat=None):
    return [i for i, e in enumerate(entries) if e["type"] == kind and (seat is None or e.get("seat") == seat)]


def first_failure(entries, referee_key):
    report = verify_bundle(build_bundle(reseal(entries), referee_key))
    first = report.first_failure
    assert first is not None and not report.ok, report.to_dict()
    return first.name, first.position, report


def test_a_game_with_open_seats_verifies(played):
    report = verify_bundle(played["bundle"])
    assert report.ok, report.to_dict()
    entries = played["bundle"]["log"]
    assert [e["type"] for e in entries[:7]] == ["created", "seated", "left", "accepted", "seated", "seated", "started"]
    assert "created by creator" in report.check("organiser_signature").reason
    assert report.check("seat_signatures").status == "passed"
    cancelled = verify_bundle(played["cancelled"])
    assert cancelled.ok and [e["type"] for e in played["cancelled"]["log"]] == ["created", "cancelled", "revealed"]


def test_an_invite_seat_whose_key_is_swapped_fails_at_its_seated_entry(played, referee_key):
    entries = log_of(played)
    p = positions(entries, "seated", 1)[0]
    forger = generate_key()
    submission = entries[p]["submission"]
    submission["envelope"]["key"] = public_key_b64(forger)
    submission["sig"] = sign(forger, submission["envelope"])  # the forger signs, but holds no invitation
    name, position, report = first_failure(entries, referee_key)
    assert (name, position) == ("seat_signatures", p)
    assert report.check("seat_signatures").details["failures"][0]["code"] == "seat/bad_invite"
    assert report.check("replay").position == p


def test_an_open_seat_whose_key_is_swapped_fails_at_its_seated_entry(played, referee_key):
    entries = log_of(played)
    p = positions(entries, "seated", 2)[-1]
    entries[p]["submission"]["envelope"]["key"] = public_key_b64(generate_key())
    name, position, report = first_failure(entries, referee_key)
    assert (name, position) == ("seat_signatures", p)
    assert report.check("seat_signatures").details["failures"][0]["code"] == "submission/bad_signature"


def test_a_re_signed_take_of_an_open_seat_breaks_the_next_submission(played, referee_key):
    """Anyone may take an open seat, so a forger may sign a take of its own; but every later submission is bound
    to the hash of the entry before it: the first of them fails."""
    entries = log_of(played)
    p = positions(entries, "seated", 2)[-1]
    forger = generate_key()
    submission = entries[p]["submission"]
    submission["envelope"]["key"] = public_key_b64(forger)
    submission["sig"] = sign(forger, submission["envelope"])
    name, position, report = first_failure(entries, referee_key)
    assert (name, position) == ("seat_signatures", positions(entries, "move")[0])
    assert report.check("seat_signatures").details["failures"][0]["code"] == "submission/stale"


def test_a_move_signed_by_the_key_that_left_the_seat_fails(played, referee_key):
    """Seat 2 was taken, left, and taken by another key: a move of seat 2 signed by the key that left it (bound to
    the right position) is not the seat's."""
    entries = log_of(played)
    p = positions(entries, "move", 2)[0]
    move = entries[p]
    passer = entries[positions(entries, "left")[0]]["seat"]
    assert passer == 2
    truncated = entries[:p]
    first_holder = entries[positions(entries, "seated", 2)[0]]["submission"]["envelope"]["key"]
    assert first_holder != public_key_b64(played["holders"][2])
    forged = copy.deepcopy(move)
    forged["submission"]["sig"] = sign(played["passer"], forged["submission"]["envelope"])
    name, position, report = first_failure([*truncated, forged], referee_key)
    assert (name, position) == ("seat_signatures", p)
    assert report.check("seat_signatures").details["failures"][0]["code"] == "submission/bad_signature"
    honest = verify_bundle(build_bundle(reseal([*truncated, move]), referee_key))
    assert honest.check("seat_signatures").status == "passed"


def test_a_seated_entry_for_a_seat_given_to_a_key_fails(played, referee_key):
    entries = log_of(played)
    p = positions(entries, "seated", 2)[-1]
    submission = entries[p]["submission"]
    entries[p]["seat"] = submission["envelope"]["seat"] = 0
    submission["sig"] = sign(played["holders"][2], submission["envelope"])
    name, position, report = first_failure(entries, referee_key)
    assert (name, position) == ("seat_signatures", p)
    assert report.check("seat_signatures").details["failures"][0]["code"] == "seat/taken"


def test_a_left_entry_not_signed_by_the_holder_fails(played, referee_key):
    entries = log_of(played)
    p = positions(entries, "left")[0]
    entries[p]["submission"]["sig"] = sign(generate_key(), entries[p]["submission"]["envelope"])
    assert first_failure(entries, referee_key)[:2] == ("seat_signatures", p)


def test_open_seats_need_the_creators_signature(played, referee_key):
    entries = log_of(played)
    del entries[0]["creator"], entries[0]["creator_sig"]  # the referee says it declared the seats open itself
    name, position, report = first_failure(entries, referee_key)
    assert (name, position) == ("organiser_signature", 0) and "open" in report.check("organiser_signature").reason
    entries = log_of(played)
    entries[0]["seats"][1]["invite"] = public_key_b64(generate_key())  # another invitation than the creator's
    assert first_failure(entries, referee_key)[:2] == ("organiser_signature", 0)


def test_a_cancel_not_signed_by_the_creator_fails(played, referee_key):
    entries = log_of(played, "cancelled")
    entries[1]["submission"]["sig"] = sign(played["holders"][0], entries[1]["submission"]["envelope"])
    name, position, report = first_failure(entries, referee_key)
    assert (name, position) == ("seat_signatures", 1) and report.check("replay").position == 1
