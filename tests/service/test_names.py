"""Seat names (issue 17, CONTRACT section 11): NFC-normalised, 1–64 characters, no control or format
characters, unique within a game ignoring case; a 400 names the field and nothing is stored."""

from __future__ import annotations

import pytest

from referee.protocol.signing import generate_key, public_key_b64


def body_with(*names: str) -> dict:
    return {"ruleset": "fivetowers",
            "seats": [{"name": name, "key": public_key_b64(generate_key())} for name in names]}


@pytest.mark.parametrize("names, bad_seat, words", [
    (("Alice", "Bob\u0000"), 1, "U+0000"),
    (("Alice", "\u202eecilA"), 1, "U+202E"),  # right-to-left override
    (("Ali\u200dce", "Bob"), 0, "U+200D"),  # zero-width joiner (Cf)
    (("Alice", "Bob\tby"), 1, "U+0009"),
    (("Alice", "\ufeffBob"), 1, "U+FEFF"),  # byte order mark / zero-width no-break space (Cf)
    (("Alice", ""), 1, "1 to 64"),
    (("Alice", "x" * 65), 1, "1 to 64"),
    (("Alice", "ALICE"), 1, "same name as seat 0"),
    (("Straße", "STRASSE"), 1, "same name as seat 0"),
    (("Bob", "Alice", "bob"), 2, "same name as seat 0"),
    (("Zoë", "Zoe\u0308"), 1, "same name as seat 0"),  # the same after NFC
])
def test_bad_names_are_refused_naming_the_field(http, store, names, bad_seat, words):
    status, body = http.post("/games", body_with(*names))
    assert status == 400, body
    assert body["error"]["code"] == "request/invalid"
    paths = {p["path"]: p["problem"] for p in body["error"]["details"]["problems"]}
    assert f"$.seats[{bad_seat}].name" in paths, paths
    assert words in paths[f"$.seats[{bad_seat}].name"]
    assert store.list_games() == []


def test_names_are_stored_nfc_normalised(http, store):
    decomposed = "Zoe\u0308"  # e + combining diaeresis: 4 code points, 3 in NFC
    long_decomposed = "e\u0301" * 64  # 128 code points, 64 in NFC: allowed
    status, created = http.post("/games", body_with(decomposed, long_decomposed, "x" * 64))
    assert status == 201, created
    names = [seat["name"] for seat in http.get(f"/games/{created['game']}")[1]["seats"]]
    assert names == ["Zoë", "é" * 64, "x" * 64]
    assert store.read_log(created["game"])[0]["seats"][0]["name"] == "Zoë"


def test_names_that_differ_only_in_something_visible_are_fine(http):
    status, created = http.post("/games", body_with("Alice", "Alice (you)", "Alicé"))
    assert status == 201, created
