"""The 2-seat Swiss pairing as it was before ``referee.tournaments.blossom`` (kept for the tests, as
``former_standings.py`` keeps the former standings): networkx's ``max_weight_matching`` on the window
graph, with the certified shortcut of the rounds where no neighbours in the standings met before
(``_certified_matching``: a candidate proved the only optimum, which networkx would return too)."""

from __future__ import annotations

import bisect
import collections
import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable

import networkx as nx

from referee.tournaments.pairing import SWISS_WINDOW, pair_key


def _swiss_two(ranked: list[str], met: Counter[tuple[str, str]]) -> list[list[str]]:
    """A maximum-weight perfect matching (networkx) where a pair's weight is
    ``BIG × (1 + max_met − met) − (distance in the standings)²``: fewest repeat meetings first, then
    players close in the standings. Only pairs at most ``SWISS_WINDOW`` places apart are considered
    unless no perfect matching exists among them.

    networkx's matching costs O(n) per augmentation however easy the graph (its labels are reset over
    every vertex at each stage), O(n²) in all; :func:`_certified_matching` finds the same matching in
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

    pairs = _certified_matching(ranked, met, big, lambda lo, hi: matching(SWISS_WINDOW, lo, hi)) \
        if n % 2 == 0 else None
    if pairs is None:
        pairs = matching(SWISS_WINDOW)
    if 2 * len(pairs) < n and SWISS_WINDOW < n:
        pairs = matching(n)
    tables = sorted((sorted(p) for p in pairs), key=lambda p: p[0])
    return [[ranked[i], ranked[j]] for i, j in tables]


#: :func:`_certified_matching`: players on each side of a repeat meeting first solved with it
CERTIFY_MARGIN = 6


def _certified_matching(ranked: list[str], met: Counter[tuple[str, str]], big: int,
                        solve: Callable[[int, int], set[tuple[int, int]]]) -> set[tuple[int, int]] | None:
    """The maximum-weight perfect matching of :func:`_swiss_two`'s window graph when it is provably the
    only one, else None.

    A candidate: players paired with their neighbour in the standings (1–2, 3–4, …) except around the
    neighbours who met before, where ``solve`` (networkx on ``[lo, hi)`` alone) pairs a region of
    ``CERTIFY_MARGIN`` players more on each side. :func:`_only_optimum` then proves it the one optimum
    of the whole graph, or does not (another matching may be as good or better — or a fractional one is,
    which the proof cannot rule out: typical as soon as neighbours in the standings have met before):
    None, and networkx on the whole graph decides, as it always did. When the regions cover everyone
    the whole graph is ``solve``'s, exactly the former call."""
    n = len(ranked)
    met_of: dict[int, dict[int, int]] = {}
    place = {k: i for i, k in enumerate(ranked)}
    for (a, b), times in met.items():
        if times and a in place and b in place:
            met_of.setdefault(place[a], {})[place[b]] = times
            met_of.setdefault(place[b], {})[place[a]] = times
    repeats = [i for i in range(0, n, 2) if i + 1 in met_of.get(i, ())]
    regions: list[list[int]] = []
    for i in repeats:
        lo, hi = max(0, i - CERTIFY_MARGIN), min(n, i + 2 + CERTIFY_MARGIN)
        if regions and lo <= regions[-1][1]:
            regions[-1][1] = hi
        else:
            regions.append([lo, hi])
    if regions and regions[0] == [0, n]:
        return solve(0, n)
    mate = [i + 1 if i % 2 == 0 else i - 1 for i in range(n)]
    for lo, hi in regions:
        for x, y in solve(lo, hi):
            mate[x], mate[y] = y, x
    if _only_optimum(mate, met_of, big, SWISS_WINDOW) != "only":
        return None
    return {(i, mate[i]) for i in range(n) if i < mate[i]}


