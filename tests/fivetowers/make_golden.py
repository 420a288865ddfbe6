"""Write the 5 Towers golden games to ``fixtures/golden/fivetowers-*.json``:

    .venv/bin/python tests/fivetowers/make_golden.py

Each game is a deterministic seeded playout: a bot picks among ``legal_moves()`` with the shared generator
(``Rng(seed, "golden-bot")``), preferring builds without a demolition. The recorded game is the 3-player
seeded game again, given as its deck and its reshuffle order (computed from the public discard pile and
the documented FT-R8 rule), with no seed: replaying it must give the same result.

Regenerate only on purpose (a rules change); the diff of the files is then the change in behaviour.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from referee.games import ruleset
from referee.games.randomness import Rng

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "golden"


def bot_game(players: int, seed: bytes) -> tuple[list[dict[str, Any]], list[str], Any]:
    """Play a seeded game; return its moves, the reshuffle order (from public data) and the game."""
    rules = ruleset("fivetowers")
    game = rules.new_game(players, seed=seed)
    bot = Rng(seed, "golden-bot")
    moves: list[dict[str, Any]] = []
    reshuffle: list[str] = []
    while not game.is_over():
        legal = game.legal_moves()
        if legal[0]["type"] == "build" and bot.below(5) < 4:
            calm = [move for move in legal if move["demolish"] is None]
            legal = calm or legal
        move = legal[bot.below(len(legal))]
        before = game.view()
        moves.append({"seat": game.to_move(), "move": move})
        game.play(game.to_move(), move)
        after = game.view()
        if after["reshuffled"] and not before["reshuffled"]:
            # FT-R8: the pile in the order discarded = the pile before + this round's leftovers
            pile = before["discard"] + after["last_round"]["discarded"]
            reshuffle = Rng(seed, "reshuffle/1").shuffle(pile)
    return moves, reshuffle, game


def golden(players: int, name: str, recorded: bool = False) -> dict[str, Any]:
    rules = ruleset("fivetowers")
    seed = hashlib.sha256(f"referee/golden/fivetowers/{players}".encode()).digest()
    moves, reshuffle, game = bot_game(players, seed)
    view = game.view()
    doc: dict[str, Any] = {
        "format": "referee-golden/1",
        "ruleset": "fivetowers",
        "name": name,
        "players": players,
        "seed": None if recorded else seed.hex(),
        "deck": Rng(seed, "deck").shuffle(rules.cards_in_play(players)) if recorded else None,
        "options": {"reshuffles": [reshuffle]} if recorded else {},
        "moves": moves,
        "expected": {
            "moves": len(moves),
            "rounds": view["round"],
            "exhaustions": view["exhaustions"],
            "discard_count": len(view["discard"]),
            "result": game.result(),
        },
    }
    return doc


def dump(doc: dict[str, Any]) -> str:
    """JSON with one move per line and the deck and reshuffle on one line each: diffs stay readable."""
    parts = []
    for key, value in doc.items():
        if key == "moves":
            body = "[\n" + ",\n".join("  " + json.dumps(move) for move in value) + "\n ]"
        elif key == "expected":
            body = json.dumps(value, indent=1).replace("\n", "\n ")
        else:
            body = json.dumps(value)
        parts.append(f" {json.dumps(key)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main() -> None:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    games = [(2, "fivetowers-2p-seeded", False), (3, "fivetowers-3p-recorded", True),
             (4, "fivetowers-4p-seeded", False), (5, "fivetowers-5p-seeded", False)]
    for players, name, recorded in games:
        doc = golden(players, name, recorded)
        path = GOLDEN_DIR / f"{name}.json"
        path.write_text(dump(doc), encoding="utf-8")
        totals = [seat["total"] for seat in doc["expected"]["result"]["seats"]]
        print(f"{path.name}: {doc['expected']['moves']} moves, {doc['expected']['rounds']} rounds, totals {totals}")


if __name__ == "__main__":
    main()
