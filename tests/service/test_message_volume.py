"""Volume of messages, offers and answers (issue 37, item 4), against the real Redis: per client address as well
as per key (keys are free), no talk in a game before its start from a seat that has not accepted it, a cap on the
bytes of a game's stored messages, paged reads, and the mail gateway under the same limits as HTTP (real SMTP,
real RQ workers)."""

from __future__ import annotations

import pytest
from svc_helpers import Http, accept_all, create_game, signed
from test_decisions_service import answer, offer
from test_mail_gateway import gateway, replies, send  # noqa: F401 - the fixture: app, gateway SMTP, sink, workers

from referee.clock import now
from referee.notify.armor import armor
from referee.protocol.signing import ACCEPT_CTX, MESSAGE_CTX, b64url_encode
from referee.store import keys as store_keys
from referee.store.messages import messages_of
from workers import deliveries, mailjobs


def say(game, seat: int, text: str, to=None) -> dict:
    return signed(game.keys[seat], {"v": 1, "ctx": MESSAGE_CTX, "game": game.game_id, "seat": seat, "text": text,
                                    "to": to, "at": now()})


def started(http: Http, players: int = 2):
    game = create_game(http, "fivetowers", players)
    accept_all(http, game)
    return game


ONE = {"REMOTE_ADDR": "192.0.2.10"}
OTHER = {"REMOTE_ADDR": "192.0.2.20"}


# -- per client address ------------------------------------------------------------------------------------------
def test_messages_are_limited_per_address_whatever_keys_sign_them(make_app):
    """Fresh keys in fresh games cost nothing: one address posting through many seat keys meets its own limit."""
    app = make_app(REFEREE_RATE_MESSAGES_PER_ADDRESS="4 per minute")
    client = app.test_client()
    http = Http(client)
    games = [started(http) for _ in range(3)]
    statuses = [client.post(f"/games/{game.game_id}/messages", json=say(game, seat, f"hello {seat}"),
                            environ_base=ONE).status_code for game in games for seat in (0, 1)]
    assert statuses == [201] * 4 + [429, 429]
    refused = client.post(f"/games/{games[0].game_id}/messages", json=say(games[0], 0, "again"), environ_base=ONE)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert refused.json["error"]["code"] == "rate/limited"
    assert refused.json["error"]["details"]["setting"] == "REFEREE_RATE_MESSAGES_PER_ADDRESS"
    assert sum(len(messages_of(app.extensions["referee.store"]).read(g.game_id)) for g in games) == 4
    other = client.post(f"/games/{games[2].game_id}/messages", json=say(games[2], 1, "mine"), environ_base=OTHER)
    assert other.status_code == 201, other.json  # another address has its own budget


def test_offers_and_answers_are_limited_per_address(make_app):
    app = make_app(REFEREE_RATE_OFFERS="3 per minute")
    client = app.test_client()
    http, stranger = Http(client), Http(client)
    client.environ_base.update(ONE)
    game = started(http)
    status, made = offer(http, game, 0, "draw")
    assert status == 202, made
    assert answer(http, game, 0, made["position"], False)[0] == 202  # withdrawn
    assert offer(http, game, 0, "draw")[0] == 202
    status, body = offer(http, game, 1, "end")  # the fourth from this address
    assert status == 429 and body["error"]["code"] == "rate/limited"
    assert body["error"]["details"]["setting"] == "REFEREE_RATE_OFFERS"
    position = http.get(f"/games/{game.game_id}")[1]["seq"] - 1
    status, body = answer(http, game, 1, position, True)
    assert status == 429, body
    assert http.get(f"/games/{game.game_id}")[1]["status"] == "active"  # nothing was taken
    client.environ_base.update(OTHER)
    assert answer(stranger, game, 1, position, False)[0] == 202  # another address: declined


