"""The play-by-email gateway end to end over real SMTP (CONTRACT section 9): ``smtplib`` sends mail to the
gateway's aiosmtpd server, the mail is kept on the real Redis before the 250, an RQ worker submits its
blocks through the service's write path, and the reply arrives at the suite's SMTP sink."""

from __future__ import annotations

import random
import smtplib
import threading
import uuid
from email.message import EmailMessage

import pytest
import redis as redis_lib
from logging_state import kept
from notify_servers import smtp_sink, text_of
from ports import free_port
from svc_helpers import Http, accept_all, create_game, move_envelope, signed

from referee.notify.armor import armor
from workers import deliveries, jobs, mailjobs


@pytest.fixture
def gateway(make_app, monkeypatch, redis_url, tmp_path):
    """An app, the gateway's SMTP server on a free port, the reply sink, and ``run()`` for the workers."""
    with smtp_sink() as sink:
        app = make_app()
        for name, value in {"REDIS_URL": redis_url, "REFEREE_SMTP_URL": f"smtp://127.0.0.1:{sink.port}",
                            "REFEREE_QUEUE": app.config["REFEREE_QUEUE"], "REFEREE_VAR": str(tmp_path / "var"),
                            "REFEREE_KEY_FILE": app.config["REFEREE_KEY_FILE"]}.items():
            monkeypatch.setenv(name, value)
        deliveries.reset_context()
        mailjobs._SERVICE.clear()
        # this test's Redis, whatever an earlier test of this process left configured (a worker run in-process by
        # workers.runner configures the jobs' URLs for good: a stopped Redis of its own was refused here)
        jobs._URLS.clear()
        jobs.configure(redis_url)
        port, stop, ready = free_port(), threading.Event(), threading.Event()
        thread = threading.Thread(target=mailjobs.run_gateway, args=("127.0.0.1", port),
                                  kwargs={"ready": ready, "stop": stop}, daemon=True)
        thread.start()
        assert ready.wait(10)
        connection = redis_lib.Redis.from_url(redis_url)
        queues = [deliveries.notify_queue(connection, app.config["REFEREE_QUEUE"]), app.extensions["referee.queue"]]

        def run() -> None:
            with kept():  # (RQ's worker sets its loggers' levels)
                jobs.work_burst(queues, logging_level="ERROR")

        yield app, port, sink, run
        stop.set()
        thread.join(5)
        deliveries.reset_context()
        mailjobs._SERVICE.clear()
        jobs._URLS.clear()


def send(port: int, text: str, *, sender: str = "alice@example.org", subject: str = "my move",
         html: str | None = None, attachment: str | None = None, message_id: str | None = None,
         filename: str = "move.txt", subtype: str = "plain") -> str:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, "play@referee.example", subject
    message["Message-ID"] = message_id or f"<{uuid.uuid4().hex}@client.example>"
    if html is not None and not text:
        message.set_content(html, subtype="html")
    else:
        message.set_content(text)
    if attachment is not None:
        maintype = "application" if subtype == "json" else "text"
        message.add_attachment(attachment.encode(), maintype=maintype, subtype=subtype, filename=filename)
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
        smtp.send_message(message)
    return message["Message-ID"]


