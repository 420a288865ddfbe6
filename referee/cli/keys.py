"""``referee key link`` and ``referee key fetch``: a key moved between a terminal's key file and a browser by a device
link (CONTRACT section 15, ``docs/keys.md``).

``link`` seals the key under a fresh 32-byte secret, keeps the box on the server (``POST /keys/links``) and prints
``<server>/play/link/<link>#<secret>`` with its QR code; the secret is in the fragment only, so the server never has
it. ``fetch`` takes such a link (made by a browser's My keys page or by ``link``), takes the box once and writes the
key file (mode 0600).
"""

from __future__ import annotations

import io
import os
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

import click

from ..protocol.keyfile import KeyFileError, open_device_box, seal_device_box
from ..protocol.signing import b64url_decode, b64url_encode, private_key_b64, public_key_b64
from .client import _, fail, http, load_key, server_option

LINK_PATH = "/play/link/"


def link_url(server: str, link: str, secret: bytes) -> str:
    return f"{server.rstrip('/')}{LINK_PATH}{quote(link)}#{b64url_encode(secret)}"


def parse_link(url: str) -> tuple[str, str, bytes]:
    """The server, the link's id and its secret, from ``<server>/play/link/<link>#<secret>``."""
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.netloc or LINK_PATH not in parts.path:
        raise click.BadParameter(_("not a device link: %(url)s (it looks like <server>/play/link/<link>#<secret>)",
                                   url=url))
    prefix, link = parts.path.rsplit(LINK_PATH, 1)
    try:
        secret = b64url_decode(parts.fragment)
    except ValueError:
        secret = b""
    if len(secret) != 32:
        raise click.BadParameter(_("the link has no secret after its #: copy the whole link, with its #…"))
    return f"{parts.scheme}://{parts.netloc}{prefix}", link, secret


def terminal_qr(text: str) -> str:
    import segno  # noqa: PLC0415 - only for this command

    out = io.StringIO()
    segno.make(text, error="l").terminal(out=out, compact=True)
    return out.getvalue()


@click.group()
def key() -> None:
    """Move a key between this terminal and a browser by a device link (section 15)."""


@key.command("link")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the key file to send (plain or encrypted)")
@click.option("--name", help="the key's name on the other device (default: the file's name)")
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="wait until the other device has taken the key (or the link expires), saying so")
@click.option("--qr/--no-qr", default=True, show_default=True, help="print the link's QR code")
@server_option
def link(key_file: str, name: str | None, wait: bool, qr: bool, server: str) -> None:
    """Print a one-time link (and its QR code) that brings the key of KEY to another device: open it there in a
    browser, or give it to ``referee key fetch``. The server keeps only the sealed box; the secret that opens it
    is the link's part after #."""
    private = load_key(key_file)
    secret = os.urandom(32)
    box = seal_device_box(private, name or Path(key_file).stem, secret)
    status, body = http("POST", f"{server.rstrip('/')}/keys/links", {"box": b64url_encode(box)})
    if status != 201:
        fail(status, body)
    url = link_url(server, body["link"], secret)
    click.echo(url)
    if qr:
        click.echo(terminal_qr(url), nl=False)
    click.echo(_("Open it on the other device before %(expires)s; it works once.", expires=body["expires"]), err=True)
    if not wait:
        return
    click.echo(_("Waiting for the other device to take the key…"), err=True)
    status_url = f"{server.rstrip('/')}/keys/links/{quote(body['link'])}/status"
    while True:
        status, state = http("GET", status_url)
        if status == 200 and state.get("taken"):
            click.echo(_("The key was taken by the other device."), err=True)
            return
        if status == 404:
            raise click.ClickException(_("the link expired before the other device took the key"))
        if status != 200:
            fail(status, state)
        time.sleep(1)


@key.command("fetch")
@click.argument("url", metavar="LINK")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="the key file to write (mode 0600)")
def fetch(url: str, out: str) -> None:
    """Take the key of a device LINK (``<server>/play/link/<link>#<secret>``, from a browser's My keys page or
    ``referee key link``) and write it to a plain key file; prints the key's name and public key. A link works
    once."""
    if Path(out).exists():
        raise click.ClickException(_("%(file)s exists; not overwriting a key", file=out))
    server, link_id, secret = parse_link(url)
    status, body = http("GET", f"{server}/keys/links/{quote(link_id)}")
    if status != 200:
        fail(status, body)
    try:
        private, name = open_device_box(b64url_decode(body["box"]), secret)
    except (KeyFileError, ValueError, KeyError, TypeError) as exc:
        raise click.ClickException(_("the link's box could not be opened: %(error)s", error=exc)) from exc
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise click.ClickException(_("%(file)s exists; not overwriting a key", file=out)) from exc
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(private_key_b64(private) + "\n")
    click.echo(public_key_b64(private))
    click.echo(_("Key %(name)s written to %(file)s.", name=name or "-", file=out), err=True)
