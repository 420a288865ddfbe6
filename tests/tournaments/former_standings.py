"""The standings as the referee computed them before the fold kept them (commit 5ab5642), unchanged but for
this docstring and the relative imports: the reference tests/tournaments/test_standings.py holds the new code to."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from referee.tournaments import tiebreaks as tb
from referee.tournaments.points import seat_points, to_json
from referee.tournaments.seed import lot_order


@dataclass(frozen=True)
class GameResult:
    """A finished (or adjudicated) game of the tournament: players in seat order, their ranks and scores."""

    game: str
    round: int
    players: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[int, ...] | None = None


def compute_standings(players: Sequence[dict[str, str]], results: Sequence[GameResult], *, byes: Sequence[str],
                      points: dict[str, list[int]], bye_points: int, chain: Sequence[str],
                      seed: bytes | None) -> list[dict[str, Any]]:
    """The standings rows.

    ``players``: ``[{"key", "name"}]`` in ``created`` order; ``results``: every game with a result, in
    log order; ``byes``: one key per bye awarded; ``seed``: the tournament seed, or None before it is
    revealed (``lot`` is then null).
    """
    keys = [p["key"] for p in players]
    # exact arithmetic in integers: points are counted in 1/scale (a mean over k ≤ max table size places)
    scale = math.lcm(*range(1, max((int(n) for n in points), default=1) + 1))
    table_points = {n: [x * scale for x in row] for n, row in points.items()}
    total = dict.fromkeys(keys, 0)
    for key in byes:
        total[key] += bye_points * scale
    for result in results:
        for key, p in zip(result.players, seat_points(result.ranks, table_points[str(len(result.players))]),
                          strict=True):
            total[key] += int(p)  # whole: scale is a multiple of every k
    game_score = dict.fromkeys(keys, 0)
    opponents = dict.fromkeys(keys, 0)
    wins = dict.fromkeys(keys, 0)
    rank_sum = dict.fromkeys(keys, 0)
    played = dict.fromkeys(keys, 0)
    games_of: dict[str, list[int]] = {k: [] for k in keys}
    for index, result in enumerate(results):
        table_total = sum(total[o] for o in result.players)
        for seat, key in enumerate(result.players):
            games_of[key].append(index)
            game_score[key] += result.scores[seat] if result.scores else 0
            opponents[key] += table_total - total[key]
            wins[key] += result.ranks[seat] == 1
            rank_sum[key] += result.ranks[seat]
            played[key] += 1
    lot = {k: i + 1 for i, k in enumerate(lot_order(seed, keys))} if seed is not None else None
    values: dict[str, dict[str, Any]] = {k: {
        tb.GAME_SCORE: Fraction(game_score[k]),
        tb.OPPONENTS_POINTS: Fraction(opponents[k], scale),
        tb.WINS: Fraction(wins[k]),
        tb.AVERAGE_RANK: Fraction(rank_sum[k], played[k]) if played[k] else None,
        tb.LOT: Fraction(lot[k]) if lot is not None else None,
    } for k in keys}
    sortable: dict[str, dict[str, Any]] = {k: {
        "points": total[k], tb.GAME_SCORE: game_score[k], tb.OPPONENTS_POINTS: opponents[k], tb.WINS: wins[k],
        tb.AVERAGE_RANK: values[k][tb.AVERAGE_RANK], tb.LOT: lot[k] if lot is not None else None,
    } for k in keys}
    created_index = {k: i for i, k in enumerate(keys)}

    groups: list[list[str]] = [list(keys)]
    for criterion in ["points", *chain]:
        refined: list[list[str]] = []
        for group in groups:
            if len(group) == 1:
                if criterion == tb.HEAD_TO_HEAD:
                    values[group[0]][tb.HEAD_TO_HEAD] = Fraction(0)
                refined.append(group)
                continue
            if criterion == tb.HEAD_TO_HEAD:
                for k, v in _head_to_head(group, results, games_of).items():
                    values[k][tb.HEAD_TO_HEAD] = v
                    sortable[k][tb.HEAD_TO_HEAD] = v
            sort_key = {k: _sort_value(sortable[k][criterion], criterion) for k in group}
            position = {k: (sort_key[k], created_index[k]) for k in group}
            ordered = sorted(group, key=position.__getitem__)
            split: list[list[str]] = []
            for k in ordered:
                if split and sort_key[split[-1][0]] == sort_key[k]:
                    split[-1].append(k)
                else:
                    split.append([k])
            refined += split
        groups = refined
    order = [k for group in groups for k in group]  # groups left tied (no seed yet) stay in created order
    names = {p["key"]: p["name"] for p in players}
    return [{"rank": i + 1, "key": k, "name": names[k], "points": to_json(Fraction(total[k], scale)),
             "tie_breaks": {c: to_json(values[k].get(c)) for c in chain}} for i, k in enumerate(order)]


def _sort_value(value: Any, criterion: str) -> tuple:
    if value is None:  # no games (average_rank) or no seed yet (lot): after every known value
        return (1, 0)
    return (0, value if criterion in tb.ASCENDING else -value)


def _head_to_head(group: list[str], results: Sequence[GameResult],
                  games_of: dict[str, list[int]]) -> dict[str, Fraction]:
    members = set(group)
    score = {k: Fraction(0) for k in group}
    if len(group) < 2:
        return score
    for index in sorted({i for k in group for i in games_of[k]}):
        result = results[index]
        seated = [(k, r) for k, r in zip(result.players, result.ranks, strict=True) if k in members]
        for k, r in seated:
            for other, r2 in seated:
                if other != k:
                    score[k] += 1 if r < r2 else Fraction(1, 2) if r == r2 else 0
    return score
