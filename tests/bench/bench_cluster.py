"""Benchmark of the referee on a local Redis Cluster beside the single-Redis layout, run by hand; prints
figures, asserts nothing about speed (issue 13, item 5: "the same accept ratio against the local cluster").

    .venv/bin/python tests/bench/bench_cluster.py [--duration 8] [--clients 4] [--layouts single,cluster]
    .venv/bin/python tests/bench/bench_cluster.py --layouts memory [--memory-games 200] [--memory-moves 40]

For each layout, one after the other in one run (so that the two are measured under the same load):

* ``single``: as ``bench_service.py`` and ``referee serve``: the logs on one durable Redis (AOF,
  ``appendfsync always``), RQ's queue and the projections on a non-persisted one;
* ``cluster``: ``REDIS_URL=redis+cluster://…`` naming a 3-master cluster started from the
  ``redis-server`` binary (``referee.running.embedded_cluster``; AOF, ``appendfsync always`` on every node) that
  holds the logs *and* the projections, RQ's queue on a non-persisted plain Redis;

both with gunicorn 2 workers × 8 threads (gthread), 2 replay workers (``referee worker``) and
``--clients`` load-generating processes, all on this machine. Printed per layout: the no-op POST rate,
accepted submissions per second (closed loop, ``bench_service.py``'s client), their ratio, the CPU per
accepted submission of each process group, and the memory the Redis servers gained per game created.

``memory``: the bytes one game costs on the cluster (logs, heads, signatures, projections, verdicts, the
``?wait`` events stream, index and outbox: ``used_memory`` summed over the masters, before and after),
for ``--memory-games`` 5 Towers games of 2 created and accepted through the app (in-process, projections
folded inline), then per further entry after ``--memory-moves`` random legal moves each (``0``: to the end);
then the web process's CPU per ``GET /games/{id}`` and ``GET /games/{id}/legal-moves`` (500 each, in process).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_service import CpuMeter, _noop_client, _submit_client, closed_loop, drain, stop_children, wait_http  # noqa: E402

from referee.running.embedded_cluster import EmbeddedCluster  # noqa: E402
from referee.running.embedded_redis import EmbeddedRedis, free_port  # noqa: E402
from referee.store.cluster import connect  # noqa: E402


def used_memory(url: str) -> int:
    """``used_memory`` of a Redis, or the sum over a cluster's masters."""
    client = connect(url)
    try:
        if hasattr(client, "get_primaries"):
            return sum(client.info("memory", target_nodes=node)["used_memory"] for node in client.get_primaries())
        return int(client.info("memory")["used_memory"])
    finally:
        client.close()


def games_created(url: str) -> int:
    client = connect(url)
    try:
        return int(client.zcard("referee:games"))
    finally:
        client.close()


def memory_phase(games: int, moves: int) -> None:
    import random

    sys.path.insert(0, str(REPO / "tests" / "service"))
    os.environ.setdefault("REFEREE_RATE_CREATE", "100000 per minute")
    os.environ.setdefault("REFEREE_RATE_CREATE_PER_KEY", "100000 per minute")
    os.environ.setdefault("REFEREE_ACCEPT_WITHIN", "0")
    from svc_helpers import Http, accept_all, create_game, play_random

    from referee.app import create_app

    with (EmbeddedCluster(durable=False) as cluster, EmbeddedRedis(durable=False) as queue,
          tempfile.TemporaryDirectory() as tmp):
        app = create_app({"REDIS_URL": cluster.url, "REFEREE_WORK_REDIS_URL": queue.url,
                          "REFEREE_VAR": tmp + "/var", "REFEREE_DISPATCH": "inline"})
        http, store, rng = Http(app.test_client()), app.extensions["referee.store"], random.Random(1)
        before = used_memory(cluster.url)
        played = []
        for _ in range(games):
            game = create_game(http, "fivetowers", 2)
            accept_all(http, game, rng)
            played.append(game)
        started = used_memory(cluster.url)
        entries_started = sum(store.tip(game.game_id).seq for game in played)
        for game in played:
            play_random(http, game, rng, max_moves=moves or None)
        after = used_memory(cluster.url)
        entries = sum(store.tip(game.game_id).seq for game in played) - entries_started
        print(f"memory, {games} games on the cluster: {(started - before) / games:,.0f} B per started game "
              f"({entries_started / games:.1f} entries); {(after - started) / max(entries, 1):,.0f} B per further "
              f"entry ({entries / games:.1f} per game); {(after - before) / games:,.0f} B per game at the end")
        for path in ("", "/legal-moves"):
            http.get(f"/games/{played[0].game_id}{path}")  # warm: engines loaded, folds cached
            start, cpu = time.perf_counter(), time.process_time()
            for i in range(500):
                assert http.get(f"/games/{played[i % len(played)].game_id}{path}")[0] == 200
            print(f"GET /games/{{id}}{path} in process on the cluster: {(time.perf_counter() - start) * 2:.2f} ms "
                  f"wall, {(time.process_time() - cpu) * 2:.2f} ms CPU of the web process per request")
        store.close()


