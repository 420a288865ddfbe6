"""Contacts, webhooks and notification mail (CONTRACT sections 9 and 11), end to end on real servers: the
suite's Redis, RQ workers, an aiosmtpd SMTP sink, and HTTP receivers that verify every webhook with the
``standardwebhooks`` library."""

from __future__ import annotations

import pytest
import redis as redis_lib
from logging_state import kept
from notify_servers import smtp_sink, text_of, webhook_receiver
from rq.serializers import JSONSerializer
from rq.worker import SimpleWorker
from standardwebhooks import Webhook
from svc_helpers import accept_all, create_game, play_random

from referee.clock import now
from referee.protocol.signing import generate_key, public_key_b64, sign
from referee.store import keys as store_keys
from workers import deliveries


@pytest.fixture
def notify_env(monkeypatch, redis_url):
    with smtp_sink() as sink:
        monkeypatch.setenv("REDIS_URL", redis_url)
        monkeypatch.setenv("REFEREE_SMTP_URL", f"smtp://127.0.0.1:{sink.port}")
        monkeypatch.setenv("REFEREE_PUBLIC_URL", "https://referee.example")
        # an endpoint that answers must be heard on a loaded machine too (0.5 s was once too short); the tests
        # of one that never answers set a short timeout of their own
        monkeypatch.setenv("REFEREE_WEBHOOK_TIMEOUT", "3")
        monkeypatch.setenv("REFEREE_WEBHOOK_DISABLE_AFTER", "3")
        deliveries.reset_context()
        yield sink
        deliveries.reset_context()


@pytest.fixture
def napp(make_app):
    return make_app(REFEREE_WEBHOOK_RETRIES="0,0,0")


def signed_contact(key, ctx="referee/contact", **fields):
    envelope = {"v": 1, "ctx": ctx, "key": public_key_b64(key), **fields, "at": now()}
    return {"envelope": envelope, "sig": sign(key, envelope)}


def signed_query(key, ctx="referee/contacts", **extra):
    envelope = {"v": 1, "ctx": ctx, "key": public_key_b64(key), **extra, "at": now()}
    return f"key={envelope['key']}&at={envelope['at']}&sig={sign(key, envelope)}"


def deliver_all(app, redis_url, rounds=3):
    """Route the outbox and run the notify queue until nothing is left (real RQ SimpleWorker, burst)."""
    store, contacts = app.extensions["referee.store"], app.extensions["referee.contacts"]
    router = deliveries.OutboxRouter(store.redis, contacts, name="test-router")
    connection = redis_lib.Redis.from_url(redis_url)
    queue = deliveries.notify_queue(connection, app.config["REFEREE_QUEUE"])
    for _ in range(rounds):
        router.run_once(block_ms=0)
        with kept():  # (RQ's worker sets its loggers' levels)
            SimpleWorker([queue], connection=connection, serializer=JSONSerializer).work(burst=True,
                                                                                       logging_level="ERROR")


def test_a_key_registers_lists_changes_and_removes_its_webhook(napp, notify_env):
    client, key = napp.test_client(), generate_key()
    created = client.post("/contacts", json=signed_contact(key, webhook="http://127.0.0.1:9/hook",
                                                           events=["turn"]))
    assert created.status_code == 201, created.json
    contact = created.json
    assert contact["secret"].startswith("whsec_") and contact["events"] == ["turn"]
    listed = client.get("/contacts?" + signed_query(key)).json["contacts"]
    assert [c["id"] for c in listed] == [contact["id"]] and "secret" not in listed[0]
    changed = client.put(f"/contacts/{contact['id']}", json=signed_contact(
        key, contact=contact["id"], webhook="http://127.0.0.1:9/other", events=["turn", "finished"]))
    assert changed.status_code == 200 and changed.json["secret"] != contact["secret"]
    stranger = generate_key()
    refused = client.delete(f"/contacts/{contact['id']}", json=signed_contact(
        stranger, ctx="referee/contact-delete", contact=contact["id"]))
    assert refused.status_code == 403 and refused.json["error"]["code"] == "contact/not_yours"
    removed = client.delete(f"/contacts/{contact['id']}", json=signed_contact(
        key, ctx="referee/contact-delete", contact=contact["id"]))
    assert removed.status_code == 200
    assert client.get("/contacts?" + signed_query(key)).json["contacts"] == []


