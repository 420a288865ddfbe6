"""Swiss: the tables of a round from the standings so far — at tables of two a least-cost matching of players near
each other in the standings (in a window, certified or solved whole), at larger tables the fewest repeated meetings
(``docs/tournaments.md``, "Swiss")."""

from __future__ import annotations

import bisect
import collections
import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .blossom import swiss_matching
from .lexmatch import lex_matching, matching_cost
from .tables import pair_key

#: 2-player Swiss: players this far apart in the standings are matched only when no closer matching exists
SWISS_WINDOW = 40
#: the 2-seat Swiss matching's rules (``format.pairing`` of ``created``; absent: 1): 1 takes, of the least-cost
#: matchings, the one networkx returns; 2 the first in the standings' order (:mod:`.lexmatch`)
SWISS_RULES = (1, 2)
#: the rule of new tournaments
SWISS_RULE = 2
#: Swiss, larger tables: up to this many players seated, every seating is tried (fewest repeats exactly)
SWISS_EXACT_MAX = 12
#: Swiss, larger tables: rotations of three players look this many tables around a table with a repeat
ROTATION_REACH = 6




def swiss_two(ranked: list[str], met: Counter[tuple[str, str]], rule: int = 1) -> list[list[str]]:
    """A maximum-weight perfect matching where a pair's weight is
    ``BIG × (1 + max_met − met) − (distance in the standings)²``: fewest repeat meetings first, then
    players close in the standings. Only pairs at most ``SWISS_WINDOW`` places apart are considered
    unless no perfect matching exists among them.

    *Which* maximum-weight matching: the one networkx's ``max_weight_matching(graph, maxcardinality=True)``
    returns for that graph (vertices in standings order, edges added by increasing places). From the
    round where neighbours in the standings have met before there are usually several (such a pair can
    be mended upwards or downwards at the same cost), and networkx's order of work picks one:
    :func:`referee.tournaments.blossom.swiss_matching` takes networkx's very steps, faster. Before it,
    :func:`certified_matching` tries the rounds where no neighbours met: it proves its candidate the only
    maximum matching (then every exact algorithm returns it) in about linear time.

    ``rule`` 2 (:data:`SWISS_RULES`; new tournaments): the same least-cost matchings, and of those the first in
    the standings' order (:mod:`referee.tournaments.lexmatch`), computed exactly in about linear time."""
    n = len(ranked)
    top = max(met.values(), default=0)
    big = n**3 + 1
    if rule == 2 and n % 2 == 0:
        met_of = met_by_place(ranked, met, SWISS_WINDOW)  # the window graph's pairs: no other pair is offered
        known = regional(n, met_of, lambda lo, hi: window_matching(met_of, big, top, SWISS_WINDOW, lo=lo, hi=hi))
        # ``known``, a perfect matching near the optimum, gives the programme its bound
        mate = lex_matching(n, met_of, big, SWISS_WINDOW, matching_cost(known, met_of, big))
        return [[ranked[i], ranked[mate[i]]] for i in range(n) if i < mate[i]]
    met_of = met_by_place(ranked, met)

    def matching(window: int, lo: int = 0, hi: int = n) -> set[tuple[int, int]]:
        return window_matching(met_of, big, top, window, lo=lo, hi=hi)

    pairs = certified_matching(n, met_of, big, lambda lo, hi: matching(SWISS_WINDOW, lo, hi)) \
        if n % 2 == 0 else None
    if pairs is None:
        pairs = matching(SWISS_WINDOW)
    if 2 * len(pairs) < n and SWISS_WINDOW < n:
        pairs = matching(n)
    tables = sorted((sorted(p) for p in pairs), key=lambda p: p[0])
    return [[ranked[i], ranked[j]] for i, j in tables]


def window_matching(met_of: dict[int, dict[int, int]], big: int, top: int, window: int, *, lo: int, hi: int
                     ) -> set[tuple[int, int]]:
    """networkx's matching (:func:`swiss_matching`) of the window graph of the players at places ``[lo, hi)``, as
    pairs of places."""
    sub = {i - lo: {j - lo: t for j, t in met_of[i].items() if lo <= j < hi} for i in range(lo, hi) if i in met_of}
    return {(i + lo, j + lo) for i, j in swiss_matching(hi - lo, window, sub, big, top)}


#: :func:`certified_matching`: players on each side of a repeat meeting first solved with it
CERTIFY_MARGIN = 6


