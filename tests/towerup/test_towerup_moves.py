"""Move validation: stable error codes, malformed moves, seats, game over; legal_moves() is exact."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from towerup_helpers import (
    COLORS,
    EXAMPLE_STARTS,
    EXAMPLE_TOP,
    RULES,
    check_invariants,
    expect_illegal,
    play,
    playout,
    recorded_game,
    seeded_game,
    snapshot,
)

from referee.games import GameOver, IllegalMove
from referee.games.randomness import Rng


def started():
    return recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)


@pytest.mark.parametrize("seat", [1, -1, 2, "0", None, True, 0.0])
def test_wrong_seat_is_not_your_turn(seat):
    game = started()
    exc = expect_illegal(game, {"type": "take", "slot": 0}, "move/not_your_turn", None, seat=seat)
    assert exc.details == {"to_move": 0}


@pytest.mark.parametrize("move", [
    None, [], "take", 3, {}, {"type": "jump"}, {"type": None}, {"slot": 0},
    {"type": "take"}, {"type": "take", "slot": "0"}, {"type": "take", "slot": 0.0}, {"type": "take", "slot": True},
    {"type": "take", "slot": 0, "extra": 1}, {"type": "take", "slot": 0, "choose": "grey"},
    {"type": "take", "slot": 0, "choose": ["purple"]}, {"type": "take", "slot": 0, "choose": [None]},
    {"type": "take", "slot": 0, "discard": ["grey"]}, {"type": "take", "slot": 0, "discard": {"grey": 1.0}},
    {"type": "take", "slot": 0, "discard": {"wild": 1}}, {"type": "take", "slot": 0, "discard": {"grey": True}},
    {"type": "build", "site": "B3", "color": "black"}, {"type": "build", "site": "B3", "color": "pink", "roof": "B3"},
    {"type": "build", "site": 3, "color": "black", "roof": "B3"}, {"type": "build", "site": "B3", "color": "black",
                                                                   "roof": ["B3"]},
    {"type": "build", "site": "B3", "color": "black", "roof": "B3", "floors": 2},
    {"type": "build", "site": "B3", "color": "wild", "roof": "B3"},
    {"type": "pass", "now": True}, {"type": "place_start"}, {"type": "place_start", "placements": []},
    {"type": "place_start", "placements": [{"site": "A1"}]},
    {"type": "place_start", "placements": [{"site": "A1", "color": "black", "x": 1}]},
    {"type": "place_start", "placements": "A1"},
])
def test_malformed_moves_have_code_move_malformed_and_no_rule(move):
    expect_illegal(started(), move, "move/malformed", None)


def test_illegal_moves_name_code_rule_and_message():
    game = started()
    exc = expect_illegal(game, {"type": "take", "slot": 3}, "take/bad_slot", "TU-T1")
    assert exc.to_dict() == {"code": "take/bad_slot", "rule": "TU-T1", "message": "slot must be 0, 1 or 2, not 3"}
    assert str(exc).startswith("take/bad_slot [TU-T1]")


def test_game_over_refuses_every_move():
    game = seeded_game(2, bytes(32))
    playout(game, bytes(32))
    assert game.is_over() and game.to_move() is None and game.legal_moves() == []
    for seat in (0, 1):
        with pytest.raises(GameOver) as info:
            game.play(seat, {"type": "pass"})
        assert info.value.code == "game/over"


def test_copy_is_independent():
    game = started()
    twin = game.copy()
    play(twin, {"type": "build", "site": "B1", "color": "grey", "roof": "B1"})
    assert "B1" not in game.view()["buildings"] and "B1" in twin.view()["buildings"]
    assert game.view()["to_move"] == 0 and twin.view()["to_move"] == 1


def test_view_is_json_safe_and_hides_only_the_deck_order():
    game = started()
    view = game.view()
    assert json.loads(json.dumps(view)) == view
    assert "deck" not in view and view["deck_count"] == 41
    for key in ("board_side", "buildings", "box", "market", "discard", "seats", "objectives", "phase", "to_move",
                "end", "extra_turn", "is_over", "start_floors"):
        assert key in view


# ------------------------------------------------------------------ legal_moves() is exact


def positions(players: int, n: int, take_bias: int, options=None):
    """Every position of one seeded playout (a copy per position)."""
    seed = n.to_bytes(32, "big")
    game = seeded_game(players, seed, options)
    rng = Rng(seed, "positions")
    while not game.is_over():
        yield game.copy()
        moves = game.legal_moves()
        takes = [m for m in moves if m["type"] == "take"]
        move = rng.choice(takes if takes and rng.below(100) < take_bias else moves)
        game.play(game.to_move(), move)
    yield game.copy()


@pytest.mark.parametrize(("players", "n", "take_bias", "options"), [
    (2, 1, 0, None), (3, 2, 50, {"extra_start_floors": 2}), (4, 3, 70, {"objectives": [5, 8, 9]}),
    (4, 4, 30, {"start_floors": "random", "extra_start_floors": 2}),
])
def test_every_listed_move_plays(players, n, take_bias, options):
    for game in positions(players, n, take_bias, options):
        moves = game.legal_moves()
        assert len({json.dumps(m, sort_keys=True) for m in moves}) == len(moves)  # no duplicates
        for i, move in enumerate(moves):
            twin = game.copy()
            twin.play(game.to_move(), move)
            if i % 16 == 0:
                check_invariants(twin)


SITE_JUNK = ["Z9", "", "a1", "A0"]
COLOR_NAMES = [*COLORS, "wild", "purple"]
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-2, 5), st.floats(allow_nan=False, width=16),
                 st.text(max_size=2), st.lists(st.integers(-1, 3), max_size=2))


def move_strategy(game, legal):
    sites = st.sampled_from([*game.cfg.side.site_ids, *SITE_JUNK])
    colors = st.sampled_from(COLOR_NAMES)
    build = st.fixed_dictionaries({"type": st.just("build"), "site": sites, "color": colors, "roof": sites})
    take = st.fixed_dictionaries(
        {"type": st.just("take"), "slot": st.integers(-1, 3)},
        optional={"choose": st.lists(colors, max_size=3), "discard": st.dictionaries(colors, st.integers(-1, 4),
                                                                                      max_size=3)})
    place = st.fixed_dictionaries({"type": st.just("place_start"), "placements": st.lists(
        st.fixed_dictionaries({"site": sites, "color": colors}), max_size=3)})
    garbage = st.dictionaries(st.sampled_from(["type", "site", "color", "roof", "slot", "choose", "discard",
                                               "placements", "x"]), JUNK, max_size=4)
    decline = st.sampled_from([{"type": "decline_extra"}, {"type": "decline_extra", "x": 1}])  # TU-X1
    options = [build, take, place, st.just({"type": "pass"}), decline, garbage, JUNK]
    if legal:
        options.append(st.sampled_from(legal).flatmap(lambda m: mutations(m, sites, colors)))
        options.append(st.sampled_from(legal))
    return st.one_of(options)


def mutations(move, sites, colors):
    """Near misses of a legal move: one field changed, dropped or added."""
    keys = sorted(k for k in move if k != "type")

    def change(key):
        if key in ("site", "roof"):
            return sites.map(lambda v: {**move, key: v})
        if key == "color":
            return colors.map(lambda v: {**move, key: v})
        if key == "slot":
            return st.integers(-1, 3).map(lambda v: {**move, key: v})
        if key == "choose":
            return st.lists(colors, max_size=3).map(lambda v: {**move, key: v})
        if key == "discard":
            return st.dictionaries(colors, st.integers(0, 3), max_size=3).map(lambda v: {**move, key: v})
        return st.just({**move, key: []})

    strategies = [st.just({k: v for k, v in move.items() if k != key}) for key in keys]
    strategies += [change(key) for key in keys]
    strategies.append(st.sampled_from(["choose", "discard", "x"]).flatmap(
        lambda extra: st.just(move) if extra in move else colors.map(
            lambda c: {**move, extra: {"discard": {c: 1}, "choose": [c]}.get(extra, 1)})))
    return st.one_of(strategies)


def sequential_singles(game, move):
    """A multi-placement place_start played as single placements; None if one of them is not listed."""
    twin = game.copy()
    for placement in move["placements"]:
        single = {"type": "place_start", "placements": [placement]}
        if twin.is_over() or twin.view()["phase"] != "setup" or single not in twin.legal_moves():
            return None
        twin.play(twin.to_move(), single)
    return twin


@settings(deadline=None)  # examples: the conftest profile (60 by default)
@given(data=st.data(), players=st.sampled_from([2, 3, 4]), n=st.integers(0, 10_000), steps=st.integers(0, 150),
       take_bias=st.sampled_from([0, 60, 95]))
def test_moves_not_listed_are_illegal_and_change_nothing(data, players, n, steps, take_bias):
    seed = n.to_bytes(32, "big")
    game = seeded_game(players, seed)
    if steps:
        playout(game, seed, take_bias=take_bias, until=lambda g: g.view()["actions"] >= steps)
    legal = game.legal_moves()
    for _ in range(5):
        move = data.draw(move_strategy(game, legal))
        seat = game.to_move()
        if isinstance(move, dict) and move in legal:
            game.copy().play(seat, move)
            continue
        if (isinstance(move, dict) and move.get("type") == "place_start" and game.view()["phase"] == "setup"
                and isinstance(move.get("placements"), list) and len(move["placements"]) > 1
                and set(move) == {"type", "placements"}):
            # documented shorthand: several placements at once are the listed single placements in a row
            expected = sequential_singles(game, move)
            if expected is not None:
                twin = game.copy()
                twin.play(seat, move)
                assert snapshot(twin) == snapshot(expected)
                continue
        before = snapshot(game)
        with pytest.raises(IllegalMove):
            game.play(seat if seat is not None else 0, move)
        assert snapshot(game) == before


def test_legal_moves_of_a_finished_game_are_empty_and_setup_lists_single_placements():
    game = recorded_game(2, EXAMPLE_TOP)
    moves = game.legal_moves()
    assert moves and all(len(m["placements"]) == 1 for m in moves)
    assert {m["placements"][0]["color"] for m in moves} == {"white", "brown", "black"}
    assert RULES.new_game(2, seed=bytes(32)).legal_moves()
