"""Notifications from a terminal (CONTRACT section 9): ``referee contact …`` (a key's webhooks and e-mail
addresses, every request signed with that key) and ``referee mail-gateway`` (the SMTP server of play by
e-mail)."""

from __future__ import annotations

import os
import urllib.parse
from typing import Any

import click

from ..clock import now
from ..i18n import SUPPORTED
from ..protocol.signing import public_key_b64, sign
from .client import _, echo_json, fail, http, load_key, server_option


def _signed(key: Any, ctx: str, **fields: Any) -> dict[str, Any]:
    envelope = {"v": 1, "ctx": ctx, "key": public_key_b64(key), **fields, "at": now()}
    return {"envelope": envelope, "sig": sign(key, envelope)}


def _query(key: Any, ctx: str, **fields: Any) -> str:
    body = _signed(key, ctx, **fields)
    return urllib.parse.urlencode({"key": body["envelope"]["key"], "at": body["envelope"]["at"], "sig": body["sig"]})


def _call(method: str, url: str, body: Any = None) -> None:
    status, answer = http(method, url, body)
    if status >= 300:
        fail(status, answer)
    echo_json(answer)


@click.group()
def contact() -> None:
    """Your notification channels: a webhook and/or an e-mail address, for the events you choose."""


_key_option = click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
_language_option = click.option("--language", type=click.Choice(SUPPORTED),
                                help="the language of the mails: en, de or fr (default: en for a new contact; "
                                     "a change keeps the contact's)")


@contact.command("add")
@_key_option
@click.option("--webhook", help="an http(s) URL to POST events to (Standard Webhooks signatures)")
@click.option("--email", help="an address to mail events to (confirmed first, by a code mailed to it)")
@click.option("--events", default="turn,reminder,timeout,finished", show_default=True,
              help="comma-separated: turn, reminder, timeout, started, finished, tournament_round, offer, "
                   "offer_answered, resigned, message, seated, left, cancelled, rematch")
@_language_option
@server_option
def add(*, key_file: str, webhook: str | None, email: str | None, events: str, language: str | None,
        server: str) -> None:
    """Register a contact; prints it, with the webhook's secret (shown only this once)."""
    key = load_key(key_file)
    fields: dict[str, Any] = {"events": [e.strip() for e in events.split(",") if e.strip()]}
    if language:
        fields["language"] = language
    if webhook:
        fields["webhook"] = webhook
    if email:
        fields["email"] = email
    _call("POST", f"{server}/contacts", _signed(key, "referee/contact", **fields))


@contact.command("change")
@click.argument("contact_id", metavar="CONTACT")
@_key_option
@click.option("--webhook", help="the webhook URL (a new URL gets a new secret, shown once)")
@click.option("--email", help="the address (a new one is confirmed first)")
@click.option("--events", default="turn,reminder,timeout,finished", show_default=True)
@_language_option
@server_option
def change(*, contact_id: str, key_file: str, webhook: str | None, email: str | None, events: str,
           language: str | None, server: str) -> None:
    """Change a contact: its webhook, address, events and language (what is not given is removed; the
    language is kept)."""
    fields: dict[str, Any] = {"contact": contact_id,
                              "events": [e.strip() for e in events.split(",") if e.strip()]}
    if language:
        fields["language"] = language
    if webhook:
        fields["webhook"] = webhook
    if email:
        fields["email"] = email
    _call("PUT", f"{server}/contacts/{contact_id}", _signed(load_key(key_file), "referee/contact", **fields))


@contact.command("list")
@_key_option
@server_option
def list_(key_file: str, server: str) -> None:
    """The contacts of your key."""
    _call("GET", f"{server}/contacts?" + _query(load_key(key_file), "referee/contacts"))


@contact.command("remove")
@click.argument("contact_id", metavar="CONTACT")
@_key_option
@server_option
def remove(contact_id: str, key_file: str, server: str) -> None:
    """Remove a contact."""
    _call("DELETE", f"{server}/contacts/{contact_id}",
          _signed(load_key(key_file), "referee/contact-delete", contact=contact_id))


@contact.command("confirm")
@click.argument("contact_id", metavar="CONTACT")
@click.argument("code")
@_key_option
@server_option
def confirm(contact_id: str, code: str, key_file: str, server: str) -> None:
    """Confirm your address with the code the referee mailed to it."""
    _call("POST", f"{server}/contacts/{contact_id}/confirm",
          _signed(load_key(key_file), "referee/contact-confirm", contact=contact_id, code=code))


@contact.command("deliveries")
@click.argument("contact_id", metavar="CONTACT")
@_key_option
@server_option
def deliveries(contact_id: str, key_file: str, server: str) -> None:
    """The latest deliveries to a contact (newest first)."""
    key = load_key(key_file)
    body = _signed(key, "referee/contact-deliveries", contact=contact_id)
    params = urllib.parse.urlencode({"key": body["envelope"]["key"], "at": body["envelope"]["at"],
                                     "sig": body["sig"]})
    _call("GET", f"{server}/contacts/{contact_id}/deliveries?{params}")


@contact.command("resend")
@click.argument("contact_id", metavar="CONTACT")
@click.argument("event_id", metavar="EVENT")
@_key_option
@server_option
def resend(contact_id: str, event_id: str, key_file: str, server: str) -> None:
    """Deliver an event to a contact once more (re-enables a disabled webhook)."""
    _call("POST", f"{server}/contacts/{contact_id}/resend",
          _signed(load_key(key_file), "referee/contact-resend", contact=contact_id, event=event_id))


@click.command("mail-gateway")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=2525, show_default=True, type=int)
@click.option("--server", "public_url", help="the referee's public URL, for links in replies "
                                             "(default $REFEREE_PUBLIC_URL)")
def mail_gateway(host: str, port: int, public_url: str | None) -> None:
    """Run the play-by-email SMTP server: mail carrying armored signed submissions is kept durably, then
    submitted by a worker job, which mails the verdicts back. Finds the service's Redis as `referee
    worker` does (REDIS_URL, REFEREE_WORK_REDIS_URL)."""
    from workers.mailjobs import run_gateway  # noqa: PLC0415

    from ..config import load_config  # noqa: PLC0415
    from ..host.logs import announce, configure_logging  # noqa: PLC0415

    if public_url:
        os.environ["REFEREE_PUBLIC_URL"] = public_url
    configure_logging(load_config(), process="mail-gateway")
    announce(_("mail gateway on smtp://%(host)s:%(port)s (Ctrl-C stops)", host=host, port=port))
    run_gateway(host, port)
