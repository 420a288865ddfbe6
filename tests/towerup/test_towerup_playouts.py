"""Random playouts of complete games (2, 3, 4 players) with the invariants of the issue after every move."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from towerup_helpers import check_invariants, check_result, playout, seeded_game

OPTIONS = st.fixed_dictionaries({}, optional={
    "objectives": st.lists(st.integers(1, 10), min_size=3, max_size=3, unique=True),
    "start_floors": st.sampled_from(["last_player", "random"]),
})


def run(players, seed, options, take_bias):
    game = seeded_game(players, seed, options)
    check_invariants(game)
    moves = playout(game, seed, take_bias=take_bias, max_moves=3000, check=check_invariants)
    assert game.is_over() and game.to_move() is None
    view = game.view()
    assert view["end"]["trigger"] is not None
    assert all(seat["cone"] is not None for seat in view["seats"])  # every seat counted after its last turn
    check_result(game)
    return moves


@settings(max_examples=15, deadline=None)
@given(players=st.sampled_from([2, 3, 4]), seed=st.binary(min_size=32, max_size=32), options=OPTIONS,
       extra=st.integers(0, 4), take_bias=st.sampled_from([0, 40, 80]))
def test_random_playouts_keep_every_invariant_and_end(players, seed, options, extra, take_bias):
    options = {**options, "extra_start_floors": min(extra, 2 if players == 4 else 4)}
    run(players, seed, options, take_bias)


def test_playouts_for_each_player_count_reach_both_end_triggers():
    kinds = {2: set(), 3: set(), 4: set()}
    for players in (2, 3, 4):
        for n in range(6):
            seed = (1000 * players + n).to_bytes(32, "big")
            game = seeded_game(players, seed, {"start_floors": "random"})
            playout(game, seed, take_bias=92 if n % 2 else 0, max_moves=3000,
                    check=check_invariants if n < 2 else None)
            kinds[players].add(game.view()["end"]["trigger"]["kind"])
            check_result(game)
    assert kinds[4] == {"last_roof", "scarcity"}
    assert "last_roof" in kinds[2] and "last_roof" in kinds[3]
