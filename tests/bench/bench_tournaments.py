"""Benchmark of the tournament core (run by hand, not collected by pytest):

    .venv/bin/python tests/bench/bench_tournaments.py [--players 1000] [--rounds 5] [--size 4] [--repeat 3]
    .venv/bin/python tests/bench/bench_tournaments.py --scaling 1000,4000,10000 [--size 2] [--repeat 3]
        [--timed-rounds 2,3,6,8] [--pairing 1|2]

Builds a whole Swiss tournament of N players at tables of SIZE (signed joins, every pairing from the
fold's own ``due()``, results by key order, finished and revealed), then times (each figure the median
of ``--repeat`` timings):

* pairing one round (round 2 and the last round, with the history so far: ``expected_pairing``, the
  standings it ranks by included);
* per finished game, in the last round, with one game left: the standings recomputed from every result
  (``recomputed_standings``: what every standings read cost before the fold kept them), the fold's own
  update for that game's ``game_finished`` entry (``feed``: the sums of ``standings.Tally``), the copy
  of its cached fold the service takes for each use (``fork``; formerly ``copy.deepcopy``), and a
  standings read after it (``standings``: the rows ordered from the sums);
* a full rebuild: ``replay_tournament`` of the whole log (every join signature, every pairing recomputed);
* ``verify_certificate`` of the signed certificate (``referee verify-tournament`` without --games).

``--scaling``: for each player count, a Swiss at tables of SIZE played round after round, the pairing of
each of ``--timed-rounds`` (default 2 and 3) timed with the history so far; prints each count's medians
and, for every timed round and for their sum, the ratio of the largest count to the smallest (the goal:
10,000 players in at most 12 times 1,000's in every round, ``docs/performance.md`` "Tournaments"). From
round 6 or so of the benchmark's Swiss, neighbours in the standings have met before: the late rounds.
``--pairing 1`` times rule 1 of the 2-seat matching (the tournaments made before rule 2), else rule 2.

Run against an older checkout (copy this file there) it times the former code: ``recomputed_standings``
falls back to ``standings``.
"""

from __future__ import annotations

import argparse
import copy
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tournaments.helpers import Builder, by_key_order  # noqa: E402

from referee.protocol.signing import generate_key  # noqa: E402
from referee.tournaments.certificate import build_certificate, verify_certificate  # noqa: E402
from referee.tournaments.log import replay_tournament  # noqa: E402


def median_time(label: str, fn, repeat: int) -> float:
    """The median of ``repeat`` timings of ``fn()``, each with the garbage collector off (as ``timeit``)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    value = statistics.median(times)
    print(f"{label:<64} {value * 1000:10.2f} ms   (median of {repeat}: "
          f"{', '.join(f'{t * 1000:.2f}' for t in times)})", flush=True)
    return value


def swiss(players: int, rounds: int, size: int, pairing: int | None = None) -> Builder:
    keys = [generate_key() for _ in range(players)]
    fmt = {"kind": "swiss", "rounds": rounds, "table_sizes": [size], **({"pairing": pairing} if pairing else {})}
    b = Builder(players, keys=keys, fmt=fmt)
    b.join_all()
    return b


def last_game(b: Builder, repeat: int) -> None:
    """The last round played but for one game; that game's result timed three ways; the round closed."""
    assert b.pair().status == "ok"
    rnd = b.replayer.rounds[-1]
    for table in rnd.tables[:-1]:
        ranks, scores = by_key_order(table["players"])
        assert b.finish_game(table["game"], ranks, scores).status == "ok"
    table = rnd.tables[-1]
    ranks, scores = by_key_order(table["players"])
    entry = b.entry("game_finished", game=table["game"], head="0" * 64, ranks=ranks, scores=scores)
    games = len(b.replayer.games()) + 1
    recompute = getattr(b.replayer, "recomputed_standings", b.replayer.standings)
    median_time(f"standings recomputed from every result ({games} games)", recompute, repeat)
    copies = [b.replayer.fork() if hasattr(b.replayer, "fork") else copy.deepcopy(b.replayer) for _ in range(repeat)]
    fed: list = []  # kept: freeing a whole fold inside the timing would be timed too
    median_time(f"the fold's update for one game_finished ({games} games)",
                lambda: fed.append(copies.pop().feed(entry)), repeat)
    median_time(f"the service's copy of its cached fold ({games} games)",
                lambda: fed.append(b.replayer.fork() if hasattr(b.replayer, "fork") else copy.deepcopy(b.replayer)),
                repeat)
    assert b.add(entry).status == "ok"
    median_time(f"standings read after it ({len(b.keys)} rows)", b.replayer.standings, repeat)
    due = b.replayer.due()
    assert due is not None and due["type"] == "round_closed"
    assert b.append("round_closed", round=due["round"], reason="complete").status == "ok"


def whole(args: argparse.Namespace) -> None:
    b = swiss(args.players, args.rounds, args.size, args.pairing)
    for r in range(1, args.rounds + 1):
        if r in (2, args.rounds):
            median_time(f"pair round {r} ({args.players} players, tables of {args.size})",
                        b.replayer.expected_pairing, args.repeat)
        if r < args.rounds:
            b.play_round(by_key_order)
        else:
            last_game(b, args.repeat)
    b.append("finished")
    b.append("revealed", server_seed=b.server_seed.hex(), reason="finished")
    median_time(f"full rebuild ({len(b.log)} entries)", lambda: replay_tournament(b.log), 1)
    cert = build_certificate(b.log, generate_key())
    report = verify_certificate(cert)
    assert report.ok, report.to_dict()
    median_time("verify_certificate", lambda: verify_certificate(cert), 1)


def scaling(args: argparse.Namespace) -> None:
    counts = [int(c) for c in args.scaling.split(",")]
    timed = sorted({int(r) for r in args.timed_rounds.split(",")})
    results: dict[int, dict[int, float]] = {}
    for n in counts:
        b = swiss(n, max(timed), args.size, args.pairing)
        results[n] = {}
        for r in range(1, max(timed) + 1):
            if r in timed:
                results[n][r] = median_time(f"pair round {r} ({n} players, tables of {args.size})",
                                            b.replayer.expected_pairing, args.repeat)
            if r < max(timed):
                b.play_round(by_key_order)
    low, high = min(counts), max(counts)
    for r in timed:
        print(f"round {r}: {', '.join(f'{n}: {results[n][r] * 1000:.1f} ms' for n in counts)}; "
              f"{high}/{low} = {results[high][r] / results[low][r]:.1f}x for {high / low:.0f}x the players")
    total = {n: sum(results[n].values()) for n in counts}
    print(f"rounds {' + '.join(map(str, timed))}: {', '.join(f'{n}: {total[n] * 1000:.1f} ms' for n in counts)}; "
          f"{high}/{low} = {total[high] / total[low]:.1f}x for {high / low:.0f}x the players")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scaling", help="comma-separated player counts, e.g. 1000,4000,10000")
    parser.add_argument("--timed-rounds", default="2,3",
                        help="--scaling: the rounds whose pairing is timed, e.g. 2,3,6,8")
    parser.add_argument("--pairing", type=int, choices=[1, 2],
                        help="tables of 2: the Swiss pairing rule (format.pairing; default: new tournaments', 2)")
    args = parser.parse_args()
    if args.scaling:
        scaling(args)
    else:
        whole(args)


if __name__ == "__main__":
    main()
