"""Contacts, webhooks and notification mail (CONTRACT sections 9 and 11), end to end on real servers: the
suite's Redis, RQ workers, an aiosmtpd SMTP sink, and HTTP receivers that verify every webhook with the
``standardwebhooks`` library."""

from __future__ import annotations

import pytest
import redis as redis_lib
from notify_servers import smtp_sink, text_of, webhook_receiver
from rq.serializers import JSONSerializer
from rq.worker import SimpleWorker
from standardwebhooks import Webhook
from svc_helpers import accept_all, create_game, play_random

from referee.clock import now
from referee.signing import generate_key, public_key_b64, sign
from workers import deliveries


@pytest.fixture
def notify_env(monkeypatch, redis_url):
    with smtp_sink() as sink:
        monkeypatch.setenv("REDIS_URL", redis_url)
        monkeypatch.setenv("REFEREE_SMTP_URL", f"smtp://127.0.0.1:{sink.port}")
        monkeypatch.setenv("REFEREE_PUBLIC_URL", "https://referee.example")
        monkeypatch.setenv("REFEREE_WEBHOOK_TIMEOUT", "0.5")
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


def test_a_webhook_that_never_answers_is_disabled_with_a_notice_by_mail(napp, notify_env, redis_url, run_worker):
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
