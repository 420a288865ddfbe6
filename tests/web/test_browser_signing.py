"""The page's own crypto against the server's: RFC 8785 bytes from ``jcs.js`` equal ``rfc8785``'s, a
signature made with WebCrypto Ed25519 by ``keys.js`` verifies with ``referee.protocol.signing.verify``, and a
``referee keygen`` key file imported into the browser signs as the same key.

These need only the pages' static files, so they run against the blueprint alone (no Redis)."""

from __future__ import annotations

import pytest

from referee.protocol.canonical import canonical_bytes
from referee.protocol.signing import generate_key, private_key_b64, public_key_b64, verify

pytestmark = pytest.mark.web

TRICKY = [
    {"b": 1, "a": [True, False, None], "": "empty key"},
    {"\u20ac": 1, "\r": 2, "\U0001f600": 3, "\u00f6": 4, "A": 5, "a": 6, "10": 7, "9": 8},
    {"text": "quote \" backslash \\ control \u0001 \u001f tab\t newline\n del \u007f é € 😀 \u2028"},
    {"nested": {"z": [1, -1, 0, 9007199254740991, -9007199254740991], "y": {"x": {}}}, "list": [[], {}]},
    "plain string",
    [1, "two", None],
]


def test_jcs_js_matches_rfc8785(static_page):
    got = static_page.evaluate(
        """async (values) => {
             const { canonicalBytes } = await import('./static/shared/jcs.js');
             return values.map((v) => Array.from(canonicalBytes(v)));
           }""", TRICKY)
    assert [bytes(b) for b in got] == [canonical_bytes(v) for v in TRICKY]


def test_jcs_js_refuses_floats(static_page):
    message = static_page.evaluate(
        """async () => {
             const { canonicalize } = await import('./static/shared/jcs.js');
             try { canonicalize({a: 1.5}); return 'accepted'; } catch (e) { return e.message; }
           }""")
    assert "not a safe integer" in message


def test_signature_made_in_the_browser_verifies_on_the_server(static_page):
    envelope = {"v": 1, "ctx": "referee/move", "game": "g_test", "seat": 1, "seq": 17, "prev": "ab" * 32,
                "move": {"type": "build", "site": "C2", "color": "white", "roof": "C3"}, "at": "2026-11-21T10:00:00Z"}
    public, sig = static_page.evaluate(
        """async (envelope) => {
             const keys = await import('./static/shared/keys.js');
             const entry = await keys.generateKey('tester');
             return [entry.public, await keys.signEnvelope(entry, envelope)];
           }""", envelope)
    assert "=" not in public and "=" not in sig
    assert verify(public, envelope, sig)
    assert not verify(public, {**envelope, "seq": 18}, sig)


def test_a_referee_keygen_key_file_imports_as_the_same_key(static_page):
    key = generate_key()
    envelope = {"v": 1, "ctx": "referee/accept", "game": "g_x", "seat": 0, "seq": 1, "prev": "00" * 32,
                "entropy": "A" * 43}
    public, sig, exported = static_page.evaluate(
        """async ([text, envelope]) => {
             const keys = await import('./static/shared/keys.js');
             const entry = await keys.importKey('from file', text);
             return [entry.public, await keys.signEnvelope(entry, envelope), keys.exportText(entry)];
           }""", [private_key_b64(key) + "\n", envelope])
    assert public == public_key_b64(key)
    assert verify(public_key_b64(key), envelope, sig)
    assert exported == private_key_b64(key) + "\n"


def test_entropy_is_32_bytes_of_base64url(static_page):
    values = static_page.evaluate(
        """async () => { const keys = await import('./static/shared/keys.js');
                         return [keys.entropy(), keys.entropy()]; }""")
    assert all(len(v) == 43 and "=" not in v for v in values)
    assert values[0] != values[1]
