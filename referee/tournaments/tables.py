"""Table sizes and seats: the pieces every pairing kind shares — a round (:class:`Pairing`), who met whom
(:func:`meetings`), how many tables of which sizes (:func:`table_sizes`), the seat order at a table
(:func:`seat_order`) and who gets the byes (:func:`byes_for`).

Table sizes (:func:`table_sizes`): with ``n`` players and the allowed sizes ``S`` of the format,
``best(0) = []`` and ``best(m)`` is the minimum over ``s ∈ S, s ≤ m`` with ``best(m − s)`` defined of
``best(m − s) + [s]``, compared by the key (number of tables, Σ s², Σ s³, the sizes sorted descending);
the byes ``b`` are the smallest ``b ≥ 0`` for which ``best(n − b)`` is defined. Tables are listed
largest first. So 10 players with sizes 4, 3, 2 sit at 4, 3, 3; 11 players with size 2 only: five
tables and one bye.

>>> table_sizes(10, [4, 3, 2])
([4, 3, 3], 0)
>>> table_sizes(7, [2])
([2, 2, 2], 1)
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .seed import stream


@dataclass(frozen=True)
class Pairing:
    """One round: ``tables`` (players' keys in seat order) and ``byes`` (keys)."""

    tables: list[list[str]] = field(default_factory=list)
    byes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list]:
        return {"tables": [list(t) for t in self.tables], "byes": list(self.byes)}


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def meetings(rounds: Iterable[Pairing | Sequence[Sequence[str]]]) -> Counter[tuple[str, str]]:
    """How often each pair of players has sat at the same table."""
    met: Counter[tuple[str, str]] = Counter()
    for rnd in rounds:
        tables = rnd.tables if isinstance(rnd, Pairing) else rnd
        for table in tables:
            for i, a in enumerate(table):
                for b in table[i + 1:]:
                    met[pair_key(a, b)] += 1
    return met


# -- table sizes ---------------------------------------------------------------------------------
def _size_key(sizes: tuple[int, ...]) -> tuple:
    return (len(sizes), sum(s * s for s in sizes), sum(s**3 for s in sizes), sizes)


@functools.lru_cache(maxsize=256)
def best_partitions(n: int, allowed: tuple[int, ...]) -> tuple[tuple[int, ...] | None, ...]:
    """``best(m)`` for every m ≤ n (module docstring), each a multiset of sizes kept — and returned — as
    its counts per size (largest size first; :func:`sizes_of` lists the sizes). The key of
    :func:`_size_key` is then (Σ counts, Σ c·s², Σ c·s³, counts), which orders partitions as the key of
    the sorted sizes does — with as many tables, the sizes sorted descending compare as the counts of
    the largest size, then the next, … — in O(|allowed|) a step and memory instead of O(m)."""
    desc = sorted(allowed, reverse=True)
    index = {s: i for i, s in enumerate(desc)}
    best: list[tuple | None] = [(0, 0, 0, (0,) * len(desc))] + [None] * n
    for m in range(1, n + 1):
        chosen = None
        for s in allowed:  # the first of equal keys, in ``allowed`` order (equal keys: equal partitions)
            prev = best[m - s] if s <= m else None
            if prev is None:
                continue
            counts = list(prev[3])
            counts[index[s]] += 1
            key = (prev[0] + 1, prev[1] + s * s, prev[2] + s**3, tuple(counts))
            if chosen is None or key < chosen:
                chosen = key
        best[m] = chosen
    return tuple(None if key is None else key[3] for key in best)


def sizes_of(counts: tuple[int, ...], allowed: tuple[int, ...]) -> tuple[int, ...]:
    """The sizes, largest first, of a partition kept as counts per size (largest size first)."""
    return tuple(s for s, c in zip(sorted(allowed, reverse=True), counts, strict=True) for _ in range(c))


def table_sizes(n: int, allowed: Sequence[int]) -> tuple[list[int], int]:
    """``(sizes of the tables, largest first; number of byes)`` for ``n`` players (module docstring)."""
    if n < 0 or not allowed or min(allowed) < 1:
        raise ValueError("table sizes need n >= 0 and allowed sizes >= 1")
    sizes = tuple(sorted(set(allowed)))
    best = best_partitions(n, sizes)
    for byes in range(n + 1):
        counts = best[n - byes]
        if counts is not None:
            return list(sizes_of(counts, sizes)), byes
    raise AssertionError("unreachable: best(0) is always defined")


def seat_order(seed: bytes, round_no: int, tables: list[list[str]]) -> list[list[str]]:
    """Each table's players shuffled by the stream ``seats/<round>/<table>`` (both 1-based)."""
    return [stream(seed, f"seats/{round_no}/{t}").shuffle(table) for t, table in enumerate(tables, start=1)]


def byes_for(candidates: list[str], count: int, byes_had: Counter[str]) -> list[str]:
    """The ``count`` players getting a bye: fewest byes so far first, then the lowest in ``candidates``
    (which is ordered best first)."""
    position = {key: i for i, key in enumerate(candidates)}
    return sorted(candidates, key=lambda k: (byes_had[k], -position[k]))[:count]


# -- round robin ---------------------------------------------------------------------------------
