"""Helpers of the tournament service tests: players with real keys, signed joins and withdrawals, and
rounds played through the HTTP API with random legal moves."""

from __future__ import annotations

import os
import random
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from svc_helpers import Http, PlayedGame, accept_all, play_random, signed

from referee.protocol.signing import b64url_encode, generate_key, public_key_b64


class Players:
    """``n`` players with fresh Ed25519 keys; ``key_of[public]`` is the private key."""

    def __init__(self, n: int):
        self.keys: list[Ed25519PrivateKey] = [generate_key() for _ in range(n)]
        self.public = [public_key_b64(k) for k in self.keys]
        self.key_of = dict(zip(self.public, self.keys, strict=True))

    def body(self, ruleset: str = "fivetowers", **extra: Any) -> dict[str, Any]:
        return {"ruleset": ruleset, "players": [{"name": f"player {i}", "key": k} for i, k in enumerate(self.public)],
                **extra}


def tournament_state(http: Http, tournament_id: str) -> dict[str, Any]:
    status, state = http.get(f"/tournaments/{tournament_id}")
    assert status == 200, state
    return state


def join_envelope(http: Http, tournament_id: str, key: Ed25519PrivateKey, **extra: Any) -> dict[str, Any]:
    state = tournament_state(http, tournament_id)
    return {"v": 1, "ctx": "referee/join", "tournament": tournament_id, "key": public_key_b64(key),
            "seq": state["seq"], "prev": state["head"], "entropy": b64url_encode(os.urandom(32)), **extra}


def join(http: Http, tournament_id: str, key: Ed25519PrivateKey, signer: Ed25519PrivateKey | None = None,
         **extra: Any) -> tuple[int, Any]:
    return http.post(f"/tournaments/{tournament_id}/join",
                     signed(signer or key, join_envelope(http, tournament_id, key, **extra)))


def join_all(http: Http, tournament_id: str, players: Players) -> None:
    for key in players.keys:
        status, receipt = join(http, tournament_id, key)
        assert status == 202, receipt


def withdraw(http: Http, tournament_id: str, key: Ed25519PrivateKey, signer: Ed25519PrivateKey | None = None
             ) -> tuple[int, Any]:
    state = tournament_state(http, tournament_id)
    envelope = {"v": 1, "ctx": "referee/withdraw", "tournament": tournament_id, "key": public_key_b64(key),
                "seq": state["seq"], "prev": state["head"]}
    return http.post(f"/tournaments/{tournament_id}/withdraw", signed(signer or key, envelope))


def start_game(http: Http, table: dict[str, Any], players: Players, rng: random.Random) -> PlayedGame:
    """Accept a table's game for every seat (its seats are the table's players in seat order)."""
    game = PlayedGame(table["game"], "fivetowers", [players.key_of[k] for k in table["players"]])
    accept_all(http, game, rng)
    return game


def play_round(http: Http, tournament_id: str, players: Players, rng: random.Random, skip: int = 0) -> list[str]:
    """Accept and play every game of the open round to its end with random legal moves, except the last
    ``skip`` tables (started, and left after two moves). Returns the round's game ids."""
    state = tournament_state(http, tournament_id)
    tables = state["rounds"][-1]["tables"]
    for i, table in enumerate(tables):
        game = start_game(http, table, players, rng)
        play_random(http, game, rng, max_moves=2 if i >= len(tables) - skip else None)
    return [t["game"] for t in tables]
