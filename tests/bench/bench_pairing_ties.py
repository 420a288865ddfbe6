"""Why a 10,000-player Swiss leaves the certified pairing earlier than a 1,000-player one under rule 1 of the
2-seat matching (issue 28, item 3; the tournaments here name rule 1, ``"pairing": 1``; run by hand, not
collected by pytest):

    .venv/bin/python tests/bench/bench_pairing_ties.py [--players 1000,10000] [--rounds 12]

For each player count, a 2-seat Swiss is played round after round as ``bench_tournaments.py`` plays it
(signed joins, the fold's own pairings, results by key order). At each round, for the ranking and the
meetings the pairing of that round starts from, it prints:

* ``repeats``: pairs of neighbours in the ranking (places 1–2, 3–4, …) who met before;
* ``mended``: pairs of the referee's pairing that are not such neighbours;
* ``pairing``: the time of the referee's pairing (``swiss.swiss_two``: certified shortcut, else the
  replay of networkx's steps on the whole section), one timing;
* ``proof``: what ``_only_optimum`` (the bipartite double-cover proof) says of the referee's pairing:
  ``only`` (proved the only optimum: the shortcut answers), ``tie`` (another optimum exists) or ``better``
  (not proved: the bipartite relaxation has a cheaper fractional solution, or the budget ran out);
* ``regional``: each region around a repeat (6 places more on each side) matched alone, everyone else with
  their neighbour — ``same`` when that equals the referee's pairing, else ``tie`` when it costs the same
  (the same cost, another matching: the rule's choice among optima is networkx's order of work on the
  whole section) or ``worse``.

The last lines give, for each round, the time of the largest count over the smallest's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tournaments.helpers import Builder, by_key_order  # noqa: E402

from referee.protocol.signing import generate_key  # noqa: E402
from referee.tournaments import pairing, swiss  # noqa: E402


def regional(ranked: list[str], met: dict) -> tuple[set[tuple[int, int]], int, dict]:
    """The regions around neighbours who met, each matched alone; everyone else with their neighbour."""
    n = len(ranked)
    big, top = n**3 + 1, max(met.values(), default=0)
    met_of = pairing.met_by_place(ranked, met)
    mate = swiss.regional(n, met_of, lambda lo, hi: swiss.window_matching(
        met_of, big, top, pairing.SWISS_WINDOW, lo=lo, hi=hi))
    return {(i, mate[i]) for i in range(n) if i < mate[i]}, big, met_of


def analyse(ranked: list[str], met: dict, elapsed: float, tables: list[list[str]]) -> dict:
    n = len(ranked)
    place = {k: i for i, k in enumerate(ranked)}
    chosen = {tuple(sorted((place[a], place[b]))) for a, b in tables}
    local, big, met_of = regional(ranked, met)
    mate = [0] * n
    for i, j in chosen:
        mate[i], mate[j] = j, i

    def cost(pairs: set) -> int:
        return sum((j - i) ** 2 + big * met_of.get(i, {}).get(j, 0) for i, j in pairs)

    verdict = "same" if local == chosen else "tie" if cost(local) == cost(chosen) else "worse"
    return {"repeats": sum(1 for i in range(0, n, 2) if i + 1 in met_of.get(i, ())),
            "mended": sum(1 for i, j in chosen if not (j == i + 1 and i % 2 == 0)),
            "pairing_ms": elapsed * 1000,
            "proof": swiss.only_optimum(mate, met_of, big, pairing.SWISS_WINDOW) if n % 2 == 0 else "odd",
            "regional": verdict}


def run(players: int, rounds: int) -> list[dict]:
    keys = [generate_key() for _ in range(players)]
    b = Builder(players, keys=keys, fmt={"kind": "swiss", "rounds": rounds, "table_sizes": [2], "pairing": 1})
    b.join_all()
    seen: dict = {}
    former = pairing.swiss_two  # pair_round's own name for it

    def timed(ranked: list[str], met: dict, rule: int = 1) -> list[list[str]]:
        start = time.perf_counter()
        tables = former(ranked, met, rule)
        seen["row"] = (list(ranked), met.copy(), time.perf_counter() - start, tables)
        return tables

    rows = []
    pairing.swiss_two = timed
    try:
        for r in range(1, rounds + 1):
            b.replayer.expected_pairing()
            row = analyse(*seen["row"])
            row["round"] = r
            rows.append(row)
            print(f"{players:>6} players, round {r:>2}: repeats {row['repeats']:>3}, mended {row['mended']:>3}, "
                  f"pairing {row['pairing_ms']:8.1f} ms, proof {row['proof']:<6}, regional {row['regional']}",
                  flush=True)
            if r < rounds:
                b.play_round(by_key_order)
    finally:
        pairing.swiss_two = former
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    counts = [int(c) for c in args.players.split(",")]
    results = {n: run(n, args.rounds) for n in counts}
    low, high = min(counts), max(counts)
    if low != high:
        for r in range(args.rounds):
            a, z = results[low][r], results[high][r]
            print(f"round {r + 1:>2}: {high}/{low} = {z['pairing_ms'] / a['pairing_ms']:6.1f}x "
                  f"({a['pairing_ms']:.0f} ms, proof {a['proof']} -> {z['pairing_ms']:.0f} ms, proof {z['proof']})")


if __name__ == "__main__":
    main()
