"""One written form for a key, a signature and entropy (issue 37, item 3): base64url without padding, the
unused low bits of its last character zero. ``sig + "="``, ``sig + "=="`` or a set unused bit decode to the
same bytes; the duplicate checks compare signatures as text, so each such form was a new signature to them
(a stranger re-posted a seat's public message as new, a replayed contact request got a second webhook
secret). Each is refused now with a 400 that names the field, and the store holds one copy."""

from __future__ import annotations

import base64

import pytest
from svc_helpers import accept_all, create_game, signed

from referee.clock import now
from referee.protocol.signing import (
    ACCEPT_CTX,
    MESSAGE_CTX,
    b64url_decode,
    b64url_encode,
    generate_key,
    public_key_b64,
    sign,
)
from referee.store.messages import messages_of

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def unused_bit_set(text: str) -> str:
    """``text`` with the lowest (unused) bit of its last character set: the same bytes, written differently."""
    return text[:-1] + ALPHABET[ALPHABET.index(text[-1]) | 1]


def other_forms(text: str) -> list[str]:
    return [text + "=", text + "==", unused_bit_set(text)]


def problems(body) -> list[str]:
    return [p["path"] for p in body["error"]["details"]["problems"]]


def test_the_other_forms_are_the_same_bytes_and_refused():
    for length in (32, 64):
        text = b64url_encode(bytes(range(length)))
        for other in other_forms(text):
            assert other != text and base64.urlsafe_b64decode(other + "==") == bytes(range(length))
            with pytest.raises(ValueError, match="base64url"):
                b64url_decode(other)
        assert b64url_decode(text) == bytes(range(length))


@pytest.fixture
def game(http):
    played = create_game(http, "fivetowers", 2)
    accept_all(http, played)
    return played


@pytest.mark.parametrize("form", range(3))
def test_a_public_message_reposted_in_another_form_is_refused(http, game, store, form):
    envelope = {"v": 1, "ctx": MESSAGE_CTX, "game": game.game_id, "seat": 0, "text": "good game", "to": None,
                "at": now()}
    message = signed(game.keys[0], envelope)
    assert http.post(f"/games/{game.game_id}/messages", message)[0] == 201
    status, body = http.post(f"/games/{game.game_id}/messages",
                             {**message, "sig": other_forms(message["sig"])[form]})
    assert status == 400, body
    assert problems(body) == ["$.sig"]
    assert len(messages_of(store).read(game.game_id)) == 1


def signed_contact(key, **fields):
    envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key), **fields, "at": now()}
    return {"envelope": envelope, "sig": sign(key, envelope)}


def test_a_contact_request_replayed_in_another_form_gets_no_second_secret(http, server):
    key = generate_key()
    request = signed_contact(key, webhook=server + "/health", events=["turn"])
    status, first = http.post("/contacts", request)
    assert status == 201 and first["secret"].startswith("whsec_"), first
    for other in other_forms(request["sig"]):
        status, body = http.post("/contacts", {**request, "sig": other})
        assert status == 400, body
        assert problems(body) == ["$.sig"]


def test_a_key_in_another_form_is_refused_where_it_is_named(http):
    key = generate_key()
    for other in other_forms(public_key_b64(key)):
        envelope = {"v": 1, "ctx": "referee/contact", "key": other, "email": "p@example.org", "at": now()}
        status, body = http.post("/contacts", {"envelope": envelope, "sig": sign(key, envelope)})
        assert status == 400, body
        assert problems(body) == ["$.envelope.key"]
        status, body = http.post("/games", {"ruleset": "fivetowers", "seats": [
            {"name": "a", "key": other}, {"name": "b", "key": public_key_b64(generate_key())}]})
        assert status == 400, body
        assert problems(body) == ["$.seats[0].key"]
        status, body = http.get(f"/players/{other}/games")
        assert status == 400 and body["error"]["code"] == "player/bad_key", body


def test_entropy_in_another_form_is_refused(http):
    game = create_game(http, "fivetowers", 2)
    _status, state = http.get(f"/games/{game.game_id}")
    for other in other_forms(b64url_encode(bytes(32))):
        envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game.game_id, "seat": 0, "seq": state["seq"],
                    "prev": state["head"], "entropy": other}
        status, body = http.post(f"/games/{game.game_id}/accept", signed(game.keys[0], envelope))
        assert status == 400, body
        assert problems(body) == ["$.envelope.entropy"]
