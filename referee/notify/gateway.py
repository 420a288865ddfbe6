"""The play-by-email gateway (CONTRACT section 9): an SMTP server that takes mail carrying armored signed
submissions, and the job that submits them and mails the verdicts back.

Receiving (:class:`GatewayHandler`, on ``aiosmtpd``): a mail is stored durably — ``XADD`` to the stream
``mail:inbox`` on the log's Redis, which fsyncs before it answers — *before* the SMTP ``250``; then one
RQ job (:func:`workers.mailjobs.process_mail`) is queued for it. A mail over the size limit is refused at
once (``552``); when Redis cannot take it the sender is told to try later (``451``), so a mail is never
lost. Any recipient address is accepted: the block, not the address, names the game.

Processing (:func:`process_message`, pure but for the ``submit`` and ``confirm`` callables it is given):
every block of the mail, in order — in text parts, HTML parts (tags stripped), and ``.txt``/``.json`` or
text attachments — is submitted through the service's one write path (acceptance, move, vacation,
resignation, offer, answer or message, by the envelope's ``ctx``: :data:`MAIL_CTXS`). The same signed
submission twice (a mail delivered twice, or a block both in the
text and an attachment) is one move: the second is answered from the log. The players' own decisions
(CONTRACT section 12) come the same way: a resignation, an offer, an answer to an offer (its ``offer`` names
the offer's log position) and a message (into the game's message stream, not its log). One reply reports
every block:
an accepted one with ``{"receipt", "receipt_sig"}`` on lines of its own, a refused one with the error
code, rule id and message; a mail without a block gets ``mail/no_block``.
"""

from __future__ import annotations

import email
import email.policy
import html
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import parseaddr
from typing import Any, cast

from ..errors import ServiceError
from .armor import Block, find_blocks

log = logging.getLogger(__name__)

MAX_MAIL = 1024 * 1024  # bytes; larger mail is refused at the SMTP level (552)
_TAG = re.compile(r"<[^>]+>")
_BREAK = re.compile(r"<\s*(br|/p|/div|/pre|/tr|/li)\b[^>]*>", re.I)

#: what a block may carry (an envelope's ``ctx``), and what it is called in a reply
MAIL_CTXS = {"referee/move": "move", "referee/accept": "acceptance", "referee/vacation": "vacation",
             "referee/resign": "resignation", "referee/offer": "offer", "referee/answer": "answer",
             "referee/message": "message"}

#: ``submit(ctx, game_id, submission) -> answer`` (the 2xx body) or raises ServiceError
Submit = Callable[[str, str, dict[str, Any]], dict[str, Any]]


@dataclass
class Outcome:
    index: int
    ok: bool
    game: str | None = None
    answer: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


@dataclass
class Processed:
    sender: str
    reply_to: str
    subject: str
    message_id: str | None
    references: str | None
    outcomes: list[Outcome] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    text: str = ""


def texts_of(message: EmailMessage) -> list[str]:
    """The texts a block may hide in: text parts, HTML parts as text, text-like attachments; in mail order."""
    out: list[str] = []
    for part in message.walk():
        if part.is_multipart():
            continue
        content_type = part.get_content_type()
        filename = (part.get_filename() or "").lower()
        try:
            payload = part.get_content()
        except (LookupError, ValueError):
            raw = cast(bytes, part.get_payload(decode=True) or b"")  # a part that is not multipart: its bytes
            payload = raw.decode("utf-8", "replace")
        if isinstance(payload, bytes):
            if not (filename.endswith((".txt", ".json", ".asc")) or content_type == "application/json"):
                continue
            payload = payload.decode("utf-8", "replace")
        if content_type == "text/html":
            payload = html.unescape(_TAG.sub("", _BREAK.sub("\n", payload)))
        elif not (content_type.startswith("text/") or content_type == "application/json"
                  or filename.endswith((".txt", ".json", ".asc"))):
            continue
        out.append(payload)
    return out


def parse(raw: bytes) -> EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def process_message(raw: bytes, submit: Submit, confirm: Callable[[str, str], list[str]] | None = None) -> Processed:
    """Submit every block of the mail ``raw`` and say what became of each."""
    message = parse(raw)
    sender = parseaddr(str(message.get("From", "")))[1]
    reply_to = parseaddr(str(message.get("Reply-To", ""))) [1] or sender
    result = Processed(sender=sender, reply_to=reply_to, subject=str(message.get("Subject", "") or ""),
                       message_id=str(message.get("Message-ID")) if message.get("Message-ID") else None,
                       references=str(message.get("References")) if message.get("References") else None)
    texts = texts_of(message)
    result.text = "\n".join(texts)
    if confirm is not None and sender:
        result.confirmed = confirm(sender, result.text)
    blocks: list[Block] = []
    for text in texts:
        blocks += find_blocks(text)
    seen: dict[str, Outcome] = {}
    for index, block in enumerate(blocks):
        if block.submission is None:
            code, message_text = block.error or ("mail/broken_block", "the block does not read")
            result.outcomes.append(Outcome(index, False, error={"code": code, "message": message_text}))
            continue
        submission = block.submission
        sig = submission.get("sig")
        if isinstance(sig, str) and sig in seen:  # the same block twice in one mail (text and attachment)
            continue
        outcome = _submit_one(index, submission, submit)
        if isinstance(sig, str):
            seen[sig] = outcome
        result.outcomes.append(outcome)
    return result


