"""The 5 Towers ruleset: validated data, components and the game factory (CONTRACT section 1).

Deck order (FT-S2, FT-G4, CONTRACT section 4):

* seeded: ``Rng(seed, "deck").shuffle(cards)`` where ``cards`` are the ids of the cards in play for the
  player count in canonical order (:mod:`.cards`); the result is the deck, top card first.
* recorded: ``deck`` is that list given directly (every card in play exactly once, top card first).

The reshuffle at the first exhaustion (FT-R8) takes its order, top card first, from
``options["reshuffles"][0]`` if given, otherwise ``Rng(seed, "reshuffle/1").shuffle(pile)``, where
``pile`` is the discard pile in the order its cards were discarded (each round's leftover display
cards in display order, display order being the order they came off the deck).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..base import Ruleset, ruleset_version
from ..randomness import Rng
from .cards import CardSet, load_cards
from .game import FiveTowersGame


class FiveTowers(Ruleset):
    """The rules of 5 Towers for 2–5 players (FT-C1 to FT-G5)."""

    name = "fivetowers"
    min_players = 2
    max_players = 5

    def __init__(self, data: CardSet):
        self.data = data
        self.version = ruleset_version(Path(__file__).resolve().parent, data.files)
        self.display_size = data.display_size
        self.suits = data.suits
        self.suit_ids = [suit.id for suit in data.suits]
        self.suit_index = {suit.id: i for i, suit in enumerate(data.suits)}
        self.ids = [card.id for card in data.cards]
        self.index = {card.id: card.index for card in data.cards}
        self.suit_of = [card.suit_index for card in data.cards]
        self.value_of = [card.value for card in data.cards]
        self._in_play = {players: [card.index for card in data.for_players(players)]
                         for players in range(self.min_players, self.max_players + 1)}

    def __repr__(self) -> str:
        return f"<FiveTowers version={self.version}>"

    def components(self) -> dict[str, Any]:
        """Suits (names, colours), every card (id, suit, value, copy, from how many players), deck sizes."""
        data = self.data
        return {
            "ruleset": self.name,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "suits": [suit.to_dict() for suit in data.suits],
            "values": {"min": 0, "max": 15, "spire": 0, "anything_on": 8, "on_anything_but_spire": 9},
            "cards": [card.to_dict() for card in data.cards],
            "extra_copies": {"values": list(data.extra_values), "min_players": data.extra_min_players},
            "deck_sizes": {str(players): size for players, size in sorted(data.deck_sizes.items())},
            "display_size": data.display_size,
            "card_order": "suits in data-file order; per suit values 0..15, then its second copies ascending",
        }

    def options_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "reshuffles": {
                    "type": "array",
                    "maxItems": 1,
                    "items": {"type": "array", "items": {"type": "string"}},
                    "default": [],
                    "description": "Recorded mode only (a game created with a deck): the deck order, top card "
                                   "first, after the reshuffle of FT-R8 (the one reshuffle of the game). "
                                   "Absent: the reshuffle is drawn from the seed.",
                },
            },
        }

    def cards_in_play(self, players: int) -> list[str]:
        """Ids of the cards used with ``players`` players, in canonical order (FT-S1)."""
        return [self.ids[i] for i in self._in_play[players]]

    def new_game(
        self,
        players: int,
        options: dict[str, Any] | None = None,
        seed: bytes | None = None,
        deck: list[str] | None = None,
    ) -> FiveTowersGame:
        """A new game. Exactly one of ``seed`` (32 bytes) and ``deck`` (recorded order, top card first);
        with ``deck`` a ``seed`` may also be given for a reshuffle that ``options["reshuffles"]`` does not
        record. Bad input raises ``ValueError``."""
        if type(players) is not int or not self.min_players <= players <= self.max_players:
            raise ValueError(f"players must be an integer from {self.min_players} to {self.max_players}, "
                             f"got {players!r}")
        if options is None:
            options = {}
        if not isinstance(options, dict):
            raise ValueError("options must be an object")
        unknown = sorted(set(options) - {"reshuffles"})
        if unknown:
            raise ValueError(f"unknown options {unknown}; 5 Towers takes only 'reshuffles' (recorded mode)")
        if seed is not None and (not isinstance(seed, bytes | bytearray) or len(seed) != 32):
            raise ValueError("seed must be 32 bytes")
        seed = bytes(seed) if seed is not None else None
        in_play = self._in_play[players]
        reshuffles = options.get("reshuffles")
        if deck is None:
            if seed is None:
                raise ValueError("give a seed (32 bytes) or a recorded deck")
            if reshuffles:
                raise ValueError("options['reshuffles'] is for recorded games (with a deck) only")
            order = Rng(seed, "deck").shuffle(in_play)
            return FiveTowersGame(self, players, order, seed, None)
        order = self._card_list(deck, "deck", players)
        if sorted(order) != in_play:
            given = set(order)
            missing = [self.ids[c] for c in in_play if c not in given]
            raise ValueError(f"deck must hold each of the {len(in_play)} cards for {players} players exactly once; "
                             f"missing {missing[:10]}{' …' if len(missing) > 10 else ''}")
        recorded = None
        if reshuffles is not None:
            if not isinstance(reshuffles, list) or len(reshuffles) > 1:
                raise ValueError("options['reshuffles'] must be a list with at most one card-id list (FT-R8)")
            recorded = [self._card_list(entry, "options['reshuffles'][0]", players) for entry in reshuffles]
        if not recorded and seed is None:
            raise ValueError("a recorded game needs the reshuffle order (options['reshuffles']) or a seed for it "
                             "(FT-R8): every game reaches the reshuffle")
        return FiveTowersGame(self, players, order, seed, recorded)

    def _card_list(self, value: Any, what: str, players: int) -> list[int]:
        if not isinstance(value, list) or not all(isinstance(card, str) for card in value):
            raise ValueError(f"{what} must be a list of card ids")
        allowed = set(self._in_play[players])
        out = []
        for card_id in value:
            card = self.index.get(card_id)
            if card is None:
                raise ValueError(f"{what}: unknown card id {card_id!r}")
            if card not in allowed:
                raise ValueError(f"{what}: {card_id!r} is only used with 4 or 5 players (FT-S1)")
            out.append(card)
        if len(set(out)) != len(out):
            dupes = sorted({self.ids[c] for c in out if out.count(c) > 1})
            raise ValueError(f"{what}: cards appear more than once: {dupes}")
        return out


def load_ruleset(data_dir: Path | None = None) -> FiveTowers:
    """The 5 Towers ruleset with data from ``data_dir`` (default ``fixtures/fivetowers``); broken data raises
    :class:`~referee.games.errors.DataError` naming the file."""
    return FiveTowers(load_cards(data_dir))
