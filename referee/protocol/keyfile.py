"""Private key files: the plain ``referee keygen`` file and the passphrase-encrypted one (``docs/keys.md``).

A plain key file is the base64url (no padding) of the 32-byte Ed25519 private key and a newline.

An encrypted key file is one JSON object (version 1)::

    {"format": "referee-key", "version": 1,
     "kdf": "PBKDF2-HMAC-SHA256", "iterations": 600000, "salt": "<base64url, 16 bytes>",
     "cipher": "AES-256-GCM", "iv": "<base64url, 12 bytes>",
     "ciphertext": "<base64url: the 32-byte private key encrypted, then the 16-byte tag>",
     "public": "<base64url of the 32-byte public key>", "name": "<optional label>"}

The AES key is PBKDF2-HMAC-SHA256(passphrase as UTF-8 of its NFC form, salt, iterations, 32 bytes);
the additional authenticated data is the ASCII of ``public``, so the file's public key cannot be swapped
without the decryption failing. The My keys page writes and reads the same format with Web Crypto; its
constants are this module's :data:`FORMAT_CONSTANTS` (the pages serve them as an ES module, so the two
cannot drift apart). This module is pure: no files, no prompts.
"""

from __future__ import annotations

import json
import os
import unicodedata
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

from .canonical import canonical_bytes
from .signing import b64url_decode, b64url_encode, load_private_key, private_key_b64, public_key_b64

FORMAT = "referee-key"
VERSION = 1
KDF = "PBKDF2-HMAC-SHA256"
CIPHER = "AES-256-GCM"
DEFAULT_ITERATIONS = 600_000  # OWASP's figure for PBKDF2-HMAC-SHA256 (2023)
MIN_ITERATIONS = 100_000
MAX_ITERATIONS = 10_000_000  # a file cannot make the reader spin for minutes
SALT_BYTES = 16
IV_BYTES = 12
#: the format's constants, shared with the pages' Web Crypto implementation (one source for both)
FORMAT_CONSTANTS: dict[str, str | int] = {
    "FORMAT": FORMAT, "VERSION": VERSION, "KDF": KDF, "CIPHER": CIPHER, "DEFAULT_ITERATIONS": DEFAULT_ITERATIONS,
    "MIN_ITERATIONS": MIN_ITERATIONS, "MAX_ITERATIONS": MAX_ITERATIONS, "SALT_BYTES": SALT_BYTES, "IV_BYTES": IV_BYTES,
}


class KeyFileError(ValueError):
    """The text is not a key file this module reads, or its passphrase is wrong."""


class PassphraseNeeded(KeyFileError):
    """The file is encrypted and no passphrase was given."""


def _normalise(passphrase: str) -> bytes:
    return unicodedata.normalize("NFC", passphrase).encode("utf-8")


def _aes_key(passphrase: str, salt: bytes, iterations: int) -> bytes:
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=iterations)
    return kdf.derive(_normalise(passphrase))


def encrypt_key(key: Ed25519PrivateKey, passphrase: str, *, name: str | None = None,
                iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None, iv: bytes | None = None) -> str:
    """The text of an encrypted key file for ``key`` (``salt`` and ``iv`` are fresh random unless given)."""
    if not passphrase:
        raise KeyFileError("an empty passphrase encrypts nothing")
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise KeyFileError(f"iterations must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}")
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    iv = os.urandom(IV_BYTES) if iv is None else iv
    public = public_key_b64(key)
    seed = b64url_decode(private_key_b64(key))
    ciphertext = AESGCM(_aes_key(passphrase, salt, iterations)).encrypt(iv, seed, public.encode("ascii"))
    document: dict[str, Any] = {"format": FORMAT, "version": VERSION, "kdf": KDF, "iterations": iterations,
                                "salt": b64url_encode(salt), "cipher": CIPHER, "iv": b64url_encode(iv),
                                "ciphertext": b64url_encode(ciphertext), "public": public}
    if name:
        document["name"] = name
    return json.dumps(document, indent=2) + "\n"


def is_encrypted(text: str) -> bool:
    return text.lstrip().startswith("{")


def _field(document: dict[str, Any], name: str, size: int | None = None) -> bytes:
    value = document.get(name)
    try:
        raw = b64url_decode(value)  # type: ignore[arg-type]
    except ValueError as exc:
        raise KeyFileError(f"{name} is not base64url") from exc
    if size is not None and len(raw) != size:
        raise KeyFileError(f"{name} must be {size} bytes, not {len(raw)}")
    return raw