# -- no talk before the start from a seat that has not accepted ----------------------------------------------------
def test_a_seat_talks_before_the_start_only_once_it_has_accepted(http, store):
    game = create_game(http, "fivetowers", 2)
    status, body = http.post(f"/games/{game.game_id}/messages", say(game, 0, "buy cheap watches"))
    assert status == 409 and body["error"]["code"] == "message/not_started", body
    assert body["error"]["details"] == {"seat": 0}
    assert messages_of(store).read(game.game_id) == []
    state = http.get(f"/games/{game.game_id}")[1]
    envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game.game_id, "seat": 0, "seq": state["seq"],
                "prev": state["head"], "entropy": b64url_encode(bytes(32))}
    assert http.post(f"/games/{game.game_id}/accept", signed(game.keys[0], envelope))[0] == 202
    assert http.get(f"/games/{game.game_id}")[1]["status"] == "waiting"
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "ready when you are"))[0] == 201
    status, body = http.post(f"/games/{game.game_id}/messages", say(game, 1, "not yet accepted"))
    assert status == 409 and body["error"]["code"] == "message/not_started"


# -- a cap on a game's stored bytes ---------------------------------------------------------------------------------
def test_a_games_messages_stop_at_the_cap_of_stored_bytes(make_app):
    app = make_app(REFEREE_MAX_MESSAGE_BYTES="20000")
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = started(http)
    statuses = []
    for n in range(40):
        status, body = http.post(f"/games/{game.game_id}/messages", say(game, n % 2, f"{n} " + "\U0001F600" * 1990))
        statuses.append(status)
        if status != 201:
            break
    assert 201 in statuses and statuses[-1] == 409, statuses
    assert body["error"]["code"] == "messages/full" and body["error"]["details"]["max_bytes"] == 20000
    stored = store.redis.xrange(store_keys.message_keys(game.game_id).stream)
    total = sum(len(fields[b"e"]) for _id, fields in stored)
    assert total <= 20000 and total == body["error"]["details"]["stored"]
    assert int(stored[-1][1][b"b"]) == total  # each entry carries the bytes up to it
    assert len(messages_of(store).read(game.game_id)) == statuses.count(201)  # the refused one stored nothing


def test_messages_stored_before_the_count_are_counted_too(make_app):
    """A stream written before the cap was kept (no ``b`` field): its bytes are added up at the next append."""
    app = make_app()
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = started(http)
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "x" * 1500))[0] == 201
    stream = store_keys.message_keys(game.game_id).stream
    (entry_id, fields), = store.redis.xrange(stream)
    store.redis.delete(stream)
    store.redis.xadd(stream, {"e": fields[b"e"]}, id=entry_id)  # as an older version stored it
    size = len(fields[b"e"])  # every message of this test is as long
    app.extensions["referee.messages"].max_bytes = 3 * size + size // 2
    statuses = [http.post(f"/games/{game.game_id}/messages", say(game, 1, "y" * 1500))[0] for _ in range(4)]
    assert statuses == [201, 201, 409, 409], statuses


# -- paged reads ------------------------------------------------------------------------------------------------------
def test_messages_are_read_in_pages_like_the_log(http):
    game = started(http)
    for n in range(5):
        assert http.post(f"/games/{game.game_id}/messages", say(game, n % 2, f"m{n}", to=[0] if n == 2 else None)
                         )[0] == 201
    status, page = http.get(f"/games/{game.game_id}/messages?limit=2")
    assert status == 200, page
    assert [m["text"] for m in page["messages"]] == ["m0", "m1"]
    assert (page["from"], page["next"], page["total"], page["length"]) == (0, 2, 5, 2)
    status, page = http.get(f"/games/{game.game_id}/messages?from=2&limit=2")
    assert [m["text"] for m in page["messages"]] == ["m3"]  # position 2 is private: it counts, it is not shown
    assert (page["from"], page["next"]) == (2, 4)
    status, page = http.get(f"/games/{game.game_id}/messages?from=4&limit=2")
    assert [m["text"] for m in page["messages"]] == ["m4"] and page["next"] is None and page["length"] == 5
    status, page = http.get(f"/games/{game.game_id}/messages?since=3")  # the older name of from
    assert [m["text"] for m in page["messages"]] == ["m3", "m4"] and page["next"] is None
    status, body = http.get(f"/games/{game.game_id}/messages?limit=1001")
    assert status == 400 and body["error"]["details"]["problems"][0]["path"].endswith("limit")


