"""A rematch (CONTRACT section 14): what the service, the schemas and the verifier share about it. Pure: no I/O.

A seat of a finished game asks for a rematch with its signed ``{"v": 1, "ctx": "referee/rematch", "game", "seat",
"at"}``; the referee creates one new game with the same ruleset, options and clock and the same keys, the seats
rotated by one (:func:`rotated`), whose ``created`` says ``"rematch_of": {"game", "head"}`` and keeps the signed
ask (``rematch``). Its id is derived from the finished game's id and head (:func:`rematch_game_id`), so whichever
seat asks, whenever, and whichever process answers, there is one id to create, and the verifier can check it.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, TypeVar

REMATCH_CTX = "referee/rematch"

T = TypeVar("T")


def rematch_game_id(game_id: str, head: str) -> str:
    """The id of the rematch of ``game_id`` finished at ``head``: ``g_`` and the base32 of the first 10 bytes of
    ``sha256("referee/rematch/v1" ‖ 0x00 ‖ game id ‖ 0x00 ‖ head)``, lower case.

    >>> rematch_game_id("g_abc", "0" * 64) == rematch_game_id("g_abc", "0" * 64) != rematch_game_id("g_abd", "0" * 64)
    True
    """
    digest = hashlib.sha256(b"\x00".join((b"referee/rematch/v1", game_id.encode(), head.encode()))).digest()
    return "g_" + base64.b32encode(digest[:10]).decode("ascii").lower()


def rotated(seats: list[T]) -> list[T]:
    """The seats of a rematch: everyone moves one seat up, the first to the last (seat ``i`` of the rematch is seat
    ``i + 1`` of the finished game): with two seats they swap.

    >>> rotated(["a", "b", "c"])
    ['b', 'c', 'a']
    """
    return [*seats[1:], *seats[:1]]


def rematch_problem(created: dict[str, Any]) -> str | None:
    """What is wrong with the shape of a rematch's ``created`` (``rematch_of`` and the signed ask it keeps), or None:
    the parts the verifier checks before the signature."""
    of, ask = created.get("rematch_of"), created.get("rematch")
    if not isinstance(of, dict) or not isinstance(of.get("game"), str) or not isinstance(of.get("head"), str):
        return "rematch_of must be {game, head}"
    if not isinstance(ask, dict) or not isinstance(ask.get("envelope"), dict) or not isinstance(ask.get("sig"), str):
        return "a rematch keeps the seat's signed ask: rematch {envelope, sig}"
    envelope = ask["envelope"]
    if envelope.get("ctx") != REMATCH_CTX or envelope.get("v") != 1:
        return f"the ask is not a rematch's (v 1, ctx {REMATCH_CTX!r})"
    if envelope.get("game") != of["game"]:
        return f"the ask names game {envelope.get('game')!r}, not {of['game']!r}"
    if created.get("game") != rematch_game_id(of["game"], of["head"]):
        return (f"the game id {created.get('game')!r} is not the one derived from rematch_of "
                f"({rematch_game_id(of['game'], of['head'])})")
    return None
