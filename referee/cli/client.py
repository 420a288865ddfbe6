"""What the ``referee`` commands that talk to a server share: the ``--server`` option, the HTTP client,
reading a key file, signing at the log's tip, printing JSON and failing with the server's answer.

It imports none of the command modules (``games``, ``clocks``, ``notifications``, ``tournaments`` …),
which import it."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, NoReturn

import click

from ..i18n import env_language, translator
from ..protocol.keyfile import is_encrypted, parse_encrypted, read_key_text
from ..protocol.signing import sign

DEFAULT_SERVER = "http://127.0.0.1:8000"
PASSPHRASE_ENV = "REFEREE_KEY_PASSPHRASE"

server_option = click.option("--server", default=lambda: os.environ.get("REFEREE_SERVER", DEFAULT_SERVER),
                             show_default="$REFEREE_SERVER or " + DEFAULT_SERVER)


def _(message: str, /, **params: Any) -> str:
    """``message`` in the terminal's language (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``: gettext's
    rules; ``referee/i18n.py``), ``%``-formatted with ``params``. The commands' ``--help`` stays English."""
    return str(translator(env_language())(message, **params))


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    # the server's error messages come back in the terminal's language (their codes do not change)
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json",
                                                                              "Accept-Language": env_language()})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as err:
        raw = err.read()
        try:
            return err.code, json.loads(raw)
        except ValueError:
            return err.code, {"error": {"code": f"http/{err.code}", "message": raw.decode(errors="replace")}}
    except urllib.error.URLError as err:
        raise click.ClickException(_("cannot reach %(url)s: %(reason)s", url=url, reason=err.reason)) from err


def fail(status: int, body: Any) -> NoReturn:
    echo_json(body)
    raise click.exceptions.Exit(1 if status < 500 else 2)


def load_key(path: str) -> Any:
    """The private key of a key file: plain (``referee keygen``) or passphrase-encrypted (``docs/keys.md``).

    The passphrase of an encrypted file comes from ``$REFEREE_KEY_PASSPHRASE``, else it is asked for."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        if not is_encrypted(text):
            return read_key_text(text)
        parse_encrypted(text)  # a broken file is reported before anyone types a passphrase
        passphrase = os.environ.get(PASSPHRASE_ENV)
        if passphrase is None:
            passphrase = click.prompt(_("Passphrase of %(path)s", path=path), hide_input=True, err=True)
        return read_key_text(text, passphrase)
    except (OSError, ValueError) as exc:
        raise click.BadParameter(_("cannot read a private key from %(path)s: %(error)s", path=path, error=exc)) from exc


def seat_of(game: dict[str, Any], public: str, seat: int | None) -> int:
    if seat is not None:
        return seat
    seats: list[int] = [s["seat"] for s in game["seats"] if s["key"] == public]
    if not seats:
        raise click.ClickException(_("this key has no seat in the game; pass --seat"))
    if len(seats) > 1:
        to_move: int | None = game.get("to_move")
        return to_move if to_move in seats else seats[0]
    return seats[0]


armor_option = click.option("--armor", is_flag=True,
                             help="print the signed submission as an armored block for a mail to the referee's mail "
                                  "gateway; do not submit")


def echo_armored(submission: dict[str, Any]) -> None:
    """Print ``submission`` as an armored block (CONTRACT section 9) for a mail, instead of posting it."""
    from ..notify.armor import armor  # noqa: PLC0415

    click.echo(armor(submission), nl=False)


def armor_at_tip(state_url: str, key: Any, envelope_of: Any) -> None:
    """Read the log's position (``GET state_url``), sign ``envelope_of(state)`` for it and print the armored
    block (what ``--armor`` does instead of :func:`post_at_tip`: the mail gateway submits it)."""
    status, state = http("GET", state_url)
    if status != 200:
        fail(status, state)
    envelope = envelope_of(state)
    echo_armored({"envelope": envelope, "sig": sign(key, envelope)})


def post_at_tip(state_url: str, post_url: str, key: Any, envelope_of: Any, attempts: int = 10, *,
                also: dict[str, Any] | None = None) -> None:
    """Read the log's position (``GET state_url``), sign ``envelope_of(state)`` for it and post it to
    ``post_url``; again if the log moved meanwhile (409 ``submission/stale``). Prints the answer. ``also``: more
    signatures of the same envelope, by field (a rekey's ``{"new_sig": new key}``)."""
    for _attempt in range(attempts):
        status, state = http("GET", state_url)
        if status != 200:
            fail(status, state)
        envelope = envelope_of(state)
        extra = {field: sign(signer, envelope) for field, signer in (also or {}).items()}
        status, body = http("POST", post_url, {"envelope": envelope, "sig": sign(key, envelope), **extra})
        if status == 409 and body.get("error", {}).get("code") == "submission/stale":
            continue
        if status >= 300:
            fail(status, body)
        echo_json(body)
        return
    raise click.ClickException(_("the log kept moving; try again"))
