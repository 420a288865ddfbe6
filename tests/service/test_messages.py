"""Messages of a game (CONTRACT section 12, issue 22 item 3), against the real Redis: signed, public or to
chosen seats, in the game's own chained stream beside its log, answered with a receipt; private ones only to
a seat's signed read; per-seat mute; the text rules; the public ones in the bundle, checked by the verifier."""

from __future__ import annotations

import copy
import json
import urllib.parse

import pytest
from svc_helpers import accept_all, create_game, move_envelope, signed

from referee.clock import now
from referee.protocol.logchain import GENESIS, first_broken_link
from referee.protocol.signing import (
    MESSAGE_CTX,
    MESSAGE_RECEIPT_CTX,
    MESSAGES_READ_CTX,
    MUTE_CTX,
    public_key_b64,
    sign,
    verify,
)
from referee.store.messages import messages_of
from referee.verify import verify_bundle


def say(game, seat: int, text: str, to=None, **extra) -> dict:
    envelope = {"v": 1, "ctx": MESSAGE_CTX, "game": game.game_id, "seat": seat, "text": text, "to": to,
                "at": now(), **extra}
    return signed(game.keys[seat], envelope)


def read_as(http, game, seat: int | None) -> list[dict]:
    query = ""
    if seat is not None:
        key, at = public_key_b64(game.keys[seat]), now()
        sig = sign(game.keys[seat], {"v": 1, "ctx": MESSAGES_READ_CTX, "game": game.game_id, "key": key, "at": at})
        query = "?" + urllib.parse.urlencode({"key": key, "at": at, "sig": sig})
    status, body = http.get(f"/games/{game.game_id}/messages{query}")
    assert status == 200, body
    return body["messages"]


@pytest.fixture
def game(http):
    played = create_game(http, "fivetowers", 3)
    accept_all(http, played)
    return played


def test_a_message_between_a_moves_signing_and_its_posting_leaves_the_move_valid(http, game, app, store):
    status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat = legal["to_move"]
    move = signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][0]))
    status, receipt = http.post(f"/games/{game.game_id}/messages", say(game, 1, "good luck, all"))
    assert status == 201, receipt
    assert receipt["position"] == 0 and receipt["log_seq"] == legal["seq"]
    assert receipt["receipt"] == {"ctx": MESSAGE_RECEIPT_CTX, "game": game.game_id, "position": 0,
                                  "hash": receipt["hash"], "at": receipt["at"], "log_seq": legal["seq"]}
    assert verify(public_key_b64(app.extensions["referee.key"]), receipt["receipt"], receipt["receipt_sig"])
    status, answer = http.post(f"/games/{game.game_id}/moves", move)
    assert status == 202, answer
    assert store.tip(game.game_id).seq == legal["seq"] + 1  # the message is not in the log
    assert [m["text"] for m in read_as(http, game, None)] == ["good luck, all"]
    status, second = http.post(f"/games/{game.game_id}/messages", say(game, 0, "thanks"))
    assert status == 201 and second["position"] == 1 and second["log_seq"] == legal["seq"] + 1
    stored = messages_of(store).read(game.game_id)
    assert first_broken_link(stored) is None and stored[1]["prev"] == stored[0]["hash"]


def test_private_messages_reach_only_their_addressee_and_sender(http, game):
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "hello everyone"))[0] == 201
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "just for you, seat 1", to=[1]))[0] == 201
    public = ["hello everyone"]
    assert [m["text"] for m in read_as(http, game, None)] == public
    assert [m["text"] for m in read_as(http, game, 2)] == public
    assert [m["text"] for m in read_as(http, game, 1)] == [*public, "just for you, seat 1"]
    assert [m["text"] for m in read_as(http, game, 0)] == [*public, "just for you, seat 1"]
    status, body = http.get(f"/games/{game.game_id}/messages")
    assert status == 200 and body["length"] == 2 and body["reader"] is None