@pytest.mark.parametrize("case", ["bad_signature", "stale", "replayed", "unknown_event", "no_channel", "bad_url"])
def test_bad_contact_requests_get_a_clear_error_and_store_nothing(napp, notify_env, case):
    client, key = napp.test_client(), generate_key()
    body = signed_contact(key, webhook="http://127.0.0.1:9/hook")
    expected = {"bad_signature": 401, "stale": 400, "replayed": 409, "unknown_event": 400, "no_channel": 400,
                "bad_url": 400}[case]
    if case == "bad_signature":
        body["sig"] = sign(generate_key(), body["envelope"])
    elif case == "stale":
        body["envelope"]["at"] = "2020-01-01T00:00:00.000Z"
        body["sig"] = sign(key, body["envelope"])
    elif case == "replayed":
        assert client.post("/contacts", json=body).status_code == 201
    elif case == "unknown_event":
        body = signed_contact(key, webhook="http://127.0.0.1:9/hook", events=["gossip"])
    elif case == "no_channel":
        body = signed_contact(key, events=["turn"])
    else:
        body = signed_contact(key, webhook="ftp://example.org/x")
    before = client.get("/contacts?" + signed_query(key)).json["contacts"]
    answer = client.post("/contacts", json=body)
    assert answer.status_code == expected, answer.json
    assert answer.json["error"]["message"]
    assert client.get("/contacts?" + signed_query(key)).json["contacts"] == before


def test_an_address_gets_only_its_confirmation_until_confirmed(napp, notify_env, redis_url, run_worker):
    sink, client = notify_env, napp.test_client()
    keys = [generate_key(), generate_key()]
    address = "alice@example.org"
    answer = client.post("/contacts", json=signed_contact(keys[0], email=address, events=["turn", "started"]))
    assert answer.status_code == 201 and answer.json["email_status"] == "pending"
    contact = answer.json["id"]
    game = create_game(Http(client), "fivetowers", 2, keys=keys)
    accept_all(Http(client), game)
    run_worker(napp.extensions["referee.queue"])
    deliver_all(napp, redis_url)
    mails = sink.wait_for(address)
    assert len(mails) == 1 and "Confirmation code:" in text_of(mails[0])  # no turn mail before confirmation
    code = text_of(mails[0]).split("Confirmation code:")[1].split()[0]
    wrong = client.post(f"/contacts/{contact}/confirm", json=signed_contact(
        keys[0], ctx="referee/contact-confirm", contact=contact, code="x" * 16))
    assert wrong.status_code == 403 and wrong.json["error"]["code"] == "contact/bad_code"
    right = client.post(f"/contacts/{contact}/confirm", json=signed_contact(
        keys[0], ctx="referee/contact-confirm", contact=contact, code=code))
    assert right.status_code == 200 and right.json["email_status"] == "confirmed"
    # the next turn of seat 0 is mailed, in words, with the link and a ready block to sign
    http, rng = Http(client), __import__("random").Random(3)
    for _ in range(20):
        play_random(http, game, rng, max_moves=1)
        if http.get(f"/games/{game.game_id}")[1]["to_move"] == 0:
            break
    run_worker(napp.extensions["referee.queue"])
    deliver_all(napp, redis_url)
    turn_mails = [m for m in sink.to(address) if "Your turn" in str(m["Subject"])]
    assert len(turn_mails) == 1
    text = text_of(turn_mails[0])
    assert "https://referee.example/play/games/" + game.game_id in text
    assert "--armor" in text and '"ctx": "referee/move"' in text
    assert turn_mails[0].get_body(preferencelist=("html",)) is not None


