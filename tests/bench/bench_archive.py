"""What archiving finished games gives back and costs (issue 23, item 1), run by hand; prints figures, asserts
nothing about speed.

    .venv/bin/python tests/bench/bench_archive.py [--games 1000] [--moves 6] [--reads 300]

In one process, on 127.0.0.1 only: an embedded durable Redis for the logs (AOF) and an embedded non-persisted
one for the queue and the projections, as ``referee serve`` lays them out; the Flask app through its test
client; the replay done by a :class:`~workers.projector.Projector` called here (as ``bench_scale.py``).

``memory``  ``used_memory`` of the log Redis (``INFO memory``, after ``MEMORY PURGE``) and of the work Redis:
            before ``--games`` finished games are played (5 Towers, 2 seats, accepted, ``--moves`` random
            moves, then a resignation: finished and the seed revealed, each projected to its end), after they
            are played, and after ``archive_games(older_than=0)`` moved them all to the archive directory;
            the ratio after/before (issue 23's target: within 5 %), the keys left (``SCAN``) and what they
            hold (``MEMORY USAGE``), and the archive's size on disk.
``read``    ``GET /games/{id}/replay`` of a finished game still in Redis and of the same game once archived
            (another finished game of the same length before and after, to read each warm): the median of
            ``--reads`` reads of each, interleaved, and the ratio archived/live (target ≤ 2×).

The machine is shared: compare the figures of one run (ratios), not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "service"))

from svc_helpers import Http, PlayedGame, accept_all, create_game, play_random, signed  # noqa: E402

from referee.games_service.archiving import archive_game, archive_games  # noqa: E402
from referee.protocol.signing import RESIGN_CTX  # noqa: E402
from referee.running.embedded_redis import EmbeddedRedis  # noqa: E402
from referee.store import RedisStore, keys  # noqa: E402
from referee.store.messages import messages_of  # noqa: E402
from workers.projector import Projector  # noqa: E402
from workers.queue import ready_keys  # noqa: E402


def used_memory(client: Any) -> int:
    try:
        client.execute_command("MEMORY PURGE")
    except Exception:  # not every allocator has it
        pass
    return int(client.info("memory")["used_memory"])


def figures(store: RedisStore) -> dict[str, int]:
    """``used_memory`` of both Redis servers, and of the log's without the outbox stream (a ring of events for
    the delivery workers, capped at ``keys.OUTBOX_MAXLEN`` entries whatever the number of games)."""
    log, work = used_memory(store.redis), used_memory(store.work)
    outbox = int(store.redis.memory_usage(keys.OUTBOX) or 0)
    return {"log": log, "work": work, "log_without_outbox": log - outbox, "outbox": outbox}


def drain_ready_list(store: RedisStore) -> int:
    """Take every notification off the replay workers' ready list, as a worker does: the bench projects the games
    itself (``Projector.catch_up``), so nothing else would, and the pushes would stay as a residue no service keeps."""
    taken = 0
    for key in ready_keys(QUEUE):  # the unsharded list and its shards (``workers.queue``)
        while store.ready_redis.lpop(key) is not None:
            taken += 1
    return taken


QUEUE = "bench-archive"


def finished_game(http: Http, projector: Projector, rng: random.Random, moves: int) -> PlayedGame:
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game, rng)
    play_random(http, game, rng, max_moves=moves)
    status, state = http.get(f"/games/{game.game_id}")
    envelope = {"v": 1, "ctx": RESIGN_CTX, "game": game.game_id, "seat": 0, "seq": state["seq"], "prev": state["head"]}
    status, receipt = http.post(f"/games/{game.game_id}/resign", signed(game.keys[0], envelope))
    assert status == 202 and receipt["status"] == "finished", receipt
    projector.catch_up(game.game_id)
    return game


def leftovers(store: RedisStore) -> dict[str, Any]:
    """Every key left on either Redis, grouped by its pattern, with its ``MEMORY USAGE``."""
    out: dict[str, Any] = {}
    for name, client in (("log", store.redis), ("work", store.work)):
        groups: dict[str, list[int]] = {}
        for key in client.scan_iter(count=1000):
            group = re.sub(r"[0-9]+", "N", re.sub(r"\bg_[a-z2-7]{16}\b", "<game>", key.decode()))
            groups.setdefault(group, []).append(int(client.memory_usage(key) or 0))
        out[name] = {g: {"keys": len(s), "bytes": sum(s)} for g, s in sorted(groups.items())}
        if store.work is store.redis:
            break
    return out


def median_read(client: Any, path: str) -> float:
    start = time.perf_counter()
    response = client.get(path)
    took = time.perf_counter() - start
    assert response.status_code == 200, response.data[:200]
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=6, help="random moves before the resignation")
    parser.add_argument("--reads", type=int, default=300)
    args = parser.parse_args()
    from referee.app import create_app

    out: dict[str, Any] = {"games": args.games, "moves": args.moves}
    with tempfile.TemporaryDirectory(prefix="referee-bench-archive-") as tmp:
        log_redis = EmbeddedRedis(directory=Path(tmp) / "redis", durable=True).start()
        work_redis = EmbeddedRedis(directory=Path(tmp) / "redis-work", durable=False).start()
        try:
            app = create_app({"REDIS_URL": log_redis.url, "REFEREE_WORK_REDIS_URL": work_redis.url,
                              "REFEREE_VAR": str(Path(tmp) / "var"), "REFEREE_QUEUE": QUEUE,
                              "REFEREE_RATE_CREATE": "1000000 per minute",
                              "REFEREE_RATE_CREATE_PER_KEY": "1000000 per minute",
                              "REFEREE_RATE_SUBMIT": "1000000 per minute"})
            store: RedisStore = app.extensions["referee.store"]
            messages, archive, key = messages_of(store), store.archive, app.extensions["referee.key"]
            assert archive is not None
            http = Http(app.test_client())
            projector = Projector(store)
            rng = random.Random(1)
            print(f"machine: {os.cpu_count()} CPUs (shared), load average {os.getloadavg()[0]:.1f} at start; "
                  f"{args.games} games of {args.moves} moves and a resignation")

            # a running game and a live reference game first, so the "before" figure holds the service's own keys
            reference = finished_game(http, projector, rng, args.moves)
            create_game(http, "fivetowers", 2)
            drain_ready_list(store)
            before = figures(store)
            keys_before = {"log": store.redis.dbsize(), "work": store.work.dbsize()}
            started = time.perf_counter()
            games = []
            for n in range(args.games):
                games.append(finished_game(http, projector, rng, args.moves).game_id)
                if (n + 1) % 200 == 0:
                    print(f"  played {n + 1}/{args.games} ({time.perf_counter() - started:.0f} s)", flush=True)
            drain_ready_list(store)
            played = figures(store)
            started = time.perf_counter()
            outcomes = archive_games(store, messages, archive, key, older_than=0, games=games)
            took = time.perf_counter() - started
            assert all(o.action == "archived" for o in outcomes), [o for o in outcomes if o.action != "archived"][:3]
            after = figures(store)
            keys_after = {"log": store.redis.dbsize(), "work": store.work.dbsize()}
            on_disk = sum(f.stat().st_size for f in Path(archive.path).rglob("*.json*"))  # type: ignore[attr-defined]
            out["memory"] = {
                "before": before, "played": played, "archived": after,
                "ratio_archived_to_before": {r: round(after[r] / before[r], 4) for r in before if r != "outbox"},
                "indexes_per_game": {name: round(int(store.redis.memory_usage(name) or 0) / (args.games + 2), 1)
                                     for name in ("referee:games",)},
                "archive_index_bytes": (Path(archive.path) / "index.jsonl").stat().st_size,  # type: ignore[attr-defined]
                "per_game_played": {r: round((played[r] - before[r]) / args.games) for r in before},
                "per_game_left": {r: round((after[r] - before[r]) / args.games, 1) for r in before},
                "keys_before": keys_before, "keys_after": keys_after,
                "archive_seconds": round(took, 2), "archive_ms_per_game": round(took / args.games * 1000, 2),
                "archive_bytes_on_disk_per_game": round(on_disk / args.games),
            }
            out["left"] = leftovers(store)

            # reads: the reference game live, then archived; a second game read live alongside, as a control
            client = app.test_client()
            control = games[-1]
            path = f"/games/{reference.game_id}/replay"
            for _ in range(20):
                median_read(client, path)
            live = [median_read(client, path) for _ in range(args.reads)]
            outcome = archive_game(store, messages, archive, reference.game_id, key, older_than=0)
            assert outcome.action == "archived", outcome
            for _ in range(20):
                median_read(client, path)
            archived, other = [], []
            for _ in range(args.reads):
                archived.append(median_read(client, path))
                other.append(median_read(client, f"/games/{control}/replay"))
            out["read"] = {"replay_bytes": len(client.get(path).data),
                           "live_ms": round(statistics.median(live) * 1e3, 3),
                           "archived_ms": round(statistics.median(archived) * 1e3, 3),
                           "another_archived_ms": round(statistics.median(other) * 1e3, 3),
                           "ratio_archived_to_live": round(statistics.median(archived) / statistics.median(live), 2)}
            print(json.dumps(out, indent=1))
        finally:
            log_redis.stop()
            work_redis.stop()


if __name__ == "__main__":
    main()
