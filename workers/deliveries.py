"""Deliveries of outgoing events (CONTRACT section 9): RQ jobs on the notify queue, and the outbox router.

* :class:`OutboxRouter` (a thread in every ``referee worker``) reads the outbox stream with a consumer
  group (``XREADGROUP``; entries a dead consumer left pending are claimed after 30 s), and queues one job
  per contact channel that wants the event (once per contact, channel and event id).
* :func:`deliver_webhook` POSTs the event to the contact's URL, signed by the Standard Webhooks scheme
  (``standardwebhooks``: headers ``webhook-id`` = the event's id, the same on every retry,
  ``webhook-timestamp``, ``webhook-signature: v1,<base64 HMAC-SHA256>``), with a short timeout, to the
  address its host resolved to and was checked at (``referee/notify/targets.py``: no redirect followed,
  a few KB of the answer read at most; the log row says a fixed category of failure). A failure
  raises, and RQ retries with backoff (:data:`RETRY_INTERVALS`, about a day in all). Every attempt goes
  into the contact's delivery log; after ``REFEREE_WEBHOOK_DISABLE_AFTER`` failed attempts in a row the webhook is
  disabled and, where the key has a confirmed address, a notice is mailed.
* :func:`deliver_mail` mails the event in words (``referee/notify/render.py``) to a confirmed address.
* :func:`send_confirmation` mails an address its confirmation code (CONTRACT section 11), made by the job
  itself: no job's data holds a code.

No log line holds a job's arguments (``referee.host.logs.UNLOGGED``: RQ logs them with a failed job): a mail job
carries its event, and a private message's event its text.

Every delivery job is counted in ``referee_deliveries_total`` by kind (``webhook``, ``mail``, ``confirm``) and
outcome (``ok``, ``failed`` — an attempt that RQ retries —, ``skipped``, ``disabled``), and its log lines
carry the event's game id (:func:`counted`).

Jobs run in a worker separate from the replay jobs' queue, so a slow or hostile endpoint never delays a
replay, and never the accept path, which only appends to the log.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import redis
from rq import Queue, Retry
from rq.serializers import JSONSerializer
from standardwebhooks import Webhook

from referee.clock import now
from referee.config import load_config
from referee.host import logs, metrics
from referee.notify import targets
from referee.notify.contacts import ContactService, Enqueue, event_keys
from referee.notify.mail import Mailer, compose, mailer_from_config
from referee.notify.render import render_confirmation, render_event, render_webhook_disabled
from referee.store import keys
from referee.store.cluster import Client, connect
from referee.store.redis_store import streams_of

from .looping import PassLoop

log = logging.getLogger(__name__)

WEBHOOK_JOB = "workers.deliveries.deliver_webhook"
MAIL_JOB = "workers.deliveries.deliver_mail"
CONFIRM_JOB = "workers.deliveries.send_confirmation"
#: seconds between retries of a failed delivery: 10 s … 12 h, about a day in all (``REFEREE_WEBHOOK_RETRIES``;
#: the endpoint's timeout and the failures that disable it: ``REFEREE_WEBHOOK_TIMEOUT``, ``…_DISABLE_AFTER``)
RETRY_INTERVALS = [10, 60, 300, 1800, 3600, 7200, 21600, 43200]
GROUP = "notify"


def notify_queue_name(queue: str) -> str:
    return f"{queue}-notify"


def notify_queue(connection: redis.Redis, queue: str) -> Queue:
    return Queue(notify_queue_name(queue), connection=connection, serializer=JSONSerializer)


class _Context:
    """What a delivery job needs, made once per worker process from the settings."""

    def __init__(self, config: dict[str, Any]):
        self.config = config
        self.log_redis = connect(config["REDIS_URL"], socket_timeout=10)
        self.contacts = ContactService(self.log_redis, enqueue_jobs(redis.Redis.from_url(
            config["REFEREE_WORK_REDIS_URL"]), config["REFEREE_QUEUE"], config["REFEREE_WEBHOOK_RETRIES"]),
            allow_private=config["REFEREE_WEBHOOK_PRIVATE"])
        self.mailer: Mailer = mailer_from_config(config)
        self.base_url = (config.get("REFEREE_PUBLIC_URL") or "http://127.0.0.1:8000").rstrip("/")
        self.sender = config.get("REFEREE_MAIL_FROM") or "referee@localhost"


_CONTEXT: dict[str, _Context] = {}


def context() -> _Context:
    found = _CONTEXT.get("ctx")
    if found is None:
        from . import jobs  # noqa: PLC0415 - the URLs `referee worker` was started with

        config = load_config()
        if jobs._URLS:
            config.update(REDIS_URL=jobs._URLS["log"], REFEREE_WORK_REDIS_URL=jobs._URLS["work"])
        found = _CONTEXT["ctx"] = _Context(config)
    return found


def reset_context() -> None:
    """Forget the cached context (tests that change the settings)."""
    _CONTEXT.clear()


def enqueue_jobs(work: redis.Redis, queue: str, retries: list[int] | None = None) -> Enqueue:
    """The ``enqueue(kind, contact, payload)`` of :class:`ContactService`: one RQ job on the notify queue."""
    target = notify_queue(work, queue)
    intervals = list(retries or RETRY_INTERVALS)

    def enqueue(kind: str, contact_id: str, payload: dict[str, Any]) -> None:
        func = {"webhook": WEBHOOK_JOB, "mail": MAIL_JOB, "confirm": CONFIRM_JOB}[kind]
        retry = Retry(max=len(intervals), interval=intervals) if kind == "webhook" else Retry(
            max=3, interval=intervals[:3])
        target.enqueue(func, contact_id, payload, retry=retry, result_ttl=0, failure_ttl=7 * 86400,
                       job_timeout=60, description=f"{kind} {contact_id}")

    return enqueue


# -- jobs ----------------------------------------------------------------------------------------------
Job = Callable[[str, dict[str, Any]], dict[str, Any]]


def counted(kind: str) -> Callable[[Job], Job]:
    """A delivery job counted in ``referee_deliveries_total{kind, outcome}``, its log lines bound to the event's
    game."""

    def wrap(job: Job) -> Job:
        @functools.wraps(job)
        def run(contact_id: str, payload: dict[str, Any]) -> dict[str, Any]:
            event = payload.get("event") if isinstance(payload, dict) else None
            with logs.bound(game_id=event.get("game") if isinstance(event, dict) else None):
                try:
                    result = job(contact_id, payload)
                except Exception:
                    metrics.DELIVERIES.labels(kind, "failed").inc()
                    raise
            outcome = "skipped" if "skipped" in result else "disabled" if result.get("disabled") else "ok"
            metrics.DELIVERIES.labels(kind, outcome).inc()
            return result

        return run

    return wrap


@counted("webhook")
def deliver_webhook(contact_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = context()
    contact = ctx.contacts.get(contact_id)
    event = payload["event"]
    if contact is None or not contact.get("webhook") or contact.get("disabled"):
        return {"skipped": "no such webhook, or disabled"}
    body = json.dumps({**event, "link": ctx.base_url + event.get("link", "")}, separators=(",", ":"))
    stamp = datetime.now(UTC)
    signature = Webhook(contact["secret"]).sign(event["id"], stamp, body)
    headers = {"content-type": "application/json", "user-agent": "referee-webhooks/1", "webhook-id": event["id"],
               "webhook-timestamp": str(int(stamp.timestamp())), "webhook-signature": signature}
    at = now()
    outcome = targets.post(contact["webhook"], body.encode(), headers, timeout=ctx.config["REFEREE_WEBHOOK_TIMEOUT"],
                           allow_private=ctx.config["REFEREE_WEBHOOK_PRIVATE"])
    # the player's log has the status, a fixed category and the time from the connection on; what was
    # reached and why it failed (an oracle on the operator's network) only the operator's log
    row: dict[str, Any] = {"channel": "webhook", "event": event, "at": at, "url": contact["webhook"],
                           "status": outcome.status, "ok": outcome.ok}
    if outcome.error:
        row["error"] = outcome.error
    if outcome.ms is not None:
        row["ms"] = outcome.ms
    if not outcome.ok:
        (log.warning if outcome.error == targets.REFUSED else log.info)(
            "webhook %s of contact %s: %s (%s)", event["id"], contact_id, outcome.error, outcome.detail)
    ctx.contacts.record_delivery(contact_id, row)
    fresh = ctx.contacts.get(contact_id) or contact
    if row["ok"]:
        if fresh.get("failures"):
            fresh["failures"] = 0
            ctx.contacts.save(fresh)
        return row
    fresh["failures"] = int(fresh.get("failures") or 0) + 1
    if fresh["failures"] >= ctx.config["REFEREE_WEBHOOK_DISABLE_AFTER"] and not fresh.get("disabled"):
        fresh["disabled"] = True
        ctx.contacts.save(fresh)
        _notice_disabled(ctx, fresh)
        return {**row, "disabled": True}
    ctx.contacts.save(fresh)
    # the URL is the player's and may hold a token: the contact id names it
    raise RuntimeError(f"webhook delivery of {event['id']} to contact {contact_id} failed: {row.get('error')}")


def _notice_disabled(ctx: _Context, contact: dict[str, Any]) -> None:
    confirmed = [c for c in ctx.contacts.contacts_for(contact["key"])
                 if c.get("email") and c.get("email_status") == "confirmed"]
    for address, language in {c["email"]: c.get("language") or "en" for c in confirmed}.items():
        subject, text = render_webhook_disabled(webhook=contact["webhook"], failures=contact["failures"],
                                                contact_id=contact["id"], language=language)
        ctx.mailer.send(compose(sender=ctx.sender, to=address, subject=subject, text=text, language=language))


@counted("mail")
def deliver_mail(contact_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = context()
    contact = ctx.contacts.get(contact_id)
    event = payload["event"]
    if contact is None or not contact.get("email") or contact.get("email_status") != "confirmed":
        return {"skipped": "no confirmed address"}
    game = _game_state(ctx, event.get("game"))
    language = contact.get("language") or "en"
    subject, text, html = render_event(event, base_url=ctx.base_url, game=game, language=language)
    row: dict[str, Any] = {"channel": "mail", "event": event, "at": now(), "to": contact["email"]}
    try:
        ctx.mailer.send(compose(sender=ctx.sender, to=contact["email"], subject=subject, text=text, html=html,
                                language=language))
        row.update(ok=True)
    except OSError as exc:
        row.update(ok=False, error=f"{type(exc).__name__}: {exc}")
        ctx.contacts.record_delivery(contact_id, row)
        raise
    ctx.contacts.record_delivery(contact_id, row)
    return row


def _game_state(ctx: _Context, game_id: str | None) -> dict[str, Any] | None:
    if not game_id:
        return None
    from referee.games_service import GameService  # noqa: PLC0415 - only for mail texts
    from referee.store import RedisStore  # noqa: PLC0415

    try:
        return GameService(RedisStore.of(ctx.log_redis, redis.Redis.from_url(ctx.config["REFEREE_WORK_REDIS_URL"]))
                           ).game_state(game_id)
    except Exception:  # the mail still goes out, with fewer details
        log.exception("could not read game %s for a mail", game_id)
        return None


@counted("confirm")
def send_confirmation(contact_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Mail a pending contact a new confirmation code; ``payload`` carries nothing (the code is made here,
    never queued: ``ContactService.new_code``)."""
    ctx = context()
    made = ctx.contacts.new_code(contact_id)
    if made is None:
        return {"skipped": "nothing to confirm"}
    contact, code = made
    link = f"{ctx.base_url}/play/confirm/{contact_id}#{code}"
    subject, text = render_confirmation(key=contact["key"], contact_id=contact_id, code=code, link=link,
                                        language=contact.get("language") or "en")
    ctx.mailer.send(compose(sender=ctx.sender, to=contact["email"], subject=subject, text=text,
                            language=contact.get("language") or "en"))
    return {"sent": contact["email"]}


