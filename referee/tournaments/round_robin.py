"""Round robin: the whole schedule of a round-robin tournament, drawn once from the seed — the circle method at
tables of two, and at larger tables a search that spreads the meetings as evenly as it can
(``docs/tournaments.md``, "Round robin")."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

from .seed import stream
from .tables import Pairing, byes_for, meetings, pair_key, table_sizes

#: proposals per round of the multi-player round-robin search
ROUND_ROBIN_STEPS = 3000


def _circle_schedule(players: Sequence[str], rounds: int, seed: bytes) -> list[Pairing]:
    """2-player round robin by the circle method: every pair meets once in n − 1 rounds (n even; one
    bye per round when n is odd), repeated when there are more rounds."""
    order: list[str | None] = list(stream(seed, "round-robin/order").shuffle(players))
    if len(order) % 2:
        order.append(None)
    n = len(order)
    out = []
    for r in range(rounds):
        k = r % (n - 1)
        rest = order[1:]
        arrangement = [order[0], *rest[len(rest) - k:], *rest[:len(rest) - k]]
        tables, byes = [], []
        for i in range(n // 2):
            a, b = arrangement[i], arrangement[n - 1 - i]
            if a is None or b is None:
                byes.append(a if b is None else b)
            else:
                tables.append([a, b])
        out.append(Pairing(tables, [x for x in byes if x is not None]))
    return out


def _weight(met: int, base: int) -> int:
    return base**met


def _table_cost(table: Sequence[str], met: Counter[tuple[str, str]], base: int) -> int:
    return sum(_weight(met[pair_key(a, b)], base) for i, a in enumerate(table) for b in table[i + 1:])


def _greedy_tables(order: Sequence[str], sizes: Sequence[int], met: Counter[tuple[str, str]],
                   base: int) -> list[list[str]]:
    """Tables filled one after another (largest first): the first unseated player of ``order`` opens a
    table, then the unseated player adding the least cost joins (earliest in ``order`` on ties)."""
    unseated = list(order)
    tables = []
    for size in sizes:
        table = [unseated.pop(0)]
        while len(table) < size:
            best_i = min(range(len(unseated)),
                         key=lambda i: (sum(_weight(met[pair_key(unseated[i], y)], base) for y in table), i))
            table.append(unseated.pop(best_i))
        tables.append(table)
    return tables


def _improve_by_swaps(tables: list[list[str]], met: Counter[tuple[str, str]], base: int) -> None:
    """Swap two players of different tables while a swap lowers the total cost (the first such swap in
    table, seat order is made each time)."""
    improved = True
    while improved:
        improved = False
        for a in range(len(tables)):
            for b in range(a + 1, len(tables)):
                ta, tb = tables[a], tables[b]
                before = _table_cost(ta, met, base) + _table_cost(tb, met, base)
                for i in range(len(ta)):
                    for j in range(len(tb)):
                        na = [*ta[:i], tb[j], *ta[i + 1:]]
                        nb = [*tb[:j], ta[i], *tb[j + 1:]]
                        if _table_cost(na, met, base) + _table_cost(nb, met, base) < before:
                            tables[a], tables[b] = na, nb
                            improved = True
                            break
                    if improved:
                        break
                if improved:
                    break
            if improved:
                break


def _spread(players: Sequence[str], met: Counter[tuple[str, str]]) -> tuple[int, int]:
    counts = [met[pair_key(a, b)] for i, a in enumerate(players) for b in players[i + 1:]]
    return (max(counts) - min(counts), sum(c * c for c in counts)) if counts else (0, 0)


@functools.lru_cache(maxsize=64)
def _multi_schedule(players: tuple[str, ...], allowed: tuple[int, ...], rounds: int, seed: bytes) -> tuple:
    sizes, byes_per_round = table_sizes(len(players), allowed)
    base = len(players) ** 2 + 1
    base_order = stream(seed, "round-robin/order").shuffle(players)
    met: Counter[tuple[str, str]] = Counter()
    byes_had: Counter[str] = Counter()
    schedule: list[tuple[list[list[str]], list[str]]] = []
    for r in range(rounds):
        shift = r % len(base_order)
        order = base_order[shift:] + base_order[:shift]
        byes = byes_for(order[::-1], byes_per_round, byes_had) if byes_per_round else []
        tables = _greedy_tables([k for k in order if k not in byes], sizes, met, base)
        _improve_by_swaps(tables, met, base)
        byes_had.update(byes)
        met.update(meetings([tables]))
        schedule.append((tables, byes))
    _search(schedule, met, players, seed)
    return tuple(Pairing(tables, byes) for tables, byes in schedule)


def _moved(gains: int, loses: int) -> int:
    """Change of Σ 4^(meetings) when one pair's count goes up from ``gains`` and another's down from
    ``loses``."""
    return 3 * 4**gains - 3 * 4 ** (loses - 1)


def _search(schedule: list[tuple[list[list[str]], list[str]]], met: Counter[tuple[str, str]],
            players: Sequence[str], seed: bytes) -> None:
    """Hill climbing over the whole schedule on Σ 4^(meetings of a pair) over all pairs; see
    :func:`round_robin_schedule`."""
    rng = stream(seed, "round-robin/search")
    steps = ROUND_ROBIN_STEPS * len(schedule)
    for step in range(steps):
        if step % 100 == 0 and _spread(players, met)[0] <= 1:
            return
        tables = schedule[rng.below(len(schedule))][0]
        if len(tables) < 2:
            continue
        a = rng.below(len(tables))
        b = rng.below(len(tables) - 1)
        b += b >= a
        ta, tb = tables[a], tables[b]
        i, j = rng.below(len(ta)), rng.below(len(tb))
        x, y = ta[i], tb[j]
        delta = sum(_moved(met[pair_key(y, z)], met[pair_key(x, z)]) for z in ta if z != x)
        delta += sum(_moved(met[pair_key(x, z)], met[pair_key(y, z)]) for z in tb if z != y)
        if delta <= 0:
            for z in ta:
                if z != x:
                    met[pair_key(x, z)] -= 1
                    met[pair_key(y, z)] += 1
            for z in tb:
                if z != y:
                    met[pair_key(y, z)] -= 1
                    met[pair_key(x, z)] += 1
            ta[i], tb[j] = y, x


def round_robin_schedule(players: Sequence[str], allowed: Sequence[int], rounds: int, seed: bytes) -> list[Pairing]:
    """The whole round-robin schedule (before seat order), fixed by the players, sizes and seed.

    Only 2-seat tables: the circle method (:func:`_circle_schedule`), exact. Larger tables: a best
    effort, not guaranteed optimal. First each round in turn: the players shuffled once (stream
    ``round-robin/order``) and rotated left by (round − 1); byes to the players with fewest byes so
    far, earliest in that order first; then :func:`_greedy_tables` and :func:`_improve_by_swaps` with
    cost Σ (n² + 1)^(times the pair met before) over the pairs seated together. Then a hill climb over
    the whole schedule (:func:`_search`): ``ROUND_ROBIN_STEPS`` × rounds proposals drawn from the stream
    ``round-robin/search`` — round ``below(rounds)``, tables ``a = below(T)``, ``b = below(T − 1)``
    (plus one when ≥ a), seats ``below(|a|)``, ``below(|b|)`` — each swap made when it does not raise
    Σ 4^(meetings) over all pairs; it stops early at a step that is a multiple of 100 when every pair's
    meetings differ by at most one. (9 players at tables of 3 in 4 rounds and 16 at tables of 4 in 5
    rounds meet everyone exactly once.)
    """
    if max(allowed) == 2:
        return _circle_schedule(players, rounds, seed)
    return list(_multi_schedule(tuple(players), tuple(sorted(set(allowed))), rounds, seed))


# -- Swiss ---------------------------------------------------------------------------------------
