"""Helpers of the service tests: players with real Ed25519 keys, signed envelopes, and whole games
played through the HTTP API (Flask test client or a real server)."""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from referee.games import ruleset
from referee.games.randomness import derive_game_seed, recorded_game_seed
from referee.protocol.signing import ACCEPT_CTX, MOVE_CTX, b64url_encode, generate_key, public_key_b64, sign

REPO = str(Path(__file__).resolve().parents[2])


def wait_until(predicate, timeout: float = 30.0, every: float = 0.05):
    """Poll ``predicate`` until it returns something truthy (returned) or fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"condition not met within {timeout}s")


class Http:
    """One interface over Flask's test client and ``requests``: ``get``/``post`` -> (status, json)."""

    def __init__(self, client: Any, base: str = ""):
        self.client, self.base = client, base

    def _unpack(self, response: Any) -> tuple[int, Any]:
        if hasattr(response, "get_json"):
            return response.status_code, response.get_json(silent=True)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, None

    def get(self, path: str) -> tuple[int, Any]:
        return self._unpack(self.client.get(self.base + path))

    def post(self, path: str, body: Any = None, data: bytes | None = None, **kwargs: Any) -> tuple[int, Any]:
        if data is not None:
            return self._unpack(self.client.post(self.base + path, data=data,
                                                 headers={"Content-Type": "application/json"}, **kwargs))
        return self._unpack(self.client.post(self.base + path, json=body, **kwargs))


def signed(key: Ed25519PrivateKey, envelope: dict[str, Any]) -> dict[str, Any]:
    return {"envelope": envelope, "sig": sign(key, envelope)}


def move_envelope(game_id: str, seat: int, seq: int, prev: str, move: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"v": 1, "ctx": MOVE_CTX, "game": game_id, "seat": seat, "seq": seq, "prev": prev, "move": move, **extra}


@dataclass
class PlayedGame:
    game_id: str
    ruleset_name: str
    keys: list[Ed25519PrivateKey]
    entropies: list[bytes] = field(default_factory=list)
    moves: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    deck: list[str] | None = None

    def engine_replay(self, server_seed: bytes | None) -> Any:
        """The engine's own game on the same moves (seeded: from the revealed seed and our entropies)."""
        rules = ruleset(self.ruleset_name)
        if self.deck is not None:
            game = rules.new_game(len(self.keys), self.options, deck=list(self.deck),
                                  seed=recorded_game_seed(self.game_id))
        else:
            assert server_seed is not None
            game = rules.new_game(len(self.keys), self.options,
                                  seed=derive_game_seed(server_seed, self.game_id, self.entropies))
        for seat, move in self.moves:
            game.play(seat, move)
        return game


def create_game(http: Http, ruleset_name: str, players: int, keys: list[Ed25519PrivateKey] | None = None,
                **extra: Any) -> PlayedGame:
    keys = keys or [generate_key() for _ in range(players)]
    body = {"ruleset": ruleset_name, "seats": [{"name": f"p{i}", "key": public_key_b64(k)} for i, k in enumerate(keys)],
            **extra}
    status, created = http.post("/games", body)
    assert status == 201, created
    return PlayedGame(created["game"], ruleset_name, keys, options=extra.get("options") or {}, deck=extra.get("deck"))


def create_organised_game(http: Http, ruleset_name: str, organiser: Ed25519PrivateKey,
                          keys: list[Ed25519PrivateKey]) -> PlayedGame:
    """A game created by ``organiser``'s signed request (``organiser: {key, sig}`` over ``referee/create``)."""
    from referee.protocol.signing import sign

    spec = {"ruleset": ruleset_name,
            "seats": [{"name": f"p{i}", "key": public_key_b64(k)} for i, k in enumerate(keys)]}
    status, created = http.post("/games", {**spec, "organiser": {
        "key": public_key_b64(organiser), "sig": sign(organiser, {"v": 1, "ctx": "referee/create", **spec})}})
    assert status == 201, created
    return PlayedGame(created["game"], ruleset_name, keys)


def accept_all(http: Http, game: PlayedGame, rng: random.Random | None = None) -> None:
    rng = rng or random.Random(0)
    for seat, key in enumerate(game.keys):
        status, state = http.get(f"/games/{game.game_id}")
        assert status == 200, state
        entropy = bytes(rng.randrange(256) for _ in range(32))
        envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game.game_id, "seat": seat, "seq": state["seq"],
                    "prev": state["head"], "entropy": b64url_encode(entropy)}
        status, receipt = http.post(f"/games/{game.game_id}/accept", signed(key, envelope))
        assert status == 202, receipt
        game.entropies.append(entropy)


def play_random(http: Http, game: PlayedGame, rng: random.Random, *, max_moves: int | None = None,
                wait: float | None = None, every: Any = None) -> int:
    """Play random legal moves (from ``/legal-moves``) until the game ends (or ``max_moves`` were played);
    ``every(n)`` after each move. Returns the number of moves played."""
    for n in range(max_moves or 2000):
        status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        assert status == 200, legal
        if legal["to_move"] is None:
            return n
        seat = legal["to_move"]
        move = rng.choice(legal["moves"])
        query = f"?wait={wait}" if wait else ""
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], move)
        status, receipt = http.post(f"/games/{game.game_id}/moves{query}", signed(game.keys[seat], envelope))
        assert status in (200, 202), receipt
        game.moves.append((seat, move))
        if every is not None:
            every(n)
    if max_moves:
        return max_moves
    raise AssertionError("the game did not end")


def revealed_seed(entries: list[dict[str, Any]]) -> bytes | None:
    for entry in entries:
        if entry["type"] == "revealed":
            return bytes.fromhex(entry["server_seed"])
    return None


def random_entropy() -> str:
    return b64url_encode(os.urandom(32))


def with_no_forfeits(engine_result: dict) -> dict:
    """An engine's ``result()`` as the service reports it for a game created with a time control (every
    game created now has one, ``none`` included): every seat marked ``forfeited: false`` (TC-F1)."""
    out = {**engine_result, "seats": [{**seat, "forfeited": False} for seat in engine_result["seats"]]}
    return out


def run_cli(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``referee ARGS…`` in process (click's runner): its exit code and output."""
    from click.testing import CliRunner

    from referee.cli import main

    result = CliRunner().invoke(main, list(args), input=input, env=env)
    return result.exit_code, result.output


def stop_process(process: Any, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; returns once the process is gone."""
    import subprocess

    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