def test_webhooks_are_signed_by_standard_webhooks_and_retried_until_delivered(napp, notify_env, redis_url,
                                                                              run_worker):
    client = napp.test_client()
    keys = [generate_key(), generate_key()]
    with webhook_receiver(fail_first=2) as receiver:
        answer = client.post("/contacts", json=signed_contact(keys[0], webhook=receiver.url,
                                                              events=["started", "turn"]))
        secret, contact = answer.json["secret"], answer.json["id"]
        game = create_game(Http(client), "fivetowers", 2, keys=keys)
        accept_all(Http(client), game)
        run_worker(napp.extensions["referee.queue"])
        deliver_all(napp, redis_url)
        assert receiver.attempts >= 3 and receiver.received
        ids = set()
        for request in receiver.received:
            event = Webhook(secret).verify(request["body"], request["headers"])
            assert request["headers"]["webhook-id"] == event["id"]
            assert event["game"] == game.game_id and event["link"].startswith("https://referee.example/")
            ids.add(event["id"])
        assert f"{game.game_id}:{len(keys) + 1}:started" in ids
        log = client.get(f"/contacts/{contact}/deliveries?" + signed_query(
            keys[0], ctx="referee/contact-deliveries", contact=contact)).json["deliveries"]
        assert [row["ok"] for row in reversed(log)][:3] == [False, False, True]
        # a re-send delivers the same event id again
        event_id = log[0]["event"]["id"]
        resent = client.post(f"/contacts/{contact}/resend", json=signed_contact(
            keys[0], ctx="referee/contact-resend", contact=contact, event=event_id))
        assert resent.status_code == 202
        deliver_all(napp, redis_url, rounds=1)
        assert [r["headers"]["webhook-id"] for r in receiver.received].count(event_id) == 2


def test_a_webhook_that_never_answers_is_disabled_with_a_notice_by_mail(napp, notify_env, redis_url, run_worker,
                                                                        monkeypatch):
    monkeypatch.setenv("REFEREE_WEBHOOK_TIMEOUT", "0.5")  # it hangs for 1 s
    sink, client = notify_env, napp.test_client()
    keys = [generate_key(), generate_key()]
    with webhook_receiver(hang=1.0) as receiver:
        mail = client.post("/contacts", json=signed_contact(keys[0], email="bob@example.org", events=["turn"]))
        deliver_all(napp, redis_url, rounds=1)
        code = text_of(sink.wait_for("bob@example.org")[0]).split("Confirmation code:")[1].split()[0]
        client.post(f"/contacts/{mail.json['id']}/confirm", json={"code": code})
        hook = client.post("/contacts", json=signed_contact(keys[0], webhook=receiver.url, events=["started"]))
        game = create_game(Http(client), "fivetowers", 2, keys=keys)
        accept_all(Http(client), game)
        run_worker(napp.extensions["referee.queue"])
        deliver_all(napp, redis_url)
        stored = napp.extensions["referee.contacts"].get(hook.json["id"])
        assert stored["disabled"] and stored["failures"] >= 3
        notices = [m for m in sink.to("bob@example.org") if "disabled" in str(m["Subject"])]
        assert notices and receiver.url in text_of(notices[0])


class Http:
    def __init__(self, client):
        self.client = client

    def get(self, path):
        response = self.client.get(path)
        return response.status_code, response.get_json(silent=True)

    def post(self, path, body=None):
        response = self.client.post(path, json=body)
        return response.status_code, response.get_json(silent=True)



def test_every_notification_job_is_on_the_workers_allow_list():
    from workers import allowlist, mailjobs

    names = {deliveries.WEBHOOK_JOB, deliveries.MAIL_JOB, deliveries.CONFIRM_JOB, mailjobs.MAIL_JOB}
    assert names <= allowlist.ALLOWED_JOBS
    for name in names:
        module, _, func = name.rpartition(".")
        assert callable(getattr(__import__(module, fromlist=[func]), func))


