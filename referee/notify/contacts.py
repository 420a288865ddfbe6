"""Contact channels owned by keys (CONTRACT sections 9 and 11): a webhook and/or an e-mail address, and the
events wanted, registered and managed by requests signed with the player's key.

Every request carries a signed envelope ``{"v": 1, "ctx", "key", …, "at"}``. Unlike a move it is bound to
no log position, so it is bound to time instead: ``at`` must be within ``FRESH`` seconds of the server's
clock, and a write's signature is taken once (a replayed request is refused). Addresses and secrets are
shown only to their key.

An e-mail address gets nothing but its confirmation mail until it is confirmed (section 11): by the code
of that mail, in a signed ``referee/contact-confirm`` request, by the button of the page the mail links to,
or by a reply through the mail gateway that carries the code line. At most ``CONFIRMATIONS_PER_DAY``
confirmation mails go to one address in any 24 hours, counted per mailbox (:func:`mailbox_of`) whatever
the contacts and keys that name it (issue 37: counted per contact, six POSTs reached one address six
times). A key that confirmed an address once has it confirmed for its later contacts.

A contact has a ``language`` (``en``, ``de`` or ``fr``; English when not given): its mails — the turn, the
reminder, the confirmation, the decisions — and the mail gateway's replies to its address are in it.
"""

from __future__ import annotations

import base64
import builtins
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Callable
from typing import Any

from ..clock import now, now_ms
from ..errors import ServiceError, invalid
from ..i18n import DEFAULT, SUPPORTED
from ..protocol.signing import verify
from ..store import cluster, keys
from ..timecontrol import parse_ms
from .targets import url_problem

EVENTS = ("turn", "reminder", "timeout", "started", "finished", "tournament_round", "offer", "offer_answered",
          "resigned", "message", "seated", "left", "cancelled", "rematch", "recovery")
FRESH = 600  # seconds an envelope's `at` may be off the server's clock
CONFIRMATIONS_PER_DAY = 3
CODE_RE = re.compile(r"Confirmation code:\s*([A-Za-z0-9_-]{8,64})")

CTX_CONTACT = "referee/contact"
CTX_LIST = "referee/contacts"
CTX_DELETE = "referee/contact-delete"
CTX_CONFIRM = "referee/contact-confirm"
CTX_DELIVERIES = "referee/contact-deliveries"
CTX_RESEND = "referee/contact-resend"

#: ``enqueue(kind, contact_id, payload)``: queue a mail or webhook job (``workers/deliveries.py``)
Enqueue = Callable[[str, str, dict[str, Any]], None]
#: ``allow(mailbox)``: whether one more confirmation mail to ``mailbox`` (:func:`mailbox_of`) is within
#: ``CONFIRMATIONS_PER_DAY`` in the last 24 hours, counting it when it is (``referee.api.limits.confirmation_budget``)
ConfirmationBudget = Callable[[str], bool]


def new_contact_id() -> str:
    return "c_" + base64.b32encode(os.urandom(10)).decode("ascii").lower()


def mailbox_of(address: str) -> str:
    """The mailbox an e-mail address reaches, as the confirmation mails are counted: the domain without a
    trailing dot, in lower case and IDNA; the local part in lower case and without a ``+tag``; Gmail's dots
    dropped. (Counting two mailboxes as one only makes the limit stricter.)

    >>> {mailbox_of(a) for a in ("Bob@Example.ORG", "bob+x@example.org.", " BOB@example.org")}
    {'bob@example.org'}
    >>> mailbox_of("b.o.b+1@GoogleMail.com"), mailbox_of("jörg@bücher.example")
    ('bob@gmail.com', 'jörg@xn--bcher-kva.example')
    """
    local, _, domain = address.strip().rpartition("@")
    domain = domain.rstrip(".").lower()
    try:
        domain = domain.encode("idna").decode("ascii")
    except UnicodeError:
        pass
    local = local.lower().split("+", maxsplit=1)[0]
    if domain in {"gmail.com", "googlemail.com"}:
        local, domain = local.replace(".", ""), "gmail.com"
    return f"{local}@{domain}"


