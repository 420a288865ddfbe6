"""Benchmark of the tournament core (run by hand, not collected by pytest):

    .venv/bin/python tests/bench/bench_tournaments.py [--players 1000] [--rounds 5] [--size 4]

Builds a whole Swiss tournament of N players at tables of SIZE (signed joins, every pairing from the
fold's own ``due()``, results by key order, finished and revealed), then times:

* pairing one round (round 2 and the last round, with the history so far) — goal ≤ 1 s for 1,000
  players at tables of 4;
* the standings after the last round (a full recomputation, what a worker does per finished game);
* a full rebuild: ``replay_tournament`` of the whole log (every join signature, every pairing recomputed);
* ``verify_certificate`` of the signed certificate (``referee verify-tournament`` without --games).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from tournaments.helpers import Builder, by_key_order  # noqa: E402

from referee.signing import generate_key  # noqa: E402
from referee.tournaments.certificate import build_certificate, verify_certificate  # noqa: E402
from referee.tournaments.log import replay_tournament  # noqa: E402


def timed(label: str, fn):
    start = time.perf_counter()
    out = fn()
    print(f"{label:<48} {time.perf_counter() - start:8.3f} s")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=4)
    args = parser.parse_args()
    keys = [generate_key() for _ in range(args.players)]
    b = Builder(args.players, keys=keys, fmt={"kind": "swiss", "rounds": args.rounds, "table_sizes": [args.size]})
    b.join_all()
    for r in range(1, args.rounds + 1):
        if r in (2, args.rounds):
            timed(f"pair round {r} ({args.players} players, tables of {args.size})", b.replayer.expected_pairing)
        b.play_round(by_key_order)
    b.append("finished")
    b.append("revealed", server_seed=b.server_seed.hex(), reason="finished")
    games = len(b.replayer.games())
    timed(f"standings ({args.players} players, {games} games)", b.replayer.standings)
    timed(f"full rebuild ({len(b.log)} entries)", lambda: replay_tournament(b.log))
    cert = build_certificate(b.log, generate_key())
    report = timed("verify_certificate", lambda: verify_certificate(cert))
    assert report.ok, report.to_dict()


if __name__ == "__main__":
    main()
