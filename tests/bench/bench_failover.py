"""Fail-over and the cost of ``REFEREE_MIN_REPLICAS``, run by hand; prints figures, asserts only that no
acknowledged entry was lost (issue 23, item 5; ``docs/scale.md``, "Fail-over").

    .venv/bin/python tests/bench/bench_failover.py [--duration 5] [--threads 4] [--rounds 3]
                                                   [--parts cost,cluster,single]

* ``cost``: one durable Redis (AOF, ``appendfsync always``) with one durable replica, on this machine;
  ``--threads`` writers append chained entries through :class:`RedisStore` for ``--duration`` s with
  ``REFEREE_MIN_REPLICAS`` 0 and 1 (``WAIT 1 1000`` after each append, same connection) in turn, ``--repeat``
  runs each; printed: appends/s, median and 99th percentile latency of each run, the ratio of the medians.
  Then the same through the app (in process, Flask's test client, one thread): signed moves of 5 Towers
  games posted one after the other, moves/s with 0 and 1 in turn after a warm-up.
* ``cluster``: ``--rounds`` times, a fresh cluster of 3 masters and 3 replicas (``cluster-node-timeout``
  1000 ms); writers as above with ``REFEREE_MIN_REPLICAS=1`` for ``--duration`` s, then the master of one
  game SIGKILLed; once its replica is promoted the dead node is restarted (it rejoins as the replica);
  writers go on for ``--duration`` s more. Printed: time to promotion, the longest time the dead master's
  games went without an acknowledged write, acknowledged entries, 503s, entries lost (must be 0).
* ``single``: the same with one Redis and its replica, promoted by hand (``REPLICAOF NO ONE``, the store
  pointed at it, the old master restarted as its replica).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "service"))

import redis  # noqa: E402
from failover_load import Writers, first_entry, game_ids, log_key, next_entry, signature_of  # noqa: E402

from referee.running.embedded_cluster import EmbeddedCluster  # noqa: E402
from referee.running.embedded_redis import EmbeddedRedis  # noqa: E402
from referee.store import RedisStore  # noqa: E402
from referee.store.cluster import connect  # noqa: E402


def pair(directory: Path) -> tuple[EmbeddedRedis, EmbeddedRedis]:
    master = EmbeddedRedis(directory=directory / "master", durable=True).start()
    replica = EmbeddedRedis(directory=directory / "replica", durable=True, replica_of=master).start()
    client = redis.Redis.from_url(replica.url)
    while client.info("replication").get("master_link_status") != "up":
        time.sleep(0.05)
    client.close()
    return master, replica


def appends(url: str, min_replicas: int, threads: int, duration: float) -> tuple[float, float, float]:
    """(appends/s, median ms, p99 ms) of ``threads`` writers for ``duration`` s."""
    store = RedisStore.from_url(url).require_replicas(min_replicas, 1000)
    games = game_ids(threads * 2)
    for game in games:
        store.create(game, first_entry(game), None)
    latencies: list[list[float]] = [[] for _ in range(threads)]
    stop = time.monotonic() + duration

    def run(i: int) -> None:
        mine = games[i::threads]
        heads = {game: (1, store.read_log(game)[0]["hash"]) for game in mine}
        while time.monotonic() < stop:
            for game in mine:
                seq, prev = heads[game]
                entry = next_entry(game, seq, prev)
                began = time.perf_counter()
                store.append(game, entry, prev, signature=signature_of(game, seq))
                latencies[i].append(time.perf_counter() - began)
                heads[game] = (seq + 1, entry["hash"])

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    began = time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - began
    store.close()
    flat = sorted(x for per in latencies for x in per)
    return len(flat) / elapsed, statistics.median(flat) * 1000, flat[int(len(flat) * 0.99)] * 1000


def app_moves(url: str, work_url: str, var: Path, min_replicas: int, duration: float) -> float:
    """Signed moves per second posted through the app in process (one thread), with ``min_replicas``."""
    from svc_helpers import Http, accept_all, create_game, move_envelope, signed

    from referee.app import create_app

    app = create_app({"REDIS_URL": url, "REFEREE_WORK_REDIS_URL": work_url, "REFEREE_VAR": str(var),
                      "REFEREE_DISPATCH": "none", "REFEREE_MIN_REPLICAS": min_replicas, "TESTING": True,
                      "REFEREE_RATE_CREATE": "1000000 per minute", "REFEREE_RATE_CREATE_PER_KEY": "1000000 per minute"})
    http, rng = Http(app.test_client()), random.Random(min_replicas)
    moves, stop, game = 0, time.monotonic() + duration, None
    began = time.monotonic()
    while time.monotonic() < stop:
        if game is None:
            game = create_game(http, "fivetowers", 2)
            accept_all(http, game)
        _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        if legal["to_move"] is None:
            game = None
            continue
        seat = legal["to_move"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], rng.choice(legal["moves"]))
        status, receipt = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
        assert status in (200, 202), receipt
        moves += 1
    elapsed = time.monotonic() - began
    app.extensions["referee.store"].close()
    return moves / elapsed


def cost(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-fo-") as tmp:
        master, replica = pair(Path(tmp))
        work = EmbeddedRedis(directory=Path(tmp) / "work", durable=False).start()
        try:
            print(f"store appends, {args.threads} threads, {args.duration:.0f} s each, one durable master + one "
                  "durable replica (AOF, appendfsync always), loopback:")
            runs: dict[int, list[float]] = {0: [], 1: []}
            for n in (0, 1) * args.repeat:  # in turn: the machine's other load falls on both alike
                rate, median, p99 = appends(master.url, n, args.threads, args.duration)
                runs[n].append(rate)
                print(f"  MIN_REPLICAS={n} {rate:8.0f} appends/s   median {median:6.2f} ms   p99 {p99:6.2f} ms")
            zero, one = statistics.median(runs[0]), statistics.median(runs[1])
            print(f"  medians: {zero:.0f} and {one:.0f} appends/s; ratio 1 / 0: {one / zero:.2f}")
            print(f"signed moves through the app in process (one thread, {args.duration:.0f} s each):")
            app_moves(master.url, work.url, Path(tmp) / "var", 0, 2.0)  # warm-up: imports, first folds
            rates: dict[int, list[float]] = {0: [], 1: []}
            for n in (0, 1) * args.repeat:
                rates[n].append(app_moves(master.url, work.url, Path(tmp) / "var", n, args.duration))
            zero, one = statistics.median(rates[0]), statistics.median(rates[1])
            print(f"  MIN_REPLICAS=0 {' / '.join(f'{r:.0f}' for r in rates[0])} moves/s   MIN_REPLICAS=1 "
                  f"{' / '.join(f'{r:.0f}' for r in rates[1])} moves/s   ratio of the medians {one / zero:.2f}")
        finally:
            work.stop()
            replica.stop()
            master.stop()


def report(label: str, writers: Writers, store: RedisStore, games: list[str], *, promoted: float, before: int) -> int:
    lost, broken = writers.lost(store)
    print(f"  {label}: promoted after {promoted:.2f} s; the dead master's games went "
          f"{writers.longest_gap(games):.2f} s without an acknowledged write; acknowledged {before} before the "
          f"kill, {writers.total()} in all; "
          f"503s {writers.unavailable} ({writers.not_replicated} not confirmed by a replica); lost {len(lost)}; "
          f"broken logs {len(broken)}; problems {len(writers.problems)}")
    return len(lost) + len(broken) + len(writers.problems)


def cluster_round(args: argparse.Namespace) -> int:
    with EmbeddedCluster(masters=3, durable=True, replicas=1, node_timeout_ms=1000) as cluster:
        store = RedisStore(connect(cluster.url, socket_timeout=5)).require_replicas(1, 1000)
        games = game_ids(24)
        writers = Writers(store, games, threads=args.threads).create().start()
        time.sleep(args.duration)
        victim = cluster.master_of(log_key(games[0]))
        on_victim = [g for g in games if cluster.master_of(log_key(g)) is victim]
        before, killed = writers.total(), time.monotonic()
        victim.kill()
        while True:
            try:
                if cluster.master_of(log_key(games[0])) is not victim:
                    break
            except RuntimeError:
                pass
            time.sleep(0.02)
        promoted = time.monotonic() - killed
        victim.start()
        time.sleep(args.duration)
        writers.stop()
        failures = report("cluster", writers, store, on_victim, promoted=promoted, before=before)
        store.close()
        return failures


def single_round(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-fo-") as tmp:
        master, replica = pair(Path(tmp))
        try:
            store = RedisStore.from_url(master.url, socket_timeout=5).require_replicas(1, 1000)
            writers = Writers(store, game_ids(8), threads=args.threads).create().start()
            time.sleep(args.duration)
            before, killed = writers.total(), time.monotonic()
            master.kill()
            client = redis.Redis.from_url(replica.url)
            client.execute_command("REPLICAOF", "NO", "ONE")
            client.close()
            writers.store = RedisStore.from_url(replica.url, socket_timeout=5).require_replicas(1, 1000)
            promoted = time.monotonic() - killed
            master.replica_of = replica
            master.start()
            time.sleep(args.duration)
            writers.stop()
            failures = report("single", writers, writers.store, writers.games, promoted=promoted, before=before)
            store.close()
            writers.store.close()
            return failures
        finally:
            replica.stop()
            master.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each setting in the cost part, in turn")
    parser.add_argument("--parts", default="cost,cluster,single")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    failures = 0
    if "cost" in parts:
        cost(args)
    for name, run in (("cluster", cluster_round), ("single", single_round)):
        if name in parts:
            print(f"{name} fail-over, REFEREE_MIN_REPLICAS=1, {args.threads} writer threads, {args.rounds} rounds:")
            for _ in range(args.rounds):
                failures += run(args)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