def code_digest(code: str) -> str:
    return hashlib.sha256(("referee/contact-code/v1:" + code).encode()).hexdigest()


def public_contact(contact: dict[str, Any]) -> dict[str, Any]:
    """A contact as its owner sees it (never the secret, never the code)."""
    out = {name: contact.get(name) for name in ("id", "key", "webhook", "email", "events", "email_status",
                                                "disabled", "failures", "created_at", "updated_at")}
    out["language"] = contact.get("language") or DEFAULT
    return out


def signed_time_ms(at: Any, path: str, code: str) -> int:
    """The signer's time ``at`` of a request bound to no log position, in ms, when it is within :data:`FRESH`
    seconds of the server's (contacts, and the seats' signed reads and mutes of their messages).

    :raises ServiceError: 400 ``request/invalid`` naming ``path`` for a time that does not parse; 400 ``code``
        for one too far from the server's time.
    """
    try:
        signed_ms = parse_ms(at)
    except ValueError as exc:
        raise invalid([{"path": path, "problem": str(exc)}]) from exc
    skew = abs(signed_ms - now_ms()) / 1000
    if skew > FRESH:
        raise ServiceError(400, code, f"the signed time is {skew:.0f} s away from the server's time; sign a "
                           f"fresh request (at most {FRESH} s off)", details={"server_time": now()})
    return signed_ms


