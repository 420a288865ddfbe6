"""Standings: points, every tie-break value, and the order they give — a pure function of the results.

Rows (CONTRACT section 10)::

    {"rank": 1, "key": "<player key>", "name": "Ada", "points": 24,
     "tie_breaks": {"opponents_points": "70/3", ..., "lot": 2}}

Numbers are exact (:func:`referee.tournaments.points.to_json`). Players are ordered by points (highest
first), then by each tie-break of the chain in turn (:mod:`referee.tournaments.tiebreaks`); ``lot``
last makes the order total, so ``rank`` is the row's 1-based position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from . import tiebreaks as tb
from .points import seat_points, to_json
from .seed import lot_order


@dataclass(frozen=True)
class GameResult:
    """A finished (or adjudicated) game of the tournament: players in seat order, their ranks and scores."""

    game: str
    round: int
    players: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[int, ...] | None = None


def game_points(result: GameResult, points: dict[str, list[int]]) -> list[Fraction]:
    return seat_points(result.ranks, points[str(len(result.players))])


def compute_standings(players: Sequence[dict[str, str]], results: Sequence[GameResult], *, byes: Sequence[str],
                      points: dict[str, list[int]], bye_points: int, chain: Sequence[str],
                      seed: bytes | None) -> list[dict[str, Any]]:
    """The standings rows.

    ``players``: ``[{"key", "name"}]`` in ``created`` order; ``results``: every game with a result, in
    log order; ``byes``: one key per bye awarded; ``seed``: the tournament seed, or None before it is
    revealed (``lot`` is then null).
    """
    keys = [p["key"] for p in players]
    total: dict[str, Fraction] = {k: Fraction(0) for k in keys}
    for key in byes:
        total[key] += bye_points
    per_game = []
    for result in results:
        pts = game_points(result, points)
        per_game.append(pts)
        for key, p in zip(result.players, pts, strict=True):
            total[key] += p
    values: dict[str, dict[str, Any]] = {k: {} for k in keys}
    game_score = {k: 0 for k in keys}
    opponents = {k: Fraction(0) for k in keys}
    wins = {k: 0 for k in keys}
    ranks: dict[str, list[int]] = {k: [] for k in keys}
    for result in results:
        for seat, key in enumerate(result.players):
            game_score[key] += result.scores[seat] if result.scores else 0
            opponents[key] += sum((total[o] for o in result.players if o != key), Fraction(0))
            wins[key] += result.ranks[seat] == 1
            ranks[key].append(result.ranks[seat])
    lot = {k: i + 1 for i, k in enumerate(lot_order(seed, keys))} if seed is not None else None
    for k in keys:
        values[k] = {
            tb.GAME_SCORE: Fraction(game_score[k]),
            tb.OPPONENTS_POINTS: opponents[k],
            tb.WINS: Fraction(wins[k]),
            tb.AVERAGE_RANK: Fraction(sum(ranks[k]), len(ranks[k])) if ranks[k] else None,
            tb.LOT: Fraction(lot[k]) if lot is not None else None,
        }
    created_index = {k: i for i, k in enumerate(keys)}

    def sort_value(key: str, criterion: str) -> tuple:
        value = total[key] if criterion == "points" else values[key][criterion]
        if value is None:  # no games (average_rank) or no seed yet (lot): after every known value
            return (1, 0)
        return (0, value if criterion in tb.ASCENDING else -value)

    groups: list[list[str]] = [list(keys)]
    for criterion in ["points", *chain]:
        refined: list[list[str]] = []
        for group in groups:
            if criterion == tb.HEAD_TO_HEAD:
                for k, v in _head_to_head(group, results).items():
                    values[k][tb.HEAD_TO_HEAD] = v
            ordered = sorted(group, key=lambda k, c=criterion: (sort_value(k, c), created_index[k]))
            split: list[list[str]] = []
            for k in ordered:
                if split and sort_value(split[-1][0], criterion) == sort_value(k, criterion):
                    split[-1].append(k)
                else:
                    split.append([k])
            refined += split
        groups = refined
    order = [k for group in groups for k in group]  # groups left tied (no seed yet) stay in created order
    names = {p["key"]: p["name"] for p in players}
    return [{"rank": i + 1, "key": k, "name": names[k], "points": to_json(total[k]),
             "tie_breaks": {c: to_json(values[k].get(c)) for c in chain}} for i, k in enumerate(order)]


def _head_to_head(group: list[str], results: Sequence[GameResult]) -> dict[str, Fraction]:
    members = set(group)
    score = {k: Fraction(0) for k in group}
    if len(group) < 2:
        return score
    for result in results:
        seated = [(k, r) for k, r in zip(result.players, result.ranks, strict=True) if k in members]
        for k, r in seated:
            for other, r2 in seated:
                if other != k:
                    score[k] += 1 if r < r2 else Fraction(1, 2) if r == r2 else 0
    return score