def parse_encrypted(text: str) -> dict[str, Any]:
    """The checked header of an encrypted key file (``KeyFileError`` naming the problem)."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise KeyFileError(f"not JSON: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise KeyFileError(f'not an encrypted key file ("format" is not "{FORMAT}")')
    if document.get("version") != VERSION:
        raise KeyFileError(f"key file version {document.get('version')!r} is not supported (this reads {VERSION})")
    if document.get("kdf") != KDF or document.get("cipher") != CIPHER:
        raise KeyFileError(f"only kdf {KDF} with cipher {CIPHER} is supported")
    iterations = document.get("iterations")
    if type(iterations) is not int or not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise KeyFileError(f"iterations must be an integer between {MIN_ITERATIONS} and {MAX_ITERATIONS}")
    if len(_field(document, "salt")) < SALT_BYTES:
        raise KeyFileError(f"salt must be at least {SALT_BYTES} bytes")
    _field(document, "iv", IV_BYTES)
    _field(document, "ciphertext", 32 + 16)
    _field(document, "public", 32)
    name = document.get("name")
    if name is not None and not isinstance(name, str):
        raise KeyFileError("name must be a string")
    return document


def decrypt_key(text: str, passphrase: str) -> Ed25519PrivateKey:
    """The private key of an encrypted key file; ``KeyFileError`` on a wrong passphrase or a bad file."""
    document = parse_encrypted(text)
    aes = _aes_key(passphrase, _field(document, "salt"), document["iterations"])
    try:
        seed = AESGCM(aes).decrypt(_field(document, "iv"), _field(document, "ciphertext"),
                                   document["public"].encode("ascii"))
    except InvalidTag as exc:
        raise KeyFileError("wrong passphrase (or the file was altered)") from exc
    key = Ed25519PrivateKey.from_private_bytes(seed)
    if public_key_b64(key) != document["public"]:
        raise KeyFileError("the private key does not match the file's public key")
    return key


def read_key_text(text: str, passphrase: str | None = None) -> Ed25519PrivateKey:
    """A private key from the text of either kind of key file.

    ``PassphraseNeeded`` when the file is encrypted and ``passphrase`` is None."""
    if not is_encrypted(text):
        try:
            return load_private_key(text)
        except ValueError as exc:
            raise KeyFileError(str(exc)) from exc
    parse_encrypted(text)
    if passphrase is None:
        raise PassphraseNeeded("the key file is encrypted: a passphrase is needed")
    return decrypt_key(text, passphrase)


# -- one player, every device (CONTRACT section 15) -------------------------------------------------------------------
#: HKDF's info for the AES key of a device link's box
DEVICE_LINK_INFO = b"referee device link v1"
#: the PRF input of a passkey's key (``eval.first``: SHA-256 of these bytes) and HKDF's info for the seed
PASSKEY_PRF_LABEL = b"referee/key/v1"
PASSKEY_SEED_INFO = b"referee ed25519 seed v1"
DEVICE_LINK_NONCE_BYTES = 12


def _hkdf32(secret: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(secret)


def passkey_prf_input() -> bytes:
    """``eval.first`` of the passkey's PRF extension: SHA-256 of ``referee/key/v1``."""
    digest = hashes.Hash(hashes.SHA256())
    digest.update(PASSKEY_PRF_LABEL)
    return digest.finalize()


def passkey_key(prf_output: bytes) -> Ed25519PrivateKey:
    """The key a passkey makes: its 32-byte seed is HKDF-SHA256 of the PRF output (empty salt, info ``referee
    ed25519 seed v1``). Any client that gets the same PRF output makes the same key."""
    return Ed25519PrivateKey.from_private_bytes(_hkdf32(prf_output, PASSKEY_SEED_INFO))


def seal_device_box(key: Ed25519PrivateKey, name: str, secret: bytes) -> bytes:
    """A device link's box: a random 12-byte nonce, then AES-256-GCM (key HKDF-SHA256 of ``secret``, empty salt,
    info ``referee device link v1``; no additional data) of the RFC 8785 bytes of ``{"v": 1, "name", "private"}``."""
    if len(secret) != 32:
        raise KeyFileError("a device link's secret is 32 bytes")
    plain = canonical_bytes({"v": 1, "name": name, "private": private_key_b64(key)})
    nonce = os.urandom(DEVICE_LINK_NONCE_BYTES)
    return nonce + AESGCM(_hkdf32(secret, DEVICE_LINK_INFO)).encrypt(nonce, plain, None)


def open_device_box(box: bytes, secret: bytes) -> tuple[Ed25519PrivateKey, str]:
    """The key and its name in a device link's box (:func:`seal_device_box`); ``KeyFileError`` when the secret is
    not the box's or the box is damaged."""
    if len(secret) != 32:
        raise KeyFileError("a device link's secret is 32 bytes: was the link copied whole, with its #…?")
    nonce, sealed = box[:DEVICE_LINK_NONCE_BYTES], box[DEVICE_LINK_NONCE_BYTES:]
    try:
        plain = AESGCM(_hkdf32(secret, DEVICE_LINK_INFO)).decrypt(nonce, sealed, None)
    except InvalidTag as exc:
        raise KeyFileError("the box does not open with this link's secret: was the link copied whole?") from exc
    try:
        document = json.loads(plain)
        if document.get("v") != 1:
            raise KeyFileError(f"a device link box of version {document.get('v')!r}: this referee reads version 1")
        return load_private_key(document["private"]), str(document.get("name") or "")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise KeyFileError(f"the box holds no key: {exc}") from exc
