"""Rate limits on creation and contacts (CONTRACT section 11, issue 17 item 2): 429 with ``Retry-After`` and
``rate/limited``, counted per client address in the real work Redis; a refused request stores nothing."""

from __future__ import annotations

from svc_helpers import Http

from referee.clock import now
from referee.protocol.signing import generate_key, public_key_b64, sign


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


# -- a key's budget is spent only by what its signature proves (issue 37, item 2) ---------------------------
STRANGER = {"REMOTE_ADDR": "192.0.2.66"}


def test_unsigned_messages_naming_a_seat_do_not_silence_it(make_app):
    from svc_helpers import accept_all, create_game, signed

    from referee.protocol.signing import MESSAGE_CTX

    app = make_app(REFEREE_RATE_MESSAGES="3 per minute")
    client = app.test_client()
    game = create_game(Http(client), "fivetowers", 2)
    accept_all(Http(client), game)

    def message(seat: int, text: str) -> dict:
        return signed(game.keys[seat], {"v": 1, "ctx": MESSAGE_CTX, "game": game.game_id, "seat": seat,
                                        "text": text, "to": None, "at": now()})

    forged = [client.post(f"/games/{game.game_id}/messages", environ_base=STRANGER,
                          json={**message(1, f"spam {n}"), "envelope": {**message(1, "x")["envelope"], "seat": 0}}
                          ).status_code for n in range(5)]
    assert forged[:3] == [401] * 3 and forged[3:] == [429, 429]  # the stranger's own address is what it spent
    answer = client.post(f"/games/{game.game_id}/messages", json=message(0, "still here"))
    assert answer.status_code == 201, answer.json
    mute = signed(game.keys[0], {"v": 1, "ctx": "referee/mute", "game": game.game_id, "seat": 0, "mute": [1],
                                 "at": now()})
    assert client.post(f"/games/{game.game_id}/messages/mute", json=mute).status_code == 200


def test_unsigned_contact_requests_naming_a_key_do_not_spend_its_budget(make_app):
    app = make_app(REFEREE_RATE_CONTACTS_PER_KEY="2 per minute")
    client, key = app.test_client(), generate_key()

    def request(n: int, signer) -> dict:
        envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key), "webhook": f"http://127.0.0.1:9/{n}",
                    "at": now()}
        return {"envelope": envelope, "sig": sign(signer, envelope)}

    forged = [client.post("/contacts", json=request(n, generate_key()), environ_base=STRANGER).status_code
              for n in range(4)]
    assert forged == [401, 401, 429, 429]
    assert [client.post("/contacts", json=request(10 + n, key)).status_code for n in range(3)] == [201, 201, 429]


def test_a_creation_with_a_bad_organiser_signature_does_not_spend_the_organisers_budget(make_app):
    app = make_app(REFEREE_RATE_CREATE_PER_KEY="2 per minute")
    client, organiser = app.test_client(), generate_key()

    def created(n: int, signer) -> dict:
        spec = _spec(n)
        return {**spec, "organiser": {"key": public_key_b64(organiser),
                                      "sig": sign(signer, {"v": 1, "ctx": "referee/create", **spec})}}

    forged = [client.post("/games", json=created(n, generate_key()), environ_base=STRANGER).status_code
              for n in range(4)]
    assert forged == [401, 401, 429, 429]
    assert [client.post("/games", json=created(10 + n, organiser)).status_code for n in range(3)] == [201, 201, 429]


def test_a_tournament_with_a_bad_organiser_signature_does_not_spend_the_organisers_budget(make_app):
    app = make_app(REFEREE_RATE_TOURNAMENTS_PER_KEY="2 per minute", REFEREE_RATE_TOURNAMENTS="100 per minute")
    client, organiser = app.test_client(), generate_key()

    def created(n: int, signer) -> dict:
        spec = {"ruleset": "fivetowers", "format": {"kind": "series", "rounds": 1},
                "players": [{"name": f"p{n}-{i}", "key": public_key_b64(generate_key())} for i in range(2)]}
        return {**spec, "organiser": {"key": public_key_b64(organiser),
                                      "sig": sign(signer, {"v": 1, "ctx": "referee/tournament", **spec})}}

    forged = [client.post("/tournaments", json=created(n, generate_key()), environ_base=STRANGER).status_code
              for n in range(4)]
    assert forged == [401, 401, 429, 429]
    assert [client.post("/tournaments", json=created(10 + n, organiser)).status_code
            for n in range(3)] == [201, 201, 429]
