"""Standings: points, every tie-break value, and the order they give — a pure function of the results.

Rows (CONTRACT section 10)::

    {"rank": 1, "key": "<player key>", "name": "Ada", "points": 24,
     "tie_breaks": {"opponents_points": "70/3", ..., "lot": 2}}

Numbers are exact (:func:`referee.tournaments.points.to_json`). Players are ordered by points (highest
first), then by each tie-break of the chain in turn (:mod:`referee.tournaments.tiebreaks`); ``lot``
last makes the order total, so ``rank`` is the row's 1-based position.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from . import tiebreaks as tb
from .points import seat_points
from .seed import lot_order


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
    """The standings rows, recomputed from every result (the full recompute; :class:`Tally` keeps the
    same values up to date one result at a time and the two must agree).

    ``players``: ``[{"key", "name"}]`` in ``created`` order; ``results``: every game with a result, in
    log order; ``byes``: one key per bye awarded; ``seed``: the tournament seed, or None before it is
    revealed (``lot`` is then null).
    """
    keys = [p["key"] for p in players]
    # exact arithmetic in integers: points are counted in 1/scale (a mean over k ≤ max table size places)
    scale = points_scale(points)
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
    aggregates = _Aggregates(scale, total, game_score, opponents, wins, rank_sum, played, games_of)
    return order_rows(players, results, aggregates, chain=chain, seed=seed)


def points_scale(points: dict[str, list[int]]) -> int:
    """The denominator points are counted in: lcm(1 … largest table size), so a shared rank's mean is whole."""
    return math.lcm(*range(1, max((int(n) for n in points), default=1) + 1))


@dataclass
class _Aggregates:
    """Every per-player sum the standings are ordered by (points and ``opponents_points`` in 1/scale)."""

    scale: int
    total: dict[str, int]
    game_score: dict[str, int]
    opponents: dict[str, int]
    wins: dict[str, int]
    rank_sum: dict[str, int]
    played: dict[str, int]
    games_of: dict[str, list[int]]


class Tally:
    """The standings' sums kept up to date one result (or bye) at a time, as the log's fold meets them.

    :meth:`add_result` costs O(table × games of the table's players) — the players' points change, and
    so does ``opponents_points`` (Buchholz) of everyone who met them before — instead of a recompute
    over every game; :meth:`rows` then orders the players (O(players × log players), plus
    ``head_to_head`` over the games of the players still tied when it applies). Equal, value for value,
    to :func:`compute_standings` of the same results and byes (``tests/tournaments/test_standings.py``
    checks it on random tournaments). Pure and deep-copyable, like the fold that holds it.
    """

    def __init__(self, players: Sequence[dict[str, str]], points: dict[str, list[int]], bye_points: int):
        keys = [p["key"] for p in players]
        self.players = [dict(p) for p in players]
        scale = points_scale(points)
        self._table_points = {n: [x * scale for x in row] for n, row in points.items()}
        self._bye = bye_points * scale
        self.results: list[GameResult] = []
        self.sums = _Aggregates(scale, dict.fromkeys(keys, 0), dict.fromkeys(keys, 0), dict.fromkeys(keys, 0),
                                dict.fromkeys(keys, 0), dict.fromkeys(keys, 0), dict.fromkeys(keys, 0),
                                {k: [] for k in keys})
        self._lot: tuple[bytes, dict[str, int]] | None = None

    def fork(self) -> Tally:
        """A copy to go on with (the results and the players' rows are shared: never changed once added)."""
        twin = copy.copy(self)
        twin.results = list(self.results)
        s = self.sums
        twin.sums = _Aggregates(s.scale, dict(s.total), dict(s.game_score), dict(s.opponents), dict(s.wins),
                                dict(s.rank_sum), dict(s.played), {k: list(v) for k, v in s.games_of.items()})
        return twin

    def rename(self, old: str, new: str) -> None:
        """A player goes on under a new key (``rekeyed``): its row, its games and every sum move to ``new``, in
        the same place (the lot is drawn over the players' places, so it stays the player's)."""
        self.players = [{**p, "key": new} if p["key"] == old else p for p in self.players]
        self.results = [replace(r, players=tuple(new if k == old else k for k in r.players)) if old in r.players
                        else r for r in self.results]
        s = self.sums
        for sums in (s.total, s.game_score, s.opponents, s.wins, s.rank_sum, s.played):
            sums[new] = sums.pop(old)
        s.games_of[new] = s.games_of.pop(old)
        self._lot = None

    def _add_points(self, key: str, delta: int) -> None:
        """``key``'s points change by ``delta`` (in 1/scale): so does every opponent's Buchholz, once per
        game they sat at a table with ``key``."""
        s = self.sums
        s.total[key] += delta
        for index in s.games_of[key]:
            for other in self.results[index].players:
                if other != key:
                    s.opponents[other] += delta

    def add_bye(self, key: str) -> None:
        self._add_points(key, self._bye)

    def add_result(self, result: GameResult) -> None:
        s = self.sums
        gained = seat_points(result.ranks, self._table_points[str(len(result.players))])
        for key, p in zip(result.players, gained, strict=True):
            self._add_points(key, int(p))  # whole: scale is a multiple of every k
        index = len(self.results)
        self.results.append(result)
        table_total = sum(s.total[o] for o in result.players)
        for seat, key in enumerate(result.players):
            s.games_of[key].append(index)
            s.game_score[key] += result.scores[seat] if result.scores else 0
            s.opponents[key] += table_total - s.total[key]
            s.wins[key] += result.ranks[seat] == 1
            s.rank_sum[key] += result.ranks[seat]
            s.played[key] += 1

    def rows(self, chain: Sequence[str], seed: bytes | None, *, keys_only: bool = False) -> list[Any]:
        """The standings rows (as :func:`compute_standings` gives them); ``keys_only``: their keys."""
        lot = None
        if seed is not None:
            if self._lot is None or self._lot[0] != seed:
                keys = [p["key"] for p in self.players]
                self._lot = (seed, {k: i + 1 for i, k in enumerate(lot_order(seed, keys))})
            lot = self._lot[1]
        return order_rows(self.players, self.results, self.sums, chain=chain, seed=seed, lot=lot,
                          keys_only=keys_only)


