"""The 2-seat Swiss pairing as it was before ``referee.tournaments.blossom`` (kept for the tests, as
``former_standings.py`` keeps the former standings): networkx's ``max_weight_matching`` on the window
graph, with the certified shortcut of the rounds where no neighbours in the standings met before
(``swiss.certified_matching``: a candidate proved the only optimum, which networkx would return too). The
shortcut is unchanged, so it is the referee's own; only the matching it falls back on is networkx's."""

from __future__ import annotations

from collections import Counter

import networkx as nx

from referee.tournaments.pairing import SWISS_WINDOW, met_by_place, pair_key
from referee.tournaments.swiss import certified_matching


def _swiss_two(ranked: list[str], met: Counter[tuple[str, str]]) -> list[list[str]]:
    """A maximum-weight perfect matching (networkx) where a pair's weight is
    ``BIG × (1 + max_met − met) − (distance in the standings)²``: fewest repeat meetings first, then
    players close in the standings. Only pairs at most ``SWISS_WINDOW`` places apart are considered
    unless no perfect matching exists among them.

    networkx's matching costs O(n) per augmentation however easy the graph (its labels are reset over
    every vertex at each stage), O(n²) in all; :func:`swiss.certified_matching` finds the same matching in
    about linear time when it can prove that matching is the only maximum one (then networkx, an exact
    algorithm, returns it too), and networkx runs on the whole graph otherwise."""
    n = len(ranked)
    top = max(met.values(), default=0)
    big = n**3 + 1

    def matching(window: int, lo: int = 0, hi: int = n) -> set[tuple[int, int]]:
        graph = nx.Graph()
        graph.add_nodes_from(range(lo, hi))
        for i in range(lo, hi):
            for j in range(i + 1, min(hi, i + 1 + window)):
                weight = big * (1 + top - met[pair_key(ranked[i], ranked[j])]) - (j - i) ** 2
                graph.add_edge(i, j, weight=weight)
        return nx.max_weight_matching(graph, maxcardinality=True)

    solve = lambda lo, hi: matching(SWISS_WINDOW, lo, hi)  # noqa: E731
    pairs = certified_matching(n, met_by_place(ranked, met), big, solve) if n % 2 == 0 else None
    if pairs is None:
        pairs = matching(SWISS_WINDOW)
    if 2 * len(pairs) < n and SWISS_WINDOW < n:
        pairs = matching(n)
    tables = sorted((sorted(p) for p in pairs), key=lambda p: p[0])
    return [[ranked[i], ranked[j]] for i, j in tables]
