"""The creator of a game with open seats is told when its last seat is taken (issue 36, item 7; CONTRACT section 14),
end to end on real servers: the suite's Redis and RQ workers, an aiosmtpd SMTP sink (a mail in the contact's
language, German here) and an HTTP receiver that verifies the webhook with the ``standardwebhooks`` library. A seat
taken while another is still open, and a seat left, are said too, and neither says the game is full."""

from __future__ import annotations

import json

from notify_servers import text_of, webhook_receiver
from seat_helpers import create_open_game, leave, take
from standardwebhooks import Webhook
from svc_helpers import Http
from test_notify_contacts import deliver_all, napp, notify_env, signed_contact  # noqa: F401 (fixtures)

from referee.protocol.signing import generate_key, public_key_b64


def test_the_creator_hears_by_mail_and_webhook_when_the_last_seat_is_taken(napp, notify_env, redis_url,  # noqa: F811
                                                                          run_worker):
    sink, client = notify_env, napp.test_client()
    http, creator, address = Http(client), generate_key(), "creator@example.org"
    mail = client.post("/contacts", json=signed_contact(creator, email=address, language="de",
                                                        events=["seated", "left"]))
    assert mail.status_code == 201, mail.json
    deliver_all(napp, redis_url, rounds=1)
    code = text_of(sink.wait_for(address)[0]).split("Confirmation code:")[1].split()[0]
    assert client.post(f"/contacts/{mail.json['id']}/confirm", json={"code": code}).status_code == 200
    with webhook_receiver() as receiver:
        hook = client.post("/contacts", json=signed_contact(creator, webhook=receiver.url, events=["seated"]))
        assert hook.status_code == 201, hook.json
        game = create_open_game(http, "fivetowers", ["open", "open"], creator=creator)
        ann, bea = generate_key(), generate_key()
        assert take(http, game, 0, ann, "Ann")[0] == 202
        assert leave(http, game.game_id, 0, ann)[0] == 202
        assert take(http, game, 0, ann, "Ann")[0] == 202
        assert take(http, game, 1, bea, "Bea")[0] == 202  # the last seat
        run_worker(napp.extensions["referee.queue"])
        deliver_all(napp, redis_url)

        events = [Webhook(hook.json["secret"]).verify(r["body"], r["headers"]) for r in receiver.received]
        events = sorted((e for e in events if e["game"] == game.game_id), key=lambda e: e["seq"])
        assert [(e["type"], e["seat"], e["full"]) for e in events] == [("seated", 0, False), ("seated", 0, False),
                                                                       ("seated", 1, True)], json.dumps(events)
        assert events[-1]["name"] == "Bea" and events[-1]["joiner"] == public_key_b64(bea)

    mails = [m for m in sink.to(address) if game.game_id in str(m["Subject"])]
    subjects = [str(m["Subject"]) for m in mails]
    assert len(mails) == 4, subjects  # Ann took seat 1, left it, took it again; Bea took the last
    full = [m for m in mails if str(m["Subject"]) == f"Alle Plätze von 5 Towers {game.game_id} sind besetzt"]
    assert len(full) == 1, subjects
    assert "Bea" in text_of(full[0]) and f"https://referee.example/play/games/{game.game_id}" in text_of(full[0])
