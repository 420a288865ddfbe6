"""Flat-cost curves of the accept path and the replay worker (issue 13, items 2 and 4), run by hand; prints
figures, asserts nothing about speed.

    .venv/bin/python tests/bench/bench_scale.py [--lengths 10,100,500,2000] [--stored 1000,10000,100000]

In one process, on 127.0.0.1 only: an embedded durable Redis for the logs (AOF, appendfsync always) and an
embedded non-persisted one for the queue and the projections, as ``referee serve`` lays them out; the Flask
app through its test client (production ``ReplayDispatch``: every accept that raises a game's pending flag
pushes the game onto the ready list as in production; no worker runs, the replay is done by a
:class:`~workers.projector.Projector` called here, so its cost is measured alone).

``length``  accept latency and worker cost per move against the log's length. A 5 Towers game (recorded
            mode) is padded to L entries by entries of an unknown type (``note``) appended through the
            store's own ``APPEND_ENTRY``: every fold gives them a ``rejected`` verdict and they leave the
            position alone, so the game stays playable while its log, its stream, its verdicts and its folds
            grow. At each L: the first accept after the padding (the web folds the whole log once: O(L) by
            design), then ``--moves`` accepts, each caught up by the projector (warm, as a worker's loop):
            p50/p99 of the accept's wall time, CPU per accept, CPU per entry of the catch-up; the memory of a
            folded game (tracemalloc of a fresh fold), of its log stream (``MEMORY USAGE``) and of its
            projection and verdicts on the work Redis.
``stored``  the same against the number of games stored: ``--stored`` games (created + started) written
            through the store's own scripts, pipelined (as ``bench_timecontrol.py`` does); at each size,
            accepts in fresh games among them and ``used_memory`` per stored game.
``rq``      the per-job RQ overhead: ``--jobs`` jobs of a function that does nothing run by an in-process
            ``SimpleWorker`` in burst mode, against the same number of direct calls; the enqueue's cost too;
            and what replaced it, the ready list: ``--jobs`` pushes (``LPUSH``, what a cluster's dispatcher
            sends; on one Redis the append script pushes in the same round trip) and the replay loop's
            ``take`` of them (``BRPOP`` + ``RPOP … count``, up to 64 at a time).
``parser``  a Redis round trip (``EVALSHA`` of the append script's size class: ``READ_SINCE`` on a game) with
            redis-py's pure-Python RESP3 parser and with ``hiredis``.

The machine is shared: compare the figures of one run (ratios), not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_service import FlaskClient, LocalGame  # noqa: E402
from bench_timecontrol import write_games  # noqa: E402

from referee.games_service.entries import make_entry  # noqa: E402
from referee.games_service.folds import fold  # noqa: E402
from referee.running.embedded_redis import EmbeddedRedis  # noqa: E402
from referee.store import RedisStore, keys  # noqa: E402
from workers.projector import Projector  # noqa: E402


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")


def pad(store: RedisStore, game: LocalGame, length: int) -> None:
    """Append ``note`` entries (rejected by every fold, position unchanged) until the log has ``length``."""
    pipe_size = 200
    while game.seq < length:
        batch = []
        seq, head = game.seq, game.head
        for _ in range(min(pipe_size, length - game.seq)):
            entry = make_entry("note", seq, head, text="padding")
            batch.append(entry)
            seq, head = seq + 1, entry["hash"]
        for entry in batch:
            store.append(game.game_id, entry, game.head)
            game.seq, game.head = entry["seq"] + 1, entry["hash"]


def play(client: FlaskClient, store: RedisStore, projector: Projector, game: LocalGame, moves: int
         ) -> dict[str, list[float]]:
    """``moves`` accepts in ``game``, each followed by the projector's catch-up; wall and CPU of each."""
    out: dict[str, list[float]] = {"wall": [], "cpu": [], "worker_cpu": [], "worker_entries": []}
    for _ in range(moves):
        if game.over():
            break
        seat, move, submission = game.next_submission()
        wall, cpu = time.perf_counter(), time.process_time()
        status, receipt = client.request("POST", f"/games/{game.game_id}/moves", submission)
        out["wall"].append(time.perf_counter() - wall)
        out["cpu"].append(time.process_time() - cpu)
        if status != 202:
            raise RuntimeError(f"refused: {status} {receipt}")
        game.applied(seat, move, receipt)
        before = store.read_projection(game.game_id)
        cpu = time.process_time()
        summary = projector.catch_up(game.game_id)
        out["worker_cpu"].append(time.process_time() - cpu)
        out["worker_entries"].append(summary["seq"] - (before["seq"] if before else 0))
    return out


