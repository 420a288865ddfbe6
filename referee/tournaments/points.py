"""Points by rank per table size, byes, and exact numbers in JSON.

Default points (``DEFAULT_POINTS``): at a table of ``n`` seats, rank ``r`` scores
``12 × (n − r) / (n − 1)`` — twelve times the share of the other seats it finished ahead of. So a win is
worth 12 at every table size and a last place 0, which keeps mixed table sizes (4, 3, 3) fair::

    2 seats: 12, 0          3 seats: 12, 6, 0          4 seats: 12, 8, 4, 0
    5 seats: 12, 9, 6, 3, 0

A bye scores ``DEFAULT_BYE_POINTS`` = 6 (what an even game is worth). Both are configurable in
``created`` (``points``: ``{"<table size>": [points for rank 1, 2, …]}`` with integers, ``bye_points``).

Shared ranks: ranks are standard competition ranks (1, 1, 3, …). A rank shared by ``k`` seats gives
each of them the mean of the points of the ``k`` places they share — two seats sharing rank 1 at a
4-seat table score (12 + 8) / 2 = 10 each.

Numbers are exact (:class:`fractions.Fraction`). In JSON (standings, certificates) a whole number is an
integer and any other a string ``"p/q"`` in lowest terms (``"10/3"``): the signed, canonical JSON of a
certificate holds no floats.

>>> seat_points([1, 1, 3, 4], DEFAULT_POINTS[4])
[Fraction(10, 1), Fraction(10, 1), Fraction(4, 1), Fraction(0, 1)]
>>> to_json(Fraction(7, 3)), to_json(Fraction(6, 1))
('7/3', 6)
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

DEFAULT_POINTS: dict[int, list[int]] = {n: [12 * (n - r) // (n - 1) for r in range(1, n + 1)] for n in range(2, 6)}
DEFAULT_BYE_POINTS = 6


def ranks_problem(ranks: Any, seats: int) -> str | None:
    """What is wrong with ``ranks`` as standard competition ranks of ``seats`` seats, or None.

    Rank ``r`` means exactly ``r − 1`` seats finished strictly ahead (so 1, 1, 3 is valid, 1, 2, 2 is
    valid, 1, 3, 3 is not).
    """
    if not isinstance(ranks, list) or len(ranks) != seats:
        return f"ranks must be a list of {seats} integers (seat order)"
    if not all(type(r) is int and 1 <= r <= seats for r in ranks):
        return f"every rank is an integer from 1 to {seats}"
    for r in ranks:
        if sum(1 for other in ranks if other < r) != r - 1:
            return f"rank {r} must have exactly {r - 1} seats ahead of it (competition ranking: 1, 1, 3)"
    return None


def seat_points(ranks: Sequence[int], table_points: Sequence[int]) -> list[Fraction]:
    """Points of each seat: a rank shared by ``k`` seats gets the mean of the ``k`` places' points."""
    out = []
    for r in ranks:
        k = sum(1 for other in ranks if other == r)
        out.append(Fraction(sum(table_points[r - 1:r - 1 + k]), k))
    return out


def to_json(value: Fraction | int | None) -> int | str | None:
    """An exact number as JSON: an integer when whole, else ``"p/q"`` (lowest terms)."""
    if value is None:
        return None
    value = Fraction(value)
    if value.denominator == 1:
        return int(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def from_json(value: Any) -> Fraction:
    """The inverse of :func:`to_json` (``ValueError`` on anything else)."""
    if type(value) is int:
        return Fraction(value)
    if isinstance(value, str) and value.count("/") == 1:
        p, q = value.split("/")
        if p.lstrip("-").isdigit() and q.isdigit() and int(q) > 1:
            out = Fraction(int(p), int(q))
            if out.denominator == int(q):
                return out
    raise ValueError(f"not an exact number: {value!r}")