class ContactService:
    """Contacts on the log's Redis (durable: losing them would silently stop a player's notices)."""

    def __init__(self, connection: cluster.Client, enqueue: Enqueue | None = None, *, allow_private: bool = True,
                 confirmation_budget: ConfirmationBudget | None = None):
        """``confirmation_budget``: without one (the workers', which register no contact) no confirmation
        mail goes out."""
        self.redis = connection
        self.enqueue = enqueue or (lambda kind, contact, payload: None)
        self.allow_private = allow_private
        self.confirmation_budget = confirmation_budget or (lambda mailbox: False)

    # -- the signed form ----------------------------------------------------------------------------
    def authenticate(self, submission: dict[str, Any], ctx: str, *, once: bool) -> dict[str, Any]:
        """The envelope of a signed contact request, after checking ctx, freshness and the signature."""
        envelope, sig = submission["envelope"], submission["sig"]
        if envelope.get("ctx") != ctx:
            raise invalid([{"path": "$.envelope.ctx", "problem": f"must be {ctx!r}"}])
        signed_time_ms(envelope.get("at"), "$.envelope.at", "contact/stale_request")
        if not verify(envelope["key"], envelope, sig):
            raise ServiceError(401, "submission/bad_signature", "the signature is not this key's over the envelope")
        if once and not self.redis.set(keys.CONTACT_SIG.format(sig=sig), 1, nx=True, ex=2 * FRESH):
            raise ServiceError(409, "contact/replayed", "this signed request was taken already; sign a new one")
        return envelope

    def _load(self, contact_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(keys.CONTACT.format(contact=contact_id)) if re.fullmatch(r"c_[a-z2-7]{16}",
                                                                                      contact_id) else None
        return json.loads(raw) if raw else None

    def get(self, contact_id: str) -> dict[str, Any] | None:
        """The stored contact (with its secret), or None."""
        return self._load(contact_id)

    def _owned(self, contact_id: str, key: str) -> dict[str, Any]:
        contact = self._load(contact_id)
        if contact is None:
            raise ServiceError(404, "contact/not_found", f"no contact {contact_id!r}")
        if contact["key"] != key:
            raise ServiceError(403, "contact/not_yours", "this contact belongs to another key")
        return contact

    def save(self, contact: dict[str, Any]) -> None:
        self.redis.set(keys.CONTACT.format(contact=contact["id"]), json.dumps(contact, separators=(",", ":")))

    # -- checks of the fields -------------------------------------------------------------------------
    def _check_fields(self, envelope: dict[str, Any]) -> None:
        problems = []
        if not envelope.get("webhook") and not envelope.get("email"):
            problems.append({"path": "$.envelope", "problem": "give a webhook URL, an e-mail address, or both"})
        if envelope.get("webhook"):
            problem = self.webhook_problem(envelope["webhook"])
            if problem:
                problems.append({"path": "$.envelope.webhook", "problem": problem})
        unknown = sorted(set(envelope.get("events") or []) - set(EVENTS))
        if unknown:
            problems.append({"path": "$.envelope.events",
                             "problem": f"unknown events {unknown}; known: {list(EVENTS)}"})
        if "language" in envelope and envelope["language"] not in SUPPORTED:
            problems.append({"path": "$.envelope.language",
                             "problem": f"unknown language {envelope['language']!r}; known: {', '.join(SUPPORTED)}"})
        if problems:
            raise invalid(problems)

    def webhook_problem(self, url: str) -> str | None:
        """What is wrong with ``url`` as a webhook (``referee/notify/targets.py``: the same check of its
        addresses as every delivery makes), or None."""
        return url_problem(url, allow_private=self.allow_private)

    # -- requests -------------------------------------------------------------------------------------
    def add(self, submission: dict[str, Any], contact_id: str | None = None) -> dict[str, Any]:
        """``POST /contacts`` (and ``PUT /contacts/{id}``): register or change a contact. The answer holds the
        webhook's secret once, when the webhook is new."""
        envelope = submission["envelope"]
        self._check_fields(envelope)
        envelope = self.authenticate(submission, CTX_CONTACT, once=True)
        key = envelope["key"]
        stamp = now()
        if contact_id is None:
            contact: dict[str, Any] = {"id": new_contact_id(), "key": key, "created_at": stamp, "failures": 0,
                                       "disabled": False, "secret": None, "email": None, "webhook": None,
                                       "email_status": None}
        else:
            if envelope.get("contact") != contact_id:
                raise invalid([{"path": "$.envelope.contact", "problem": f"must be {contact_id!r} (the contact "
                                                                         "changed)"}])
            contact = self._owned(contact_id, key)
        out_secret = None
        if envelope.get("webhook") and envelope["webhook"] != contact.get("webhook"):
            contact["secret"] = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")
            out_secret = contact["secret"]
            contact["disabled"], contact["failures"] = False, 0
        elif not envelope.get("webhook"):
            contact["secret"] = None
        contact["webhook"] = envelope.get("webhook") or None
        email = (envelope.get("email") or "").strip() or None
        if email != contact.get("email"):
            if contact.get("email"):
                self.redis.srem(keys.CONTACTS_OF_ADDRESS.format(address=contact["email"].lower()), contact["id"])
            if email:
                self.redis.sadd(keys.CONTACTS_OF_ADDRESS.format(address=email.lower()), contact["id"])
            contact["email"] = email
            contact["email_status"] = None
            contact.pop("code", None)
            if email:
                confirmed = self.redis.sismember(keys.CONTACTS_CONFIRMED.format(key=key), email.lower())
                contact["email_status"] = "confirmed" if confirmed else "pending"
        contact["events"] = list(dict.fromkeys(envelope.get("events") or ["turn", "reminder", "timeout", "finished"]))
        contact["language"] = envelope.get("language") or contact.get("language") or DEFAULT
        contact["updated_at"] = stamp
        send_code = contact.get("email_status") == "pending" and "code" not in contact
        if send_code:
            contact["code"] = None  # the confirmation job makes the code (:meth:`new_code`): no job carries one
        self.save(contact)
        self.redis.sadd(keys.CONTACTS_OF_KEY.format(key=key), contact["id"])
        if send_code:
            self._send_confirmation(contact)
        out = public_contact(contact)
        if out_secret:
            out["secret"] = out_secret
        return out

    def _send_confirmation(self, contact: dict[str, Any]) -> None:
        if self.confirmation_budget(mailbox_of(contact["email"])):  # else: the mailbox has had its mails today
            self.enqueue("confirm", contact["id"], {})

    def new_code(self, contact_id: str) -> tuple[dict[str, Any], str] | None:
        """A new confirmation code for a pending contact, its digest stored in place of the last one's: the
        contact and the code, for the confirmation job to mail (``workers/deliveries.py``), or None when the
        contact is gone or confirmed. The code is made here, by the job, so that it is in no job's data and
        no log line (issue 37); a retried job mails a new one, the last one mailed is the one that counts."""
        contact = self._load(contact_id)
        if contact is None or contact.get("email_status") != "pending":
            return None
        code = secrets.token_urlsafe(12)
        contact["code"] = code_digest(code)
        self.save(contact)
        return contact, code

    def list(self, submission: dict[str, Any]) -> list[dict[str, Any]]:
        envelope = self.authenticate(submission, CTX_LIST, once=False)
        ids = sorted(i.decode() if isinstance(i, bytes) else i
                     for i in self.redis.smembers(keys.CONTACTS_OF_KEY.format(key=envelope["key"])))
        return [public_contact(c) for c in (self._load(i) for i in ids) if c is not None]

    def remove(self, contact_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        envelope = self.authenticate(submission, CTX_DELETE, once=True)
        contact = self._owned(contact_id, envelope["key"])
        self.redis.delete(keys.CONTACT.format(contact=contact_id), keys.CONTACT_DELIVERIES.format(contact=contact_id))
        self.redis.srem(keys.CONTACTS_OF_KEY.format(key=contact["key"]), contact_id)
        if contact.get("email"):
            self.redis.srem(keys.CONTACTS_OF_ADDRESS.format(address=contact["email"].lower()), contact_id)
        return {"id": contact_id, "removed": True}

    def confirm(self, contact_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /contacts/{id}/confirm``: the signed form, or ``{"code"}`` alone (the page's button: the code
        itself proves the mail was read)."""
        if "envelope" in body:
            envelope = self.authenticate(body, CTX_CONFIRM, once=True)
            contact = self._owned(contact_id, envelope["key"])
            code = envelope.get("code", "")
        else:
            loaded = self._load(contact_id)
            if loaded is None:
                raise ServiceError(404, "contact/not_found", f"no contact {contact_id!r}")
            contact = loaded
            code = body.get("code", "")
        return self.confirm_code(contact, code)

    def confirm_code(self, contact: dict[str, Any], code: str) -> dict[str, Any]:
        if contact.get("email_status") == "confirmed":
            return public_contact(contact)
        if not contact.get("code") or not hmac.compare_digest(contact["code"], code_digest(code)):
            raise ServiceError(403, "contact/bad_code", "that is not this contact's confirmation code")
        contact["email_status"] = "confirmed"
        contact.pop("code", None)
        contact["updated_at"] = now()
        self.save(contact)
        self.redis.sadd(keys.CONTACTS_CONFIRMED.format(key=contact["key"]), contact["email"].lower())
        self.redis.sadd(keys.CONFIRMED_ADDRESSES, contact["email"].lower())
        return public_contact(contact)

    def confirm_by_reply(self, address: str, text: str) -> builtins.list[str]:
        """Confirm every pending contact of ``address`` whose code is in ``text`` (a reply through the mail
        gateway); returns the contacts confirmed."""
        codes = CODE_RE.findall(text)
        if not codes:
            return []
        done = []
        for raw in self.redis.smembers(keys.CONTACTS_OF_ADDRESS.format(address=address.lower())):
            contact = self._load(raw.decode() if isinstance(raw, bytes) else raw)
            if not contact or (contact.get("email") or "").lower() != address.lower():
                continue
            for code in codes:
                try:
                    self.confirm_code(contact, code)
                except ServiceError:
                    continue
                done.append(contact["id"])
                break
        return done

    def language_of_address(self, address: str) -> str | None:
        """The language of the contacts of ``address`` (a confirmed one's first), or None when it has none."""
        if not address:
            return None
        found = []
        for raw in self.redis.smembers(keys.CONTACTS_OF_ADDRESS.format(address=address.lower())):
            contact = self._load(raw.decode() if isinstance(raw, bytes) else raw)
            if contact and (contact.get("email") or "").lower() == address.lower():
                found.append(contact)
        found.sort(key=lambda c: c.get("updated_at") or "", reverse=True)  # the latest change first …
        found.sort(key=lambda c: c.get("email_status") != "confirmed")  # … of a confirmed one first
        return (found[0].get("language") or DEFAULT) if found else None

    # -- deliveries ----------------------------------------------------------------------------------
    def deliveries(self, contact_id: str, submission: dict[str, Any]) -> builtins.list[dict[str, Any]]:
        envelope = self.authenticate(submission, CTX_DELIVERIES, once=False)
        self._owned(contact_id, envelope["key"])
        rows = self.redis.lrange(keys.CONTACT_DELIVERIES.format(contact=contact_id), 0, 199)
        return [json.loads(row) for row in rows]

    def record_delivery(self, contact_id: str, row: dict[str, Any]) -> None:
        name = keys.CONTACT_DELIVERIES.format(contact=contact_id)
        pipe = self.redis.pipeline()
        pipe.lpush(name, json.dumps(row, separators=(",", ":")))
        pipe.ltrim(name, 0, 199)
        pipe.execute()

    def resend(self, contact_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """Queue one more delivery of an event this contact was sent (from its delivery log)."""
        envelope = self.authenticate(submission, CTX_RESEND, once=True)
        contact = self._owned(contact_id, envelope["key"])
        wanted = envelope.get("event")
        for row in self.redis.lrange(keys.CONTACT_DELIVERIES.format(contact=contact_id), 0, 199):
            delivery = json.loads(row)
            if delivery.get("event", {}).get("id") == wanted:
                if contact.get("disabled"):
                    contact["disabled"], contact["failures"] = False, 0  # a re-send is the owner's "try again"
                    self.save(contact)
                self.enqueue(delivery["channel"], contact_id, {"event": delivery["event"], "resend": True})
                return {"id": contact_id, "event": wanted, "queued": True}
        raise ServiceError(404, "contact/no_such_delivery", f"no delivery of event {wanted!r} to this contact")

    def contacts_for(self, key: str, ids: Any = None) -> builtins.list[dict[str, Any]]:
        """The contacts of ``key`` (``ids``: its contact ids when the caller has read them already)."""
        if ids is None:
            ids = self.redis.smembers(keys.CONTACTS_OF_KEY.format(key=key))
        found = (self._load(i.decode() if isinstance(i, bytes) else i) for i in ids)
        return [c for c in found if c is not None]

    def contact_ids(self, of_keys: builtins.list[str]) -> dict[str, Any]:
        """The contact ids of each of ``of_keys``, read in one round trip (the router's batch)."""
        if not of_keys:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for key in of_keys:
            pipe.smembers(keys.CONTACTS_OF_KEY.format(key=key))
        return dict(zip(of_keys, pipe.execute(), strict=True))

    def route(self, event: dict[str, Any], ids_of: dict[str, Any] | None = None) -> int:
        """Queue the deliveries of an outbox event to every contact that wants it (once per contact and
        event id); returns how many were queued. ``ids_of``: the contact ids of the event's keys, read
        already (:meth:`contact_ids`); a key missing from it is read here."""
        queued = 0
        for key in event_keys(event):
            for contact in self.contacts_for(key, (ids_of or {}).get(key)):
                if event.get("type") not in contact.get("events", []):
                    continue
                channels = []
                if contact.get("webhook") and not contact.get("disabled"):
                    channels.append("webhook")
                if contact.get("email") and contact.get("email_status") == "confirmed":
                    channels.append("mail")
                for channel in channels:
                    once = keys.DELIVERY_ONCE.format(contact=f"{contact['id']}:{channel}", event=event["id"])
                    if self.redis.set(once, 1, nx=True, ex=2 * 86_400):
                        self.enqueue(channel, contact["id"], {"event": event})
                        queued += 1
        return queued


def event_keys(event: dict[str, Any]) -> list[str]:
    """The keys an event concerns: the seat's key, or every seat's (started, finished), or its ``recipients``'
    (the players' own decisions and messages: a private message's addressees only)."""
    if event.get("key"):
        return [event["key"]]
    rows = event.get("seats", []) + event.get("ranks", []) + event.get("recipients", [])
    found = [row.get("key") for row in rows if row.get("key")]
    return list(dict.fromkeys(found))
