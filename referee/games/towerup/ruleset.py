"""The Tower Up ruleset: its data, its options and ``new_game`` (CONTRACT section 1)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ..base import Ruleset, ruleset_version
from ..randomness import Rng
from .data import BASE_START_FLOORS, TowerUpData, components
from .game import GameConfig, TowerUpGame

OPTION_NAMES = ("objectives", "start_floors", "extra_start_floors", "reshuffles", "extra_turn")
START_MODES = ("last_player", "random")
EXTRA_TURN_MODES = ("optional", "mandatory")  # TU-X1
MAX_START_FLOORS = {2: 7, 3: 7, 4: 5}  # TU-S4


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class TowerUpRuleset(Ruleset):
    """``ruleset("towerup")``: stateless; holds the validated data and makes games."""

    name = "towerup"
    min_players = 2
    max_players = 4

    def __init__(self, data: TowerUpData):
        self.data = data
        self.version = ruleset_version(Path(__file__).resolve().parent, data.files)
        self._components = components(data)
        self._default_objectives = sorted(n for n, o in data.objectives.items() if o.first_game)

    def components(self) -> dict[str, Any]:
        return copy.deepcopy(self._components)

    def options_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "objectives": {
                    "description": "the 3 objective cards of the game, by number (slot order), or \"random\" to "
                                   "draw 3 from the game's randomness (label \"objectives\") (TU-S6)",
                    "oneOf": [
                        {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 10},
                         "minItems": 3, "maxItems": 3, "uniqueItems": True},
                        {"const": "random"},
                    ],
                    "default": list(self._default_objectives),
                },
                "start_floors": {
                    "description": "who places the start floors: the last seat as the game's first move, or "
                                   "random sites from the game's randomness (label \"start-floors\") (TU-S3, TU-G3)",
                    "enum": list(START_MODES),
                    "default": "last_player",
                },
                "extra_start_floors": {
                    "description": "TU-S4 variant: start floors beyond the usual 3; at most 7 in all with 2-3 "
                                   "players, 5 with 4 players",
                    "type": "integer",
                    "minimum": 0,
                    "maximum": {str(n): m - BASE_START_FLOORS for n, m in MAX_START_FLOORS.items()},
                    "default": 0,
                },
                "extra_turn": {
                    "description": "TU-X1: \"optional\" (the rulebook's \"darfst\": the player may decline an "
                                   "extra turn with {\"type\": \"decline_extra\"}) or \"mandatory\" (the "
                                   "French edition's reading: the extra turn must be played); a game whose options "
                                   "omit it is \"optional\"",
                    "enum": list(EXTRA_TURN_MODES),
                    "default": "optional",
                },
                "reshuffles": {
                    "description": "recorded games only: the order (top card first) of each deck reshuffle "
                                   "(TU-G1); reshuffles not listed come from the seed",
                    "type": "array",
                    "items": {"type": "array", "items": {"type": "string"}},
                    "default": [],
                },
            },
        }

    def new_game(
        self,
        players: int,
        options: dict[str, Any] | None = None,
        seed: bytes | None = None,
        deck: list[str] | None = None,
    ) -> TowerUpGame:
        """A new game. Exactly as CONTRACT section 1: a ``seed`` (32 bytes) shuffles the deck (label
        ``deck``); a recorded ``deck`` (all 44 card ids, top first) is dealt as given, and an optional
        ``seed`` beside it serves the reshuffles that ``options["reshuffles"]`` does not record.
        Bad arguments raise ``ValueError`` naming what is wrong."""
        data = self.data
        if not _is_int(players) or not self.min_players <= players <= self.max_players:
            raise ValueError(f"players must be 2, 3 or 4, not {players!r}")
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise ValueError("options must be an object")
        unknown = sorted(str(k) for k in options if k not in OPTION_NAMES)
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)}; Tower Up knows {', '.join(OPTION_NAMES)}")
        if seed is not None:
            if not isinstance(seed, bytes | bytearray) or len(seed) != 32:
                raise ValueError("seed must be exactly 32 bytes")
            seed = bytes(seed)
        if deck is None and seed is None:
            raise ValueError("give a seed (32 bytes) or a recorded deck (all 44 card ids, top first)")
        recorded = deck is not None
        if deck is not None:
            if not isinstance(deck, list) or not all(isinstance(c, str) for c in deck):
                raise ValueError("deck must be a list of card ids")
            unknown_cards = [c for c in deck if c not in data.card_index]
            if unknown_cards:
                raise ValueError(f"deck names unknown card(s) {', '.join(unknown_cards[:5])}")
            if len(deck) != len(data.cards) or len(set(deck)) != len(deck):
                raise ValueError(f"deck must list each of the {len(data.cards)} cards exactly once")
            order = [data.card_index[c] for c in deck]
        else:
            order = Rng(seed, "deck").shuffle(range(len(data.cards)))  # type: ignore[arg-type]

        objectives_opt = options.get("objectives", list(self._default_objectives))
        if objectives_opt == "random":
            if seed is None:
                raise ValueError("objectives: \"random\" needs a seed")
            objectives = tuple(Rng(seed, "objectives").shuffle(sorted(data.objectives))[:3])
        else:
            if (not isinstance(objectives_opt, list) or len(objectives_opt) != 3
                    or not all(_is_int(n) and n in data.objectives for n in objectives_opt)
                    or len(set(objectives_opt)) != 3):
                raise ValueError("objectives must be a list of 3 different objective numbers 1-10, or \"random\"")
            objectives = tuple(objectives_opt)

        start_mode = options.get("start_floors", "last_player")
        if start_mode not in START_MODES:
            raise ValueError(f"start_floors must be one of {', '.join(START_MODES)}, not {start_mode!r}")
        if start_mode == "random" and seed is None:
            raise ValueError("start_floors: \"random\" needs a seed")

        extra = options.get("extra_start_floors", 0)
        limit = MAX_START_FLOORS[players] - BASE_START_FLOORS
        if not _is_int(extra) or not 0 <= extra <= limit:
            raise ValueError(f"extra_start_floors must be a whole number 0-{limit} with {players} players "
                             f"(at most {MAX_START_FLOORS[players]} start floors in all, TU-S4)")
        if extra and seed is None:
            raise ValueError("extra_start_floors needs a seed: the extra cards are shuffled back into the deck "
                             "(TU-S4, label \"start-cards\")")

        extra_turn = options.get("extra_turn", "optional")
        if extra_turn not in EXTRA_TURN_MODES:
            raise ValueError(f"extra_turn must be one of {', '.join(EXTRA_TURN_MODES)}, not {extra_turn!r} (TU-X1)")

        reshuffles_opt = options.get("reshuffles", [])
        if "reshuffles" in options and not recorded:
            raise ValueError("reshuffles is an option of recorded games (a given deck) only")
        if not isinstance(reshuffles_opt, list):
            raise ValueError("reshuffles must be a list of card-id lists")
        reshuffles = []
        for k, pile in enumerate(reshuffles_opt, start=1):
            if (not isinstance(pile, list) or not pile or not all(isinstance(c, str) for c in pile)
                    or len(set(pile)) != len(pile)):
                raise ValueError(f"reshuffles[{k - 1}] must be a non-empty list of distinct card ids")
            bad = [c for c in pile if c not in data.card_index]
            if bad:
                raise ValueError(f"reshuffles[{k - 1}] names unknown card(s) {', '.join(bad[:5])}")
            reshuffles.append(tuple(data.card_index[c] for c in pile))

        normalized = {
            "objectives": list(objectives),
            "start_floors": start_mode,
            "extra_start_floors": extra,
        }
        if recorded:
            normalized["reshuffles"] = [list(p) for p in reshuffles_opt]
        if "extra_turn" in options:
            # shown only when given: the views of games created before the option existed stay the same
            normalized["extra_turn"] = extra_turn
        cfg = GameConfig(data=data, players=players, objectives=objectives, start_mode=start_mode,
                         extra_start_floors=extra, seed=seed, recorded=recorded,
                         extra_turn_optional=extra_turn == "optional",
                         recorded_reshuffles=tuple(reshuffles), options=normalized)
        return TowerUpGame.start(cfg, order)