def met_by_place(ranked: list[str], met: Counter[tuple[str, str]], within: int | None = None
                 ) -> dict[int, dict[int, int]]:
    """How often the players at two places of ``ranked`` met: ``{i: {j: times}}`` (both ways; pairs that never
    met are absent; with ``within``, so are the pairs more than that many places apart)."""
    place = {k: i for i, k in enumerate(ranked)}
    far = len(ranked) if within is None else within
    met_of: dict[int, dict[int, int]] = {}
    for (a, b), times in met.items():
        i, j = place.get(a), place.get(b)
        if times and i is not None and j is not None and -far <= i - j <= far:
            met_of.setdefault(i, {})[j] = times
            met_of.setdefault(j, {})[i] = times
    return met_of


def certified_matching(n: int, met_of: dict[int, dict[int, int]], big: int,
                        solve: Callable[[int, int], set[tuple[int, int]]]) -> set[tuple[int, int]] | None:
    """The maximum-weight perfect matching of :func:`swiss_two`'s window graph when it is provably the
    only one, else None.

    A candidate: players paired with their neighbour in the standings (1–2, 3–4, …) except around the
    neighbours who met before (``met_of``: :func:`met_by_place`), where ``solve`` (the exact matching of
    ``[lo, hi)`` alone) pairs a region of
    ``CERTIFY_MARGIN`` players more on each side. :func:`only_optimum` then proves it the one optimum
    of the whole graph, or does not (another matching may be as good or better — or a fractional one is,
    which the proof cannot rule out: typical as soon as neighbours in the standings have met before):
    None, and the exact matching of the whole graph decides. When the regions cover everyone the whole graph
    is ``solve``'s."""
    regions = _regions(n, met_of)
    if regions and regions[0] == [0, n]:
        return solve(0, n)
    mate = regional(n, met_of, solve, regions)
    if only_optimum(mate, met_of, big, SWISS_WINDOW) != "only":
        return None
    return {(i, mate[i]) for i in range(n) if i < mate[i]}


def _regions(n: int, met_of: dict[int, dict[int, int]]) -> list[list[int]]:
    """The places ``[lo, hi)`` around the neighbours in the standings (1–2, 3–4, …) who met before, with
    ``CERTIFY_MARGIN`` players more on each side, overlapping ones joined."""
    regions: list[list[int]] = []
    for i in range(0, n, 2):
        if i + 1 in met_of.get(i, ()):
            lo, hi = max(0, i - CERTIFY_MARGIN), min(n, i + 2 + CERTIFY_MARGIN)
            if regions and lo <= regions[-1][1]:
                regions[-1][1] = hi
            else:
                regions.append([lo, hi])
    return regions


def regional(n: int, met_of: dict[int, dict[int, int]], solve: Callable[[int, int], set[tuple[int, int]]],
              regions: list[list[int]] | None = None) -> list[int]:
    """Everyone paired with their neighbour in the standings, except in the :func:`_regions`, each matched alone
    by ``solve``: a perfect matching (as ``mate``), near the least cost but not always at it."""
    mate = [i + 1 if i % 2 == 0 else i - 1 for i in range(n)]
    for lo, hi in _regions(n, met_of) if regions is None else regions:
        for x, y in solve(lo, hi):
            mate[x], mate[y] = y, x
    return mate


