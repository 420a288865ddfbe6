"""The strategies behind :func:`choose`: ``random``, ``greedy`` and ``mcts`` (see the package docstring)."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from typing import Any

from .. import ruleset
from ..base import Game
from .determinize import from_view

STRATEGIES = ("random", "greedy", "mcts")
DEFAULT_ITERATIONS = 200
# moves played at random after the tree before the position is scored as it stands: short, because long random
# playouts mostly measure random play's blunders (5 Towers' random demolitions); see docs/bots.md, "Strength"
ROLLOUT_DEPTH = 10
EXPLORATION = 0.7
WIDEN_BASE = 3  # progressive widening at the root: WIDEN_BASE + WIDEN_RATE * sqrt(visits) moves are searched
WIDEN_RATE = 1.0


def _key(move: dict[str, Any]) -> str:
    return json.dumps(move, sort_keys=True, separators=(",", ":"))


def standing(result: dict[str, Any], seat: int) -> float:
    """How well ``seat`` stands in a (provisional) result: its total minus the best total of the others."""
    totals = {entry["seat"]: entry["total"] for entry in result["seats"]}
    others = [total for other, total in totals.items() if other != seat]
    return float(totals[seat] - (max(others) if others else 0))


def _rewards(game: Game) -> list[float]:
    """Each seat's reward for the position as it stands: 1 for a sole first place, shared among the seats
    tied first, 0 below; plus a small term for the margin so that close games still teach something."""
    result = game.provisional_result()
    totals = {entry["seat"]: entry["total"] for entry in result["seats"]}
    best = max(totals.values())
    first = [seat for seat, total in totals.items() if total == best]
    spread = max(1, best - min(totals.values()))
    return [(1.0 / len(first) if seat in first else 0.0) * 0.8 + 0.2 * (1 - (best - totals[seat]) / spread)
            for seat in range(len(totals))]


def choose(game: Game, seat: int, strategy: str = "mcts", *, seed: int | bytes | str,
           iterations: int | None = None, budget_s: float | None = None,
           clock: Callable[[], float] | None = None, info: dict[str, Any] | None = None) -> dict[str, Any]:
    """A legal move for ``seat``, which must be the seat to move in ``game``.

    Only ``game.view()`` and ``game.legal_moves()`` are read, never the hidden cards: the choice is the same
    for every game with the same view. It is a function of the view, ``strategy`` and ``seed`` (and, with a
    time budget, of how many iterations fit in it).

    :param iterations: for ``mcts``: iterations to run (default 200 without a budget).
    :param budget_s: for ``mcts``: stop after this many seconds of ``clock`` (the library has no clock of its
        own: the caller passes one, e.g. ``time.monotonic``); with ``iterations`` too, whichever comes first.
    :param info: if given, ``info["iterations"]`` is set to the iterations ``mcts`` ran (0 when it did not search).
    :raises ValueError: for an unknown strategy, a game that is over, a seat not to move, or a budget
        without a clock.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    if game.to_move() != seat:
        raise ValueError(f"seat {seat} is not to move (to move: {game.to_move()})")
    moves = game.legal_moves()
    if not moves:
        raise ValueError("the game is over")
    rng = random.Random(seed if not isinstance(seed, bytes) else int.from_bytes(seed, "big"))
    if info is not None:
        info["iterations"] = 0
    if len(moves) == 1:
        return moves[0]
    if strategy == "random":
        return rng.choice(moves)
    view = game.view()
    rules = ruleset(view["ruleset"])
    if strategy == "greedy":
        return _greedy(from_view(rules, view, rng), seat, moves, rng)
    if budget_s is not None and clock is None:
        raise ValueError("a time budget needs a clock (e.g. time.monotonic)")
    if iterations is None and budget_s is None:
        iterations = DEFAULT_ITERATIONS
    return _mcts(rules, view, moves, rng, iterations=iterations, budget_s=budget_s, clock=clock, info=info)


def _rollout(game: Game, rng: random.Random) -> None:
    """Play on from the tree's leaf: at most ``ROLLOUT_DEPTH`` moves, each uniformly at random."""
    for _ in range(ROLLOUT_DEPTH):
        mover = game.to_move()
        if mover is None:
            return
        game.play(mover, rng.choice(game.legal_moves()))


def _greedy(game: Game, seat: int, moves: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    best: list[dict[str, Any]] = []
    best_score = -math.inf
    for move in moves:
        after = game.copy()
        after.play(seat, move)
        score = standing(after.provisional_result(), seat)
        if score > best_score:
            best, best_score = [move], score
        elif score == best_score:
            best.append(move)
    return rng.choice(best)


class _Node:
    __slots__ = ("available", "children", "move", "parent", "seat", "total", "visits")

    def __init__(self, parent: _Node | None, move: dict[str, Any] | None, seat: int | None):
        self.parent = parent
        self.move = move
        self.seat = seat  # the seat that played ``move`` (whose reward this node accumulates)
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.available = 0  # times this node's move was legal when its parent was visited (ISMCTS)
        self.total = 0.0


def _mcts(rules: Any, view: dict[str, Any], moves: list[dict[str, Any]], rng: random.Random, *,
          iterations: int | None, budget_s: float | None, clock: Callable[[], float] | None,
          info: dict[str, Any] | None = None) -> dict[str, Any]:
    root = _Node(None, None, None)
    deadline = None if budget_s is None or clock is None else clock() + budget_s
    # progressive widening at the root: the moves in the order of their immediate standing (greedy's
    # measure, ties in the listed order); after n iterations only the first WIDEN_BASE + WIDEN_RATE * sqrt(n)
    # are searched, so that a few hundred iterations are not all spent trying each of a hundred builds once
    sample = from_view(rules, view, rng)
    seat = sample.to_move()
    assert seat is not None
    scored = []
    for move in moves:
        after = sample.copy()
        after.play(seat, move)
        scored.append((standing(after.provisional_result(), seat), move))
    ordered = [move for _score, move in sorted(scored, key=lambda pair: -pair[0])]
    done = 0
    while True:
        if iterations is not None and done >= iterations:
            break
        if deadline is not None and clock is not None and done and clock() >= deadline:
            break
        done += 1
        game = from_view(rules, view, rng)  # a fresh sample of the hidden cards for every iteration
        node = root
        # selection and expansion
        while not game.is_over():
            mover = game.to_move()
            assert mover is not None
            if node is root:
                legal = ordered[:WIDEN_BASE + int(WIDEN_RATE * math.sqrt(root.visits))]
            else:
                legal = game.legal_moves()
            keyed = [(_key(move), move) for move in legal]
            for key, _move in keyed:
                child = node.children.get(key)
                if child is not None:
                    child.available += 1
            fresh = [(key, move) for key, move in keyed if key not in node.children]
            if fresh:
                key, move = rng.choice(fresh)
                child = node.children[key] = _Node(node, move, mover)
                child.available = 1
                game.play(mover, move)
                node = child
                break
            node = max((node.children[key] for key, _move in keyed),
                       key=lambda c: c.total / c.visits + EXPLORATION * math.sqrt(math.log(c.available) / c.visits))
            assert node.move is not None
            game.play(mover, node.move)
        _rollout(game, rng)
        rewards = _rewards(game)
        # backpropagation
        back: _Node | None = node
        while back is not None:
            back.visits += 1
            if back.seat is not None:
                back.total += rewards[back.seat]
            back = back.parent
    if info is not None:
        info["iterations"] = done
    best = max(root.children.values(), key=lambda c: (c.visits, c.total))
    assert best.move is not None
    return best.move
