"""Strength of the bots (issue 25; run by hand, not collected by pytest):

    .venv/bin/python tests/bench/bench_bots.py [--games 200] [--think 1.0 | --iterations N] [--jobs 2]
        [--rulesets towerup,fivetowers] [--opponents random,greedy] [--seed bench] [--json out.json]
        [--results games.jsonl]
        [--service | --no-service] [--service-think 0.2] [--no-strength]

**Strength.** For each ruleset and each opponent (``random``, ``greedy``), ``--games`` two-seat games of
``mcts`` against that opponent, played in-process on the engines (no service): the seats alternate
(``mcts`` is seat 0 in the even games, seat 1 in the odd ones), every game and every choice is seeded from
``--seed`` (the games' decks, the opponents' choices and the search). With ``--iterations N`` every ``mcts``
choice runs exactly N iterations and a run is reproducible to the move; with ``--think S`` (the default,
1 s) it searches for S seconds of ``time.perf_counter`` (the iterations done then depend on the machine's
speed and load). Printed per pairing: wins, draws (a shared first place) and losses of ``mcts``; its win
rate (sole first place) with a 95 % Wilson interval; the mean think time per searched move and its p99
(moves with a single legal move are not searched and not counted); the mean iterations per searched move.
The goal (issue 25): over 200 games, ``mcts`` (1 s) beats ``random`` in >= 95 % and ``greedy`` in >= 65 %.

``--jobs`` plays games in that many processes (multiprocessing): on a quiet machine use one per core. The
think-time figures are per process; more jobs than free cores lengthen nothing but the wall clock of a
fixed-iteration run, and shrink the iterations of a timed one.

**Through the service** (``--service``, on by default): ``referee serve`` in a temporary directory (its
embedded Redis, its workers, its web server) and five ``referee bot --strategy mcts --think
<--service-think>`` processes, each with its own key; one 4-seat Tower Up game and one 5-seat 5 Towers
game, every seat declared ``"bot": true``, are played to the end at the same time, then each game's
bundle (``GET /games/{id}/export``) is verified with the referee's key (``referee.verify.verify_bundle``).
Printed: moves, wall time, the verification status.

``--json FILE`` writes every figure (and the exact arguments) as JSON too.

**Across sessions** (``--results FILE.jsonl``): every finished game is appended to FILE as one JSON line
(its ruleset, opponent, index, seed, work per move, outcome, totals, think times and iterations, and
``bots``, a hash of ``referee/games/bots/`` and the engines' versions), so that a run stopped at any point
loses at most the games in progress. Started again with the same file and arguments, the run plays only
the games the file does not hold yet, and the figures printed are those of every game in the file that
matches this run's seed, work per move and bots hash (lines of another strategy code are kept but never
counted). The tasks are interleaved (game 0 of every pairing, then game 1, …), so a stopped run has about
as many games of each pairing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from referee.games import ruleset  # noqa: E402
from referee.games.bots import choose  # noqa: E402

RULESETS = ("towerup", "fivetowers")
OPPONENTS = ("random", "greedy")


# ---------------------------------------------------------------------------------------------- strength

def _seed(*parts: object) -> bytes:
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()


def play_one(task: dict[str, Any]) -> dict[str, Any]:
    """One two-seat game of mcts against ``task["opponent"]``; its outcome and mcts's think times."""
    name, opponent, index, base = task["ruleset"], task["opponent"], task["index"], task["seed"]
    mcts_seat = index % 2
    game = ruleset(name).new_game(2, seed=_seed(base, name, opponent, index, "deck"))
    thinks: list[float] = []
    iterations: list[int] = []
    ply = 0
    while not game.is_over():
        seat = game.to_move()
        assert seat is not None
        choice_seed = int.from_bytes(_seed(base, name, opponent, index, ply)[:8], "big")
        if seat == mcts_seat:
            info: dict[str, Any] = {}
            searched = len(game.legal_moves()) > 1
            start = time.perf_counter()
            move = choose(game, seat, "mcts", seed=choice_seed, iterations=task["iterations"],
                          budget_s=task["think"], clock=time.perf_counter, info=info)
            took = time.perf_counter() - start
            if searched:
                thinks.append(round(took, 5))
                iterations.append(info["iterations"])
        else:
            move = choose(game, seat, opponent, seed=choice_seed)
        game.play(seat, move)
        ply += 1
    result = game.result()
    winners = result["winners"]
    totals = {entry["seat"]: entry["total"] for entry in result["seats"]}
    outcome = "win" if winners == [mcts_seat] else "draw" if mcts_seat in winners else "loss"
    return {"ruleset": name, "opponent": opponent, "index": index, "mcts_seat": mcts_seat, "outcome": outcome,
            "plies": ply, "mcts_total": totals[mcts_seat], "opponent_total": totals[1 - mcts_seat],
            "thinks": thinks, "iterations": iterations}


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