def run_layout(name: str, urls: tuple[str, str], redis_pids: dict[str, list[int]], tmp: Path,
               args: argparse.Namespace) -> dict[str, Any]:
    log_url, work_url = urls
    children: list[subprocess.Popen[bytes]] = []
    port = free_port()
    env = {**os.environ, "REDIS_URL": log_url, "REFEREE_WORK_REDIS_URL": work_url, "REFEREE_VAR": str(tmp / "var"),
           "REFEREE_BENCH_NOOP": "1", "REFEREE_QUEUE": "bench", "PYTHONPATH": str(REPO),
           # the load generator creates games far faster than any club (as the test suite does)
           "REFEREE_RATE_CREATE": "100000 per minute", "REFEREE_RATE_CREATE_PER_KEY": "100000 per minute"}
    log = open(tmp / f"{name}-processes.log", "wb")  # closed below
    try:
        children.append(subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--config", "python:referee.running.gunicorn_conf", "--workers", "2",
             "--worker-class", "gthread", "--threads", "8",
             "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "referee.app:create_app()"],
            env=env, cwd=REPO, stdout=log, stderr=log))
        for i in range(2):
            children.append(subprocess.Popen(
                [sys.executable, "-m", "referee.cli", "worker", "--queue", "bench", "--name", f"{name}-{i}"],
                env={**env, "REFEREE_RECONCILE_EVERY": "5"}, cwd=REPO, stdout=log, stderr=log))
        wait_http(port)
        groups = {"web": [children[0].pid], "replay workers": [c.pid for c in children[1:]], **redis_pids}
        closed_loop(_noop_client, port, args.clients, 2.0, [])  # warm-up
        noop = sum(count for count, _errors in closed_loop(_noop_client, port, args.clients, args.duration, []))
        closed_loop(_submit_client, port, args.clients, 2.0, [lambda i: 1000 + i, lambda i: 2])  # warm-up
        memory_before, games_before = used_memory(log_url), games_created(log_url)
        work_before = used_memory(work_url)
        meter = CpuMeter(groups)
        outcome = closed_loop(_submit_client, port, args.clients, args.duration,
                              [lambda i: i, lambda i: args.games_per_client])
        accepted = sum(count for count, _failed in outcome)
        drain(log_url, work_url)
        cpu = meter.report(accepted, "accepted submission (incl. replaying it)")
        games = games_created(log_url) - games_before
        memory = used_memory(log_url) - memory_before + used_memory(work_url) - work_before
        return {"noop_per_s": noop / args.duration, "accepted_per_s": accepted / args.duration,
                "refused": sum(failed for _count, failed in outcome), "cpu": cpu, "games": games,
                "bytes_per_game": memory / max(games, 1), "accepted": accepted}
    finally:
        stop_children(children)
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=8.0, help="seconds of each throughput phase")
    parser.add_argument("--clients", type=int, default=4, help="load-generating processes")
    parser.add_argument("--games-per-client", type=int, default=12)
    parser.add_argument("--layouts", default="single,cluster", help="single, cluster and/or memory")
    parser.add_argument("--memory-games", type=int, default=200)
    parser.add_argument("--memory-moves", type=int, default=40, help="moves per game (0: to the end)")
    args = parser.parse_args()
    if "memory" in args.layouts.split(","):
        memory_phase(args.memory_games, args.memory_moves)
        args.layouts = ",".join(layout for layout in args.layouts.split(",") if layout != "memory")
        if not args.layouts:
            return
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; gunicorn 2 workers x 8 "
          f"threads, 2 replay workers, {args.clients} client processes")
    results = {}
    for layout in args.layouts.split(","):
        with tempfile.TemporaryDirectory(prefix=f"referee-bench-{layout}-") as tmp:
            work = EmbeddedRedis(directory=Path(tmp) / "redis-work", durable=False).start()
            try:
                if layout == "cluster":
                    with EmbeddedCluster(masters=3, durable=True, directory=Path(tmp) / "cluster") as cluster:
                        pids = {"cluster (3 masters)": [node.process.pid for node in cluster.nodes],
                                "queue Redis": [work.process.pid]}
                        results[layout] = run_layout(layout, (cluster.url, work.url), pids, Path(tmp), args)
                else:
                    with EmbeddedRedis(directory=Path(tmp) / "redis", durable=True) as redis:
                        pids = {"log Redis": [redis.process.pid], "work Redis": [work.process.pid]}
                        results[layout] = run_layout(layout, (redis.url, work.url), pids, Path(tmp), args)
            finally:
                work.stop()
        found = results[layout]
        ratio = found["accepted_per_s"] / found["noop_per_s"]
        print(f"{layout:8s} no-op {found['noop_per_s']:7.1f}/s, accepted {found['accepted_per_s']:6.1f}/s "
              f"({found['refused']} refused or failed), accept/no-op {ratio:.2f}"
              f"; {found['games']} games created in the phase, Redis memory gained per game "
              f"{found['bytes_per_game']:,.0f} B (with its {found['accepted'] / max(found['games'], 1):.0f} moves)")
        print(found["cpu"])
    if {"single", "cluster"} <= results.keys():
        print(f"cluster / single accepted rate: "
              f"{results['cluster']['accepted_per_s'] / results['single']['accepted_per_s']:.2f}")


if __name__ == "__main__":
    main()