def test_a_message_that_comes_in_while_a_read_is_answered_is_in_the_next_read(http, game, app, monkeypatch):
    """A reader goes on from the ``length`` it was given (the page asks ``?since=length``): a message appended
    between the read of the messages and that of the length must not be counted in a length whose answer
    lacks it, or that reader never sees it (a phone missed a private message this way under load)."""
    service = app.extensions["referee.messages"]
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "first"))[0] == 201
    read = service.store.read
    between: list[dict] = []

    def read_while_another_comes(game_id: str, start: int = 0, count: int | None = None) -> list[dict]:
        rows = read(game_id, start, count)
        if not between:  # the next message lands after the read, before the answer is made
            between.append(service.post(game_id, say(game, 1, "in between", to=[0])))
        return rows

    monkeypatch.setattr(service.store, "read", read_while_another_comes)
    status, body = http.get(f"/games/{game.game_id}/messages")
    assert status == 200 and [m["text"] for m in body["messages"]] == ["first"]
    assert between and between[0]["position"] == 1
    assert body["length"] == 1, "the length counts a message this answer does not carry"
    monkeypatch.setattr(service.store, "read", read)
    key, at = public_key_b64(game.keys[0]), now()
    sig = sign(game.keys[0], {"v": 1, "ctx": MESSAGES_READ_CTX, "game": game.game_id, "key": key, "at": at})
    query = urllib.parse.urlencode({"since": body["length"], "key": key, "at": at, "sig": sig})
    status, after = http.get(f"/games/{game.game_id}/messages?{query}")
    assert status == 200 and [m["text"] for m in after["messages"]] == ["in between"] and after["length"] == 2


def test_a_signed_read_must_be_a_seats_fresh_and_whole(http, game):
    other = create_game(http, "fivetowers", 2)
    key, at = public_key_b64(other.keys[0]), now()
    sig = sign(other.keys[0], {"v": 1, "ctx": MESSAGES_READ_CTX, "game": game.game_id, "key": key, "at": at})
    query = urllib.parse.urlencode({"key": key, "at": at, "sig": sig})
    status, body = http.get(f"/games/{game.game_id}/messages?{query}")
    assert status == 403 and body["error"]["code"] == "messages/not_a_seat"
    key = public_key_b64(game.keys[0])
    query = urllib.parse.urlencode({"key": key, "at": at, "sig": sig})
    status, body = http.get(f"/games/{game.game_id}/messages?{query}")
    assert status == 401
    old = "2020-01-01T00:00:00.000Z"
    sig = sign(game.keys[0], {"v": 1, "ctx": MESSAGES_READ_CTX, "game": game.game_id, "key": key, "at": old})
    status, body = http.get(f"/games/{game.game_id}/messages?" + urllib.parse.urlencode({"key": key, "at": old,
                                                                                            "sig": sig}))
    assert status == 400 and body["error"]["code"] == "messages/stale_request"
    status, body = http.get(f"/games/{game.game_id}/messages?key={key}")
    assert status == 400 and {p["path"] for p in body["error"]["details"]["problems"]} == {"query.at", "query.sig"}
    assert http.get("/games/g_nosuchgame/messages")[0] == 404


def test_a_seat_mutes_another_for_itself(http, game):
    for seat, text, to in ((1, "from one", None), (2, "from two", None), (2, "two to zero", [0])):
        assert http.post(f"/games/{game.game_id}/messages", say(game, seat, text, to))[0] == 201
    mute = {"v": 1, "ctx": MUTE_CTX, "game": game.game_id, "seat": 0, "mute": [2], "at": now()}
    status, body = http.post(f"/games/{game.game_id}/messages/mute", signed(game.keys[0], mute))
    assert status == 200 and body == {"game": game.game_id, "seat": 0, "muted": [2]}
    assert [m["text"] for m in read_as(http, game, 0)] == ["from one"]
    assert [m["text"] for m in read_as(http, game, 1)] == ["from one", "from two"]  # only for seat 0
    assert len(read_as(http, game, None)) == 2
    status, body = http.post(f"/games/{game.game_id}/messages/mute", signed(game.keys[0], mute))
    assert status == 409 and body["error"]["code"] == "messages/stale_mute"  # the same request again
    itself = {**mute, "mute": [0], "at": now()}
    status, body = http.post(f"/games/{game.game_id}/messages/mute", signed(game.keys[0], itself))
    assert status == 400 and body["error"]["details"]["problems"][0]["path"] == "$.envelope.mute"
    forged = {**mute, "mute": [], "at": now()}
    status, body = http.post(f"/games/{game.game_id}/messages/mute", signed(game.keys[1], forged))
    assert status == 403 and body["error"]["code"] == "submission/wrong_key"


