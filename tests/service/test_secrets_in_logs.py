"""Secrets stay out of logs and job data (issue 37, item 6). With ``REFEREE_LOG_FORMAT=json`` a failed delivery
job logged its arguments (RQ's ``extra``): a confirmation code in clear text, enough to confirm the address,
and a private message's text; the code also sat in clear text in the queued job. ``SmtpMailer`` put the
whole SMTP URL, password included, into an error message. Real servers throughout: the suite's Redis, RQ's
worker, an SMTP sink and a port where nothing listens."""

from __future__ import annotations

import json
import zlib

import pytest
import redis as redis_lib
from logging_state import kept
from notify_servers import smtp_sink, text_of
from ports import free_port
from rq.registry import FailedJobRegistry
from svc_helpers import Http, accept_all, create_game, signed
from test_notify_contacts import deliver_all, signed_contact

from referee.clock import now
from referee.host import logs
from referee.notify.mail import SmtpMailer
from referee.protocol.signing import MESSAGE_CTX, generate_key
from workers import deliveries

PASSWORD = "hunter2-smtp-password"
PRIVATE = "meet me at the back door, seat 0 only"


@pytest.fixture
def json_logs(capsys):
    """``json_logs()`` sets this process's logs up as a notify worker's with ``REFEREE_LOG_FORMAT=json`` (after
    ``create_app``, which sets up its own) and returns the JSON lines written to stderr since."""
    def lines() -> list[str]:
        found = [line for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
        logs.configure_logging({"REFEREE_LOG_FORMAT": "json"}, "notify")
        return found

    with kept():  # (configure_logging sets the root's level and handler; kept() puts them back after)
        yield lines
    logs.configure_logging({"REFEREE_LOG_FORMAT": "text"}, "notify")


def smtp_at(monkeypatch, url: str) -> None:
    monkeypatch.setenv("REFEREE_SMTP_URL", url)
    deliveries.reset_context()


def fail_then_deliver(app, redis_url: str, monkeypatch, dead: str, port: int) -> None:
    """Run the deliveries with nothing listening on the SMTP port (every attempt fails), then again, their
    failed jobs requeued (RQ's ``FailedJobRegistry``), to the SMTP sink on ``port``."""
    smtp_at(monkeypatch, dead)
    deliver_all(app, redis_url, rounds=1)
    smtp_at(monkeypatch, f"smtp://127.0.0.1:{port}")
    failed = FailedJobRegistry(queue=deliveries.notify_queue(redis_lib.Redis.from_url(redis_url),
                                                             app.config["REFEREE_QUEUE"]))
    assert failed.get_job_ids()
    for job_id in failed.get_job_ids():
        failed.requeue(job_id)
    deliver_all(app, redis_url)


def queued_job_data(redis_url: str) -> bytes:
    """Every job RQ keeps on the work Redis, its stored data (args and kwargs) decompressed."""
    connection = redis_lib.Redis.from_url(redis_url)
    out = b""
    for name in connection.scan_iter("rq:job:*"):
        if connection.type(name) != b"hash":
            continue
        for value in connection.hgetall(name).values():
            try:
                out += zlib.decompress(value)
            except zlib.error:
                out += value
    return out


def test_no_code_private_text_or_password_reaches_a_log_line_or_a_job(make_app, redis_url, monkeypatch,
                                                                        json_logs, run_worker):
    dead = f"smtp://referee:{PASSWORD}@127.0.0.1:{free_port()}"
    with smtp_sink() as sink:
        monkeypatch.setenv("REDIS_URL", redis_url)
        monkeypatch.setenv("REFEREE_PUBLIC_URL", "https://referee.example")
        app = make_app(REFEREE_WEBHOOK_RETRIES="0,0,0")
        json_logs()
        client, keys, address = app.test_client(), [generate_key(), generate_key()], "alice@example.org"
        answer = client.post("/contacts", json=signed_contact(keys[0], email=address, events=["message"]))
        assert answer.status_code == 201, answer.json
        contact = answer.json["id"]
        queued = queued_job_data(redis_url)
        fail_then_deliver(app, redis_url, monkeypatch, dead, sink.port)
        code = text_of(sink.wait_for(address)[0]).split("Confirmation code:")[1].split()[0]
        assert code not in queued.decode("latin-1")
        confirmed = client.post(f"/contacts/{contact}/confirm", json=signed_contact(
            keys[0], ctx="referee/contact-confirm", contact=contact, code=code))
        assert confirmed.status_code == 200, confirmed.json

        game = create_game(Http(client), "fivetowers", 2, keys=keys)
        accept_all(Http(client), game)
        run_worker(app.extensions["referee.queue"])
        envelope = {"v": 1, "ctx": MESSAGE_CTX, "game": game.game_id, "seat": 1, "text": PRIVATE, "to": [0],
                    "at": now()}
        assert client.post(f"/games/{game.game_id}/messages", json=signed(keys[1], envelope)).status_code == 201
        fail_then_deliver(app, redis_url, monkeypatch, dead, sink.port)
        assert any(PRIVATE in text_of(mail) for mail in sink.wait_for(address, count=2))
    deliveries.reset_context()

    lines = json_logs()
    failures = [line for line in lines if "exception raised while executing" in line]
    assert len(failures) >= 2, lines  # the two failed attempts were logged …
    for line in lines:  # … without what they carried
        assert code not in line and PRIVATE not in line and PASSWORD not in line, line
        assert not {"arguments", "kwargs"} & set(json.loads(line)), line


def test_the_smtp_url_is_named_without_its_password():
    for url in (f"smtp://referee:{PASSWORD}@/", f"ftp://referee:{PASSWORD}@mail.example:25"):
        with pytest.raises(ValueError, match="REFEREE_SMTP_URL") as refused:
            SmtpMailer(url)
        assert PASSWORD not in str(refused.value)
        assert "referee:***@" in str(refused.value)
