"""Helpers for the 5 Towers tests: recorded decks, short-hand moves, and the invariants of a game.

Everything goes through the public API (``new_game``, ``play``, ``view``, ``result``); the only internal
read is :func:`check_invariants` looking at the hidden deck to prove every card is in exactly one place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from json_values import assert_plain_json

from referee.games import IllegalMove, ruleset
from referee.games.fivetowers.building import EMPTY, placeable

RULES = ruleset("fivetowers")
SEED = bytes(range(32))
VALUE = {card["id"]: card["value"] for card in RULES.components()["cards"]}
SUIT = {card["id"]: card["suit"] for card in RULES.components()["cards"]}


def deck_with(players: int, top: Iterable[str]) -> list[str]:
    """A full recorded deck for ``players``: ``top`` first (in that order), then the rest in canonical order."""
    top = list(top)
    rest = [card for card in RULES.cards_in_play(players) if card not in set(top)]
    assert len(set(top)) == len(top), "a card may appear only once"
    return top + rest


def new(players: int, top: Iterable[str] = (), reshuffle: list[str] | None = None, seed: bytes | None = SEED):
    """A recorded game whose deck starts with ``top``; the reshuffle from ``reshuffle`` or the seed."""
    options = {"reshuffles": [reshuffle]} if reshuffle is not None else {}
    return RULES.new_game(players, options=options, deck=deck_with(players, top), seed=seed)


def bid(game, amount: int, seat: int | None = None) -> None:
    game.play(game.to_move() if seat is None else seat, {"type": "bid", "amount": amount})


def pass_(game, seat: int | None = None) -> None:
    game.play(game.to_move() if seat is None else seat, {"type": "pass"})


def build(game, cards: list[str], demolish: str | None = None, seat: int | None = None) -> None:
    game.play(game.to_move() if seat is None else seat, {"type": "build", "cards": cards, "demolish": demolish})


def others_pass(game) -> None:
    """Everyone still to bid this round passes."""
    round_ = game.view()["round"]
    while not game.is_over() and game.view()["phase"] == "bidding" and game.view()["round"] == round_:
        pass_(game)


def take(game, cards: list[str], demolish: str | None = None) -> int:
    """The start player bids 0, the next seat bids ``len(cards)``, everyone else passes, and that seat
    builds ``cards``. Returns the builder's seat."""
    bid(game, 0)
    builder = game.to_move()
    bid(game, len(cards))
    others_pass(game)
    assert game.view()["phase"] == "building" and game.to_move() == builder
    build(game, cards, demolish)
    return builder


def start_takes(game, cards: list[str], demolish: str | None = None) -> int:
    """The start player bids ``len(cards)``, everyone else passes, the start player builds them."""
    seat = game.to_move()
    bid(game, len(cards))
    others_pass(game)
    build(game, cards, demolish)
    return seat


def r7(game) -> None:
    """FT-R7: the start player bids 0 and everyone else passes."""
    bid(game, 0)
    others_pass(game)


def finish(game) -> None:
    """Play FT-R7 rounds until the game is over."""
    while not game.is_over():
        r7(game)


def rejected(game, seat: int, move: dict[str, Any]) -> IllegalMove:
    """Play ``move``; it must be refused and leave the game exactly as it was. Returns the error."""
    before = json.dumps(game.view(), sort_keys=True)
    legal_before = game.legal_moves()
    try:
        game.play(seat, move)
    except IllegalMove as err:
        assert json.dumps(game.view(), sort_keys=True) == before
        assert game.legal_moves() == legal_before
        return err
    raise AssertionError(f"{move} was accepted")


def normalise(move: Any) -> Any:
    """A build without ``demolish`` means ``demolish: null``."""
    if isinstance(move, dict) and move.get("type") == "build" and "demolish" not in move and "cards" in move:
        return {**move, "demolish": None}
    return move


def tower_ok(suit: str, cards: list[str]) -> bool:
    """FT-B2 and FT-B4 for one tower, bottom to top."""
    top = EMPTY
    for card in cards:
        if SUIT[card] != suit or not placeable(VALUE[card], top):
            return False
        top = VALUE[card]
    return True


def check_invariants(game, previous: dict | None = None) -> dict:
    """Check the invariants after a move (see tests/fivetowers/test_ft_playouts.py); returns the view."""
    view = game.view()
    assert_plain_json(view)
    players = view["players"]
    in_play = RULES.cards_in_play(players)
    visible = list(view["display"]) + list(view["discard"])
    for entry in view["seats"]:
        visible += entry["demolished"]
        for suit, cards in entry["towers"].items():
            assert cards, "an empty tower is not shown"
            assert tower_ok(suit, cards), f"tower breaks FT-B2/FT-B4: {suit} {cards}"
            visible += cards
    assert len(set(visible)) == len(visible), "a card is in two places"
    hidden = set(in_play) - set(visible)
    assert len(hidden) == view["deck_count"], "cards unaccounted for"
    assert sorted(RULES.ids[c] for c in game._deck) == sorted(hidden), "the deck holds exactly the hidden cards"
    assert len(in_play) == {2: 80, 3: 80, 4: 110, 5: 110}[players]
    assert 0 <= view["exhaustions"] <= 2
    if view["is_over"]:
        assert view["exhaustions"] == 2 and view["deck_count"] == 0 and view["to_move"] is None
        assert view["phase"] == "over" and game.legal_moves() == []
    else:
        assert view["to_move"] is not None and 1 <= len(view["display"]) <= 5
    if previous is not None:
        demolitions = 0
        for old, new_ in zip(previous["seats"], view["seats"], strict=True):
            demolitions += len(new_["demolished"]) - len(old["demolished"])
            assert new_["demolished"][: len(old["demolished"])] == old["demolished"]
            for suit, old_cards in old["towers"].items():
                new_cards = new_["towers"].get(suit, [])
                # FT-B5: the built order never changes; at most the top card goes (a demolition)
                kept = old_cards if new_cards[: len(old_cards)] == old_cards else old_cards[:-1]
                assert new_cards[: len(kept)] == kept, f"FT-B5 broken in {suit}: {old_cards} -> {new_cards}"
        assert 0 <= demolitions <= 1
        assert view["exhaustions"] >= previous["exhaustions"]
    return view


def check_result(game) -> dict:
    result = game.result()
    assert_plain_json(result)
    seats = result["seats"]
    for entry in seats:
        points = sum(t["points"] for t in entry["towers"])
        for tower in entry["towers"]:
            assert tower["points"] == len(tower["cards"]) * (2 if tower["spire"] else 1)
            assert tower["spire"] == any(VALUE[c] == 0 for c in tower["cards"])
        sizes = [len(t["cards"]) for t in entry["towers"]]
        assert entry["main_tower"]["bonus"] == max(sizes, default=0)
        n = len(entry["demolished"])
        assert entry["demolition_penalty"] == n * (n + 1) // 2
        assert entry["total"] == points + entry["main_tower"]["bonus"] - entry["demolition_penalty"]
    totals = [entry["total"] for entry in seats]
    for entry in seats:
        assert entry["rank"] == 1 + sum(t > entry["total"] for t in totals)
    assert result["winners"] == [e["seat"] for e in seats if e["total"] == max(totals)]
    return result
