"""The confirmation page (CONTRACT section 11): the link of a confirmation mail opens a page that confirms
only when its button is pressed. End to end: the real worker mails the code into the server's Maildir."""

from __future__ import annotations

import email
import mailbox
import time
from email import policy

import requests

from referee.clock import now
from referee.protocol.signing import generate_key, public_key_b64, sign


def _signed(key, ctx, **fields):
    envelope = {"v": 1, "ctx": ctx, "key": public_key_b64(key), **fields, "at": now()}
    return {"envelope": envelope, "sig": sign(key, envelope)}


def _code_from_maildir(base, address, timeout=20.0):
    """The code of the confirmation mail to ``address`` in the web server's Maildir (``<var>/mail``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for box in base.glob("web-var*/mail"):
            if not all((box / sub).is_dir() for sub in ("new", "cur", "tmp")):
                continue  # the worker is creating it
            for message in mailbox.Maildir(str(box), factory=None).values():
                parsed = email.message_from_bytes(message.as_bytes(), policy=policy.default)
                if address in str(parsed["To"]):
                    body = parsed.get_body(preferencelist=("plain",)).get_content()
                    return body.split("Confirmation code:")[1].split()[0], body
        time.sleep(0.1)
    raise AssertionError("no confirmation mail in the Maildir")


def test_the_confirmation_link_confirms_only_by_its_button(browser, web_server, console_errors, tmp_path_factory):
    key = generate_key()
    address = f"carol-{time.monotonic_ns()}@example.org"
    created = requests.post(f"{web_server}/contacts", json=_signed(key, "referee/contact", email=address), timeout=10)
    assert created.status_code == 201 and created.json()["email_status"] == "pending"
    contact = created.json()["id"]
    code, body = _code_from_maildir(tmp_path_factory.getbasetemp(), address)
    assert f"/play/confirm/{contact}#{code}" in body
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    page.goto(f"{web_server}/play/confirm/{contact}")  # the GET alone (a mail scanner) confirms nothing
    listed = requests.get(f"{web_server}/contacts", params=_query(key), timeout=10).json()["contacts"]
    assert listed[0]["email_status"] == "pending"
    page.fill("#code", code)
    page.click("button[type=submit]")
    page.wait_for_function("() => document.getElementById('confirm-status').textContent.startsWith('Confirmed')")
    listed = requests.get(f"{web_server}/contacts", params=_query(key), timeout=10).json()["contacts"]
    assert listed[0]["email_status"] == "confirmed"
    context.close()
    console_errors.assert_none()


def _query(key):
    body = _signed(key, "referee/contacts")
    return {"key": body["envelope"]["key"], "at": body["envelope"]["at"], "sig": body["sig"]}
