"""Benchmark of offline verification (run by hand, not collected by pytest):

    .venv/bin/python tests/bench/bench_verify.py [--games N] [--runs R] [--ruleset towerup] [--players 4]

Plays N complete seeded games with random legal moves, logged exactly as the service logs them (signed
acceptances and moves, hash chain, reveal), signs each bundle, and times ``verify_bundle`` on the
longest one: every check, the referee signature and every seat signature included, as
``referee verify bundle.json`` runs it. Prints the median of R runs and the time per check.
Target: a full 4-player Tower Up game under 100 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "verification")]

from gamelogs import make_game_log  # noqa: E402

from referee import verify as verify_module  # noqa: E402
from referee.protocol.signing import generate_key  # noqa: E402
from referee.verify import verify_bundle  # noqa: E402
from referee.verify.bundle import build_bundle, load_bundle  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="games to play; the longest one is timed")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--ruleset", default="towerup")
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()

    key = generate_key()
    print(f"playing {args.games} {args.players}-player {args.ruleset} games…", file=sys.stderr)
    logs = [make_game_log(args.ruleset, args.players, seed=seed) for seed in range(args.games)]
    log = max(logs, key=lambda g: len(g.entries))
    bundle = build_bundle(log.entries, key)
    text = json.dumps(bundle)
    moves = sum(1 for e in bundle["log"] if e["type"] == "move")
    signatures = sum(1 for e in bundle["log"] if e["type"] in ("move", "accepted"))

    report = verify_bundle(bundle)
    if not report.ok:
        sys.exit(f"the benchmark bundle does not verify: {report.to_dict()['first_failure']}")

    per_check: dict[str, list[float]] = {}
    totals, with_parse = [], []
    for _ in range(args.runs):
        start = time.perf_counter()
        verify_bundle(bundle)
        totals.append(time.perf_counter() - start)
        start = time.perf_counter()
        verify_bundle(load_bundle(text))
        with_parse.append(time.perf_counter() - start)
    for _ in range(args.runs):
        # the time of each check: every check runs through verify._guard, so wrap it
        original = verify_module._guard
        durations: dict[str, float] = {}

        def timed(name, fn, ctx, original=original, durations=durations):
            t0 = time.perf_counter()
            try:
                return original(name, fn, ctx)
            finally:
                durations[name] = time.perf_counter() - t0

        verify_module._guard = timed
        try:
            verify_bundle(bundle)
        finally:
            verify_module._guard = original
        for name, seconds in durations.items():
            per_check.setdefault(name, []).append(seconds)

    ms = statistics.median(totals) * 1000
    print(f"{args.players}-player {args.ruleset} game: {len(bundle['log'])} log entries, {moves} moves, "
          f"{signatures} seat signatures, bundle {len(text) / 1024:.0f} KiB")
    print(f"verify_bundle: median {ms:.1f} ms over {args.runs} runs (min {min(totals) * 1000:.1f} ms, "
          f"max {max(totals) * 1000:.1f} ms); with JSON parsing {statistics.median(with_parse) * 1000:.1f} ms; "
          f"target < 100 ms: {'met' if ms < 100 else 'NOT met'}")
    for name, values in per_check.items():
        print(f"  {name:<18} {statistics.median(values) * 1000:7.2f} ms")


if __name__ == "__main__":
    main()
