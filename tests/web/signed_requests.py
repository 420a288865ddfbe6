"""Signed submissions over plain HTTP (``requests``) for the browser tests that set games up before a page
looks at them: an acceptance or a move of a seat, signed with its key, at the game's current position."""

from __future__ import annotations

import requests

from referee.protocol.signing import b64url_encode, generate_key, public_key_b64, sign


def submit(base: str, game: str, key, seat: int, ctx: str, *, at: dict | None = None, http=requests,
           **fields) -> requests.Response:
    """POST a seat's envelope of ``ctx`` (``referee/accept`` or ``referee/move``, the latter with ``?wait=5``) at
    the game's position: ``at``'s (an answer of the game's, e.g. its legal moves, naming ``seq`` and ``head``), or
    read from the game first. ``http``: a ``requests.Session`` to reuse its connection."""
    state = at if at is not None else http.get(f"{base}/games/{game}", timeout=10).json()
    envelope = {"v": 1, "ctx": ctx, "game": game, "seat": seat, "seq": state["seq"], "prev": state["head"], **fields}
    path = "accept" if ctx == "referee/accept" else "moves?wait=5"
    return http.post(f"{base}/games/{game}/{path}", json={"envelope": envelope, "sig": sign(key, envelope)},
                     timeout=15)


def start(base: str, ruleset: str, seats: list[dict]) -> tuple[str, list]:
    """Create a game of ``seats`` (``{"name", "bot"?}``: each gets a fresh key) and accept it for every seat."""
    keys = [generate_key() for _ in seats]
    created = requests.post(f"{base}/games", timeout=10, json={"ruleset": ruleset, "seats": [
        {**seat, "key": public_key_b64(key)} for seat, key in zip(seats, keys, strict=True)]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]
    for seat, key in enumerate(keys):
        assert submit(base, game, key, seat, "referee/accept", entropy=b64url_encode(bytes([seat]) * 32)).ok
    return game, keys
