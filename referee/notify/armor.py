"""Armored submissions for mail (CONTRACT section 9): a signed submission as a block of text that survives
any mail client.

    -----BEGIN REFEREE SUBMISSION-----
    eyJlbnZlbG9wZSI6eyJjdHgiOiJyZWZlcmVlL21vdmUiLCJnYW1lIjoiZ19hYmMiLCJtb3ZlIjp7InR5cGUiOiJwYXNz
    …
    -----END REFEREE SUBMISSION-----

The body is base64url (no padding) of the submission's RFC 8785 bytes, wrapped at 64 columns. Reading
ignores whitespace, CR, ``>`` quote prefixes (any depth, as replies add them) and re-wrapping inside the
block, so a block quoted in a reply or re-flowed by a client still reads. Pure: no I/O.

>>> block = armor({"envelope": {"v": 1}, "sig": "x"})
>>> block.splitlines()[0]
'-----BEGIN REFEREE SUBMISSION-----'
>>> quoted = "\\n".join("> " + line for line in block.splitlines())
>>> [found.submission for found in find_blocks("Thanks!\\n" + quoted)]
[{'envelope': {'v': 1}, 'sig': 'x'}]
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any

from ..i18n import N_, Text
from ..protocol.canonical import StrictJSONError, canonical_bytes, parse_strict

BEGIN = "-----BEGIN REFEREE SUBMISSION-----"
END = "-----END REFEREE SUBMISSION-----"
WIDTH = 64
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)*")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def armor(submission: dict[str, Any]) -> str:
    """The armored block of ``submission`` (lines end with ``\\n``, the last one too)."""
    body = base64.urlsafe_b64encode(canonical_bytes(submission)).rstrip(b"=").decode("ascii")
    lines = [body[i:i + WIDTH] for i in range(0, len(body), WIDTH)]
    return "\n".join([BEGIN, *lines, END]) + "\n"


@dataclass
class Block:
    """One block found in a text: its ``submission`` or, when it does not read, the ``error`` (code, message)."""

    index: int
    submission: dict[str, Any] | None = None
    error: tuple[str, str] | None = None


def _unquote(line: str) -> str:
    return _QUOTE.sub("", line.replace("\r", "")).strip()


def find_blocks(text: str) -> list[Block]:
    """Every armored block in ``text``, in order; an unterminated block is reported too."""
    out: list[Block] = []
    body: list[str] | None = None
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = _unquote(raw)
        if BEGIN in line:
            if body is not None:
                out.append(Block(len(out), error=("mail/broken_block", N_("a block begins before the last one ended"))))
            body = []
            continue
        if body is None:
            continue
        if END in line:
            out.append(_decode(len(out), "".join(body)))
            body = None
        else:
            body.append("".join(line.split()))
    if body is not None:
        out.append(Block(len(out), error=("mail/broken_block", N_("the block has no END line"))))
    return out


def _decode(index: int, text: str) -> Block:
    if not _BASE64URL.fullmatch(text) or not text:
        return Block(index, error=("mail/broken_block", N_("the block is not base64url (was it altered?)")))
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return Block(index, error=("mail/broken_block", N_("the block is not base64url (was it altered?)")))
    try:
        value = parse_strict(raw)
    except StrictJSONError as exc:
        return Block(index, error=("mail/broken_block",
                                   Text("the block is not a JSON submission: %(error)s", error=str(exc))))
    except UnicodeDecodeError:
        return Block(index, error=("mail/broken_block", N_("the block is not UTF-8 JSON (was it cut or altered?)")))
    if not isinstance(value, dict) or not isinstance(value.get("envelope"), dict) or "sig" not in value:
        return Block(index, error=("mail/broken_block", N_("the block holds no {envelope, sig} submission")))
    return Block(index, submission=value)