# -- the players' own decisions and messages (CONTRACT section 12, issue 22 item 4) -------------------------
def _events(receiver, secret):
    """The events a receiver got, each checked by the Standard Webhooks reference implementation."""
    out = []
    for request in receiver.received:
        event = Webhook(secret).verify(request["body"], request["headers"])
        assert request["headers"]["webhook-id"] == event["id"]
        out.append(event)
    return out


def test_a_webhook_gets_offer_offer_answered_and_resigned_events_signed(napp, notify_env, redis_url, run_worker):
    from test_decisions_service import answer, offer, resign

    client, keys = napp.test_client(), [generate_key(), generate_key()]
    http = Http(client)
    with webhook_receiver() as receiver:
        hook = client.post("/contacts", json=signed_contact(keys[1], webhook=receiver.url,
                                                            events=["offer", "offer_answered", "resigned"]))
        assert hook.status_code == 201, hook.json
        game = create_game(http, "fivetowers", 2, keys=keys)
        accept_all(http, game)
        status, offered = offer(http, game, 0, "draw")
        assert status == 202, offered
        assert answer(http, game, 0, offered["position"], False)[0] == 202  # the offerer withdraws it
        assert resign(http, game, 0)[0] == 202
        run_worker(napp.extensions["referee.queue"])
        deliver_all(napp, redis_url)
        events = {e["type"]: e for e in _events(receiver, hook.json["secret"])}
    assert set(events) == {"offer", "offer_answered", "resigned"}
    made = events["offer"]
    assert made["id"] == f"{game.game_id}:{offered['position']}:offer"
    assert (made["seat"], made["offer"], made["position"]) == (0, "draw", offered["position"])
    assert made["recipients"] == [{"seat": 1, "key": public_key_b64(keys[1])}]
    assert made["link"] == f"https://referee.example/play/games/{game.game_id}"
    withdrawn = events["offer_answered"]
    assert (withdrawn["outcome"], withdrawn["seat"], withdrawn["by"], withdrawn["position"]) == (
        "withdrawn", 0, 0, offered["position"])
    assert (events["resigned"]["seat"], events["resigned"]["goes_on"]) == (0, False)


def test_an_address_gets_the_agreed_offer_in_words_and_its_turn_mail_shows_the_pending_offer(
        napp, notify_env, redis_url, run_worker):
    from test_decisions_service import answer, move, offer

    sink, client, keys = notify_env, napp.test_client(), [generate_key(), generate_key()]
    http, address = Http(client), "carol@example.org"
    contact = client.post("/contacts", json=signed_contact(keys[0], email=address, events=["turn", "offer_answered"]))
    deliver_all(napp, redis_url, rounds=1)
    code = text_of(sink.wait_for(address)[0]).split("Confirmation code:")[1].split()[0]
    assert client.post(f"/contacts/{contact.json['id']}/confirm", json={"code": code}).status_code == 200
    game = create_game(http, "fivetowers", 2, keys=keys)
    accept_all(http, game)
    assert http.get(f"/games/{game.game_id}")[1]["to_move"] == 0
    move(http, game)  # seat 0 bids …
    move(http, game)  # … seat 1 bids: seat 0's turn (its mail is rendered when delivered) …
    status, offered = offer(http, game, 1, "draw")  # … and seat 1 offers a draw meanwhile
    assert status == 202, offered
    run_worker(napp.extensions["referee.queue"])
    deliver_all(napp, redis_url)
    turn = [text_of(m) for m in sink.to(address) if "Your turn" in str(m["Subject"])]
    assert len(turn) == 1
    assert f"offers a draw: every seat still in the game would share first place (log position " \
           f"{offered['position']})" in turn[0]
    assert f"referee answer {game.game_id} {offered['position']} --accept --key <your key file> --armor" in turn[0]
    status, answered = answer(http, game, 0, offered["position"], True)  # the last acceptance: agreed follows
    assert status == 202 and answered["status"] == "finished", answered
    run_worker(napp.extensions["referee.queue"])
    deliver_all(napp, redis_url)
    mails = [m for m in sink.to(address) if "offer" in str(m["Subject"])]
    assert [str(m["Subject"]) for m in mails] == [f"The draw offer in 5 Towers {game.game_id} was agreed"]
    text = text_of(mails[0])
    assert "Every seat accepted" in text and "the game is drawn." in text
    assert f"https://referee.example/play/games/{game.game_id}" in text
    assert mails[0].get_body(preferencelist=("html",)) is not None


