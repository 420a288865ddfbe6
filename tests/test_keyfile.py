"""The passphrase-encrypted key file (``referee/protocol/keyfile.py``, ``docs/keys.md``): written and read back, a
known answer computed independently (hashlib's PBKDF2 and a bare AES-GCM), and every refusal."""

from __future__ import annotations

import hashlib
import json

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from referee.protocol.keyfile import (
    DEFAULT_ITERATIONS,
    KeyFileError,
    PassphraseNeeded,
    decrypt_key,
    encrypt_key,
    read_key_text,
)
from referee.protocol.signing import b64url_decode, b64url_encode, load_private_key, private_key_b64, public_key_b64

SEED = bytes(range(32))
KEY = load_private_key(b64url_encode(SEED))
FAST = 100_000  # the lowest count a file may carry: keeps these tests fast


def test_round_trip_keeps_the_key_and_writes_the_documented_fields():
    text = encrypt_key(KEY, "correct horse", name="Ann")
    document = json.loads(text)
    assert set(document) == {"format", "version", "kdf", "iterations", "salt", "cipher", "iv", "ciphertext",
                             "public", "name"}
    assert (document["format"], document["version"], document["kdf"], document["cipher"]) == (
        "referee-key", 1, "PBKDF2-HMAC-SHA256", "AES-256-GCM")
    assert document["iterations"] == DEFAULT_ITERATIONS
    assert document["public"] == public_key_b64(KEY) and document["name"] == "Ann"
    assert private_key_b64(decrypt_key(text, "correct horse")) == b64url_encode(SEED)
    assert SEED not in b64url_decode(document["ciphertext"])
    # fresh salt and iv each time
    again = json.loads(encrypt_key(KEY, "correct horse"))
    assert again["salt"] != document["salt"] and again["iv"] != document["iv"]


def test_known_answer_computed_without_the_module():
    salt, iv = bytes(16), bytes([7]) * 12
    text = encrypt_key(KEY, "pässword", iterations=FAST, salt=salt, iv=iv)
    aes = hashlib.pbkdf2_hmac("sha256", "pässword".encode(), salt, FAST, 32)
    expected = AESGCM(aes).encrypt(iv, SEED, public_key_b64(KEY).encode("ascii"))
    assert json.loads(text)["ciphertext"] == b64url_encode(expected)


def test_the_passphrase_is_compared_in_its_nfc_form():
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    text = encrypt_key(KEY, composed, iterations=FAST)
    assert public_key_b64(decrypt_key(text, decomposed)) == public_key_b64(KEY)


def test_a_wrong_passphrase_or_an_altered_file_is_refused():
    text = encrypt_key(KEY, "right", iterations=FAST)
    with pytest.raises(KeyFileError, match="wrong passphrase"):
        decrypt_key(text, "wrong")
    document = json.loads(text)
    other = public_key_b64(load_private_key(b64url_encode(bytes([9]) * 32)))
    with pytest.raises(KeyFileError, match="wrong passphrase"):  # the public key is the AEAD's associated data
        decrypt_key(json.dumps({**document, "public": other}), "right")
    flipped = bytearray(b64url_decode(document["ciphertext"]))
    flipped[0] ^= 1
    with pytest.raises(KeyFileError, match="wrong passphrase"):
        decrypt_key(json.dumps({**document, "ciphertext": b64url_encode(bytes(flipped))}), "right")


@pytest.mark.parametrize(("change", "message"), [
    ({"format": "other"}, "not an encrypted key file"),
    ({"version": 2}, "version 2 is not supported"),
    ({"kdf": "scrypt"}, "only kdf"),
    ({"cipher": "AES-128-CBC"}, "only kdf"),
    ({"iterations": 1000}, "iterations must be"),
    ({"iterations": 10**9}, "iterations must be"),
    ({"iterations": 600000.0}, "iterations must be"),
    ({"iterations": True}, "iterations must be"),
    ({"salt": "AAAA"}, "salt must be at least 16 bytes"),
    ({"iv": b64url_encode(bytes(16))}, "iv must be 12 bytes"),
    ({"ciphertext": "not base64!"}, "ciphertext is not base64url"),
    ({"public": b64url_encode(bytes(31))}, "public must be 32 bytes"),
    ({"name": 5}, "name must be a string"),
])
def test_a_malformed_header_is_named(change, message):
    document = {**json.loads(encrypt_key(KEY, "pw", iterations=FAST)), **change}
    with pytest.raises(KeyFileError, match=message):
        decrypt_key(json.dumps(document), "pw")


def test_read_key_text_takes_both_kinds_of_file():
    plain = private_key_b64(KEY) + "\n"  # the `referee keygen` file, unchanged
    assert public_key_b64(read_key_text(plain)) == public_key_b64(KEY)
    text = encrypt_key(KEY, "pw", iterations=FAST)
    with pytest.raises(PassphraseNeeded):
        read_key_text(text)
    assert public_key_b64(read_key_text(text, "pw")) == public_key_b64(KEY)
    with pytest.raises(KeyFileError):
        read_key_text("not a key")
    with pytest.raises(KeyFileError, match="not JSON"):
        read_key_text("{broken", "pw")
    with pytest.raises(KeyFileError, match="empty passphrase"):
        encrypt_key(KEY, "")


def test_the_example_in_the_docs_opens_with_its_passphrase():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "keys.md").read_text()
    example = re.search(r"```json\n(.*?)```", text, re.S).group(1)
    assert public_key_b64(decrypt_key(example, "pw")) == json.loads(example)["public"]


def test_the_pages_take_the_format_from_this_module(tmp_path):
    """Issue 27: ``key-file-crypto.js`` (the My keys page) imports the format's constants from the module the pages
    generate out of ``referee.protocol.keyfile.FORMAT_CONSTANTS``, so the browser and the command line cannot drift."""
    import re
    from pathlib import Path

    from referee.app import create_app
    from referee.protocol.keyfile import FORMAT_CONSTANTS

    app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": str(tmp_path), "TESTING": True})
    response = app.test_client().get("/play/static/shared/keyfile-format.js")
    assert response.status_code == 200 and response.mimetype == "text/javascript"
    served = dict(re.findall(r"^export const (\w+) = (.+);$", response.get_data(as_text=True), re.M))
    assert {name: json.loads(value) for name, value in served.items()} == FORMAT_CONSTANTS
    script = (Path(__file__).parents[1] / "referee/web/static/shared/key-file-crypto.js").read_text()
    assert 'from "./keyfile-format.js"' in script
    assert not re.search(r"^export const (FORMAT|VERSION|KDF|CIPHER|\w+_ITERATIONS) =", script, re.M)
