"""The 2-seat Swiss pairing of rule 2: the least-cost perfect matching of the window graph, and of those
the first in the standings' order — computed exactly, in about linear time.

The graph (as rule 1's, :func:`referee.tournaments.swiss.swiss_two`): the players at places ``0 … n − 1``
of the standings, a pair ``i < j`` at most ``window`` places apart costing ``(j − i)² + big × met(i, j)``
(``big`` = n³ + 1: one repeat meeting costs more than any distances). Rule 2 takes, of the perfect matchings
of least cost, **the one whose list of opponents (of the player at place 0, then 1, …) comes first**: the
best-ranked player meets the best-ranked opponent that still leaves a least-cost pairing, then the next
player not yet paired, and so on. Unlike rule 1 (whichever optimum networkx's order of work returns), that
choice is local: a verifier can recompute it with any exact method.

:func:`lex_matching` is a dynamic programme along the standings. After place ``p`` a state is the set of
players before ``p + 1`` not yet paired (*open*: each will meet a player after ``p``); at place ``p`` the
player either opens or meets one of the open players. A state keeps its least cost so far and, of the ways
to reach it at that cost, the first in the rule's order (two ways to one state are ordered by their paired
players alone, whatever comes after: the open ones are the same). Pruning keeps it small: a state is
dropped when its cost so far plus a lower bound of the rest exceeds the cost of a known perfect matching
(``upper``); the lower bound, valid for every completion:

* each open player ``o`` meets a player after ``p``: at least ``(p + 1 − o)²``;
* the other players after ``p`` pair among themselves: at least 1 a pair;
* a cut of the standings that an odd number of pairs must cross (the parity of the players on its left),
  between two players who met before, is crossed by a pair at least two places long; with the even cut
  next to it (crossed twice) that makes two such pairs, 6 more than two neighbours: counted for a set of
  such cuts at least 6 places apart (a pair that serves two of them is at least 5 places long: 24 more, 6 for
  each of the cuts a pair that long can serve), from 4 places ahead on (an open player's pair that reaches
  such a cut is at least 2 places longer than its first term counts: 8 more).

A state dropped so can be on no least-cost path, so the result is exact for any ``upper`` at least the
optimum. The bound makes the states few where the standings are paired with neighbours (one or two per
place) and a handful around each repeat meeting.
"""

from __future__ import annotations

from collections.abc import Mapping

#: a node of the programme: (cost so far, the node before, the open player met at this place or −1 (opened), place)
_Node = tuple[int, "_Node | None", int, int]


def matching_cost(mate: list[int], met_of: Mapping[int, Mapping[int, int]], big: int) -> int:
    """The cost of a perfect matching given as ``mate`` (each place's opponent)."""
    total = 0
    for i, j in enumerate(mate):
        if i < j:
            row = met_of.get(i)
            total += (j - i) ** 2 + (big * row.get(j, 0) if row else 0)
    return total


def _repeat_bounds(n: int, met_of: Mapping[int, Mapping[int, int]]) -> list[int]:
    """``bounds[x]`` = how many odd cuts ``c ≥ x`` (an odd number of players on their left: every perfect
    matching crosses them an odd number of times) between two players who met (places c − 1 and c) were
    chosen, right to left, each at least 6 places from the last (a pair that serves two such cuts is at least 5
    places long, 24 more than two neighbours)."""
    counts = [0] * (n + 2)
    last = None
    for c in range(n - 1, 0, -2):  # the odd cuts (n is even)
        if c in met_of.get(c - 1, ()) and (last is None or c <= last - 6):
            counts[c] += 1
            last = c
    for x in range(n, -1, -1):
        counts[x] += counts[x + 1]
    return counts


def _first_in_order(a: _Node, b: _Node) -> bool:
    """Whether the way ``a`` comes before the way ``b`` in the rule's order: both at one place with the same open
    players, so they differ only in players paired since their last common node, and the first of those players
    (in the standings) whose opponent differs decides: the lower opponent comes first."""
    mate_a: dict[int, int] = {}
    mate_b: dict[int, int] = {}
    while a is not b:
        assert a is not None and b is not None
        _g, before_a, o, p = a
        if o >= 0:
            mate_a[o], mate_a[p] = p, o
        _g, before_b, o, p = b
        if o >= 0:
            mate_b[o], mate_b[p] = p, o
        a, b = before_a, before_b  # type: ignore[assignment]
    for place in sorted(mate_a.keys() | mate_b.keys()):
        x, y = mate_a.get(place, -1), mate_b.get(place, -1)
        if x != y:
            return x < y
    return False


def lex_matching(n: int, met_of: Mapping[int, Mapping[int, int]], big: int, window: int, upper: int) -> list[int]:
    """Rule 2's pairing of places ``0 … n − 1`` (``n`` even), as ``mate`` (each place's opponent).

    ``met_of[i][j]``: how often the players at places i and j met (both ways; absent: never). ``upper``: the cost
    of some perfect matching of the window graph (e.g. the regions around repeat meetings matched alone), at
    least the optimum: the pruning's bound. Raises ``ValueError`` when no perfect matching costs at most
    ``upper``."""
    if n % 2:
        raise ValueError("an odd number of players has no perfect matching")
    bounds = _repeat_bounds(n, met_of)
    last_cut = len(bounds) - 1
    limit = 2 * upper  # everything below in halves: the pairs still to make cost at least 1/2 a player
    root: _Node = (0, None, -1, -1)
    states: dict[tuple[int, ...], _Node] = {(): root}
    for p in range(n):
        left = n - p - 1  # players after p
        row = met_of.get(p)
        repeats = 12 * bounds[min(last_cut, p + 4)]
        oldest = p - window
        new: dict[tuple[int, ...], _Node] = {}
        get = new.get
        for key, node in states.items():
            if key and key[0] < oldest:
                continue  # its first open player can meet no one any more
            g = node[0]
            size = len(key)
            squares = 0
            for o in key:
                squares += (p + 1 - o) ** 2
            # p opens: the bound of the rest is taken after p, in halves (module docstring)
            if 2 * g + 2 * (squares + 1) + left - size - 1 + repeats <= limit:
                opened = (*key, p)
                way: _Node = (g, node, -1, p)
                held = get(opened)
                if held is None or g < held[0] or (g == held[0] and _first_in_order(way, held)):
                    new[opened] = way
            # p meets an open player o
            base = left - size + 1 + repeats
            for k, o in enumerate(key):
                cost = g + (p - o) ** 2 + (big * row.get(o, 0) if row else 0)
                if 2 * cost + 2 * (squares - (p + 1 - o) ** 2) + base > limit:
                    continue
                closed = key[:k] + key[k + 1:]
                way = (cost, node, o, p)
                held = get(closed)
                if held is None or cost < held[0] or (cost == held[0] and _first_in_order(way, held)):
                    new[closed] = way
        states = new
        if not states:
            raise ValueError(f"no perfect matching of the window graph costs at most {upper}")
    end = states.get(())
    if end is None:
        raise ValueError(f"no perfect matching of the window graph costs at most {upper}")
    mate = [-1] * n
    back: _Node | None = end
    while back is not None and back[3] >= 0:
        _g, before, o, p = back
        if o >= 0:
            mate[o], mate[p] = p, o
        back = before
    return mate
