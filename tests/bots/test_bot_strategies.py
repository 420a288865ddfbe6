"""The bots' strategies (``referee.games.bots``): legal, deterministic for a seed, blind to hidden cards,
and the determinization they stand on rebuilds every public position exactly."""

from __future__ import annotations

import random

import pytest

from referee.games import ruleset
from referee.games.bots import STRATEGIES, choose, from_view


def _positions(name: str, players: int, games: int, every: int, seed: int):
    """Positions of seeded random playouts (every ``every``-th position, the last included)."""
    rng = random.Random(seed)
    for g in range(games):
        game = ruleset(name).new_game(players, seed=bytes([g, players, seed % 256]) + bytes(29))
        step = 0
        while not game.is_over():
            if step % every == 0:
                yield game.copy()
            game.play(game.to_move(), rng.choice(game.legal_moves()))
            step += 1


@pytest.mark.parametrize("name", ["fivetowers", "towerup"])
def test_a_view_rebuilds_the_same_public_game(name):
    """from_view(view) shows the same view, the same legal moves and the same provisional result, in every
    position of random playouts with every player count, whatever hidden order it samples."""
    rules = ruleset(name)
    rng = random.Random(7)
    for players in range(rules.min_players, rules.max_players + 1):
        for game in _positions(name, players, games=2, every=3, seed=players):
            view = game.view()
            rebuilt = from_view(rules, view, rng)
            assert rebuilt.view() == view
            assert rebuilt.legal_moves() == game.legal_moves()
            assert rebuilt.provisional_result() == game.provisional_result()


@pytest.mark.parametrize("name", ["fivetowers", "towerup"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_choice_is_legal_and_the_same_for_a_seed(name, strategy):
    for k, game in enumerate(_positions(name, 2, games=1, every=17, seed=11)):
        seat = game.to_move()
        if seat is None:
            continue
        move = choose(game, seat, strategy, seed=k, iterations=12)
        assert move in game.legal_moves()
        assert choose(game, seat, strategy, seed=k, iterations=12) == move
        game.play(seat, move)  # and it plays


@pytest.mark.parametrize("name", ["fivetowers", "towerup"])
def test_choices_are_legal_with_more_seats(name):
    rules = ruleset(name)
    for k, game in enumerate(_positions(name, rules.max_players, games=1, every=23, seed=5)):
        seat = game.to_move()
        if seat is not None:
            for strategy in STRATEGIES:
                assert choose(game, seat, strategy, seed=k, iterations=8) in game.legal_moves()


def _twins(name: str, players: int, shared: int):
    """Two recorded games whose first ``shared`` cards are the same and whose other cards are in other
    orders: the same public history while only those cards have been seen, different hidden cards."""
    rules = ruleset(name)
    cards = rules.cards_in_play(players) if name == "fivetowers" else [card.id for card in rules.data.cards]
    rng = random.Random(3)
    rng.shuffle(cards)
    head, tail = cards[:shared], cards[shared:]
    other = tail[::-1]
    assert other != tail
    seed = bytes(range(32))
    return (rules.new_game(players, seed=seed, deck=head + tail), rules.new_game(players, seed=seed, deck=head + other))


@pytest.mark.parametrize("name,shared", [("fivetowers", 5), ("towerup", 3)])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_choice_ignores_the_hidden_cards(name, shared, strategy):
    """Same public history and view for the bot's seat, different deck order: the same choice, move after
    move while the public history stays the same."""
    one, two = _twins(name, 2, shared)
    for _ in range(4):
        assert one.view() == two.view()
        seat = one.to_move()
        move = choose(one, seat, strategy, seed=42, iterations=30)
        assert choose(two, seat, strategy, seed=42, iterations=30) == move
        one.play(seat, move)
        two.play(seat, move)
        if one.view() != two.view():  # a hidden card was revealed: the histories part here
            break


def test_a_time_budget_needs_a_clock_and_stops():
    game = ruleset("fivetowers").new_game(2, seed=bytes(32))
    with pytest.raises(ValueError, match="clock"):
        choose(game, 0, "mcts", seed=1, budget_s=0.1)
    ticks = iter(range(1000))
    info: dict = {}
    move = choose(game, 0, "mcts", seed=1, budget_s=5, clock=lambda: float(next(ticks)), info=info)
    assert move in game.legal_moves()
    # a fake clock that advances 1 s a call: read at the start, then after each iteration until 5 s have passed
    assert info == {"iterations": 5} and next(ticks) == 6
    assert choose(game, 0, "mcts", seed=1, iterations=7, info=info) == choose(game, 0, "mcts", seed=1, iterations=7)
    assert info == {"iterations": 7}
    choose(game, 0, "greedy", seed=1, info=info)
    assert info == {"iterations": 0}  # only mcts searches


def test_refusals():
    game = ruleset("fivetowers").new_game(2, seed=bytes(32))
    with pytest.raises(ValueError, match="unknown strategy"):
        choose(game, 0, "oracle", seed=1)
    with pytest.raises(ValueError, match="not to move"):
        choose(game, 1, "random", seed=1)