def only_optimum(mate: list[int], met_of: dict[int, dict[int, int]], big: int, window: int) -> str:
    """Whether the perfect matching ``mate`` is the only one of least cost ``(j − i)² + big × met(i, j)``
    (the most weight in :func:`swiss_two`) over pairs at most ``window`` apart: ``"only"``, ``"better"``
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


def swiss_multi(ranked: list[str], sizes: Sequence[int], met: Counter[tuple[str, str]]) -> list[list[str]]:
    """Tables filled from the top of the standings (largest tables first): the best-placed unseated player
    opens a table; the next seat goes to the best-placed unseated player who has met no one at the table,
    or, when everyone has, to the one with the fewest meetings with it. Then :func:`_fix_repeats`."""
    unseated = list(ranked)
    tables = []
    for size in sizes:
        table = [unseated.pop(0)]
        while len(table) < size:
            pick = next((i for i, x in enumerate(unseated) if all(met[pair_key(x, y)] == 0 for y in table)), None)
            if pick is None:
                pick = min(range(len(unseated)), key=lambda i: (sum(met[pair_key(unseated[i], y)] for y in table), i))
            table.append(unseated.pop(pick))
        tables.append(table)
    _fix_repeats(tables, met)
    return tables


def swiss_exact(ranked: list[str], sizes: Sequence[int], met: Counter[tuple[str, str]]) -> list[list[str]]:
    """Every way to seat the players at tables of ``sizes``, the one with the fewest repeat meetings, then
    the smallest Σ over tables of (each player's place − the table's best place); the first such in this
    enumeration: the best-ranked unseated player opens the next table, whose size runs over the sizes
    left, largest first, and whose other players run over ``itertools.combinations`` of the unseated
    players in standings order. Tables come out in the order they were opened."""
    place = {k: i for i, k in enumerate(ranked)}
    best: list[Any] = [None, None]

    def seat(unseated: list[str], sizes_left: list[int], tables: list[tuple[str, ...]], cost: tuple[int, int]) -> None:
        if best[0] is not None and cost >= best[0]:
            return
        if not unseated:
            best[0], best[1] = cost, [list(t) for t in tables]
            return
        head, rest = unseated[0], unseated[1:]
        for size in sorted(set(sizes_left), reverse=True):
            left = list(sizes_left)
            left.remove(size)
            for others in itertools.combinations(rest, size - 1):
                table = (head, *others)
                step = (_repeats(table, met), sum(place[k] - place[head] for k in others))
                tables.append(table)
                seat([k for k in rest if k not in others], left, tables, (cost[0] + step[0], cost[1] + step[1]))
                tables.pop()

    seat(list(ranked), list(sizes), [], (0, 0))
    return best[1]


def _repeats(table: Sequence[str], met: Counter[tuple[str, str]]) -> int:
    return sum(met[pair_key(a, b)] for i, a in enumerate(table) for b in table[i + 1:])


def _nearest(a: int, count: int) -> list[int]:
    """The other tables' indexes, nearest to ``a`` first, the lower table (larger index) first at equal
    distance."""
    return sorted((b for b in range(count) if b != a), key=lambda b: (abs(b - a), -b))


def _fix_repeats(tables: list[list[str]], met: Counter[tuple[str, str]]) -> None:
    """Lower the repeat meetings by swaps (:func:`_swap_repeats`) until none helps, then by one rotation of
    three players (:func:`_rotate_repeats`); again, until neither helps."""
    while True:
        _swap_repeats(tables, met)
        if not _rotate_repeats(tables, met):
            return


def _rotate_repeats(tables: list[list[str]], met: Counter[tuple[str, str]]) -> bool:
    """Make the first rotation that lowers the total repeat count of three tables: for each table ``a``
    holding a repeat, each of its seats ``i``, tables ``b`` then ``c`` among its ``ROTATION_REACH``
    nearest (:func:`_nearest` order, b ≠ c), seats ``j`` of b and ``k`` of c: a[i] moves to b[j], b[j] to
    c[k], c[k] to a[i]. Whether one was made."""
    for a, ta in enumerate(tables):
        if _repeats(ta, met) == 0:
            continue
        near = _nearest(a, len(tables))[:ROTATION_REACH]
        for i in range(len(ta)):
            for b in near:
                for c in near:
                    if c == b:
                        continue
                    tb, tc = tables[b], tables[c]
                    before = _repeats(ta, met) + _repeats(tb, met) + _repeats(tc, met)
                    for j in range(len(tb)):
                        for k in range(len(tc)):
                            na = [*ta[:i], tc[k], *ta[i + 1:]]
                            nb = [*tb[:j], ta[i], *tb[j + 1:]]
                            nc = [*tc[:k], tb[j], *tc[k + 1:]]
                            if _repeats(na, met) + _repeats(nb, met) + _repeats(nc, met) < before:
                                tables[a], tables[b], tables[c] = na, nb, nc
                                return True
    return False


def _swap_repeats(tables: list[list[str]], met: Counter[tuple[str, str]]) -> None:
    """While some table holds a repeat meeting: try, for its seats in order, swapping with the seats of the
    other tables (:func:`_nearest` order) and make the first swap that lowers the two tables' total repeat
    count; stop when no such swap exists."""
    changed = True
    while changed:
        changed = False
        for a, ta in enumerate(tables):
            if _repeats(ta, met) == 0:
                continue
            others = _nearest(a, len(tables))
            for i in range(len(ta)):
                for b in others:
                    tb = tables[b]
                    before = _repeats(ta, met) + _repeats(tb, met)
                    for j in range(len(tb)):
                        na = [*ta[:i], tb[j], *ta[i + 1:]]
                        nb = [*tb[:j], ta[i], *tb[j + 1:]]
                        if _repeats(na, met) + _repeats(nb, met) < before:
                            tables[a], tables[b] = na, nb
                            changed = True
                            break
                    if changed:
                        break
                if changed:
                    break
            if changed:
                break


