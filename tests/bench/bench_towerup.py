"""Tower Up replay speed (run by hand, not collected by pytest):

    python tests/bench/bench_towerup.py

Prints applied moves per second of ``play()`` on one core and the milliseconds to replay a full 4-player
game (``new_game`` + every move), as the median of several runs. The games are the golden games in
``fixtures/golden/towerup-*.json`` plus a few seeded playouts (recorded once, replayed many times).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from referee.games import ruleset
from referee.games.data import load_json
from referee.games.randomness import Rng

ROOT = Path(__file__).resolve().parents[2]
RUNS = 15


def record(rules, players, seed, take_bias):
    """A complete seeded game recorded as (options, seed, [(seat, move)])."""
    game = rules.new_game(players, seed=seed)
    rng = Rng(seed, "bench-policy")
    moves = []
    while not game.is_over():
        legal = game.legal_moves()
        takes = [m for m in legal if m["type"] == "take"]
        move = rng.choice(takes if takes and rng.below(100) < take_bias else legal)
        moves.append((game.to_move(), move))
        game.play(game.to_move(), move)
    return {}, seed, moves


def replay(rules, players, options, seed, moves):
    game = rules.new_game(players, options=options, seed=seed)
    play = game.play
    for seat, move in moves:
        play(seat, move)
    return game


def main() -> None:
    rules = ruleset("towerup")
    games = []
    for players in (2, 3, 4):
        golden = load_json(ROOT / "fixtures" / "golden" / f"towerup-{players}p.json")
        games.append((players, golden["options"], bytes.fromhex(golden["seed"]),
                      [(m["seat"], m["move"]) for m in golden["moves"]]))
    # seeded playouts: a uniform policy (builds dominate: the typical short game) and take-heavy ones
    for n, (players, take_bias) in enumerate(((2, 0), (3, 0), (4, 0), (4, 0), (4, 50), (4, 90))):
        options, seed, moves = record(rules, players, n.to_bytes(32, "big"), take_bias=take_bias)
        games.append((players, options, seed, moves))

    # applied moves per second: play() only (games set up outside the timing)
    total_moves = sum(len(g[3]) for g in games)
    rates = []
    for _ in range(RUNS):
        fresh = [rules.new_game(p, options=o, seed=s) for p, o, s, _m in games]
        start = time.perf_counter()
        for game, (_p, _o, _s, moves) in zip(fresh, games, strict=True):
            play = game.play
            for seat, move in moves:
                play(seat, move)
        rates.append(total_moves / (time.perf_counter() - start))

    # full 4-player replays: new_game + every move
    four = [g for g in games if g[0] == 4]
    timings = []
    for players, options, seed, moves in four:
        samples = []
        for _ in range(RUNS):
            start = time.perf_counter()
            game = replay(rules, players, options, seed, moves)
            samples.append((time.perf_counter() - start) * 1000)
            assert game.is_over()
        timings.append((len(moves), game.view()["reshuffles"], statistics.median(samples)))

    copy_samples = []
    game = replay(rules, *four[0][:3], four[0][3][: len(four[0][3]) // 2])
    for _ in range(RUNS):
        start = time.perf_counter()
        for _ in range(1000):
            game.copy()
        copy_samples.append((time.perf_counter() - start) * 1000)

    print(f"python {sys.version.split()[0]}, ruleset towerup {rules.version}")
    print(f"play(): {statistics.median(rates):,.0f} applied moves/s (median of {RUNS} runs over {total_moves} moves, "
          f"{len(games)} games)")
    for count, reshuffles, ms in timings:
        print(f"full 4-player replay: {count:3d} moves, {reshuffles} reshuffles, new_game included: {ms:.2f} ms "
              f"(median)")
    print(f"copy(): {statistics.median(copy_samples):.1f} us per copy (median)")


if __name__ == "__main__":
    main()
