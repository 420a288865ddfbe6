"""A small factory of complete, real game logs for the verification tests.

It plays a game the way the service records it: ``created`` (seeded, with the commitment to a server
seed) → one signed acceptance with 32 bytes of entropy per seat → ``started`` → signed moves chosen
from the engine's own ``legal_moves()`` until the game ends → ``revealed``. Every entry is sealed into
the hash chain with :func:`referee.protocol.logchain.seal`. Everything is derived from ``seed`` so a test's game
is the same on every run.
"""

from __future__ import annotations

import copy
import hashlib
import random
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from referee.games import ruleset
from referee.games.base import Game
from referee.games.randomness import derive_game_seed, recorded_game_seed
from referee.protocol.logchain import GENESIS, seal
from referee.protocol.signing import ACCEPT_CTX, MOVE_CTX, b64url_encode, public_key_b64, sign

AT = "2026-11-21T10:00:00Z"

#: (ruleset, players) of the finished games every ruleset must verify.
GAMES = [("fivetowers", 3), ("towerup", 4)]


def _derived(label: str, seed: int) -> bytes:
    return hashlib.sha256(f"tests/verification/{label}/{seed}".encode()).digest()


def seat_key(seed: int, seat: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(_derived(f"seat-key/{seat}", seed))


@dataclass
class GameLog:
    """A log under construction and the secrets behind it."""

    game_id: str
    ruleset_name: str
    keys: list[Ed25519PrivateKey]
    server_seed: bytes
    entries: list[dict[str, Any]] = field(default_factory=list)
    game: Game | None = None

    @property
    def head(self) -> str:
        return self.entries[-1]["hash"] if self.entries else GENESIS

    def append(self, entry: dict[str, Any]) -> dict[str, Any]:
        sealed = seal({"v": 1, "seq": len(self.entries), "at": AT, **entry}, self.head)
        self.entries.append(sealed)
        return sealed

    def envelope(self, ctx: str, seat: int, **payload: Any) -> dict[str, Any]:
        return {"v": 1, "ctx": ctx, "game": self.game_id, "seat": seat, "seq": len(self.entries),
                "prev": self.head, **payload, "at": AT}

    def signed(self, envelope: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
        return {"envelope": envelope, "sig": sign(key, envelope)}

    def accept(self, seat: int, entropy: bytes) -> None:
        env = self.envelope(ACCEPT_CTX, seat, entropy=b64url_encode(entropy))
        self.append({"type": "accepted", "seat": seat, "submission": self.signed(env, self.keys[seat])})

    def move(self, seat: int, move: dict[str, Any]) -> None:
        env = self.envelope(MOVE_CTX, seat, move=move)
        self.append({"type": "move", "seat": seat, "submission": self.signed(env, self.keys[seat])})
        assert self.game is not None
        self.game.play(seat, move)

    def reveal(self, reason: str = "finished", abort_key: Ed25519PrivateKey | None = None) -> None:
        """Log the server seed; an abort carries the abort signed by ``abort_key`` (default seat 0's)."""
        entry: dict[str, Any] = {"type": "revealed", "server_seed": self.server_seed.hex(), "reason": reason}
        if reason == "aborted":
            envelope = {"v": 1, "ctx": "referee/abort", "game": self.game_id, "seq": len(self.entries),
                        "prev": self.head, "at": AT, "reason": "players agreed"}
            entry["abort"] = self.signed(envelope, abort_key or self.keys[0])
        self.append(entry)


def make_game_log(ruleset_name: str, players: int, *, seed: int = 0, options: dict[str, Any] | None = None,
                  moves: int | None = None, reveal: bool = True, version: str | None = None,
                  deck: list[str] | None = None, accepted: int | None = None) -> GameLog:
    """A real game of ``ruleset_name`` with random legal moves.

    ``moves``: stop after that many moves (a running game); ``None`` plays to the end. ``reveal``: log
    the server seed at the end. ``version``: the pinned version to write into ``created`` (default the
    installed one). ``deck``: a recorded-mode game with that deck instead of a seeded one. ``accepted``: only
    that many seats accept (a seeded game that has not started: no ``started``, no moves).
    """
    rules = ruleset(ruleset_name)
    chooser = random.Random(seed)
    game_id = f"g_{ruleset_name[:2]}{seed}"
    keys = [seat_key(seed, i) for i in range(players)]
    log = GameLog(game_id, ruleset_name, keys, _derived("server-seed", seed))
    created: dict[str, Any] = {
        "type": "created", "game": game_id,
        "ruleset": {"name": rules.name, "version": version or rules.version},
        "seats": [{"name": f"player {i}", "key": public_key_b64(k)} for i, k in enumerate(keys)],
        "options": options or {}, "organiser": None,
    }
    if deck is not None:
        log.append({**created, "mode": "recorded", "deck": deck})
        log.append({"type": "started"})
        log.game = rules.new_game(players, options or {}, deck=list(deck), seed=recorded_game_seed(game_id))
    else:
        log.append({**created, "mode": "seeded", "commitment": hashlib.sha256(log.server_seed).hexdigest()})
        entropies = [_derived(f"entropy/{i}", seed) for i in range(players)]
        for i in range(players if accepted is None else accepted):
            log.accept(i, entropies[i])
        if accepted is not None and accepted < players:
            return log
        log.append({"type": "started"})
        log.game = rules.new_game(players, options or {},
                                  seed=derive_game_seed(log.server_seed, game_id, entropies))
    played = 0
    while not log.game.is_over() and (moves is None or played < moves):
        seat = log.game.to_move()
        assert seat is not None
        log.move(seat, chooser.choice(log.game.legal_moves()))
        played += 1
    if reveal and deck is None and (moves is None or log.game.is_over()):
        log.reveal()
    return log


@cache
def _cached_log(ruleset_name: str, players: int, seed: int) -> GameLog:
    return make_game_log(ruleset_name, players, seed=seed)


def finished_log(ruleset_name: str, players: int, seed: int = 7) -> GameLog:
    """A finished game (a deep copy of a cached one: tests may tamper with it)."""
    return copy.deepcopy(_cached_log(ruleset_name, players, seed))


def reseal(entries: list[dict[str, Any]], start: int = 0) -> list[dict[str, Any]]:
    """Copies of ``entries`` with ``seq`` renumbered and the hash chain recomputed from ``start`` on
    (what a forger who rewrites history would do)."""
    out = [dict(e) for e in entries]
    prev = out[start - 1]["hash"] if start else GENESIS
    for i in range(start, len(out)):
        out[i]["seq"] = i
        out[i] = seal(out[i], prev)
        prev = out[i]["hash"]
    return out
