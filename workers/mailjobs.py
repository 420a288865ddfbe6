"""The mail gateway's side of the workers (``referee/notify/gateway.py``): keeping a received mail, the RQ
job that submits its blocks through the service's write path and replies, and ``referee mail-gateway``.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
from email.utils import parseaddr
from typing import Any, cast

import redis
from marshmallow import ValidationError
from rq import Queue, Retry

from referee.config import load_config
from referee.errors import ServiceError, invalid
from referee.games_service import GameService
from referee.i18n import Text
from referee.messages import MessageService, standing_of
from referee.messages.limits import MESSAGES_PER_KEY_SCOPE, proven_seat_key, spend
from referee.notify.gateway import (
    MAX_MAIL,
    GatewayHandler,
    parse,
    process_message,
    reply_language,
    reply_subject,
    reply_text,
)
from referee.notify.mail import compose
from referee.protocol.signing import read_or_create_key_file
from referee.store import RedisStore, keys
from referee.store.cluster import Client, connect
from referee.store.messages import messages_of
from referee.store.redis_store import rows_of
from schemas.common import problems_from_messages
from schemas.messages import MessageSubmissionSchema
from schemas.submissions import (
    AcceptSubmissionSchema,
    AnswerSubmissionSchema,
    MoveSubmissionSchema,
    OfferSubmissionSchema,
    ResignSubmissionSchema,
    VacationSubmissionSchema,
)

from .deliveries import context, notify_queue
from .queue import ReplayDispatch, replay_queue

log = logging.getLogger(__name__)

MAIL_JOB = "workers.mailjobs.process_mail"
REPLIES_PER_HOUR = 5  # to an address that is no confirmed contact (CONTRACT section 11)
SCHEMAS = {"referee/move": MoveSubmissionSchema, "referee/accept": AcceptSubmissionSchema,
           "referee/vacation": VacationSubmissionSchema, "referee/resign": ResignSubmissionSchema,
           "referee/offer": OfferSubmissionSchema, "referee/answer": AnswerSubmissionSchema,
           "referee/message": MessageSubmissionSchema}
DONE = "mail:done:{mail}"


def store_mail(log_redis: Client, queue: Queue, raw: bytes, mail_from: str, rcpt_tos: list[str]) -> str:
    """Keep ``raw`` in ``mail:inbox`` (durable before the SMTP 250) and queue its processing; its stream id."""
    mail_id = log_redis.xadd(keys.MAIL_INBOX, {"raw": raw, "from": mail_from, "to": json.dumps(rcpt_tos)},
                             maxlen=100_000, approximate=True)
    mail_id = mail_id.decode() if isinstance(mail_id, bytes) else mail_id
    try:
        queue.enqueue(MAIL_JOB, mail_id, job_id=f"mail-{mail_id}", retry=Retry(max=3, interval=[5, 30, 300]),
                      result_ttl=0, failure_ttl=7 * 86400, job_timeout=300, description=f"mail {mail_id}")
    except redis.RedisError:  # the mail is kept; `referee mail-gateway` re-queues unprocessed mail at start
        log.exception("could not queue mail %s", mail_id)
    return mail_id


class _Service:
    """The game service a mail job submits through (the same write path as HTTP)."""

    def __init__(self) -> None:
        ctx = context()
        config = ctx.config
        work = redis.Redis.from_url(config["REFEREE_WORK_REDIS_URL"])
        store = RedisStore.of(ctx.log_redis, work).replicas_from(config)
        self.games = GameService(store, ReplayDispatch(replay_queue(store.queue_redis, config["REFEREE_QUEUE"]), store),
                                 config["REFEREE_ORGANISER_KEYS"], referee_key=read_or_create_key_file(
                                     config["REFEREE_KEY_FILE"]))
        self.config = config
        self.messages = MessageService(messages_of(store), self.games.created_entry, self.games.referee_key,
                                       emit=store.emit_events, holders=lambda game_id: self.games.fold(game_id).keys,
                                       standing=standing_of(self.games.fold),
                                       max_bytes=config["REFEREE_MAX_MESSAGE_BYTES"])

    def _spend(self, ctx: str, submission: Any, sender: str) -> None:
        """The HTTP API's rate limits on messages, offers and answers (issue 37, item 4), in the same counters: a
        message spends its seat key's budget (once its signature proves it; else the sender's) and the sender's,
        an offer or an answer the sender's. A mail's sender (its From mailbox, lower case) stands for the client
        address: a mail comes through the sender's mail server, whose address says nothing of the sender.
        Over a limit: 429 ``rate/limited``, the block refused in the reply."""
        sender_key = "mail:" + sender.lower()
        spent: list[tuple[str, str, str | None]]
        if ctx == "referee/message":  # the per-key budget of the HTTP route POST /games/{id}/messages
            spent = [("REFEREE_RATE_MESSAGES", proven_seat_key(self.games.created_entry, submission) or sender_key,
                      MESSAGES_PER_KEY_SCOPE), ("REFEREE_RATE_MESSAGES_PER_ADDRESS", sender_key, None)]
        elif ctx in ("referee/offer", "referee/answer"):
            spent = [("REFEREE_RATE_OFFERS", sender_key, None)]
        else:
            return
        for setting, key, scope in spent:
            retry_after = spend(self.config, setting, key, scope)
            if retry_after is not None:
                limit = self.config[setting]
                raise ServiceError(429, "rate/limited", Text(
                    "too many requests: at most %(limit)s from one client; retry in %(seconds)s s",
                    limit=limit, seconds=retry_after),
                    details={"limit": limit, "setting": setting, "retry_after": retry_after})

    def submit(self, ctx: str, game_id: str, submission: dict[str, Any], sender: str = "") -> dict[str, Any]:
        """The same checks as HTTP: the rate limits, the submission's schema (400 listing every problem), then
        the service."""
        self._spend(ctx, submission, sender)
        schema = SCHEMAS[ctx]()
        try:
            submission = schema.load(submission)
        except ValidationError as exc:
            raise invalid(problems_from_messages(exc.messages)) from exc
        if ctx == "referee/move":
            return self.games.submit_move(game_id, submission)[1]
        if ctx == "referee/accept":
            return self.games.accept(game_id, submission)
        if ctx == "referee/resign":
            return self.games.resign(game_id, submission)
        if ctx == "referee/offer":
            return self.games.offer(game_id, submission)
        if ctx == "referee/answer":  # the offer's position is the envelope's (the URL's, over HTTP)
            return self.games.answer(game_id, submission["envelope"]["offer"], submission)
        if ctx == "referee/message":
            return self.messages.post(game_id, submission)
        return self.games.vacation(game_id, submission)


_SERVICE: dict[str, _Service] = {}


def process_mail(mail_id: str) -> dict[str, Any]:
    """Submit the blocks of a kept mail and reply (once per Message-ID)."""
    ctx = context()
    rows = rows_of(ctx.log_redis.xrange(keys.MAIL_INBOX, mail_id, mail_id))
    if not rows:
        return {"skipped": "no such mail (trimmed?)"}
    fields = rows[0][1]
    raw = cast(bytes, fields.get(b"raw", fields.get("raw")) or b"")  # the log's client answers bytes
    service = _SERVICE.get("s") or _SERVICE.setdefault("s", _Service())
    message_id = parse(raw).get("Message-ID")
    seen_key = keys.MAIL_SEEN.format(message=str(message_id or mail_id))
    if message_id and not ctx.log_redis.set(seen_key, mail_id, nx=True, ex=7 * 86400):
        first = ctx.log_redis.get(seen_key)
        if (first.decode() if isinstance(first, bytes) else first) != mail_id:
            ctx.log_redis.set(DONE.format(mail=mail_id), 1, ex=7 * 86400)
            return {"skipped": f"the mail {message_id} was taken before (delivered twice)"}
    sender = parseaddr(str(parse(raw).get("From", "")))[1]
    processed = process_message(raw, lambda kind, game, submission: service.submit(kind, game, submission, sender),
                                ctx.contacts.confirm_by_reply)
    ctx.log_redis.set(DONE.format(mail=mail_id), 1, ex=7 * 86400)
    if not processed.reply_to:
        return {"blocks": len(processed.outcomes), "replied": False}
    if not _may_reply(ctx, processed.reply_to):
        log.warning("not replying to %s: over %d replies this hour to an unconfirmed address",
                    processed.reply_to, REPLIES_PER_HOUR)
        return {"blocks": len(processed.outcomes), "replied": False}
    language = reply_language(processed, ctx.contacts.language_of_address(processed.sender))
    ctx.mailer.send(compose(sender=ctx.sender, to=processed.reply_to, subject=reply_subject(processed),
                            text=reply_text(processed, ctx.base_url, language), in_reply_to=processed.message_id,
                            references=processed.references, language=language))
    return {"blocks": len(processed.outcomes), "replied": True,
            "accepted": sum(1 for o in processed.outcomes if o.ok)}


def _may_reply(ctx: Any, address: str) -> bool:
    lowered = address.lower()
    if ctx.log_redis.sismember(keys.CONFIRMED_ADDRESSES, lowered):
        return True
    counter = keys.MAIL_REPLIES.format(address=lowered)
    pipe = ctx.log_redis.pipeline()
    pipe.set(counter, 0, nx=True, ex=3600)  # the hour starts with the first reply (EXPIRE NX needs Redis 7)
    pipe.incr(counter)
    _, count = pipe.execute()
    return int(count) <= REPLIES_PER_HOUR


# -- referee mail-gateway --------------------------------------------------------------------------------
def run_gateway(host: str, port: int, *, ready: threading.Event | None = None,
                stop: threading.Event | None = None) -> None:
    """Run the SMTP server until SIGINT/SIGTERM (or ``stop``); mail is kept on the log's Redis."""
    from aiosmtpd.controller import Controller  # noqa: PLC0415

    config = load_config()
    log_redis = connect(config["REDIS_URL"])
    queue = notify_queue(redis.Redis.from_url(config["REFEREE_WORK_REDIS_URL"]), config["REFEREE_QUEUE"])
    requeue_unprocessed(log_redis, queue)
    handler = GatewayHandler(lambda raw, frm, tos: store_mail(log_redis, queue, raw, frm, tos),
                             max_size=MAX_MAIL)
    controller = Controller(handler, hostname=host, port=port, data_size_limit=MAX_MAIL + 64 * 1024)
    controller.start()
    stop = stop or threading.Event()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    if ready is not None:
        ready.set()
    try:
        stop.wait()
    finally:
        controller.stop()
        for sig, handler_ in previous.items():
            signal.signal(sig, handler_)


def requeue_unprocessed(log_redis: Client, queue: Queue, last: int = 1000) -> int:
    """Queue again the latest kept mails that no job has taken (a gateway that died between keeping a mail
    and queueing it); the job's Message-ID check keeps it from counting twice."""
    count = 0
    for mail_id, _fields in rows_of(log_redis.xrevrange(keys.MAIL_INBOX, count=last)):
        text = mail_id.decode() if isinstance(mail_id, bytes) else mail_id
        if queue.fetch_job(f"mail-{text}") is None and not _was_processed(log_redis, text):
            queue.enqueue(MAIL_JOB, text, job_id=f"mail-{text}", result_ttl=0, failure_ttl=7 * 86400)
            count += 1
    return count


def _was_processed(log_redis: Client, mail_id: str) -> bool:
    return bool(log_redis.get(DONE.format(mail=mail_id)))