def fold_bytes(store: RedisStore, game_id: str) -> int:
    """Bytes a fold of ``game_id`` keeps once cached (tracemalloc): what the web's and the worker's caches
    hold per game (trimmed to its last verdicts as ``ReplayerCache.put`` does, where the code has it)."""
    entries = store.read_log(game_id)  # read first: the connection's reply buffer is not the fold's
    store.read_secret(game_id)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    replayer = fold(store, game_id, entries)
    if hasattr(replayer, "trim"):
        from referee.games_service.folds import KEEP_VERDICTS
        replayer.trim(KEEP_VERDICTS)
    size = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del replayer
    return size


def summarise(label: str, played: dict[str, list[float]], first: float) -> dict[str, Any]:
    wall = [w * 1000 for w in played["wall"]]
    entries = sum(played["worker_entries"]) or 1
    return {"label": label, "first_accept_ms": first * 1000, "accepts": len(wall),
            "accept_p50_ms": pct(wall, 0.5), "accept_p99_ms": pct(wall, 0.99),
            "accept_cpu_ms": 1000 * statistics.fmean(played["cpu"]) if played["cpu"] else float("nan"),
            "worker_cpu_ms_per_entry": 1000 * sum(played["worker_cpu"]) / entries}


def phase_length(app: Any, store: RedisStore, lengths: list[int], moves: int, out: dict[str, Any]) -> None:
    client = FlaskClient(app)
    projector = Projector(store)
    rng = random.Random(7)
    rows = []
    for length in lengths:
        game = LocalGame(client, rng)
        pad(store, game, length)
        projector.catch_up(game.game_id)  # the worker's one fold of the padding (cold)
        seat, move, submission = game.next_submission()
        start = time.perf_counter()
        status, receipt = client.request("POST", f"/games/{game.game_id}/moves", submission)  # web folds once
        first = time.perf_counter() - start
        assert status == 202, receipt
        game.applied(seat, move, receipt)
        projector.catch_up(game.game_id)
        row = summarise(f"L={length}", play(client, store, projector, game, moves), first)
        k = keys.game_keys(game.game_id)
        row.update(game=game.game_id, padded=length, log_entries=game.seq, fold_bytes=fold_bytes(store, game.game_id),
                   log_stream_bytes=int(store.redis.memory_usage(k.log, samples=0) or 0),
                   projection_bytes=int(store.work.memory_usage(k.projection, samples=0) or 0),
                   verdicts_bytes=int(store.work.memory_usage(k.verdicts, samples=0) or 0))
        rows.append(row)
    out["length"] = rows
    print("against the log's length (one game padded to L entries; accepts through the app, warm caches):")
    print(f"  {'L':>6} {'L after':>7} {'1st accept':>10} {'p50':>7} {'p99':>7} {'CPU/acc':>8} {'wkr CPU/entry':>13} "
          f"{'fold':>9} {'stream':>9} {'proj':>8} {'verdicts':>9}")
    for row in rows:
        print(f"  {row['padded']:>6} {row['log_entries']:>7} {row['first_accept_ms']:>8.1f}ms "
              f"{row['accept_p50_ms']:>5.2f}ms {row['accept_p99_ms']:>5.2f}ms {row['accept_cpu_ms']:>6.2f}ms "
              f"{row['worker_cpu_ms_per_entry']:>11.2f}ms {row['fold_bytes']:>8}B {row['log_stream_bytes']:>8}B "
              f"{row['projection_bytes']:>7}B "
              f"{row['verdicts_bytes']:>8}B")