@pytest.mark.parametrize(("text", "problem"), [
    ("x" * 2001, "must have 1 to 2000 characters (has 2001)"),
    ("", "must have 1 to 2000 characters (has 0)"),
    ("bell\u0007", "control or format characters other than line feeds (found U+0007"),
    ("hidden\u202eevil", "found U+202E"),
    ("tab\there", "found U+0009"),
    ("e\u0301", "must be NFC-normalised"),
])
def test_text_rules_refuse_with_400_naming_the_problem_and_store_nothing(http, game, store, text, problem):
    status, body = http.post(f"/games/{game.game_id}/messages", say(game, 0, text))
    assert status == 400, body
    problems = body["error"]["details"]["problems"]
    assert problems[0]["path"] == "$.envelope.text" and problem in problems[0]["problem"]
    assert messages_of(store).read(game.game_id) == []


def test_the_longest_text_and_line_feeds_are_fine(http, game):
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "x" * 2000))[0] == 201
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "two\nlines"))[0] == 201


def test_refusals_name_the_problem(http, game, store):
    status, body = http.post(f"/games/{game.game_id}/messages", say(game, 0, "hi", to=[5]))
    assert status == 400 and body["error"]["details"]["problems"][0]["path"] == "$.envelope.to[0]"
    status, body = http.post(f"/games/{game.game_id}/messages", say(game, 0, "hi", to=[]))
    assert status == 400 and body["error"]["details"]["problems"][0]["path"] == "$.envelope.to"
    wrong = say(game, 0, "hi")
    wrong["sig"] = say(game, 1, "hi")["sig"]
    assert http.post(f"/games/{game.game_id}/messages", wrong)[0] in (401, 403)
    forged = say(game, 1, "I resign")
    forged["sig"] = sign(game.keys[0], forged["envelope"])
    status, body = http.post(f"/games/{game.game_id}/messages", forged)
    assert status == 403 and body["error"]["code"] == "submission/wrong_key"
    status, body = http.post("/games/g_nosuchgame/messages", say(game, 0, "hi"))
    assert status == 404
    once = say(game, 0, "hi")
    assert http.post(f"/games/{game.game_id}/messages", once)[0] == 201
    status, body = http.post(f"/games/{game.game_id}/messages", once)
    assert status == 409 and body["error"]["code"] == "message/duplicate" and body["error"]["details"]["position"] == 0
    assert len(messages_of(store).read(game.game_id)) == 1


def test_the_bundle_carries_the_public_messages_and_the_verifier_catches_a_changed_one(http, game, app):
    from referee.verify.bundle import sign_bundle

    for seat, text, to in ((0, "first", None), (1, "secret", [2]), (2, "third", None), (0, "fourth", None)):
        assert http.post(f"/games/{game.game_id}/messages", say(game, seat, text, to))[0] == 201
    status, bundle = http.get(f"/games/{game.game_id}/export")
    assert status == 200
    carried = bundle["messages"]
    assert [m.get("private", False) for m in carried] == [False, True, False, False]
    assert "submission" not in carried[1] and carried[2]["prev"] == carried[1]["hash"]
    assert carried[0]["prev"] == GENESIS
    report = verify_bundle(bundle)
    assert report.check("messages").status == "passed", report.to_dict()
    status, posted = http.post("/verify", bundle)
    assert status == 200 and next(c for c in posted["checks"] if c["name"] == "messages")["ok"] is True

    changed = copy.deepcopy(bundle)
    changed["messages"][2]["submission"]["envelope"]["text"] = "thirst"
    changed = sign_bundle(changed, app.extensions["referee.key"])  # even the referee cannot change it afterwards
    check = verify_bundle(changed).check("messages")
    assert check.status == "failed" and check.position == 2, check

    rehashed = copy.deepcopy(bundle)  # the text changed and the hash recomputed: the next message's prev breaks
    from referee.protocol.logchain import seal

    rehashed["messages"][2]["submission"]["envelope"]["text"] = "thirst"
    rehashed["messages"][2] = seal(rehashed["messages"][2], rehashed["messages"][2]["prev"])
    check = verify_bundle(rehashed).check("messages")
    assert check.status == "failed" and check.position == 2, check  # the forged signature is caught there

    leaked = copy.deepcopy(bundle)
    del leaked["messages"][1]
    check = verify_bundle(leaked).check("messages")
    assert check.status == "failed" and check.position == 1


def test_a_bundle_without_messages_still_verifies(http, game):
    status, bundle = http.get(f"/games/{game.game_id}/export")
    assert status == 200 and "messages" not in bundle
    check = verify_bundle(bundle).check("messages")
    assert check.status == "passed" and check.reason == "no messages"


