"""The library surface of CONTRACT section 1 for 5 Towers: registry, factory input checks, view, copy."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from ft_helpers import RULES, SEED, bid, deck_with, new, r7
from json_values import assert_plain_json

import referee.games.fivetowers as package
from referee.games import ruleset
from referee.games.base import Game, Ruleset


def test_registry_gives_the_ruleset():
    rules = ruleset("fivetowers")
    assert isinstance(rules, Ruleset) and rules is RULES
    assert (rules.name, rules.min_players, rules.max_players) == ("fivetowers", 2, 5)
    assert isinstance(rules.version, str) and len(rules.version) == 16
    assert isinstance(rules.new_game(2, seed=SEED), Game)
    assert_plain_json(rules.options_schema())
    assert set(rules.options_schema()["properties"]) == {"reshuffles"}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"players": 1, "seed": SEED}, "players must be"),
    ({"players": 6, "seed": SEED}, "players must be"),
    ({"players": True, "seed": SEED}, "players must be"),
    ({"players": 2}, "seed .* or a recorded deck"),
    ({"players": 2, "seed": b"short"}, "32 bytes"),
    ({"players": 2, "seed": "00" * 32}, "32 bytes"),
    ({"players": 2, "seed": SEED, "options": {"objectives": [1]}}, "unknown options"),
    ({"players": 2, "seed": SEED, "options": []}, "options must be"),
    ({"players": 2, "seed": SEED, "options": {"reshuffles": [["sand-1"]]}}, "recorded games"),
    ({"players": 2, "deck": deck_with(2, [])}, "reshuffle order"),
    ({"players": 2, "deck": deck_with(2, [])[1:], "seed": SEED}, "exactly once"),
    ({"players": 2, "deck": [*deck_with(2, []), "sand-1"], "seed": SEED}, "more than once"),
    ({"players": 2, "deck": [*deck_with(2, [])[1:], "gold-1"], "seed": SEED}, "unknown card id 'gold-1'"),
    ({"players": 2, "deck": "sand-1", "seed": SEED}, "list of card ids"),
    ({"players": 2, "deck": deck_with(2, []), "options": {"reshuffles": [[], []]}}, "at most one"),
    ({"players": 2, "deck": deck_with(2, []), "options": {"reshuffles": ["sand-1"]}}, "list of card ids"),
    ({"players": 2, "deck": deck_with(2, []), "options": {"reshuffles": [["sand-1", "sand-1"]]}}, "more than once"),
])
def test_bad_new_game_input_raises_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RULES.new_game(**kwargs)


def test_a_recorded_game_may_take_a_seed_and_a_recorded_reshuffle_together():
    order = RULES.cards_in_play(2)[::-1]
    game = RULES.new_game(2, options={"reshuffles": [order]}, deck=deck_with(2, []), seed=SEED)
    for _ in range(16):
        r7(game)
    assert game.view()["display"] == order[:5]


def test_view_is_json_safe_and_complete():
    game = new(3, ["sand-9", "ice-5", "moss-3", "lava-2", "stone-1"])
    bid(game, 1)
    view = game.view()
    assert_plain_json(view)
    assert json.loads(json.dumps(view)) == view
    assert set(view) >= {"phase", "round", "start_player", "display", "high_bid", "high_bidder", "has_bid", "passed",
                         "seats", "deck_count", "discard", "exhaustions", "to_move", "is_over", "max_bid"}
    assert (view["high_bid"], view["high_bidder"], view["has_bid"], view["awaiting"]) == (1, 0, [0], [1, 2])
    assert "deck" not in view  # the deck order is hidden
    assert view["seats"][0] == {"seat": 0, "towers": {}, "demolished": []}


def test_seeded_games_are_deterministic_and_copies_are_independent():
    one, two = RULES.new_game(4, seed=SEED), RULES.new_game(4, seed=SEED)
    assert one.view() == two.view()
    assert RULES.new_game(4, seed=bytes(32)).view() != one.view()
    copy = one.copy()
    bid(copy, 2)
    assert one.view() != copy.view() and one.view() == two.view()
    assert one.to_move() == 0 and copy.to_move() == 1


def test_the_engine_is_pure():
    """No clock, no I/O at play time, no global random generator in the engine's modules."""
    banned = {"random", "time", "datetime", "os", "socket", "secrets", "uuid"}
    for path in Path(package.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                names = {(node.module or "").split(".")[0]} if node.level == 0 else set()
            else:
                continue
            assert not names & banned, f"{path.name} imports {names & banned}"
