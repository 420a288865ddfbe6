"""Random complete games and the exactness of ``legal_moves()``.

After every move of every playout (``check_invariants``): every card is in exactly one place (deck,
display, discard pile, a tower, a demolition pile), every tower obeys FT-B1–B5, at most one card was
demolished, the view is JSON-safe; the game ends at the end of the round of the second exhaustion, and
the ranks agree with the totals.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random

import pytest
from ft_helpers import RULES, check_invariants, check_result, normalise
from hypothesis import given
from hypothesis import strategies as st

from referee.games import IllegalMove

SUITS = [suit["id"] for suit in RULES.components()["suits"]]


def as_json(move) -> str:
    """Type-exact identity of a move dict (``False`` is not ``0``, ``2.0`` is not ``2``)."""
    return json.dumps(move, sort_keys=True)


def pick(rnd: random.Random, legal: list[dict]) -> dict:
    """A random legal move; builds without demolition are preferred so that games look like real ones."""
    if legal[0]["type"] == "build" and rnd.random() < 0.8:
        calm = [move for move in legal if move["demolish"] is None]
        if calm:
            return rnd.choice(calm)
    return rnd.choice(legal)


def playout(players: int, seed: bytes, rnd: random.Random, exhaustive: bool = False) -> dict:
    game = RULES.new_game(players, seed=seed)
    view = check_invariants(game)
    last_round = None
    moves = 0
    while not game.is_over():
        legal = game.legal_moves()
        assert legal and len(legal) == len({json.dumps(m, sort_keys=True) for m in legal}), "distinct moves"
        if exhaustive:
            check_every_candidate(game, legal)
        game.play(game.to_move(), pick(rnd, legal))
        moves += 1
        view = check_invariants(game, view)
        if view["exhaustions"] == 2 and last_round is None:
            last_round = view["round"]
        if last_round is not None:
            assert view["round"] == last_round, "FT-E1: no round after the one of the second exhaustion"
    assert view["exhaustions"] == 2 and last_round == view["round"]
    assert moves < 1000
    return check_result(game)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_random_playouts_keep_every_invariant(players):
    for i in range(3):
        seed = hashlib.sha256(f"playout/{players}/{i}".encode()).digest()
        playout(players, seed, random.Random(f"{players}/{i}"))


@given(players=st.integers(2, 5), seed=st.binary(min_size=32, max_size=32), rnd=st.randoms(use_true_random=False))
def test_hypothesis_playouts_keep_every_invariant(players, seed, rnd):
    playout(players, seed, rnd)


def check_every_candidate(game, legal: list[dict]) -> None:
    """Every bid -1..6, the pass, and every build (each ordered choice of display cards of the bid's size
    with each demolition option, and without the key): it plays exactly when ``legal_moves`` lists it."""
    seat = game.to_move()
    view = game.view()
    if view["phase"] == "bidding":
        candidates = [{"type": "bid", "amount": a} for a in range(-1, 7)] + [{"type": "pass"}]
    else:
        candidates = []
        for cards in itertools.permutations(view["display"], view["high_bid"]):
            candidates.append({"type": "build", "cards": list(cards)})
            candidates += [{"type": "build", "cards": list(cards), "demolish": d} for d in [None, *SUITS]]
    listed = {as_json(move) for move in legal}
    count = 0
    for move in candidates:
        trial = game.copy()
        try:
            trial.play(seat, move)
            played = True
        except IllegalMove:
            played = False
            assert trial.view() == view
        assert played == (as_json(normalise(move)) in listed), move
        if played and not (move["type"] == "build" and "demolish" not in move):
            count += 1
    assert count == len(legal)


@pytest.mark.parametrize("players", [2, 5])
def test_legal_moves_are_exact_in_every_state_of_a_game(players):
    seed = hashlib.sha256(f"exact/{players}".encode()).digest()
    playout(players, seed, random.Random(players), exhaustive=True)


def move_dicts(view: dict) -> st.SearchStrategy:
    display = view["display"]
    some_ids = [*display, "sand-7", "sand-7-2", "ice-0", "stone-15", "nope", ""]
    ordered = st.permutations(display).flatmap(lambda p: st.integers(0, len(p)).map(lambda k: list(p[:k])))
    cards = st.one_of(ordered, st.lists(st.sampled_from(some_ids), max_size=6))
    demolish = st.one_of(st.none(), st.sampled_from([*SUITS, "gold", "Sand"]), st.integers(0, 4))
    build = st.one_of(
        st.fixed_dictionaries({"type": st.just("build"), "cards": cards, "demolish": demolish}),
        st.fixed_dictionaries({"type": st.just("build"), "cards": cards}),
    )
    bid = st.fixed_dictionaries({"type": st.just("bid"), "amount": st.one_of(st.integers(-2, 7), st.booleans(),
                                                                               st.just(2.0), st.just("2"))})
    junk_value = st.one_of(st.none(), st.integers(-1, 6), st.text(max_size=3),
                           st.sampled_from(["bid", "pass", "build"]), st.lists(st.sampled_from(some_ids), max_size=2))
    junk = st.dictionaries(st.sampled_from(["type", "amount", "cards", "demolish", "x"]), junk_value, max_size=4)
    return st.one_of(build, bid, st.just({"type": "pass"}), junk, st.none(), st.lists(st.integers(), max_size=2))


@given(data=st.data(), players=st.integers(2, 5), seed=st.binary(min_size=32, max_size=32),
       steps=st.integers(0, 250), rnd=st.randoms(use_true_random=False))
def test_generated_moves_play_exactly_when_listed(data, players, seed, steps, rnd):
    game = RULES.new_game(players, seed=seed)
    for _ in range(steps):
        if game.is_over():
            break
        game.play(game.to_move(), pick(rnd, game.legal_moves()))
    legal = game.legal_moves()
    listed = {as_json(move) for move in legal}
    to_move = game.to_move()
    for move in legal:
        game.copy().play(to_move, move)
    for _ in range(10):
        view = game.view()
        move = data.draw(move_dicts(view))
        seat = data.draw(st.one_of(st.just(to_move), st.integers(-1, 5)))
        if seat == to_move and to_move is not None and as_json(normalise(move)) in listed:
            game.copy().play(seat, move)
            continue
        before = json.dumps(view, sort_keys=True)
        with pytest.raises(IllegalMove):
            game.play(seat, move)
        assert json.dumps(game.view(), sort_keys=True) == before
        assert game.legal_moves() == legal
