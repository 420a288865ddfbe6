"""The 5 Towers components: suits and cards, loaded and validated from ``fixtures/fivetowers/``.

Two data files describe the game (FT-C1):

* ``suits.json`` — the five tower kinds in their canonical order, with id, names and colour. The
  rulebook names only the sand tower (yellow); the other names are the project's.
* ``deck.json`` — the card values (0–15), the values that exist a second time with 4–5 players
  (0, 2, 5, 7, 10, 12), the deck size for each player count and the display size.

Card ids are ``<suit>-<value>`` (``sand-7``) and ``<suit>-<value>-2`` for the second copy (``sand-7-2``).
The *canonical card order* — the order of :attr:`CardSet.cards`, of ``components()["cards"]`` and the
input of the seeded deck shuffle — is: suits in ``suits.json`` order; within a suit the first copies
by ascending value, then that suit's second copies by ascending value.

>>> cards = load_cards(default_data_dir())
>>> [c.id for c in cards.cards[14:19]]
['sand-14', 'sand-15', 'sand-0-2', 'sand-2-2', 'sand-5-2']
>>> len(cards.for_players(3)), len(cards.for_players(5))
(80, 110)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..data import fixtures_dir, load_json, require

SUITS_FILE = "suits.json"
DECK_FILE = "deck.json"
DATA_FILES = (SUITS_FILE, DECK_FILE)

_SUIT_ID = re.compile(r"^[a-z]{2,16}$")
_SUIT_KEYS = {"id", "name", "name_de", "colour", "named_by"}
_DECK_KEYS = {"format", "values", "extra_copies", "deck_sizes", "display_size"}
# The rules in code rely on these values: 0 is the spire (FT-C2), anything goes on an 8 and a 9 goes on
# anything but a 0 (FT-B4), and 15 is the highest value. The data file must agree.
EXPECTED_VALUES = list(range(16))


def default_data_dir() -> Path:
    """``fixtures/fivetowers`` of the repository (or of ``REFEREE_FIXTURES``)."""
    return fixtures_dir() / "fivetowers"


@dataclass(frozen=True, slots=True)
class Suit:
    """A tower kind. ``id`` appears in card ids and moves (``"sand"``)."""

    id: str
    name: str
    name_de: str
    colour: str
    named_by: str  # "rulebook" or "project"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "name_de": self.name_de, "colour": self.colour,
                "named_by": self.named_by}


@dataclass(frozen=True, slots=True)
class Card:
    """One card. ``index`` is its position in the canonical card order (see the module docstring)."""

    index: int
    id: str
    suit: str
    suit_index: int
    value: int
    copy: int  # 1, or 2 for the second copy that only 4–5 players use
    min_players: int

    @property
    def spire(self) -> bool:
        """A 0 is a spire (FT-C2)."""
        return self.value == 0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "suit": self.suit, "value": self.value, "copy": self.copy,
                "min_players": self.min_players, "spire": self.spire}


@dataclass(frozen=True, slots=True)
class CardSet:
    """Validated components: suits, every card of the 110-card box, sizes."""

    suits: tuple[Suit, ...]
    cards: tuple[Card, ...]
    deck_sizes: dict[int, int]
    display_size: int
    extra_values: tuple[int, ...]
    extra_min_players: int
    files: tuple[Path, ...]

    def for_players(self, players: int) -> list[Card]:
        """The cards in play for ``players`` players, in canonical order (FT-S1)."""
        return [card for card in self.cards if card.min_players <= players]


def _check_suits(path: Path, raw: Any) -> tuple[Suit, ...]:
    require(isinstance(raw, dict), path, "top level must be an object")
    unknown = sorted(set(raw) - {"format", "note", "suits"})
    require(not unknown, path, f"unknown keys {unknown}")
    require(raw.get("format") == "fivetowers-suits/1", path, "format must be 'fivetowers-suits/1'")
    suits = raw.get("suits")
    require(isinstance(suits, list), path, "'suits' must be a list")
    require(len(suits) == 5, path, f"there must be exactly 5 suits (FT-C1), found {len(suits)}")
    out = []
    for i, entry in enumerate(suits):
        where = f"suits[{i}]"
        require(isinstance(entry, dict), path, f"{where} must be an object")
        require(set(entry) == _SUIT_KEYS, path, f"{where} must have exactly the keys {sorted(_SUIT_KEYS)}")
        for key in _SUIT_KEYS:
            require(isinstance(entry[key], str) and entry[key] != "", path, f"{where}.{key} must be a non-empty string")
        require(bool(_SUIT_ID.match(entry["id"])), path, f"{where}.id {entry['id']!r} must be 2-16 lowercase letters")
        require(entry["named_by"] in ("rulebook", "project"), path, f"{where}.named_by must be 'rulebook' or 'project'")
        out.append(Suit(entry["id"], entry["name"], entry["name_de"], entry["colour"], entry["named_by"]))
    for key in ("id", "name", "colour"):
        values = [getattr(suit, key) for suit in out]
        require(len(set(values)) == len(values), path, f"suit {key}s must be unique, got {values}")
    require(any(s.id == "sand" and s.colour == "yellow" for s in out), path,
            "the rulebook's sand tower (id 'sand', colour 'yellow') must be one of the suits")
    return tuple(out)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_deck(path: Path, raw: Any) -> tuple[list[int], list[int], int, dict[int, int], int]:
    require(isinstance(raw, dict), path, "top level must be an object")
    require(set(raw) == _DECK_KEYS, path, f"keys must be exactly {sorted(_DECK_KEYS)}, got {sorted(raw)}")
    require(raw["format"] == "fivetowers-deck/1", path, "format must be 'fivetowers-deck/1'")
    values = raw["values"]
    require(isinstance(values, list) and all(_is_int(v) for v in values), path, "'values' must be a list of integers")
    require(values == EXPECTED_VALUES, path, "'values' must be exactly 0..15 in order (FT-C1)")
    extra = raw["extra_copies"]
    require(isinstance(extra, dict) and set(extra) == {"values", "min_players"}, path,
            "'extra_copies' must be an object with 'values' and 'min_players'")
    extra_values = extra["values"]
    require(isinstance(extra_values, list) and all(_is_int(v) for v in extra_values), path,
            "'extra_copies.values' must be a list of integers")
    require(all(v in values for v in extra_values), path, "'extra_copies.values' must be card values")
    require(extra_values == sorted(set(extra_values)), path, "'extra_copies.values' must be ascending without repeats")
    min_players = extra["min_players"]
    require(_is_int(min_players) and 2 <= min_players <= 5, path, "'extra_copies.min_players' must be 2..5")
    display_size = raw["display_size"]
    require(_is_int(display_size) and display_size == 5, path, "'display_size' must be 5 (FT-S2)")
    sizes = raw["deck_sizes"]
    require(isinstance(sizes, dict) and set(sizes) == {"2", "3", "4", "5"}, path,
            "'deck_sizes' must give the deck size for 2, 3, 4 and 5 players")
    for players, size in sizes.items():
        require(_is_int(size), path, f"deck_sizes[{players}] must be an integer")
        expected = 5 * (len(values) + (len(extra_values) if int(players) >= min_players else 0))
        require(size == expected, path, f"deck_sizes[{players}] is {size} but the cards give {expected} (FT-S1)")
    return values, extra_values, min_players, {int(k): v for k, v in sizes.items()}, display_size


def load_cards(data_dir: Path | None = None) -> CardSet:
    """Load and validate ``suits.json`` and ``deck.json`` from ``data_dir`` (default: the repository's).

    Any problem raises :class:`~referee.games.errors.DataError` naming the file and the problem.
    """
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    suits_path, deck_path = data_dir / SUITS_FILE, data_dir / DECK_FILE
    suits = _check_suits(suits_path, load_json(suits_path))
    values, extra_values, extra_min, sizes, display_size = _check_deck(deck_path, load_json(deck_path))
    cards: list[Card] = []
    for suit_index, suit in enumerate(suits):
        for value in values:
            cards.append(Card(len(cards), f"{suit.id}-{value}", suit.id, suit_index, value, 1, 2))
        for value in extra_values:
            cards.append(Card(len(cards), f"{suit.id}-{value}-2", suit.id, suit_index, value, 2, extra_min))
    return CardSet(suits, tuple(cards), sizes, display_size, tuple(extra_values), extra_min, (suits_path, deck_path))


class CardRules(Protocol):
    """What a game in progress and its scoring read of the rules (``ruleset.FiveTowers``): the cards and suits by
    index. The game and the scoring depend on this shape, the ruleset on the game: imports run one way."""

    @property
    def name(self) -> str: ...
    @property
    def display_size(self) -> int: ...
    @property
    def suits(self) -> Sequence[Suit]: ...
    @property
    def suit_ids(self) -> Sequence[str]: ...
    @property
    def suit_index(self) -> Mapping[str, int]: ...
    @property
    def ids(self) -> Sequence[str]: ...
    @property
    def index(self) -> Mapping[str, int]: ...
    @property
    def suit_of(self) -> Sequence[int]: ...
    @property
    def value_of(self) -> Sequence[int]: ...
