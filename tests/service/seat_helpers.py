"""Helpers of the open-seat tests (CONTRACT section 14): games created by a signed request with seats open to an
invitation or to anyone, and the signed takes, leaves and cancels."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from svc_helpers import Http, random_entropy

from referee.protocol.signing import CANCEL_CTX, CREATE_CTX, LEAVE_CTX, SEAT_CTX, generate_key, public_key_b64, sign


@dataclass
class OpenGame:
    game_id: str
    creator: Ed25519PrivateKey
    #: seat -> invitation key (the private seed a link's fragment would carry)
    invites: dict[int, Ed25519PrivateKey] = field(default_factory=dict)
    #: seat -> the key given at creation
    keys: dict[int, Ed25519PrivateKey] = field(default_factory=dict)


def create_open_game(http: Http, ruleset_name: str, kinds: list[str], *, creator: Ed25519PrivateKey | None = None,
                     expect: int = 201, **extra: Any) -> OpenGame | tuple[int, Any]:
    """Create a game whose seats are ``kinds`` (``key``, ``invite`` or ``open``), signed by ``creator``."""
    creator = creator or generate_key()
    game = OpenGame("", creator)
    seats: list[dict[str, Any]] = []
    for seat, kind in enumerate(kinds):
        if kind == "key":
            game.keys[seat] = generate_key()
            seats.append({"name": f"p{seat}", "key": public_key_b64(game.keys[seat])})
        elif kind == "invite":
            game.invites[seat] = generate_key()
            seats.append({"invite": public_key_b64(game.invites[seat])})
        else:
            seats.append({"open": True})
    body = {"ruleset": ruleset_name, "seats": seats, **extra}
    signed_body = {**body, "creator": {"key": public_key_b64(creator),
                                       "sig": sign(creator, {"v": 1, "ctx": CREATE_CTX, **body})}}
    status, answer = http.post("/games", signed_body)
    if expect != 201 or status != 201:
        assert status == expect, answer
        return status, answer
    game.game_id = answer["game"]
    return game


def tip(http: Http, game_id: str) -> tuple[int, str]:
    status, state = http.get(f"/games/{game_id}")
    assert status == 200, state
    return state["seq"], state["head"]


def take_body(game_id: str, seat: int, key: Ed25519PrivateKey, name: str, at: tuple[int, str], *,
              invite: Ed25519PrivateKey | None = None, entropy: str | None = None) -> dict[str, Any]:
    envelope = {"v": 1, "ctx": SEAT_CTX, "game": game_id, "seat": seat, "key": public_key_b64(key), "name": name,
                "entropy": entropy or random_entropy(), "seq": at[0], "prev": at[1]}
    body = {"envelope": envelope, "sig": sign(key, envelope)}
    if invite is not None:
        body["invite_sig"] = sign(invite, envelope)
    return body


def take(http: Http, game: OpenGame, seat: int, key: Ed25519PrivateKey, name: str, **kwargs: Any) -> tuple[int, Any]:
    """Take ``seat`` with ``key`` at the log's current position (with the seat's invitation, if it has one and
    ``invite`` is not given)."""
    kwargs.setdefault("invite", game.invites.get(seat))
    return http.post(f"/games/{game.game_id}/seat", take_body(game.game_id, seat, key, name, tip(http, game.game_id),
                                                              **kwargs))


def leave(http: Http, game_id: str, seat: int, key: Ed25519PrivateKey) -> tuple[int, Any]:
    seq, prev = tip(http, game_id)
    envelope = {"v": 1, "ctx": LEAVE_CTX, "game": game_id, "seat": seat, "seq": seq, "prev": prev}
    return http.post(f"/games/{game_id}/leave", {"envelope": envelope, "sig": sign(key, envelope)})


def cancel(http: Http, game_id: str, key: Ed25519PrivateKey) -> tuple[int, Any]:
    seq, prev = tip(http, game_id)
    envelope = {"v": 1, "ctx": CANCEL_CTX, "game": game_id, "seq": seq, "prev": prev}
    return http.post(f"/games/{game_id}/cancel", {"envelope": envelope, "sig": sign(key, envelope)})