def next_block(http: Http, game, rng: random.Random) -> tuple[str, int]:
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat = legal["to_move"]
    move = rng.choice(legal["moves"])
    game.moves.append((seat, move))
    return armor(signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"], move))), seat


def replies(sink, address="alice@example.org"):
    return [text_of(m) for m in sink.to(address)]


def test_a_whole_five_towers_game_is_played_by_mail_only(gateway):
    app, port, sink, run = gateway
    http = Http(app.test_client())
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    rng, moves = random.Random(5), 0
    while http.get(f"/games/{game.game_id}")[1]["status"] == "active":
        block, _seat = next_block(http, game, rng)
        send(port, f"Hello referee, here is my move.\n\n{block}\nCheers")
        run()
        moves += 1
        assert "ACCEPTED" in replies(sink)[-1], replies(sink)[-1]
        assert moves < 400
    reply = sink.to("alice@example.org")[-1]
    assert str(reply["Subject"]) == "Re: my move" and reply["In-Reply-To"]
    assert '"receipt_sig"' in text_of(reply)
    state = http.get(f"/games/{game.game_id}")[1]
    assert state["status"] == "finished" and moves == len(game.moves)


@pytest.mark.parametrize("mangling", ["quoted_reply", "crlf_rewrapped", "html_only", "attachment", "json_attachment",
                                      "forwarded"])
def test_what_mail_clients_do_to_a_block_does_not_stop_it(gateway, mangling):
    app, port, sink, run = gateway
    http = Http(app.test_client())
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    block, _seat = next_block(http, game, random.Random(1))
    if mangling == "quoted_reply":
        send(port, "Yes!\n\n> On Tuesday the referee wrote:\n" + "".join("> " + line + "\n" for line in
                                                                             block.splitlines()))
    elif mangling == "crlf_rewrapped":
        body = "".join(block.splitlines()[1:-1])
        lines = [block.splitlines()[0]] + [body[i:i + 40] for i in range(0, len(body), 40)] + [block.splitlines()[-1]]
        send(port, "\r\n".join(lines))
    elif mangling == "html_only":
        send(port, "", html="<html><body><p>My move:</p><p>" + "<br>".join(block.splitlines()) + "</p></body></html>")
    elif mangling == "attachment":
        send(port, "My move is attached.", attachment=block)
    elif mangling == "json_attachment":
        send(port, "My move is attached.", attachment=block, filename="move.json", subtype="json")
    else:
        send(port, "---------- Forwarded message ----------\nFrom: bob\n\n" + block)
    run()
    assert "ACCEPTED" in replies(sink)[-1]
    assert [e["type"] for e in app.extensions["referee.store"].read_log(game.game_id)][-1] == "move"


def test_several_blocks_in_one_mail_are_reported_in_order(gateway):
    app, port, sink, run = gateway
    http = Http(app.test_client())
    games = [create_game(http, "fivetowers", 2) for _ in range(2)]
    for game in games:
        accept_all(http, game)
    blocks = [next_block(http, game, random.Random(2))[0] for game in games]
    send(port, f"two games\n{blocks[0]}\nand\n{blocks[1]}")
    run()
    text = replies(sink)[-1]
    assert text.index(f"Block 1 (game {games[0].game_id}): ACCEPTED") < text.index(
        f"Block 2 (game {games[1].game_id}): ACCEPTED")


@pytest.mark.parametrize("bad", ["no_block", "tampered", "illegal", "stale", "oversized"])
def test_bad_mail_gets_a_clear_reply_and_changes_no_log(gateway, bad):
    app, port, sink, run = gateway
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    before = store.read_log(game.game_id)
    block, seat = next_block(http, game, random.Random(3))
    if bad == "oversized":
        with pytest.raises(smtplib.SMTPException):
            send(port, block + "x" * (mailjobs.MAX_MAIL + 10))
        assert store.read_log(game.game_id) == before
        return
    if bad == "no_block":
        text, expected = "I pass, thanks", "mail/no_block"
    elif bad == "tampered":
        lines = block.splitlines()
        lines[2] = lines[2][:10] + ("A" if lines[2][10] != "A" else "B") + lines[2][11:]
        text, expected = "\n".join(lines), "REFUSED"
    elif bad == "illegal":
        _s, legal = http.get(f"/games/{game.game_id}/legal-moves")
        move = {"type": "bid", "amount": 99}
        text = armor(signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"], move)))
        expected = "REFUSED"
    else:
        _s, legal = http.get(f"/games/{game.game_id}/legal-moves")
        move = legal["moves"][0]
        text = armor(signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"] - 1, "ab" * 32, move)))
        expected = "submission/stale"
    send(port, text)
    run()
    reply = replies(sink)[-1]
    assert expected in reply, reply
    assert store.read_log(game.game_id) == before


def test_the_same_mail_delivered_twice_is_one_move(gateway):
    app, port, sink, run = gateway
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    block, _seat = next_block(http, game, random.Random(4))
    message_id = send(port, block)
    send(port, block, message_id=message_id)  # the same mail again (a client's retry)
    send(port, "Did it arrive?\n" + block)  # another mail with the same block
    run()
    moves = [e for e in store.read_log(game.game_id) if e["type"] == "move"]
    assert len(moves) == 1
    texts = replies(sink)
    assert len(texts) == 2 and "ACCEPTED" in texts[0] and "submission/duplicate" in texts[1]


def test_an_unconfirmed_address_gets_at_most_five_replies_an_hour(gateway):
    _app, port, sink, run = gateway
    for _ in range(7):
        send(port, "no block here", sender="mallory@example.org")
    run()
    assert len(sink.to("mallory@example.org")) == mailjobs.REPLIES_PER_HOUR


def test_a_reply_to_the_confirmation_mail_through_the_gateway_confirms_the_address(gateway):
    from referee.clock import now
    from referee.protocol.signing import generate_key, public_key_b64, sign

    app, port, sink, run = gateway
    key = generate_key()
    envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key), "email": "dora@example.org",
                "events": ["turn"], "at": now()}
    contact = app.test_client().post("/contacts", json={"envelope": envelope, "sig": sign(key, envelope)}).json
    assert contact["email_status"] == "pending"
    run()
    confirmation = text_of(sink.wait_for("dora@example.org")[0])
    quoted = "".join("> " + line + "\n" for line in confirmation.splitlines())
    send(port, "Yes, that's me.\n\n" + quoted, sender="dora@example.org", subject="Re: Confirm your address")
    run()
    assert app.extensions["referee.contacts"].get(contact["id"])["email_status"] == "confirmed"
    assert "confirmed" in replies(sink, "dora@example.org")[-1]
    send(port, "Again: " + quoted, sender="mallory@example.org")  # the code from another address confirms nothing
    run()
    assert "mail/no_block" in replies(sink, "mallory@example.org")[-1]
    assert "confirmed for" not in replies(sink, "mallory@example.org")[-1]


# -- the players' own decisions by mail (CONTRACT section 12, issue 22 item 4) ------------------------------
def decision_block(http: Http, game, seat: int, ctx: str, **fields) -> str:
    """The armored block of a seat's resignation, offer or answer signed for the log's tip."""
    _status, state = http.get(f"/games/{game.game_id}")
    envelope = {"v": 1, "ctx": ctx, "game": game.game_id, "seat": seat, "seq": state["seq"], "prev": state["head"],
                **fields}
    return armor(signed(game.keys[seat], envelope))


def test_an_offer_an_answer_a_message_and_a_resignation_by_mail_are_taken_and_replied_to(gateway):
    from referee.clock import now

    app, port, sink, run = gateway
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    send(port, "I offer a draw.\n\n" + decision_block(http, game, 0, "referee/offer", offer="draw"), subject="draw?")
    run()
    reply = replies(sink)[-1]
    offered = store.read_log(game.game_id)[-1]
    assert offered["type"] == "offer" and offered["offer"] == "draw"
    assert f"Block 1 (game {game.game_id}): ACCEPTED (offer) at log position {offered['seq']}." in reply, reply
    assert '"receipt_sig"' in reply
    message = {"v": 1, "ctx": "referee/message", "game": game.game_id, "seat": 1, "text": "No thanks, let's play on.",
               "to": None, "at": now()}
    send(port, decision_block(http, game, 1, "referee/answer", offer=offered["seq"], accept=False) + "\n"
         + armor(signed(game.keys[1], message)), sender="bob@example.org", subject="Re: draw?")
    run()
    reply = replies(sink, "bob@example.org")[-1]
    assert "Block 1" in reply and "ACCEPTED (answer)" in reply, reply
    assert "Block 2" in reply and "ACCEPTED: the message is at position 0 of the game's messages." in reply
    assert store.read_log(game.game_id)[-1]["type"] == "answered"
    assert [m["text"] for m in http.get(f"/games/{game.game_id}/messages")[1]["messages"]] == [message["text"]]
    send(port, "I resign. Well played!\n" + decision_block(http, game, 1, "referee/resign"), sender="bob@example.org")
    run()
    assert "ACCEPTED (resignation)" in replies(sink, "bob@example.org")[-1]
    state = http.get(f"/games/{game.game_id}")[1]
    assert state["status"] == "finished" and state["decisions"]["resigned"] == [1]


@pytest.mark.parametrize("bad", ["unknown_kind", "pending", "wrong_key", "unsupported"])
def test_a_bad_offer_by_mail_gets_a_reply_naming_the_problem_and_changes_no_log(gateway, bad):
    app, port, sink, run = gateway
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    if bad == "pending":
        send(port, decision_block(http, game, 1, "referee/offer", offer="end"))
        run()
    before = store.read_log(game.game_id)
    if bad == "unknown_kind":
        block, expected = decision_block(http, game, 0, "referee/offer", offer="surrender"), \
            "REFUSED request/invalid: the request is malformed: $.envelope.offer"
    elif bad == "pending":
        block = decision_block(http, game, 0, "referee/offer", offer="draw")
        expected = f"REFUSED offer/pending (rule DC-O1): seat 1's end offer (position {before[-1]['seq']}) is pending"
    elif bad == "wrong_key":
        _status, state = http.get(f"/games/{game.game_id}")
        envelope = {"v": 1, "ctx": "referee/offer", "game": game.game_id, "seat": 0, "seq": state["seq"],
                    "prev": state["head"], "offer": "draw"}
        block, expected = armor(signed(game.keys[1], envelope)), "REFUSED submission/wrong_key"
    else:
        block = decision_block(http, game, 0, "referee/mute", mute=[1])
        expected = "REFUSED mail/unsupported: a mail block may carry a move, an acceptance"
    send(port, "My offer:\n" + block)
    run()
    reply = replies(sink)[-1]
    assert expected in reply, reply
    assert store.read_log(game.game_id) == before