GOALS = {"random": 0.95, "greedy": 0.65}


def summarize(games: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(games)
    wins = sum(g["outcome"] == "win" for g in games)
    draws = sum(g["outcome"] == "draw" for g in games)
    thinks = [t for g in games for t in g["thinks"]]
    iterations = [i for g in games for i in g["iterations"]]
    low, high = wilson(wins, n)
    by_seat = {seat: sum(g["outcome"] == "win" for g in games if g["mcts_seat"] == seat) for seat in (0, 1)}
    return {"games": n, "wins": wins, "draws": draws, "losses": n - wins - draws,
            "win_rate": wins / n if n else 0.0, "wilson95": [low, high], "wins_by_mcts_seat": by_seat,
            "mean_margin": statistics.fmean(g["mcts_total"] - g["opponent_total"] for g in games) if n else 0.0,
            "searched_moves": len(thinks),
            "think_mean_s": statistics.fmean(thinks) if thinks else 0.0,
            "think_p99_s": percentile(thinks, 0.99) if thinks else 0.0,
            "iterations_mean": statistics.fmean(iterations) if iterations else 0.0}


def bots_hash() -> str:
    """A hash of the strategy code and the engines' versions: results of other code are never mixed in."""
    digest = hashlib.sha256()
    for path in sorted((REPO / "referee" / "games" / "bots").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for name in RULESETS:
        digest.update(f"{name}={ruleset(name).version}".encode())
    return digest.hexdigest()[:16]


def _same_run(record: dict[str, Any], args: argparse.Namespace, code: str) -> bool:
    return (record.get("seed") == args.seed and record.get("think") == args.think
            and record.get("iterations_per_move") == args.iterations and record.get("bots") == code)


def load_results(path: Path | None, args: argparse.Namespace, code: str) -> list[dict[str, Any]]:
    """The games of this run already in ``path`` (a torn last line, from a run killed mid-write, is skipped)."""
    if path is None or not path.exists():
        return []
    held: dict[tuple[str, str, int], dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if _same_run(record, args, code):
            held[(record["ruleset"], record["opponent"], record["index"])] = record
    return list(held.values())


def strength(args: argparse.Namespace) -> dict[str, Any]:
    code = bots_hash()
    results = [r for r in load_results(args.results, args, code)
               if r["ruleset"] in args.rulesets and r["opponent"] in args.opponents and r["index"] < args.games]
    held = {(r["ruleset"], r["opponent"], r["index"]) for r in results}
    tasks = [{"ruleset": name, "opponent": opponent, "index": i, "seed": args.seed, "think": args.think,
              "iterations": args.iterations}
             for i in range(args.games) for name in args.rulesets for opponent in args.opponents
             if (name, opponent, i) not in held]
    if held:
        print(f"  {len(held)} games already in {args.results}; {len(tasks)} to play", file=sys.stderr)
    sink = args.results.open("a") if args.results else None

    def keep(result: dict[str, Any]) -> None:
        result.update(seed=args.seed, think=args.think, iterations_per_move=args.iterations, bots=code)
        results.append(result)
        if sink is not None:
            sink.write(json.dumps(result, separators=(",", ":")) + "\n")
            sink.flush()
            os.fsync(sink.fileno())

    started = time.perf_counter()
    try:
        if args.jobs > 1:
            with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
                for done, result in enumerate(pool.imap_unordered(play_one, tasks, chunksize=1), 1):
                    keep(result)
                    _progress(done, len(tasks), started)
        else:
            for done, task in enumerate(tasks, 1):
                keep(play_one(task))
                _progress(done, len(tasks), started)
    finally:
        if sink is not None:
            sink.close()
    print(file=sys.stderr)
    wall = time.perf_counter() - started
    out: dict[str, Any] = {"wall_s": wall, "pairings": []}
    for name in args.rulesets:
        for opponent in args.opponents:
            games = sorted((r for r in results if r["ruleset"] == name and r["opponent"] == opponent),
                           key=lambda r: r["index"])
            summary = summarize(games)
            summary.update(ruleset=name, opponent=opponent, goal=GOALS.get(opponent),
                           outcomes="".join({"win": "W", "draw": "D", "loss": "L"}[g["outcome"]] for g in games))
            out["pairings"].append(summary)
    return out


def _progress(done: int, total: int, started: float) -> None:
    elapsed = time.perf_counter() - started
    print(f"\r  {done}/{total} games, {elapsed:.0f} s", end="", file=sys.stderr, flush=True)


def print_strength(out: dict[str, Any], args: argparse.Namespace) -> None:
    work = f"{args.iterations} iterations per move" if args.iterations else f"think {args.think} s per move"
    print(f"mcts vs random/greedy, two seats, seats alternated, {work}, seed {args.seed!r}, "
          f"{args.jobs} job(s), wall {out['wall_s']:.0f} s")
    print(f"{'ruleset':<11} {'vs':<7} {'games':>5} {'W':>4} {'D':>3} {'L':>4} {'win rate':>9} {'95% interval':>15} "
          f"{'goal':>5} {'margin':>7} {'think mean':>11} {'p99':>7} {'iters':>6}")
    for p in out["pairings"]:
        low, high = p["wilson95"]
        goal = p["goal"]
        print(f"{p['ruleset']:<11} {p['opponent']:<7} {p['games']:>5} {p['wins']:>4} {p['draws']:>3} {p['losses']:>4} "
              f"{p['win_rate']:>8.1%} {f'[{low:.1%}, {high:.1%}]':>15} "
              f"{'' if goal is None else f'{goal:.0%}':>5} {p['mean_margin']:>+7.1f} "
              f"{p['think_mean_s'] * 1000:>8.0f} ms {p['think_p99_s'] * 1000:>4.0f} ms {p['iterations_mean']:>6.0f}")


# ---------------------------------------------------------------------------------------------- service

def service_games(args: argparse.Namespace) -> dict[str, Any]:
    """A 4-seat Tower Up and a 5-seat 5 Towers game of mcts bots through ``referee serve``; bundles verified."""
    import requests

    from referee.protocol.signing import public_key_b64, read_or_create_key_file
    from referee.running.embedded_redis import free_port
    from referee.verify import verify_bundle

    work = Path(tempfile.mkdtemp(prefix="bench-bots-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "REFEREE_WORK_REDIS_URL")}
    env.update(PYTHONPATH=str(REPO), REFEREE_VAR=str(work / "var"), PYTHONUNBUFFERED="1")
    serve_log = open(work / "serve.log", "wb")
    serve = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--port", str(port), "--web-workers", "1"],
                             cwd=work, env=env, stdout=serve_log, stderr=subprocess.STDOUT, start_new_session=True)
    bots: list[tuple[subprocess.Popen[bytes], Any]] = []
    out: dict[str, Any] = {"think_s": args.service_think, "games": []}
    try:
        _wait(lambda: b"referee serving on" in (work / "serve.log").read_bytes() or serve.poll() is not None, 120)
        if serve.poll() is not None:
            raise RuntimeError("referee serve did not start:\n" + (work / "serve.log").read_text()[-3000:])
        keys = []
        for i in range(5):
            path = work / f"bot{i}.key"
            keys.append(public_key_b64(read_or_create_key_file(path)))
            log = open(work / f"bot{i}.log", "wb")
            bots.append((subprocess.Popen(
                [sys.executable, "-m", "referee.cli", "bot", "--key", str(path), "--strategy", "mcts", "--think",
                 str(args.service_think), "--poll", "0.5", "--server", base],
                cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT), log))
        games = {}
        for name, seats in (("towerup", 4), ("fivetowers", 5)):
            body = {"ruleset": name, "options": {},
                    "seats": [{"name": f"bot{i}", "key": keys[i], "bot": True} for i in range(seats)]}
            response = requests.post(f"{base}/games", json=body, timeout=30)
            if response.status_code != 201:
                raise RuntimeError(f"POST /games: {response.status_code} {response.text}")
            games[name] = (response.json()["game"], seats, time.perf_counter())
        finished: dict[str, float] = {}
        deadline = time.monotonic() + args.service_timeout
        while len(finished) < len(games) and time.monotonic() < deadline:
            line = []
            for name, (game_id, _seats, begun) in games.items():
                state = requests.get(f"{base}/games/{game_id}", timeout=30).json()
                if state["status"] in ("finished", "aborted") and name not in finished:
                    finished[name] = time.perf_counter() - begun
                line.append(f"{name} seq {state['seq']} {state['status']}")
            print("\r  " + ", ".join(line) + " " * 8, end="", file=sys.stderr, flush=True)
            time.sleep(2)
        print(file=sys.stderr)
        referee_key = requests.get(f"{base}/referee-key", timeout=30).json()["key"]
        for name, (game_id, seats, _begun) in games.items():
            bundle = requests.get(f"{base}/games/{game_id}/export", timeout=60).json()
            report = verify_bundle(bundle, referee_key=referee_key)
            moves = [e for e in bundle["log"] if e["type"] == "move"]
            created = next(e for e in bundle["log"] if e["type"] == "created")
            out["games"].append({
                "ruleset": name, "seats": seats, "game": game_id, "status": bundle.get("status", None),
                "finished": name in finished, "wall_s": finished.get(name), "moves": len(moves),
                "movers": sorted({e["seat"] for e in moves}), "verify": report.status,
                "first_failure": None if report.first_failure is None else str(report.first_failure),
                "bot_seats_declared": json.dumps(created).count('"bot": true')})
    finally:
        for process, _log in bots:
            process.send_signal(signal.SIGINT)
        for process, log in bots:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGINT)
            try:
                serve.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(serve.pid, signal.SIGKILL)
                serve.wait()
        serve_log.close()
        if args.keep:
            print(f"  kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return out


def _wait(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.2)


def print_service(out: dict[str, Any]) -> None:
    print(f"through referee serve: mcts bots (referee bot --think {out['think_s']}), one process per key")
    for g in out["games"]:
        took = "not finished" if not g["finished"] else f"{g['wall_s']:.0f} s"
        print(f"  {g['ruleset']:<11} {g['seats']} seats: {g['moves']} moves by seats {g['movers']}, {took}, "
              f"{g['bot_seats_declared']} seats declared bots, bundle {g['verify']}"
              + ("" if g["first_failure"] is None else f" (first failure: {g['first_failure']})"))


# ---------------------------------------------------------------------------------------------- main

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200, help="games per ruleset and opponent (default 200)")
    parser.add_argument("--think", type=float, default=1.0, help="mcts seconds per move (default 1)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="mcts iterations per move instead of a time budget (reproducible to the move)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: one per core)")
    parser.add_argument("--rulesets", type=lambda s: s.split(","), default=list(RULESETS))
    parser.add_argument("--opponents", type=lambda s: s.split(","), default=list(OPPONENTS))
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    parser.add_argument("--results", type=Path, default=None,
                        help="append each game to this JSON-lines file and resume from it (see above)")
    parser.add_argument("--service", action=argparse.BooleanOptionalAction, default=True,
                        help="also play the 4- and 5-seat games through referee serve (default on)")
    parser.add_argument("--service-think", type=float, default=0.2)
    parser.add_argument("--service-timeout", type=float, default=1800.0)
    parser.add_argument("--no-strength", dest="strength", action="store_false")
    parser.add_argument("--keep", action="store_true", help="keep the service run's directory (logs)")
    args = parser.parse_args()
    if args.iterations:
        args.think = None
    for name in args.rulesets:
        ruleset(name)
    bad = set(args.opponents) - set(OPPONENTS)
    if bad:
        parser.error(f"unknown opponents: {', '.join(sorted(bad))}")

    print(f"python {platform.python_version()}, {os.cpu_count()} cores, "
          + ", ".join(f"{name} {ruleset(name).version}" for name in args.rulesets))
    figures: dict[str, Any] = {"args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                               "python": platform.python_version(), "cores": os.cpu_count(),
                               "versions": {name: ruleset(name).version for name in args.rulesets}}
    ok = True
    if args.strength:
        figures["strength"] = strength(args)
        print_strength(figures["strength"], args)
    if args.service:
        figures["service"] = service_games(args)
        print_service(figures["service"])
        ok = all(g["finished"] and g["verify"] == "verified" for g in figures["service"]["games"])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"figures written to {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
