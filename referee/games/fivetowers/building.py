"""The building rules as pure functions on card values (FT-B4, FT-R3, FT-G1).

A tower is summarised by the value of its top card; an empty tower by :data:`EMPTY` (16), on which
every value may start a tower (FT-B3), because every value is below 16.

>>> placeable(7, 5), placeable(7, 8), placeable(9, 3), placeable(9, 0), placeable(4, EMPTY)
(False, True, True, False, True)
>>> longest_chain(EMPTY, (4, 7, 7))     # two 7s cannot both go in one tower without a 9 between them
2
>>> longest_chain(EMPTY, (7, 7, 9))     # 7, then 9 on the 7, then the other 7 on the 9
3
"""

from __future__ import annotations

from functools import lru_cache

EMPTY = 16
SPIRE = 0
ANYTHING_ON = 8  # any value may be placed on an 8 (FT-B4)
ON_ANYTHING_BUT_SPIRE = 9  # a 9 may be placed on any value except a 0 (FT-B4)


def placeable(value: int, top: int) -> bool:
    """May a card of ``value`` go on a tower whose top card is ``top`` (:data:`EMPTY` if none)? FT-B4."""
    return value < top or top == ANYTHING_ON or (value == ON_ANYTHING_BUT_SPIRE and top != SPIRE)


@lru_cache(maxsize=65536)
def longest_chain(top: int, values: tuple[int, ...]) -> int:
    """The most of ``values`` (sorted, one suit) that can be built, in some order, on a tower topped by ``top``.

    Exhaustive search over placement orders, memoised: at most 5 values (a display), so it is tiny. Any
    prefix of a legal placement sequence is legal, so a player who can build ``k`` of them can build
    every smaller number too.
    """
    best = 0
    previous = None
    for i, value in enumerate(values):
        if value == previous or not placeable(value, top):
            continue
        previous = value
        length = 1 + longest_chain(value, values[:i] + values[i + 1:])
        if length > best:
            best = length
            if best == len(values):
                break
    return best


def placement_error(value: int, top: int) -> str | None:
    """Why ``value`` cannot go on ``top`` (a short reason), or ``None`` if it can."""
    if placeable(value, top):
        return None
    if top == SPIRE:
        return "spire"
    return "order"
