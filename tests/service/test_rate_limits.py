"""Rate limits on creation and contacts (CONTRACT section 11, issue 17 item 2): 429 with ``Retry-After`` and
``rate/limited``, counted per client address in the real work Redis; a refused request stores nothing."""

from __future__ import annotations

from svc_helpers import Http

from referee.clock import now
from referee.signing import generate_key, public_key_b64, sign


def _spec(n: int) -> dict:
    return {"ruleset": "fivetowers", "seats": [{"name": f"p{n}-{i}", "key": public_key_b64(generate_key())}
                                               for i in range(2)]}


def test_rapid_creations_from_one_address_meet_a_429_with_the_default_limit(make_app):
    app = make_app(REFEREE_RATE_CREATE="30 per minute;120 per hour")  # the documented default
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    statuses = []
    for n in range(300):
        status, _body = http.post("/games", _spec(n))
        statuses.append(status)
        if status == 429:
            break
    assert statuses[:30] == [201] * 30 and statuses[-1] == 429
    response = app.test_client().post("/games", json=_spec(999))
    assert response.status_code == 429 and int(response.headers["Retry-After"]) >= 1
    assert response.json["error"]["code"] == "rate/limited"
    assert len(store.list_games()) == 30  # the refused ones stored nothing


def test_another_address_is_not_limited_by_the_first(make_app):
    app = make_app(REFEREE_RATE_CREATE="2 per minute")
    client = app.test_client()
    for n in range(2):
        assert client.post("/games", json=_spec(n)).status_code == 201
    assert client.post("/games", json=_spec(3)).status_code == 429
    other = client.post("/games", json=_spec(4), environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert other.status_code == 201


def test_contact_writes_are_limited(make_app):
    app = make_app(REFEREE_RATE_CONTACTS="3 per minute")
    client = app.test_client()
    statuses = []
    for _ in range(4):
        key = generate_key()
        envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key), "webhook": "http://127.0.0.1:9/h",
                    "at": now()}
        statuses.append(client.post("/contacts", json={"envelope": envelope, "sig": sign(key, envelope)}).status_code)
    assert statuses == [201, 201, 201, 429]


def test_one_key_is_limited_whatever_address_it_comes_from(make_app):
    app = make_app(REFEREE_RATE_CONTACTS_PER_KEY="2 per minute")
    client, key = app.test_client(), generate_key()
    statuses = []
    for n in range(3):
        envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key),
                    "webhook": f"http://127.0.0.1:9/h{n}", "at": now()}
        answer = client.post("/contacts", json={"envelope": envelope, "sig": sign(key, envelope)},
                             environ_base={"REMOTE_ADDR": f"192.0.2.{n + 1}"})
        statuses.append(answer.status_code)
    assert statuses == [201, 201, 429]
