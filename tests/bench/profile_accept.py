"""CPU of one accepted move, in process, run by hand; prints figures (and a cProfile table), asserts nothing.

    .venv/bin/python tests/bench/profile_accept.py [--games 20] [--moves 20] [--profile web|worker]
        [--sort tottime|cumulative] [--top 40]

The web's part of an accept (``POST /games/{id}/moves`` through the app's test client: the Flask stack, the
schemas, the signature check, the fold, the append script on a real durable Redis) and the replay worker's
part (``Projector.catch_up`` of that one move: read, fold with the signature checked again, events,
projection, release), each timed with ``time.process_time`` — CPU, not wall time, so that neither the
machine's load nor the fsync's wait moves the figures much. ``--profile`` prints a cProfile of one side, timed
by CPU as well (profiling makes everything ~3× slower; compare shares, not times). ``docs/performance.md``
section 6 says what these profiles showed.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "service"))

from svc_helpers import Http, accept_all, create_game, move_envelope, signed  # noqa: E402

from referee.app import create_app  # noqa: E402
from referee.running.embedded_redis import EmbeddedRedis  # noqa: E402
from workers.projector import Projector  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--moves", type=int, default=20, help="moves per game")
    parser.add_argument("--profile", choices=["web", "worker"], default=None)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    server = EmbeddedRedis(durable=True).start()
    try:
        with tempfile.TemporaryDirectory(prefix="referee-profile-") as var:
            app = create_app({"REDIS_URL": server.url, "REFEREE_VAR": var, "REFEREE_DISPATCH": "none"})
            http = Http(app.test_client())
            store = app.extensions["referee.store"]
            projector = Projector(store)
            games = []
            for _ in range(args.games):
                game = create_game(http, "fivetowers", 2)
                accept_all(http, game)
                projector.catch_up(game.game_id)
                games.append(game)
            rng = random.Random(1)
            profiler = cProfile.Profile(time.process_time)
            web_cpu = worker_cpu = 0.0
            moves = 0
            for _ in range(args.moves):
                for game in games:
                    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
                    if legal["to_move"] is None:
                        continue
                    seat = legal["to_move"]
                    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"],
                                             rng.choice(legal["moves"]))
                    submission = signed(game.keys[seat], envelope)
                    start = time.process_time()
                    if args.profile == "web":
                        profiler.enable()
                    status, body = http.post(f"/games/{game.game_id}/moves", submission)
                    if args.profile == "web":
                        profiler.disable()
                    web_cpu += time.process_time() - start
                    if status != 202:
                        raise SystemExit(f"the move was refused: {status} {body}")
                    moves += 1
                    start = time.process_time()
                    if args.profile == "worker":
                        profiler.enable()
                    projector.catch_up(game.game_id)
                    if args.profile == "worker":
                        profiler.disable()
                    worker_cpu += time.process_time() - start
            print(f"{moves} moves into {args.games} 5 Towers games: web {1000 * web_cpu / moves:.3f} ms CPU a move, "
                  f"replay worker {1000 * worker_cpu / moves:.3f} ms CPU a move (one catch-up each)"
                  + (" [profiled: ~3x slower]" if args.profile else ""))
            if args.profile:
                pstats.Stats(profiler).sort_stats(args.sort).print_stats(args.top)
            store.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