def test_a_read_without_a_limit_gives_at_most_a_hundred(make_app):
    app = make_app(REFEREE_RATE_MESSAGES="1000 per minute", REFEREE_RATE_MESSAGES_PER_ADDRESS="1000 per minute")
    http = Http(app.test_client())
    game = started(http)
    for n in range(101):
        assert http.post(f"/games/{game.game_id}/messages", say(game, n % 2, f"m{n}"))[0] == 201
    page = http.get(f"/games/{game.game_id}/messages")[1]
    assert len(page["messages"]) == 100 and page["next"] == 100 and page["total"] == 101
    rest = http.get(f"/games/{game.game_id}/messages?from={page['next']}")[1]
    assert [m["text"] for m in rest["messages"]] == ["m100"] and rest["next"] is None


# -- the mail gateway under the same limits -----------------------------------------------------------------------
@pytest.fixture
def limited_gateway(gateway, monkeypatch):  # noqa: F811
    monkeypatch.setenv("REFEREE_RATE_MESSAGES", "3 per minute")
    monkeypatch.setenv("REFEREE_RATE_MESSAGES_PER_ADDRESS", "5 per minute")
    deliveries.reset_context()
    mailjobs._SERVICE.clear()
    return gateway


def test_a_mail_of_many_message_blocks_meets_the_http_limits(limited_gateway):
    app, port, sink, run = limited_gateway
    http = Http(app.test_client())
    game = started(http)
    seats = [0, 0, 0, 0, 1, 1, 1]
    blocks = [armor(say(game, seat, f"block {n} from seat {seat}")) for n, seat in enumerate(seats)]
    send(port, "Many words.\n\n" + "\n\n".join(blocks))
    run()
    reply = replies(sink)[-1]
    lines = [line for line in reply.splitlines() if ": ACCEPTED" in line or ": REFUSED" in line]
    assert len(lines) == 7, reply
    assert [("ACCEPTED" in line) for line in lines] == [True, True, True, False, True, True, False], reply
    assert "REFUSED rate/limited" in lines[3] and "REFUSED rate/limited" in lines[6]
    stored = messages_of(app.extensions["referee.store"]).read(game.game_id)
    assert [m["submission"]["envelope"]["text"] for m in stored] == [
        "block 0 from seat 0", "block 1 from seat 0", "block 2 from seat 0", "block 4 from seat 1",
        "block 5 from seat 1"]


def test_a_mail_cannot_talk_in_a_game_its_seat_has_not_accepted(gateway):  # noqa: F811
    app, port, sink, run = gateway
    game = create_game(Http(app.test_client()), "fivetowers", 2)
    send(port, armor(say(game, 0, "spam")))
    run()
    assert "REFUSED message/not_started" in replies(sink)[-1]
    assert messages_of(app.extensions["referee.store"]).read(game.game_id) == []


def test_the_mail_gateway_spends_the_same_per_key_budget_as_http(make_app):
    """``spend`` counts under the scope Flask-Limiter gives ``POST /games/{id}/messages``: what a seat sent by mail
    counts against what it may still send by HTTP (and the other way round)."""
    from referee.messages.limits import MESSAGES_PER_KEY_SCOPE, spend
    from referee.protocol.signing import public_key_b64

    app = make_app(REFEREE_RATE_MESSAGES="3 per minute")
    http = Http(app.test_client())
    game = started(http)
    key = "key:" + public_key_b64(game.keys[0])
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "by http"))[0] == 201
    assert spend(app.config, "REFEREE_RATE_MESSAGES", key, MESSAGES_PER_KEY_SCOPE) is None  # by mail
    assert spend(app.config, "REFEREE_RATE_MESSAGES", key, MESSAGES_PER_KEY_SCOPE) is None
    status, body = http.post(f"/games/{game.game_id}/messages", say(game, 0, "by http again"))
    assert status == 429 and body["error"]["details"]["setting"] == "REFEREE_RATE_MESSAGES"
    assert spend(app.config, "REFEREE_RATE_MESSAGES", key, MESSAGES_PER_KEY_SCOPE) >= 1
