"""TC-M1: the default move of every ruleset is legal in every position, deterministic, and the documented
choice (random playouts of both engines, checked after every move)."""

from __future__ import annotations

import random

import pytest

from referee.games import ruleset

PLAYOUTS = [("towerup", 2, 1), ("towerup", 3, 2), ("towerup", 4, 3), ("fivetowers", 2, 4), ("fivetowers", 3, 5),
            ("fivetowers", 5, 6)]


@pytest.mark.parametrize("name, players, seed", PLAYOUTS)
def test_TC_M1_the_default_move_is_legal_and_deterministic_in_every_position(name, players, seed):
    rng = random.Random(seed)
    game = ruleset(name).new_game(players, {}, seed=bytes([seed]) * 32)
    for _ in range(3000):
        if game.is_over():
            break
        legal = game.legal_moves()
        default = game.default_move()
        assert default in legal
        assert game.copy().default_move() == default
        trial = game.copy()
        trial.play(game.to_move(), default)  # never raises IllegalMove
        game.play(game.to_move(), rng.choice(legal))
    assert game.is_over()
    with pytest.raises(ValueError):
        game.default_move()


def test_TC_M1_five_towers_default_is_pass_in_bidding_else_the_lowest_bid_for_the_start_player():
    game = ruleset("fivetowers").new_game(3, {}, seed=bytes(32))
    assert game.default_move() == {"type": "bid", "amount": 0}  # the start player may not pass (FT-R1)
    game.play(game.to_move(), {"type": "bid", "amount": 1})
    assert game.default_move() == {"type": "pass"}


def test_TC_M1_tower_up_default_is_the_first_listed_move():
    game = ruleset("towerup").new_game(2, {}, seed=bytes(32))
    assert game.default_move() == game.legal_moves()[0]


@pytest.mark.parametrize("name, players", [("towerup", 3), ("fivetowers", 4)])
def test_provisional_result_has_the_result_shape_and_equals_result_once_over(name, players):
    rng = random.Random(11)
    game = ruleset(name).new_game(players, {}, seed=bytes(32))
    for _ in range(10):
        game.play(game.to_move(), rng.choice(game.legal_moves()))
    running = game.provisional_result()
    assert running["provisional"] is True and len(running["seats"]) == players
    assert sorted(s["rank"] for s in running["seats"])[0] == 1
    while not game.is_over():
        game.play(game.to_move(), rng.choice(game.legal_moves()))
    assert game.provisional_result() == game.result()
