"""Ed25519 keys and signed envelopes (CONTRACT section 3).

A public key travels as base64url without padding of its 32 raw bytes; a signature as base64url of
its 64 bytes. The signed bytes are the RFC 8785 serialisation of the envelope.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .canonical import canonical_bytes

MOVE_CTX = "referee/move"
ACCEPT_CTX = "referee/accept"
BUNDLE_CTX = "referee/bundle"
VACATION_CTX = "referee/vacation"
RECEIPT_CTX = "referee/receipt"
#: a seat's message (CONTRACT section 12), its mute request, its signed read of the messages, and the
#: referee's receipt of a message (a position in the game's message stream, not in its log)
MESSAGE_CTX = "referee/message"
MUTE_CTX = "referee/mute"
MESSAGES_READ_CTX = "referee/messages"
MESSAGE_RECEIPT_CTX = "referee/message-receipt"
# the players' own decisions (CONTRACT section 12, ``referee.rulings.decisions``)
RESIGN_CTX = "referee/resign"
OFFER_CTX = "referee/offer"
ANSWER_CTX = "referee/answer"
# open seats and invitations (CONTRACT section 14): taking a seat, leaving it, the creator's cancel, and the
# creator's signed creation request (the organiser's ``referee/create``)
SEAT_CTX = "referee/seat"
LEAVE_CTX = "referee/leave"
CANCEL_CTX = "referee/cancel"
REKEY_CTX = "referee/rekey"  # a seat's new key, by its holder (CONTRACT section 15)
RECOVER_CTX = "referee/recover"  # a lost key's seat asked for by a new key (CONTRACT section 15)
CREATE_CTX = "referee/create"


def b64url_encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def b64url_decode(text: str) -> bytes:
    """The bytes of ``text`` in canonical base64url: no padding, only ``A–Z a–z 0–9 - _``, and the unused low
    bits of the last character zero. Raises ``ValueError`` on anything else. Every key, signature and entropy
    that enters the service is read by this function (``schemas.common``), so that bytes have one written
    form and two texts are the same bytes only when they are the same text: the duplicate checks compare
    signatures as text (issue 37: ``sig + "="`` was a new signature to them).

    >>> b64url_decode("AQI")
    b'\\x01\\x02'
    >>> b64url_decode("AQI=")
    Traceback (most recent call last):
    ValueError: not base64url
    >>> b64url_decode("AQJ")  # the same bytes, an unused bit set
    Traceback (most recent call last):
    ValueError: not canonical base64url
    """
    if not isinstance(text, str) or not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    raw = _decode_any(text)
    if b64url_encode(raw) != text:
        raise ValueError("not canonical base64url")
    return raw


def _decode_any(text: str) -> bytes:
    """base64url with or without padding, any unused bits: how keys, signatures and entropy already in a log
    are read (they were accepted so before issue 37, and a fold or a verifier must judge them as then)."""
    if not isinstance(text, str) or any(c in text for c in "+/ \n\r\t"):
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ValueError("not base64url") from exc


def submitted_entropy(entry: dict[str, Any]) -> bytes | None:
    """The 32 bytes of ``entropy`` in an accepted or joined entry's signed envelope, or ``None`` when it is
    not 32 bytes of base64url (the folds of games and of tournaments refuse the entry then)."""
    try:
        entropy = _decode_any(entry["submission"]["envelope"].get("entropy", ""))
    except ValueError:
        return None
    return entropy if len(entropy) == 32 else None


def generate_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def public_key_b64(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return b64url_encode(public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def private_key_b64(key: Ed25519PrivateKey) -> str:
    return b64url_encode(key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                           serialization.NoEncryption()))


def load_public_key(text: str) -> Ed25519PublicKey:
    """A public key from its base64url form; ``ValueError`` when it is not 32 bytes of base64url. It reads keys
    as logs hold them (padded ones too); a key that comes in is read by :func:`b64url_decode` first."""
    raw = _decode_any(text)
    if len(raw) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    return Ed25519PublicKey.from_public_bytes(raw)


def load_private_key(text: str) -> Ed25519PrivateKey:
    raw = _decode_any(text.strip())
    if len(raw) != 32:
        raise ValueError("an Ed25519 private key is 32 bytes")
    return Ed25519PrivateKey.from_private_bytes(raw)


def sign(key: Ed25519PrivateKey, value: Any) -> str:
    """base64url signature over the RFC 8785 bytes of ``value``."""
    return b64url_encode(key.sign(canonical_bytes(value)))


@functools.lru_cache(maxsize=4096)
def _verifying_key(text: str) -> Ed25519PublicKey:
    """:func:`load_public_key`, remembered: every move of a game is checked against the same few keys (parsing
    one costs about a third of a check)."""
    return load_public_key(text)


def verify(public_key: str, value: Any, signature: str) -> bool:
    """Whether ``signature`` is ``public_key``'s signature over the RFC 8785 bytes of ``value``."""
    try:
        key = _verifying_key(public_key)
        sig = _decode_any(signature)  # what a log holds; what comes in is canonical (b64url_decode)
        key.verify(sig, canonical_bytes(value))
        return True
    except (ValueError, InvalidSignature, TypeError):
        return False


def read_or_create_key_file(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """The private key stored in ``path`` (base64url of 32 raw bytes); created with mode 0600 if absent."""
    file = Path(path)
    if file.exists():
        return load_private_key(file.read_text(encoding="ascii"))
    key = generate_key()
    file.parent.mkdir(parents=True, exist_ok=True)
    # Written whole to a private temporary file, then linked into place: several processes starting at once
    # (gunicorn's workers) all end up with the one key that was linked first, and none reads a half file.
    fd, temporary = tempfile.mkstemp(prefix=".key-", dir=file.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(private_key_b64(key) + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, file)
        except FileExistsError:
            return load_private_key(file.read_text(encoding="ascii"))
    finally:
        os.unlink(temporary)
    return key
