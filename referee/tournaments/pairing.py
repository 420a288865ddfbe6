"""Pairing: who sits at which table in a round — pure functions of the log so far and the seed.

Everything here is deterministic: the same players, history and tournament seed give the same tables,
so anyone holding the revealed seed can recompute every ``paired`` entry (``docs/tournaments.md`` has
the algorithms in prose, precisely enough to re-implement them). Randomness comes only from
:func:`referee.tournaments.seed.stream`.

:func:`pair_round` is the one entry point; the pieces are by concern: :mod:`.tables` (a round, meetings, table
sizes, seats and byes), :mod:`.round_robin` (the schedule), :mod:`.swiss` (a round from the standings).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from .round_robin import round_robin_schedule
from .seed import stream
from .swiss import (
    SWISS_EXACT_MAX,
    SWISS_RULE,
    SWISS_RULES,
    SWISS_WINDOW,
    met_by_place,
    swiss_exact,
    swiss_multi,
    swiss_two,
)
from .tables import Pairing, byes_for, meetings, pair_key, seat_order, table_sizes

ROUND_ROBIN, SWISS, SERIES = "round_robin", "swiss", "series"
KINDS = (ROUND_ROBIN, SWISS, SERIES)

#: what the rest of the referee takes from here: the entry point, and the pieces of the modules beside it
__all__ = ["KINDS", "ROUND_ROBIN", "SERIES", "SWISS", "SWISS_RULE", "SWISS_RULES", "SWISS_WINDOW", "Pairing",
           "meetings", "met_by_place", "pair_key", "pair_round", "round_robin_schedule", "seat_order", "table_sizes"]


# -- the one entry point -------------------------------------------------------------------------
def pair_round(kind: str, *, round_no: int, players: Sequence[str], active: Iterable[str], allowed: Sequence[int],
               rounds: int, history: Sequence[Pairing], ranking: Sequence[str], seed: bytes,
               swiss_rule: int = 1) -> Pairing:
    """The pairing of round ``round_no`` (1-based).

    ``players``: every player's key in ``created`` order; ``active``: those still in (not withdrawn);
    ``history``: the earlier rounds' pairings; ``ranking``: the current standings order (best first; used
    by Swiss); ``seed``: the tournament seed; ``swiss_rule``: the 2-seat Swiss matching's rule
    (:data:`SWISS_RULES`, the ``created`` entry's ``format.pairing``). Seat order at each table is
    :func:`seat_order`.
    """
    active_set = set(active)
    if kind == SERIES:
        base = stream(seed, "series").shuffle(players)
        shift = (round_no - 1) % len(base)
        order = [k for k in base[shift:] + base[:shift] if k in active_set]
        if len(order) in allowed:
            return Pairing([order], [])
        return Pairing([], order)
    if kind == ROUND_ROBIN:
        planned = round_robin_schedule(players, allowed, rounds, seed)[round_no - 1]
        tables, byes = [], [k for k in planned.byes if k in active_set]
        for table in seat_order(seed, round_no, planned.tables):  # seats drawn before withdrawals
            left = [k for k in table if k in active_set]
            if len(left) in allowed:
                tables.append(left)
            else:
                byes += left
        return Pairing(tables, byes)
    if kind != SWISS:
        raise ValueError(f"unknown format kind {kind!r}")
    ranked = [k for k in ranking if k in active_set]
    sizes, bye_count = table_sizes(len(ranked), allowed)
    byes_had: Counter[str] = Counter(k for rnd in history for k in rnd.byes)
    byes = byes_for(ranked, bye_count, byes_had) if bye_count else []
    seated = [k for k in ranked if k not in byes]
    met = meetings(history)
    if sizes and max(sizes) == 2:
        tables = swiss_two(seated, met, swiss_rule)
    elif len(seated) <= SWISS_EXACT_MAX:
        tables = swiss_exact(seated, sizes, met)
    else:
        tables = swiss_multi(seated, sizes, met)
    return Pairing(seat_order(seed, round_no, tables), sorted(byes, key=ranked.index))

