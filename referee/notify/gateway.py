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

The reply is in the sender's language (issue 24, :func:`reply_language`): the ``language`` of a contact of the
sender's address, else the mail's ``Content-Language`` or ``Accept-Language`` header, else English. Codes, rule
ids and receipts are the same in every language.
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

from ..error_texts import translate_error
from ..errors import ServiceError
from ..i18n import DEFAULT, N_, SUPPORTED, Text, negotiate, translator
from .armor import Block, find_blocks

log = logging.getLogger(__name__)

MAX_MAIL = 1024 * 1024  # bytes; larger mail is refused at the SMTP level (552)
_TAG = re.compile(r"<[^>]+>")
_BREAK = re.compile(r"<\s*(br|/p|/div|/pre|/tr|/li)\b[^>]*>", re.I)

#: what a block may carry (an envelope's ``ctx``), and what it is called in a reply
MAIL_CTXS = {"referee/move": N_("move"), "referee/accept": N_("acceptance"), "referee/vacation": N_("vacation"),
             "referee/resign": N_("resignation"), "referee/offer": N_("offer"), "referee/answer": N_("answer"),
             "referee/message": N_("message")}

SUBMISSION = N_("submission")

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
    #: the mail's ``Content-Language`` (else ``Accept-Language``) header, as it came
    languages: str = ""


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
                       references=str(message.get("References")) if message.get("References") else None,
                       languages=str(message.get("Content-Language") or message.get("Accept-Language") or ""))
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
            code, message_text = block.error or ("mail/broken_block", N_("the block does not read"))
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
        message = Text("a mail block may carry a move, an acceptance, a vacation, a resignation, an offer, an answer "
                       "or a message (ctx %(ctxs)s), not ctx %(ctx)s", ctxs=", ".join(MAIL_CTXS), ctx=repr(ctx))
        return Outcome(index, False, game_id, error={"code": "mail/unsupported", "message": message})
    if game_id is None:
        return Outcome(index, False, error={"code": "request/invalid",
                                            "message": Text("the envelope names no game")})
    try:
        return Outcome(index, True, game_id, answer={**submit(ctx, game_id, submission), "ctx": ctx})
    except ServiceError as exc:
        return Outcome(index, False, game_id, error=exc.to_dict()["error"])


def reply_language(processed: Processed, contact_language: str | None = None) -> str:
    """The language of the reply: the sender's contact's, else the mail's header's, else English."""
    if contact_language in SUPPORTED:
        return contact_language
    header = processed.languages
    if "," not in header and ";" not in header:  # Content-Language: "de-DE" (or a list: "de, en")
        header = header.replace(" ", ",")
    return negotiate(header) if header else DEFAULT


def reply_text(processed: Processed, base_url: str, language: str = DEFAULT) -> str:
    """The plain-text reply in ``language``: one section per block, in the mail's order."""
    _ = translator(language)
    lines = [_("The referee read your mail: %(count)s signed block(s) in it.", count=len(processed.outcomes))]
    if processed.confirmed:
        lines += ["", _("Your address is confirmed for %(count)s contact(s). Thank you.",
                        count=len(processed.confirmed))]
    if not processed.outcomes:
        if not processed.confirmed:
            lines += ["", "mail/no_block: " + _("the mail holds no -----BEGIN REFEREE SUBMISSION----- block."),
                      _("Sign a move with: referee move GAME 'MOVE' --key KEYFILE --armor"),
                      _("(or referee resign, offer, answer or say with --armor)"),
                      _("and paste what it prints into a mail to this address.")]
        return "\n".join(lines) + "\n"
    for outcome in processed.outcomes:
        lines.append("")
        block = {"block": outcome.index + 1, "game": outcome.game}
        where = _("Block %(block)s (game %(game)s)", **block) if outcome.game else _("Block %(block)s", **block)
        if outcome.ok and outcome.answer is not None:
            answer = outcome.answer
            what = _(MAIL_CTXS.get(str(answer.get("ctx")), SUBMISSION))
            if answer.get("ctx") == "referee/message":
                lines.append(_("%(block)s: ACCEPTED: the message is at position %(position)s of the game's messages.",
                               block=where, position=answer.get("position")))
                lines.append(_("Receipt (the referee's signature proves the message is in the game's messages):"))
            else:
                lines.append(_("%(block)s: ACCEPTED (%(what)s) at log position %(position)s.", block=where, what=what,
                               position=answer.get("position")))
                lines.append(_("Receipt (the referee's signature proves the %(what)s is in the log at this time):",
                               what=what))
            lines.append(json.dumps({"receipt": answer.get("receipt"), "receipt_sig": answer.get("receipt_sig")},
                                    separators=(",", ":"), sort_keys=True))
            if outcome.game:
                lines.append(_("Game: %(link)s", link=f"{base_url.rstrip('/')}/play/games/{outcome.game}"))
        else:
            error = translate_error(outcome.error or {}, language)
            rule = " " + _("(rule %(rule)s)", rule=error["rule"]) if error.get("rule") else ""
            lines.append(_("%(block)s: REFUSED %(code)s%(rule)s: %(message)s", block=where, code=error.get("code"),
                           rule=rule, message=error.get("message")))
            details = error.get("details") or {}
            if isinstance(details.get("pending"), dict):
                pending = details["pending"]
                lines.append(_("The pending offer: seat %(seat)s's %(offer)s at log position %(position)s.",
                               seat=pending.get("seat"), offer=pending.get("kind"), position=pending.get("offer")))
            if "seq" in details and "head" in details:
                lines.append(_("The log is now at seq %(seq)s, head %(head)s: sign for that position.",
                               seq=details["seq"], head=details["head"]))
    return "\n".join(lines) + "\n"


def reply_subject(processed: Processed) -> str:
    """``Re: <its subject>`` (CONTRACT section 9: the same in every language, as mail clients write it)."""
    subject = processed.subject if processed.subject.lower().startswith("re:") else f"Re: {processed.subject}"
    return subject.strip()


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
