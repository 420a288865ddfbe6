"""The 10 objective cards (TU-O2) as predicates over one player's *presence* (TU-O1).

Presence is every roof of the player on the board, visible or covered, given as ``(site, level)`` pairs:
``site`` is the site index, ``level`` the floor the roof stands on (the building's height when the roof
was placed; it never changes). Building colours never change either, so each check is a pure function of
the board's colours and the player's roofs.

Each objective file entry names a ``check`` kind with parameters; :func:`make_check` turns it into a
predicate ``check(colors, presence) -> bool`` for one board side.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations

from .data import COLOR_INDEX, Objective, Side

Presence = tuple[tuple[int, int], ...]
Check = Callable[[Sequence[int], Presence], bool]


def _sites(presence: Presence) -> set[int]:
    return {site for site, _level in presence}


def make_check(objective: Objective, side: Side) -> Check:
    """The predicate of ``objective`` on ``side``."""
    p = objective.params
    kind = objective.kind
    if kind == "colors":
        need = p["count"]
        return lambda colors, presence: len({colors[s] for s, _ in presence}) >= need
    if kind == "area":
        areas = side.parks if p["area"] == "parks" else side.lakes
        need = p["buildings"]
        return lambda colors, presence: any(len(area & _sites(presence)) >= need for area in areas)
    if kind == "districts":
        need = p["count"]
        district = side.site_district
        return lambda colors, presence: len({district[s] for s, _ in presence}) >= need
    if kind == "connected":
        return _connected_check(side, p["buildings"])
    if kind == "color_buildings":
        color = COLOR_INDEX[p["color"]]
        need = p["buildings"]
        return lambda colors, presence: len({s for s, _ in presence if colors[s] == color}) >= need
    if kind == "grey_districts":
        first: int
        second: int
        first, second = p["counts"]
        grey_a, grey_b = side.grey_districts
        district = side.site_district

        def grey(colors: Sequence[int], presence: Presence) -> bool:
            sites = _sites(presence)
            a = sum(1 for s in sites if district[s] == grey_a)
            b = sum(1 for s in sites if district[s] == grey_b)
            return (a >= first and b >= second) or (b >= first and a >= second)

        return grey
    if kind == "borders":
        return _borders_check(side, p["count"])
    if kind == "stacked":
        need_buildings: int
        need_roofs: int
        need_buildings, need_roofs = p["buildings"], p["roofs"]

        def stacked(colors: Sequence[int], presence: Presence) -> bool:
            counts = Counter(s for s, _ in presence)
            return sum(1 for c in counts.values() if c >= need_roofs) >= need_buildings

        return stacked
    if kind == "levels":
        levels = frozenset(p["levels"])
        return lambda colors, presence: levels <= {level for _, level in presence}
    raise ValueError(f"unknown objective check {kind!r}")  # the loader rejects these first


def _connected_check(side: Side, need: int) -> Check:
    adjacency = side.adjacency

    def connected(colors: Sequence[int], presence: Presence) -> bool:
        sites = _sites(presence)
        if len(sites) < need:
            return False
        seen: set[int] = set()
        for start in sites:
            if start in seen:
                continue
            group = {start}
            todo = [start]
            while todo:
                for t in adjacency[todo.pop()]:
                    if t in sites and t not in group:
                        group.add(t)
                        todo.append(t)
            if len(group) >= need:
                return True
            seen |= group
        return False

    return connected


def _borders_check(side: Side, need: int) -> Check:
    borders = side.borders

    def pairs_for(sites: set[int], border: tuple[frozenset[int], frozenset[int]]) -> list[frozenset[int]]:
        return [frozenset((a, b)) for a in border[0] & sites for b in border[1] & sites]

    def both_sides(colors: Sequence[int], presence: Presence) -> bool:
        sites = _sites(presence)
        if len(sites) < 2 * need:
            return False
        options = [pairs for border in borders if (pairs := pairs_for(sites, border))]
        # need distinct borders, each with one building on either side, and no building counted twice
        for chosen in combinations(options, need):
            if _disjoint_pick(chosen, frozenset()):
                return True
        return False

    return both_sides


def _disjoint_pick(options: Sequence[list[frozenset[int]]], used: frozenset[int]) -> bool:
    if not options:
        return True
    for pair in options[0]:
        if not pair & used and _disjoint_pick(options[1:], used | pair):
            return True
    return False