# -- the outbox router -----------------------------------------------------------------------------------
class OutboxRouter:
    """Reads the outbox (consumer group ``notify``) and queues deliveries; a thread in ``referee worker``."""

    def __init__(self, log_redis: Client, contacts: ContactService, name: str, block_ms: int = 1000):
        self.redis, self.contacts, self.name, self.block_ms = log_redis, contacts, name, block_ms
        self._loop = PassLoop("referee-outbox", self.run_once)  # each pass waits in XREADGROUP BLOCK
        #: the consumer group is made once (again after a NOGROUP: the stream was deleted), not on every pass
        self._grouped = False
        #: when the next pass looks for what a dead consumer left (``XAUTOCLAIM``): every CLAIM_EVERY seconds,
        #: not on every pass (issue 28: with a pass per batch of events, two round trips a move went to these)
        self._next_claim = 0.0

    #: seconds between two looks for the events a dead consumer left pending (they are taken after 30 s idle)
    CLAIM_EVERY = 5.0

    def ensure_group(self) -> None:
        try:
            self.redis.xgroup_create(keys.OUTBOX, GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._grouped = True

    def run_once(self, block_ms: int | None = None) -> int:
        """Route what is new (and, every ``CLAIM_EVERY`` seconds, what a dead consumer left for 30 s); returns
        how many events were routed."""
        if not self._grouped:
            self.ensure_group()
        routed = 0
        batches = []
        block = self.block_ms if block_ms is None else block_ms
        try:
            if time.monotonic() >= self._next_claim:
                self._next_claim = time.monotonic() + self.CLAIM_EVERY
                claimed = self.redis.xautoclaim(keys.OUTBOX, GROUP, self.name, min_idle_time=30_000,
                                                start_id="0-0", count=100)
                batches = [claimed[1]] if claimed and claimed[1] else []
            fresh = streams_of(self.redis.xreadgroup(GROUP, self.name, {keys.OUTBOX: ">"}, count=200,
                                                     block=block or None))  # BLOCK 0 would wait forever
        except redis.ResponseError as exc:
            if "NOGROUP" in str(exc):  # the stream (and its group) is gone: made again on the next pass
                self._grouped = False
                self._next_claim = 0.0
            raise
        batches += [rows for _stream, rows in fresh or []]
        for rows in batches:
            events = []
            for entry_id, fields in rows:
                if not fields:
                    continue
                try:
                    events.append((entry_id, json.loads(fields.get(b"e", fields.get("e")))))
                except (TypeError, ValueError):  # left pending, like an event that could not be routed
                    log.exception("could not read outbox entry %s", entry_id)
            # most keys have no contact: their contact ids for the whole batch in one round trip, and one XACK
            ids_of = self.contacts.contact_ids(list(dict.fromkeys(k for _id, e in events for k in event_keys(e))))
            done = []
            for entry_id, event in events:
                try:
                    self.contacts.route(event, ids_of)
                except Exception:  # leave it pending: it is claimed again after 30 s
                    log.exception("could not route outbox entry %s", entry_id)
                    continue
                done.append(entry_id)
            if done:
                self.redis.xack(keys.OUTBOX, GROUP, *done)
            routed += len(done)
        return routed

    def start(self) -> OutboxRouter:
        self._loop.start()
        return self

    def request_stop(self) -> None:
        self._loop.request_stop()

    def stop(self, timeout: float = 5.0) -> None:
        self._loop.stop(timeout)