def order_rows(players: Sequence[dict[str, str]], results: Sequence[GameResult], sums: _Aggregates, *,
               chain: Sequence[str], seed: bytes | None, lot: dict[str, int] | None = None,
               keys_only: bool = False) -> list[Any]:
    """The rows from the sums: players ordered by points, then each tie-break of ``chain`` in turn (each
    applied only within the groups still tied). Exact throughout: points and ``opponents_points`` are
    compared in 1/scale, ``head_to_head`` in halves, ``average_rank`` in 1/lcm(games played).
    ``keys_only``: the players' keys in that order, without the rows (what a pairing ranks by)."""
    keys = [p["key"] for p in players]
    scale, total, game_score, opponents = sums.scale, sums.total, sums.game_score, sums.opponents
    wins, rank_sum, played, games_of = sums.wins, sums.rank_sum, sums.played, sums.games_of
    if lot is None and seed is not None:
        lot = {k: i + 1 for i, k in enumerate(lot_order(seed, keys))}
    halves: dict[str, int] = {}  # head_to_head, in halves, once it has been applied
    common = math.lcm(*{played[k] for k in keys if played[k]})  # every games-played count divides it

    def value(k: str, criterion: str) -> Any:
        if criterion == "points":
            return total[k]
        if criterion == tb.GAME_SCORE:
            return game_score[k]
        if criterion == tb.OPPONENTS_POINTS:
            return opponents[k]
        if criterion == tb.WINS:
            return wins[k]
        if criterion == tb.HEAD_TO_HEAD:
            return halves[k]
        if criterion == tb.AVERAGE_RANK:  # rank_sum / played, in 1/common: compared exactly as integers
            return rank_sum[k] * (common // played[k]) if played[k] else None
        return lot[k] if lot is not None else None

    # Refining by each criterion in turn within the groups still tied, ties left in created order, is
    # one sort by (points, criterion 1, criterion 2, …, created order) — except that head_to_head is
    # computed within the group tied on everything before it: so one sort for the criteria before it, then
    # each group still tied sorted by head_to_head and the criteria after it (a stable sort: created order).
    criteria = ["points", *chain]
    cut = criteria.index(tb.HEAD_TO_HEAD) if tb.HEAD_TO_HEAD in criteria else len(criteria)

    plain = {"points": total, tb.GAME_SCORE: game_score, tb.OPPONENTS_POINTS: opponents, tb.WINS: wins,
             tb.HEAD_TO_HEAD: halves}  # the criteria that are a number of every player, larger first

    def column(criterion: str, who: Sequence[str] = keys) -> list[tuple]:
        """The sort values for ``criterion`` of ``who`` (in that order, as :func:`_sort_value`): one pass."""
        source = plain.get(criterion)
        if source is not None:
            return [(0, -source[k]) for k in who]
        return [_sort_value(value(k, criterion), criterion) for k in who]

    prefix = dict(zip(keys, zip(*(column(c) for c in criteria[:cut]), strict=True), strict=True))
    order = sorted(keys, key=prefix.__getitem__)  # stable: created order within ties
    if cut < len(criteria):
        groups: dict[str, int] = {}  # the players tied with another on everything before head_to_head: their group
        spans = []
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and prefix[order[end]] == prefix[order[start]]:
                end += 1
            if end - start > 1:
                spans.append((start, end))
                for k in order[start:end]:
                    groups[k] = start
            start = end
        halves.update(dict.fromkeys(keys, 0))
        halves.update(_head_to_head_in_groups(groups, results, games_of))
        for start, end in spans:
            members = order[start:end]
            rest = dict(zip(members, zip(*(column(c, members) for c in criteria[cut:]), strict=True), strict=True))
            order[start:end] = sorted(members, key=rest.__getitem__)
    if keys_only:
        return order
    names = {p["key"]: p["name"] for p in players}

    def shown(k: str, criterion: str) -> int | str | None:
        if criterion == tb.OPPONENTS_POINTS:
            return _exact(opponents[k], scale)
        if criterion == tb.HEAD_TO_HEAD:
            return _exact(halves[k], 2)
        if criterion == tb.AVERAGE_RANK:
            return _exact(rank_sum[k], played[k]) if played[k] else None
        return value(k, criterion)

    return [{"rank": i + 1, "key": k, "name": names[k], "points": _exact(total[k], scale),
             "tie_breaks": {c: shown(k, c) for c in chain}} for i, k in enumerate(order)]


def _exact(numerator: int, denominator: int) -> int | str:
    """``to_json(Fraction(numerator, denominator))`` without building the fraction (``denominator`` > 0)."""
    g = math.gcd(numerator, denominator)
    numerator, denominator = numerator // g, denominator // g
    return int(numerator) if denominator == 1 else f"{numerator}/{denominator}"


def _sort_value(value: Any, criterion: str) -> tuple:
    if value is None:  # no games (average_rank) or no seed yet (lot): after every known value
        return (1, 0)
    return (0, value if criterion in tb.ASCENDING else -value)


def _head_to_head_in_groups(groups: dict[str, int], results: Sequence[GameResult],
                            games_of: dict[str, list[int]]) -> dict[str, int]:
    """Each grouped player's head-to-head score within its group, in halves (2 per player of the group ranked below
    in a game, 1 per player at the same rank), for every group at once (``groups``: player → group, the groups
    of two or more players): each game of those players looked at once."""
    score = dict.fromkeys(groups, 0)
    if sum(len(games_of[key]) for key in groups) > len(results):  # most players tied: every game once, in order
        for result in results:
            _score_game(result, groups, score)
        return score
    seen: set[int] = set()
    for key in groups:
        for index in games_of[key]:
            if index in seen:
                continue
            seen.add(index)
            _score_game(results[index], groups, score)
    return score


def _score_game(result: GameResult, groups: dict[str, int], score: dict[str, int]) -> None:
    """Add a game to the head-to-head scores of its players of one group (:func:`_head_to_head_in_groups`)."""
    if len(result.players) == 2:  # the most common table, without the lists
        (a, b), (ra, rb) = result.players, result.ranks
        group = groups.get(a)
        if group is not None and groups.get(b) == group:
            score[a] += 2 if ra < rb else 1 if ra == rb else 0
            score[b] += 2 if rb < ra else 1 if ra == rb else 0
        return
    seated = [(k, r, groups[k]) for k, r in zip(result.players, result.ranks, strict=True) if k in groups]
    for k, r, g in seated:
        for other, r2, g2 in seated:
            if g2 == g and other != k:
                score[k] += 2 if r < r2 else 1 if r == r2 else 0
