"""Strict JSON, RFC 8785 bytes, Ed25519 envelopes and the log's hash chain."""

import hashlib

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from referee.protocol.canonical import StrictJSONError, canonical_bytes, parse_strict
from referee.protocol.logchain import GENESIS, entry_hash, first_broken_link, seal
from referee.protocol.signing import b64url_decode, generate_key, public_key_b64, sign, verify


def test_rfc8785_sorts_keys_and_uses_minimal_escapes():
    assert canonical_bytes({"z": 1, "a": "\u00e9\n", "m": [None, True]}) == b'{"a":"\xc3\xa9\\n","m":[null,true],"z":1}'


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b'{"a": 1.0}', "floats are not allowed"),
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"a": 9007199254740992}', "integer outside"),
        (b'{"a": NaN}', "not valid JSON"),
        (b'{"a": ', "not valid JSON"),
    ],
)
def test_strict_json_refuses(raw, problem):
    with pytest.raises(StrictJSONError, match=problem):
        parse_strict(raw)


def test_strict_json_lists_every_problem():
    with pytest.raises(StrictJSONError) as err:
        parse_strict(b'{"a": 1.5, "b": {"c": 2e3, "d": [1, 0.1]}}')
    assert [p["path"] for p in err.value.problems] == ["$.a", "$.b.c", "$.b.d[1]"]


def test_signature_roundtrip_and_tamper():
    key = generate_key()
    envelope = {"v": 1, "ctx": "referee/move", "game": "g_1", "seat": 0, "seq": 3, "prev": "ab",
                "move": {"type": "pass"}}
    sig = sign(key, envelope)
    assert len(b64url_decode(sig)) == 64
    assert "=" not in sig and "=" not in public_key_b64(key)
    assert verify(public_key_b64(key), envelope, sig)
    assert not verify(public_key_b64(key), {**envelope, "seq": 4}, sig)
    assert not verify(public_key_b64(generate_key()), envelope, sig)
    assert not verify("not-a-key", envelope, sig)


def test_hash_chain_from_64_zeros():
    entry = {"v": 1, "type": "started", "seq": 0, "at": "2026-11-21T10:00:00Z"}
    sealed = seal(entry, GENESIS)
    manual = hashlib.sha256(b"0" * 64 + b'{"at":"2026-11-21T10:00:00Z","seq":0,"type":"started","v":1}').hexdigest()
    assert sealed["hash"] == manual == entry_hash(GENESIS, sealed)


def test_first_broken_link_names_the_position():
    entries, prev = [], GENESIS
    for i in range(4):
        e = seal({"v": 1, "type": "move", "seq": i, "at": "2026-11-21T10:00:00Z", "n": i}, prev)
        entries.append(e)
        prev = e["hash"]
    assert first_broken_link(entries) is None
    tampered = [dict(e) for e in entries]
    tampered[2]["n"] = 99
    assert first_broken_link(tampered) == (2, "hash does not chain from the previous entry")
    assert first_broken_link(entries[:1] + entries[2:])[0] == 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_fast_canonical_bytes_equal_the_rfc8785_package(value):
    assert canonical_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("key_pair", [("\ue000", "\U0001f600"), ("a\x7f", "a\x1f"), ("\u2028", "\\")])
def test_canonical_key_order_follows_utf16_code_units(key_pair):
    value = {key_pair[0]: 1, key_pair[1]: 2}
    assert canonical_bytes(value) == rfc8785.dumps(value)


def test_canonical_floats_and_big_integers_go_to_rfc8785():
    assert canonical_bytes({"a": 1.5}) == rfc8785.dumps({"a": 1.5})
    with pytest.raises(rfc8785.IntegerDomainError):
        canonical_bytes({"a": 2**60})
