"""Building real tournament logs for the tests: signed joins, the referee's own entries from
``TournamentReplayer.due()``, results chosen by the test. Pure: no Redis, no clock."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from typing import Any

from referee.protocol.logchain import ENTRY_VERSION, seal
from referee.protocol.signing import b64url_encode, generate_key, public_key_b64, sign
from referee.tournaments.log import JOIN_CTX, TournamentReplayer
from referee.tournaments.seed import commitment
from referee.tournaments.spec import TOURNAMENT_CTX, resolve_tournament

SERVER_SEED = bytes(range(32))
KEYS = [generate_key() for _ in range(24)]
ORGANISER = generate_key()


def at(seq: int) -> str:
    """A fixed, increasing time per position (one minute apart)."""
    return f"2026-01-01T{seq // 60 % 24:02d}:{seq % 60:02d}:00.000Z"


class Builder:
    """Appends entries to a tournament log, sealing each and feeding it to a replayer that holds the
    server seed (as the service's would)."""

    def __init__(self, players: int = 4, *, ruleset: str = "fivetowers", fmt: dict[str, Any] | None = None,
                 server_seed: bytes = SERVER_SEED, tournament: str = "t_test", organiser: bool = False,
                 keys: list | None = None, **extra: Any):
        self.keys = keys if keys is not None else KEYS[:players]
        self._public = [public_key_b64(k) for k in self.keys]
        self.server_seed = server_seed
        body = {"ruleset": ruleset, "players": [{"name": f"P{i}", "key": public_key_b64(k)}
                                                for i, k in enumerate(self.keys)],
                "format": fmt or {"kind": "swiss"}, **extra}
        self.log: list[dict[str, Any]] = []
        self.replayer = TournamentReplayer(server_seed=server_seed)
        signed: dict[str, Any] = {"organiser": None}
        if organiser:
            signed = {"organiser": public_key_b64(ORGANISER), "request": body,
                      "organiser_sig": sign(ORGANISER, {"v": 1, "ctx": TOURNAMENT_CTX, **body})}
        self.tournament = tournament
        self.created_payload = {"tournament": tournament, **resolve_tournament(body), **signed,
                                "commitment": commitment(server_seed)}
        assert self.append("created", **self.created_payload).status == "ok"

    @property
    def public(self) -> list[str]:
        return list(self._public)

    def key_of(self, public: str):
        return self.keys[self._public.index(public)]

    def entry(self, kind: str, **payload: Any) -> dict[str, Any]:
        prev = self.log[-1]["hash"] if self.log else "0" * 64
        return seal({"v": ENTRY_VERSION, "type": kind, "seq": len(self.log), "at": at(len(self.log)), **payload},
                    prev)

    def append(self, kind: str, **payload: Any):
        entry = self.entry(kind, **payload)
        verdict = self.replayer.feed(entry)
        self.log.append(entry)
        return verdict

    def envelope(self, ctx: str, **fields: Any) -> dict[str, Any]:
        return {"v": 1, "ctx": ctx, "tournament": self.tournament, "seq": len(self.log),
                "prev": self.log[-1]["hash"], **fields}

    def join_entry(self, i: int, entropy: bytes | None = None, signer=None, **override: Any) -> dict[str, Any]:
        key = self.keys[i]
        if entropy is None:
            entropy = hashlib.sha256(i.to_bytes(4, "big")).digest()
        env = self.envelope(JOIN_CTX, key=public_key_b64(key), at=at(len(self.log)), entropy=b64url_encode(entropy))
        env.update(override)
        return self.entry("joined", key=public_key_b64(key),
                          submission={"envelope": env, "sig": sign(signer or key, env)})

    def join(self, i: int, entropy: bytes | None = None):
        return self.add(self.join_entry(i, entropy))

    def add(self, entry: dict[str, Any]):
        verdict = self.replayer.feed(entry)
        self.log.append(entry)
        return verdict

    def attempt(self, entry: dict[str, Any]):
        """The verdict ``entry`` would get, on a copy of the replayer (the log is left as it is)."""
        replica = copy.deepcopy(self.replayer)
        return replica.feed(entry), replica

    def join_all(self) -> None:
        for i in range(len(self.keys)):
            assert self.join(i).status == "ok"

    def pair(self):
        due = self.replayer.due()
        assert due is not None and due["type"] == "paired", due
        pairing = due["pairing"]
        tables = [{"game": f"g_r{due['round']}_t{i + 1}", "players": t} for i, t in enumerate(pairing.tables)]
        return self.append("paired", round=due["round"], tables=tables, byes=pairing.byes)

    def finish_game(self, game: str, ranks: list[int], scores: list[int] | None = None):
        head = hashlib.sha256(game.encode()).hexdigest()
        return self.append("game_finished", game=game, head=head, ranks=ranks, scores=scores)

    def play_round(self, outcome: Callable[[list[str]], tuple[list[int], list[int] | None]]) -> None:
        """Pair the next round, finish every game with ``outcome(players)`` → (ranks, scores), close it."""
        assert self.pair().status == "ok"
        rnd = self.replayer.rounds[-1]
        for table in rnd.tables:
            ranks, scores = outcome(table["players"])
            assert self.finish_game(table["game"], ranks, scores).status == "ok"
        due = self.replayer.due()
        assert due is not None and due["type"] == "round_closed"
        assert self.append("round_closed", round=due["round"], reason="complete").status == "ok"

    def play_out(self, outcome: Callable[[list[str]], tuple[list[int], list[int] | None]]) -> None:
        while True:
            due = self.replayer.due()
            if due is None or due["type"] != "paired":
                break
            self.play_round(outcome)
        assert self.append("finished").status == "ok"
        assert self.append("revealed", server_seed=self.server_seed.hex(), reason="finished").status == "ok"


def by_key_order(players: list[str]) -> tuple[list[int], list[int]]:
    """The player whose key sorts first wins, and so on (no shared ranks); scores 10 × places from last."""
    order = sorted(players)
    ranks = [order.index(p) + 1 for p in players]
    return ranks, [10 * (len(players) - r) for r in ranks]


def play_game(ruleset_name: str, game_id: str, keys: list, *, seed: int = 0) -> list[dict[str, Any]]:
    """A real, finished, seeded game log whose seats are ``keys`` (private keys, seat order): signed
    acceptances, random legal moves from the engine, the seed revealed."""
    import random

    from referee.games import ruleset
    from referee.games.randomness import derive_game_seed
    from referee.protocol.signing import ACCEPT_CTX, MOVE_CTX

    rules = ruleset(ruleset_name)
    chooser = random.Random(seed)
    server_seed = hashlib.sha256(f"game-seed/{game_id}".encode()).digest()
    log: list[dict[str, Any]] = []

    def add(entry: dict[str, Any]) -> None:
        prev = log[-1]["hash"] if log else "0" * 64
        log.append(seal({"v": 1, "seq": len(log), "at": at(len(log)), **entry}, prev))

    def signed(ctx: str, seat: int, **payload: Any) -> dict[str, Any]:
        env = {"v": 1, "ctx": ctx, "game": game_id, "seat": seat, "seq": len(log), "prev": log[-1]["hash"],
               "at": at(len(log)), **payload}
        return {"envelope": env, "sig": sign(keys[seat], env)}

    add({"type": "created", "game": game_id, "ruleset": {"name": rules.name, "version": rules.version},
         "seats": [{"name": f"seat {i}", "key": public_key_b64(k)} for i, k in enumerate(keys)], "options": {},
         "organiser": None, "mode": "seeded", "commitment": hashlib.sha256(server_seed).hexdigest()})
    entropies = [hashlib.sha256(f"{game_id}/{i}".encode()).digest() for i in range(len(keys))]
    for i, entropy in enumerate(entropies):
        add({"type": "accepted", "seat": i, "submission": signed(ACCEPT_CTX, i, entropy=b64url_encode(entropy))})
    add({"type": "started"})
    game = rules.new_game(len(keys), {}, seed=derive_game_seed(server_seed, game_id, entropies))
    while not game.is_over():
        seat = game.to_move()
        move = chooser.choice(game.legal_moves())
        add({"type": "move", "seat": seat, "submission": signed(MOVE_CTX, seat, move=move)})
        game.play(seat, move)
    add({"type": "revealed", "server_seed": server_seed.hex(), "reason": "finished"})
    return log