def test_say_and_messages_from_a_terminal_round_trip(server, tmp_path):
    from svc_helpers import run_cli as run

    keys = {}
    for name in ("alice", "bob", "carol"):
        code, out = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        assert code == 0, out
        keys[name] = out.strip()
    code, out = run("create", "fivetowers", *(f"--seat={n}={k}" for n, k in keys.items()), "--server", server)
    assert code == 0, out
    game_id = json.loads(out)["game"]
    code, out = run("accept", game_id, "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out  # a seat talks before the start once it has accepted (issue 37, item 4)
    code, out = run("say", game_id, "hello\nall", "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out
    assert json.loads(out)["receipt"]["position"] == 0
    code, out = run("say", game_id, "bob only", "--to", "1", "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 0, out
    code, out = run("messages", game_id, "--server", server)
    assert code == 0 and [m["text"] for m in json.loads(out)["messages"]] == ["hello\nall"]
    code, out = run("messages", game_id, "--key", str(tmp_path / "bob.key"), "--server", server)
    assert code == 0 and [m["text"] for m in json.loads(out)["messages"]] == ["hello\nall", "bob only"]
    assert json.loads(out)["reader"] == [1]
    code, out = run("messages", game_id, "--key", str(tmp_path / "carol.key"), "--server", server)
    assert code == 0 and [m["text"] for m in json.loads(out)["messages"]] == ["hello\nall"]
    code, out = run("say", game_id, "x" * 2001, "--key", str(tmp_path / "alice.key"), "--server", server)
    assert code == 1 and json.loads(out)["error"]["details"]["problems"][0]["path"] == "$.envelope.text"


def test_messages_are_rate_limited_per_seat_key(make_app):
    from svc_helpers import Http

    http = Http(make_app(REFEREE_RATE_MESSAGES="2 per minute").test_client())
    played = create_game(http, "fivetowers", 2)
    accept_all(http, played)
    for text in ("one", "two"):
        assert http.post(f"/games/{played.game_id}/messages", say(played, 0, text))[0] == 201
    status, body = http.post(f"/games/{played.game_id}/messages", say(played, 0, "three"))
    assert status == 429 and body["error"]["code"] == "rate/limited"
    assert http.post(f"/games/{played.game_id}/messages", say(played, 1, "my key still may"))[0] == 201


def test_a_game_with_an_open_seat_has_messages_and_its_joiner_sends_them(http):
    """The seats' keys of a game with open seats are their holders' (the fold's): before the seat is taken the
    messages are read (no 500), after it the joiner sends and reads a private message with the key that took it."""
    from seat_helpers import create_open_game, take

    from referee.protocol.signing import generate_key

    opened = create_open_game(http, "fivetowers", ["key", "invite"])
    assert http.get(f"/games/{opened.game_id}/messages")[0] == 200
    joiner = generate_key()
    assert take(http, opened, 1, joiner, "Bea")[0] == 202
    game = type("Seated", (), {"game_id": opened.game_id, "keys": [opened.keys[0], joiner]})
    assert http.post(f"/games/{opened.game_id}/messages", say(game, 1, "hi Ann", to=[0]))[0] == 201
    assert [m["text"] for m in read_as(http, game, 0)] == ["hi Ann"]
    assert read_as(http, game, None) == []


def test_referee_messages_prints_every_page_as_one_list(make_app):
    """The referee answers 100 positions a page (``next``); ``referee messages`` follows ``next`` to the end."""
    from live_server import serving
    from svc_helpers import Http
    from svc_helpers import run_cli as run

    app = make_app(REFEREE_RATE_MESSAGES_PER_ADDRESS="1000 per minute")  # 105 messages from one address
    http = Http(app.test_client())
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    texts = [f"message {i}" for i in range(105)]
    for i, text in enumerate(texts):
        assert http.post(f"/games/{game.game_id}/messages", say(game, i % 2, text))[0] == 201
    status, first = http.get(f"/games/{game.game_id}/messages")
    assert status == 200 and len(first["messages"]) == 100 and first["next"] == 100  # the API pages
    with serving(app) as server:
        code, out = run("messages", game.game_id, "--server", server)
    assert code == 0, out
    body = json.loads(out)
    assert [m["text"] for m in body["messages"]] == texts
    assert [m["position"] for m in body["messages"]] == list(range(105))
    assert body["from"] == 0 and body.get("next") is None and body["length"] == body["total"] == 105