def phase_stored(app: Any, store: RedisStore, url: str, sizes: list[int], *, moves: int, out: dict[str, Any]) -> None:
    client = FlaskClient(app)
    projector = Projector(store)
    rng = random.Random(8)
    rows = []
    written = 0
    base = store.redis.info("memory")["used_memory"]
    for size in sizes:
        ids = [f"g_{'bench':>5}{i:011d}".replace(" ", "x")[:18] for i in range(written, size)]
        if ids:
            started = time.perf_counter()
            write_games(url, ids, [int(time.time() * 1000)] * len(ids), {"kind": "none"}, size, timers=False)
            print(f"  ({len(ids)} games written in {time.perf_counter() - started:.1f} s)")
        written = size
        used = store.redis.info("memory")["used_memory"]
        played: dict[str, list[float]] = {"wall": [], "cpu": [], "worker_cpu": [], "worker_entries": []}
        firsts = []
        for _ in range(4):  # fresh games among the stored ones
            game = LocalGame(client, rng)
            projector.catch_up(game.game_id)
            start = time.perf_counter()
            result = play(client, store, projector, game, moves // 4)
            firsts.append(time.perf_counter() - start)
            for name, values in result.items():
                played[name] += values
        row = summarise(f"N={size}", played, statistics.fmean(firsts) / max(1, moves // 4))
        row.update(stored=store.redis.zcard(keys.GAMES_INDEX), log_redis_bytes_per_game=(used - base) / max(size, 1))
        rows.append(row)
    out["stored"] = rows
    print("against the number of games stored (accepts in fresh games among them):")
    print(f"  {'games':>8} {'p50':>7} {'p99':>7} {'CPU/acc':>8} {'wkr CPU/entry':>13} {'log Redis B/game':>16}")
    for row in rows:
        print(f"  {row['stored']:>8} {row['accept_p50_ms']:>5.2f}ms {row['accept_p99_ms']:>5.2f}ms "
              f"{row['accept_cpu_ms']:>6.2f}ms {row['worker_cpu_ms_per_entry']:>11.2f}ms "
              f"{row['log_redis_bytes_per_game']:>16.0f}")


def phase_rq(work_url: str, jobs: int, out: dict[str, Any]) -> None:
    import redis
    from rq import Queue, SimpleWorker
    from rq.serializers import JSONSerializer

    connection = redis.Redis.from_url(work_url)
    queue = Queue("bench-rq-overhead", connection=connection, serializer=JSONSerializer)
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(jobs):
        queue.enqueue("os.getpid", job_id=f"noop-{i}", result_ttl=0)
    enqueue_cpu, enqueue_wall = time.process_time() - cpu, time.perf_counter() - wall
    worker = SimpleWorker([queue], connection=connection, serializer=JSONSerializer)
    cpu, wall = time.process_time(), time.perf_counter()
    worker.work(burst=True, logging_level="WARNING")
    work_cpu, work_wall = time.process_time() - cpu, time.perf_counter() - wall
    cpu = time.process_time()
    for _ in range(jobs):
        os.getpid()
    direct = time.process_time() - cpu
    res = {"jobs": jobs, "enqueue_cpu_ms": 1000 * enqueue_cpu / jobs, "enqueue_wall_ms": 1000 * enqueue_wall / jobs,
           "job_cpu_ms": 1000 * (work_cpu - direct) / jobs, "job_wall_ms": 1000 * work_wall / jobs}
    from workers.queue import ReplayDispatch
    from workers.replayloop import ReplayLoop

    class _Projector:  # the loop's take() alone: nothing is caught up
        store = RedisStore(connection, connection)

    dispatch = ReplayDispatch(queue, _Projector.store)
    cpu = time.process_time()
    for i in range(jobs):
        dispatch.notify(f"g_{i:016d}", 1)
    push_cpu = time.process_time() - cpu
    loop = ReplayLoop(queue, _Projector())  # type: ignore[arg-type]
    taken, cpu = 0, time.process_time()
    while taken < jobs:
        taken += len(loop.take(block=1.0))
    take_cpu = time.process_time() - cpu
    res.update(ready_push_cpu_ms=1000 * push_cpu / jobs, ready_take_cpu_ms=1000 * take_cpu / jobs)
    out["rq"] = res
    print(f"ready list per notification ({jobs}): push {res['ready_push_cpu_ms']:.3f} ms CPU, take "
          f"{res['ready_take_cpu_ms']:.3f} ms CPU (against RQ's enqueue + run above)")
    print(f"RQ per job ({jobs} jobs of a no-op, SimpleWorker in burst mode, in this process): enqueue "
          f"{res['enqueue_cpu_ms']:.2f} ms CPU ({res['enqueue_wall_ms']:.2f} ms wall); run {res['job_cpu_ms']:.2f} ms "
          f"CPU ({res['job_wall_ms']:.2f} ms wall) per job, the function itself excluded")


def phase_parser(url: str, store: RedisStore, game_id: str, rounds: int, out: dict[str, Any]) -> None:
    import redis
    from redis._parsers import _HiredisParser, _RESP3Parser

    k = keys.game_keys(game_id)
    res = {}
    for name, parser in (("python", _RESP3Parser), ("hiredis", _HiredisParser)):
        try:
            connection = redis.Redis.from_url(url, parser_class=parser, protocol=3)
            script = connection.register_script(__import__("referee.store.scripts", fromlist=["x"]).READ_SINCE)
            script(keys=[k.log, k.head], args=[keys.stream_id(0)])
        except Exception as exc:  # hiredis not installed
            res[name] = f"unavailable: {exc}"
            continue
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            script(keys=[k.log, k.head], args=[keys.stream_id(0)])
            samples.append(time.perf_counter() - start)
        res[name] = {"p50_ms": 1000 * pct(samples, 0.5), "mean_ms": 1000 * statistics.fmean(samples)}
        connection.close()
    out["parser"] = res
    print(f"READ_SINCE of a whole {len(store.read_log(game_id))}-entry log, {rounds} round trips: " + "; ".join(
        f"{name} {v['p50_ms']:.3f} ms p50" if isinstance(v, dict) else f"{name} {v}" for name, v in res.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", default="10,100,500,2000")
    parser.add_argument("--stored", default="1000,10000,100000")
    parser.add_argument("--moves", type=int, default=40, help="accepts measured at each point")
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--phases", default="length,stored,rq,parser")
    args = parser.parse_args()
    phases = set(args.phases.split(","))
    from referee.app import create_app

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="referee-bench-scale-") as tmp:
        log_redis = EmbeddedRedis(directory=Path(tmp) / "redis", durable=True).start()
        work_redis = EmbeddedRedis(directory=Path(tmp) / "redis-work", durable=False).start()
        try:
            app = create_app({"REDIS_URL": log_redis.url, "REFEREE_WORK_REDIS_URL": work_redis.url,
                              "REFEREE_VAR": str(Path(tmp) / "var"), "REFEREE_QUEUE": "bench-scale",
                              "REFEREE_RATE_CREATE": "1000000 per minute",
                              "REFEREE_RATE_CREATE_PER_KEY": "1000000 per minute"})
            store = app.extensions["referee.store"]
            import redis as redis_module
            from redis.utils import HIREDIS_AVAILABLE
            print(f"machine: {os.cpu_count()} CPUs (shared), load average {os.getloadavg()[0]:.1f} at start; redis-py "
                  f"{redis_module.__version__}, hiredis {'installed (used)' if HIREDIS_AVAILABLE else 'absent'}")
            if "length" in phases:
                phase_length(app, store, [int(x) for x in args.lengths.split(",")], args.moves, out)
            if "stored" in phases:
                sizes = [int(x) for x in args.stored.split(",")]
                phase_stored(app, store, log_redis.url, sizes, moves=args.moves, out=out)
            if "rq" in phases:
                phase_rq(work_redis.url, args.jobs, out)
            if "parser" in phases and out.get("length"):
                game_id = out["length"][-1]["game"]
                phase_parser(log_redis.url, store, game_id, 300, out)
            print(json.dumps(out, indent=1, default=str))
        finally:
            log_redis.stop()
            work_redis.stop()


if __name__ == "__main__":
    main()