def _only_optimum(mate: list[int], met_of: dict[int, dict[int, int]], big: int, window: int) -> str:
    """Whether the perfect matching ``mate`` is the only one of least cost ``(j − i)² + big × met(i, j)``
    (the most weight in :func:`_swiss_two`) over pairs at most ``window`` apart: ``"only"``, ``"better"``
    (a cheaper one exists, or none was proved) or ``"tie"`` (another one costs as much).

    The proof is the bipartite double cover (a left and a right copy of every player, the edges i–j'
    and j–i'): ``mate`` doubled is its only cheapest assignment exactly when the residual graph has no
    cycle of cost ≤ 0, and then ``mate`` is the only cheapest perfect matching, fractional ones
    included (so networkx, exact, returns it). Following each right copy j' along its one residual arc
    (to the left copy of j's mate),
    the residual graph is: an arc i → mate(j) of cost c(i, j) − c(j, mate(j)) for every pair i–j of the
    window other than i's own. Shortest distances from a virtual source (SPFA, with arcs that cannot
    shorten any distance skipped) find a negative cycle (a cycle of parent pointers, looked for every n
    steps; 20 n steps at most), or give potentials under which a zero cycle is a
    cycle of arcs of reduced cost 0 (Kahn's algorithm)."""
    n = len(mate)

    def cost(i: int, j: int) -> int:
        repeat = met_of.get(i)
        return (j - i) ** 2 + (big * repeat.get(j, 0) if repeat else 0)

    own = [cost(i, mate[i]) for i in range(n)]
    light_limit = 64
    heavy = sorted(j for j in range(n) if own[j] > light_limit)  # their pair costs more: arcs through them go far
    light = max((c for c in own if c <= light_limit), default=0)

    def targets(i: int, reach: int) -> Iterable[int]:
        r = min(window, math.isqrt(reach + light))
        near = range(max(0, i - r), min(n, i + r + 1))
        if not heavy:
            return near
        lo, hi = bisect.bisect_left(heavy, i - window), bisect.bisect_right(heavy, i + window)
        far = [j for j in heavy[lo:hi] if abs(j - i) > r]
        return itertools.chain(near, far) if far else near

    dist = [0] * n
    parent = [-1] * n
    queued = [True] * n
    queue = collections.deque(range(n))
    pops = 0
    while queue:
        pops += 1
        if pops % n == 0 and (pops > 20 * n or _has_cycle(parent)):
            return "better"  # a cycle of parents is a negative cycle; past the budget: not proved either
        i = queue.popleft()
        queued[i] = False
        di, mi = dist[i], mate[i]
        for j in targets(i, -di):
            if j in (i, mi):
                continue
            t = mate[j]
            nd = di + cost(i, j) - own[j]
            if nd < dist[t]:
                dist[t] = nd
                parent[t] = i
                if not queued[t]:
                    queued[t] = True
                    queue.append(t)
    tight: list[list[int]] = [[] for _ in range(n)]
    indegree = [0] * n
    for i in range(n):
        di, mi = dist[i], mate[i]
        for j in targets(i, -di):
            if j not in (i, mi) and di + cost(i, j) - own[j] == dist[mate[j]]:
                tight[i].append(mate[j])
                indegree[mate[j]] += 1
    free = [i for i in range(n) if indegree[i] == 0]
    removed = 0
    while free:
        i = free.pop()
        removed += 1
        for t in tight[i]:
            indegree[t] -= 1
            if indegree[t] == 0:
                free.append(t)
    return "only" if removed == n else "tie"


def _has_cycle(parent: list[int]) -> bool:
    """Whether following ``parent`` (−1: none) from some node comes back to a node on the same walk."""
    state = [0] * len(parent)  # 0 unseen, 1 on the current walk, 2 done
    for start in range(len(parent)):
        walk = []
        v = start
        while v != -1 and state[v] == 0:
            state[v] = 1
            walk.append(v)
            v = parent[v]
        if v != -1 and state[v] == 1:
            return True
        for u in walk:
            state[u] = 2
    return False