def test_a_private_messages_event_reaches_only_its_addressees_contact(napp, notify_env, redis_url):
    from test_messages import say

    client, keys = napp.test_client(), [generate_key() for _ in range(3)]
    http = Http(client)
    with webhook_receiver() as one, webhook_receiver() as two:
        hooks = {seat: client.post("/contacts", json=signed_contact(keys[seat], webhook=receiver.url,
                                                                    events=["message"])).json
                 for seat, receiver in ((1, one), (2, two))}
        game = create_game(http, "fivetowers", 3, keys=keys)
        accept_all(http, game)
        status, private = http.post(f"/games/{game.game_id}/messages", say(game, 0, "psst, seat 2 only", to=[2]))
        assert status == 201, private
        status, public = http.post(f"/games/{game.game_id}/messages", say(game, 0, "hello, table"))
        assert status == 201, public
        deliver_all(napp, redis_url)
        got = {seat: _events(receiver, hooks[seat]["secret"]) for seat, receiver in ((1, one), (2, two))}
        raw_one = b"".join(request["body"] for request in one.received)
    assert [e["text"] for e in got[2]] == ["psst, seat 2 only", "hello, table"]
    assert [e["text"] for e in got[1]] == ["hello, table"]
    assert b"psst" not in raw_one  # never the private text, in any field
    first = got[2][0]
    assert first["id"] == f"{game.game_id}:m{private['position']}:message" and first["type"] == "message"
    assert (first["seat"], first["to"], first["position"], first["seq"]) == (0, [2], 0, private["log_seq"])
    assert first["recipients"] == [{"seat": 2, "key": public_key_b64(keys[2])}]


def test_the_router_makes_its_group_once_and_again_when_the_stream_is_gone(napp):
    """The router's consumer group is made on its first pass, not on every pass (one round trip a pass less);
    when the outbox stream is deleted the next pass fails with NOGROUP and the one after makes it again."""
    store, contacts = napp.extensions["referee.store"], napp.extensions["referee.contacts"]
    router = deliveries.OutboxRouter(store.redis, contacts, name="group-router")
    router.run_once(block_ms=0)
    assert [g["name"] for g in store.redis.xinfo_groups(store_keys.OUTBOX)] == [deliveries.GROUP.encode()]
    store.redis.delete(store_keys.OUTBOX)
    with pytest.raises(redis_lib.ResponseError, match="NOGROUP"):
        router.run_once(block_ms=0)
    assert router.run_once(block_ms=0) == 0
    assert [g["name"] for g in store.redis.xinfo_groups(store_keys.OUTBOX)] == [deliveries.GROUP.encode()]


def test_an_address_gets_three_confirmation_mails_a_day_however_many_contacts_name_it(napp, notify_env, redis_url):
    """Issue 37, item 5: the limit was counted per contact, and every POST makes a contact: six POSTs in
    seconds reached one address six times. It is counted per address now, written any way that reaches the
    same mailbox (the domain's case, the local part's case, a +tag)."""
    sink, client = notify_env, napp.test_client()
    forms = ["bob@example.org", "Bob@Example.ORG", "bob@EXAMPLE.org", "bob+again@example.org", "BOB@example.org",
             "bob@example.org"]
    for form in forms:
        answer = client.post("/contacts", json=signed_contact(generate_key(), email=form))
        assert answer.status_code == 201 and answer.json["email_status"] == "pending", answer.json
    deliver_all(napp, redis_url)
    assert len([m for m in sink.messages if "example.org" in str(m["To"]).lower()]) == 3
    other = client.post("/contacts", json=signed_contact(generate_key(), email="carol@example.org"))
    assert other.status_code == 201
    deliver_all(napp, redis_url)
    assert len(sink.to("carol@example.org")) == 1  # another address has its own three