def _submit_one(index: int, submission: dict[str, Any], submit: Submit) -> Outcome:
    envelope = submission.get("envelope") or {}
    game_id = envelope.get("game") if isinstance(envelope.get("game"), str) else None
    ctx = envelope.get("ctx")
    if ctx not in MAIL_CTXS:
        names = [("an " if name[0] in "aeiou" else "a ") + name for name in MAIL_CTXS.values()]
        carried = ", ".join(names[:-1]) + " or " + names[-1]
        return Outcome(index, False, game_id, error={"code": "mail/unsupported",
                                                     "message": f"a mail block may carry {carried} (ctx "
                                                                f"{', '.join(MAIL_CTXS)}), not ctx {ctx!r}"})
    if game_id is None:
        return Outcome(index, False, error={"code": "request/invalid", "message": "the envelope names no game"})
    try:
        return Outcome(index, True, game_id, answer={**submit(ctx, game_id, submission), "ctx": ctx})
    except ServiceError as exc:
        return Outcome(index, False, game_id, error=exc.to_dict()["error"])


def reply_text(processed: Processed, base_url: str) -> str:
    """The plain-text reply: one section per block, in the mail's order."""
    lines = [f"The referee read your mail: {len(processed.outcomes)} signed block(s) in it."]
    if processed.confirmed:
        lines += ["", f"Your address is confirmed for {len(processed.confirmed)} contact(s). Thank you."]
    if not processed.outcomes:
        if not processed.confirmed:
            lines += ["", "mail/no_block: the mail holds no -----BEGIN REFEREE SUBMISSION----- block.",
                      "Sign a move with: referee move GAME 'MOVE' --key KEYFILE --armor",
                      "(or referee resign, offer, answer or say with --armor)",
                      "and paste what it prints into a mail to this address."]
        return "\n".join(lines) + "\n"
    for outcome in processed.outcomes:
        lines.append("")
        where = f" (game {outcome.game})" if outcome.game else ""
        if outcome.ok and outcome.answer is not None:
            answer = outcome.answer
            what = MAIL_CTXS.get(str(answer.get("ctx")), "submission")
            if answer.get("ctx") == "referee/message":
                lines.append(f"Block {outcome.index + 1}{where}: ACCEPTED: the message is at position "
                             f"{answer.get('position')} of the game's messages.")
                lines.append("Receipt (the referee's signature proves the message is in the game's messages):")
            else:
                lines.append(f"Block {outcome.index + 1}{where}: ACCEPTED ({what}) at log position "
                             f"{answer.get('position')}.")
                lines.append(f"Receipt (the referee's signature proves the {what} is in the log at this time):")
            lines.append(json.dumps({"receipt": answer.get("receipt"), "receipt_sig": answer.get("receipt_sig")},
                                    separators=(",", ":"), sort_keys=True))
            if outcome.game:
                lines.append(f"Game: {base_url.rstrip('/')}/play/games/{outcome.game}")
        else:
            error = outcome.error or {}
            rule = f" (rule {error['rule']})" if error.get("rule") else ""
            lines.append(f"Block {outcome.index + 1}{where}: REFUSED {error.get('code')}{rule}: {error.get('message')}")
            details = error.get("details") or {}
            if isinstance(details.get("pending"), dict):
                pending = details["pending"]
                lines.append(f"The pending offer: seat {pending.get('seat')}'s {pending.get('kind')} at log position "
                             f"{pending.get('offer')}.")
            if "seq" in details and "head" in details:
                lines.append(f"The log is now at seq {details['seq']}, head {details['head']}: sign for that "
                             "position.")
    return "\n".join(lines) + "\n"


class GatewayHandler:
    """aiosmtpd handler: keeps each mail durably, then queues its processing."""

    def __init__(self, store_mail: Callable[[bytes, str, list[str]], str], max_size: int = MAX_MAIL):
        self.store_mail = store_mail
        self.max_size = max_size

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        content = envelope.original_content or envelope.content or b""
        if isinstance(content, str):
            content = content.encode("utf-8", "surrogateescape")
        if len(content) > self.max_size:
            return f"552 5.3.4 the mail is larger than {self.max_size} bytes"
        try:
            mail_id = self.store_mail(content, envelope.mail_from or "", list(envelope.rcpt_tos))
        except Exception:
            log.exception("could not store an incoming mail")
            return "451 4.3.0 the referee cannot take mail right now; try again later"
        return f"250 2.0.0 queued as {mail_id}"
