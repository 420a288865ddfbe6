"""Benchmark of the referee service, run by hand; prints figures, asserts nothing about speed.

    .venv/bin/python tests/bench/bench_service.py [--duration 10] [--clients 4] [--rate 100] [--games 50]

Everything runs on this machine, on 127.0.0.1 only, laid out as ``referee serve`` does: an embedded
durable Redis for the logs (AOF, appendfsync always) and an embedded non-persisted one for the RQ
queue and the projections, gunicorn with 2 workers (the worker class of ``referee/running/gunicorn_conf.py``, gevent;
``--worker-class gthread`` for the old layout), 2 replay workers
(``referee worker``), and the load generator (client processes; they share the CPU with the server).

Measured in one run:

1. the rate of ``POST /_bench/noop`` (a Flask POST that does nothing; enabled by REFEREE_BENCH_NOOP),
   ``--clients`` processes posting a move-sized body back to back for ``--duration`` seconds;
2. accepted submissions per second: the same clients posting signed, legal moves (``POST /games/{id}/moves``,
   202) into recorded-mode 5 Towers games (so a client can compute its next legal move locally), back to
   back for ``--duration`` seconds;
3. submit → verdict latency: ``--rate`` submissions per second spread over ``--games`` concurrent games
   (open loop, one every 1/rate s), each ``POST …/moves?wait=5``, which answers once a replay worker's
   projection holds the verdict; p50/p90/p99/max over ``--latency-duration`` seconds.

Each phase also prints the CPU each process group spent and the Redis commands each server ran, per move.
With ``--phases noop,accept,latency,curves,cluster`` it then runs, after this layout is stopped, the
flat-cost curves (``bench_scale.py``: against the log's length and the number of games stored, memory
per game, RQ's per-job overhead beside the ready list's) and the same accept ratio on a local 3-master
Redis Cluster beside one Redis (``bench_cluster.py``). Profiles and figures: ``docs/performance.md``.

Bounded: every phase stops at its deadline; all processes are stopped at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from referee.games import ruleset  # noqa: E402
from referee.games.randomness import recorded_game_seed  # noqa: E402
from referee.protocol.signing import MOVE_CTX, generate_key, public_key_b64, sign  # noqa: E402
from referee.running.embedded_redis import EmbeddedRedis, free_port  # noqa: E402

RULESET = "fivetowers"
PLAYERS = 2


class Client:
    """A keep-alive HTTP/1.1 connection to the server."""

    def __init__(self, port: int):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
                response = self.conn.getresponse()
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
            except (http.client.HTTPException, ConnectionError, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                if attempt:
                    raise
        raise AssertionError("unreachable")


class FlaskClient:
    """:class:`Client`'s interface over Flask's test client (in process); games it creates get
    ``time_control`` when one is given."""

    def __init__(self, app: Any, time_control: dict[str, Any] | None = None):
        self.client = app.test_client()
        self.time_control = time_control

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        if self.time_control is not None and path == "/games" and method == "POST":
            body = {**body, "options": {"time_control": self.time_control}}
        response = self.client.open(path, method=method, json=body)
        return response.status_code, response.get_json(silent=True)


class LocalGame:
    """A recorded-mode game created on the server, mirrored by a local engine to choose legal moves."""

    def __init__(self, client: Client, rng: random.Random):
        rules = ruleset(RULESET)
        self.keys = [generate_key() for _ in range(PLAYERS)]
        deck = [card["id"] for card in rules.components()["cards"] if card["min_players"] <= PLAYERS]
        rng.shuffle(deck)
        body = {"ruleset": RULESET, "deck": deck,
                "seats": [{"name": f"p{i}", "key": public_key_b64(k)} for i, k in enumerate(self.keys)]}
        status, created = client.request("POST", "/games", body)
        assert status == 201, created
        self.game_id, self.seq, self.head = created["game"], created["seq"], created["head"]
        self.engine = rules.new_game(PLAYERS, {}, deck=deck, seed=recorded_game_seed(self.game_id))
        self.rng = rng
        self.busy = False

    def next_submission(self) -> tuple[int, dict[str, Any], dict[str, Any]]:
        seat = self.engine.to_move()
        move = self.rng.choice(self.engine.legal_moves())
        envelope = {"v": 1, "ctx": MOVE_CTX, "game": self.game_id, "seat": seat, "seq": self.seq, "prev": self.head,
                    "move": move}
        return seat, move, {"envelope": envelope, "sig": sign(self.keys[seat], envelope)}

    def applied(self, seat: int, move: dict[str, Any], receipt: dict[str, Any]) -> None:
        self.engine.play(seat, move)
        self.seq, self.head = receipt["seq"], receipt["head"]

    def over(self) -> bool:
        return self.engine.is_over()


def alternate(clients: dict[str, Any], pools: dict[str, list[LocalGame]], rng: random.Random, seconds: float,
              rounds: int) -> dict[str, dict[str, float]]:
    """In process: closed-loop accepts into each named pool of games in turn, ``rounds`` short rounds each
    (their order alternating, round 0 a warm-up of all), so that every variant sees the same machine load.
    Per name: ``count`` accepted, ``refused``, ``spent`` wall seconds and ``cpu`` seconds of this process."""
    out = {name: {"count": 0, "refused": 0, "spent": 0.0, "cpu": 0.0} for name in clients}
    names = list(clients)
    for round_ in range(rounds + 1):
        for name in names if round_ % 2 else list(reversed(names)):
            client, pool = clients[name], pools[name]
            stop = time.perf_counter() + (0.5 if round_ == 0 else seconds / rounds)
            start, started_cpu, i, done, refused = time.perf_counter(), time.process_time(), 0, 0, 0
            while time.perf_counter() < stop:
                game = pool[i % len(pool)]
                i += 1
                seat, move, submission = game.next_submission()
                status, receipt = client.request("POST", f"/games/{game.game_id}/moves", submission)
                if status == 202:
                    done += 1
                    game.applied(seat, move, receipt)
                    if game.over():
                        pool[pool.index(game)] = LocalGame(client, rng)
                else:
                    refused += 1
            if round_:
                row = out[name]
                row["count"] += done
                row["refused"] += refused
                row["spent"] += time.perf_counter() - start
                row["cpu"] += time.process_time() - started_cpu
    return out


# -- phases 1 and 2: closed-loop throughput, one process per client ---------------------------------------
def _noop_client(port: int, seconds: float, results: Any) -> None:
    client = Client(port)
    body = {"envelope": {"v": 1, "ctx": MOVE_CTX, "game": "g_" + "x" * 16, "seat": 0, "seq": 17, "prev": "0" * 64,
                         "move": {"type": "bid", "amount": 3}}, "sig": "A" * 86}
    deadline, count, errors = time.monotonic() + seconds, 0, 0
    while time.monotonic() < deadline:
        try:
            status, _ = client.request("POST", "/_bench/noop", body)
        except OSError:
            errors += 1
            continue
        count += status == 202
    results.put((count, errors))


def _submit_client(port: int, seconds: float, seed: int, games: int, results: Any) -> None:
    client = Client(port)
    rng = random.Random(seed)
    live = [LocalGame(client, rng) for _ in range(games)]
    deadline, count, refused, errors = time.monotonic() + seconds, 0, 0, 0
    i = 0
    while time.monotonic() < deadline:
        game = live[i % len(live)]
        i += 1
        seat, move, submission = game.next_submission()
        try:
            status, receipt = client.request("POST", f"/games/{game.game_id}/moves", submission)
            if status == 202:
                count += 1
                game.applied(seat, move, receipt)
                if game.over():
                    live[live.index(game)] = LocalGame(client, rng)
            else:
                refused += 1
                if refused <= 3:
                    print(f"refused: {status} {json.dumps(receipt)[:300]}", file=sys.stderr)
        except (OSError, AssertionError):
            errors += 1
            live[live.index(game)] = LocalGame(client, rng)  # its position is unknown now: start another
    results.put((count, refused + errors))


def closed_loop(target: Any, port: int, clients: int, seconds: float, extra: list[Any]) -> list[Any]:
    results: Any = multiprocessing.Queue()
    processes = [multiprocessing.Process(target=target, args=(port, seconds, *[e(i) for e in extra], results))
                 for i in range(clients)]
    for process in processes:
        process.start()
    outcome = [results.get(timeout=seconds + 120) for _ in processes]
    for process in processes:
        process.join(30)
    return outcome


# -- phase 3: open-loop latency -------------------------------------------------------------------------------
def latency(port: int, rate: float, games: int, seconds: float, wait: float = 5.0) -> dict[str, Any]:
    setup = Client(port)
    rng = random.Random(99)
    pool = [LocalGame(setup, rng) for _ in range(games)]
    local = threading.local()
    lock = threading.Lock()
    samples: list[float] = []
    outcomes = {"verdict": 0, "timeout": 0, "refused": 0, "skipped": 0}

    def submit(game: LocalGame) -> None:
        client = getattr(local, "client", None) or Client(port)
        local.client = client
        seat, move, submission = game.next_submission()
        start = time.perf_counter()
        status, receipt = client.request("POST", f"/games/{game.game_id}/moves?wait={wait}", submission)
        elapsed = time.perf_counter() - start
        with lock:
            if status == 200:
                samples.append(elapsed)
                outcomes["verdict"] += 1
            elif status == 202:
                outcomes["timeout"] += 1
            else:
                outcomes["refused"] += 1
        if status in (200, 202):
            game.applied(seat, move, receipt)
        if game.over():
            replacement = LocalGame(client, rng)
            with lock:
                pool[pool.index(game)] = replacement
        game.busy = False

    total = int(rate * seconds)
    start = time.monotonic()
    cursor = 0
    with ThreadPoolExecutor(max_workers=32) as executor:
        for i in range(total):
            due = start + i / rate
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            with lock:
                candidates = [pool[(cursor + k) % games] for k in range(games)]
                game = next((g for g in candidates if not g.busy), None)
                cursor += 1
                if game is None:
                    outcomes["skipped"] += 1
                    continue
                game.busy = True
            executor.submit(submit, game)
    achieved = (outcomes["verdict"] + outcomes["timeout"]) / (time.monotonic() - start)
    samples.sort()

    def pct(p: float) -> float:
        return samples[min(len(samples) - 1, int(p * len(samples)))] * 1000 if samples else float("nan")

    return {"offered_per_s": rate, "achieved_per_s": achieved, "samples": len(samples), **outcomes,
            "p50_ms": pct(0.50), "p90_ms": pct(0.90), "p99_ms": pct(0.99),
            "max_ms": samples[-1] * 1000 if samples else float("nan"),
            "mean_ms": statistics.fmean(samples) * 1000 if samples else float("nan")}


# -- orchestration --------------------------------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    """utime + stime of a process and its reaped children, from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _children_of(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class CommandMeter:
    """Redis commands (``INFO commandstats``) each server ran, per unit of work, between two samples: what
    a phase cost in round trips' worth of commands (a pipeline's commands count one each)."""

    def __init__(self, servers: dict[str, str]):
        import redis

        self.clients = {name: redis.Redis.from_url(url) for name, url in servers.items()}
        self.start = self.sample()

    def sample(self) -> dict[str, dict[str, int]]:
        out = {}
        for name, client in self.clients.items():
            stats = client.info("commandstats")
            out[name] = {key.removeprefix("cmdstat_"): value["calls"] for key, value in stats.items()}
        return out

    def report(self, count: int, label: str) -> str:
        end = self.sample()
        parts = []
        for name in end:
            delta = {cmd: calls - self.start[name].get(cmd, 0) for cmd, calls in end[name].items()}
            delta = {cmd: n for cmd, n in delta.items() if n > 0 and cmd not in ("info", "ping")}
            top = sorted(delta.items(), key=lambda kv: -kv[1])[:6]
            parts.append(f"{name} {sum(delta.values()) / max(count, 1):.2f} ("
                         + ", ".join(f"{cmd} {n / max(count, 1):.2f}" for cmd, n in top) + ")")
        return f"  Redis commands per {label}: " + "; ".join(parts)


class CpuMeter:
    """CPU seconds used by each component (web, replay workers, the two Redis servers, this process)."""

    def __init__(self, groups: dict[str, list[int]]):
        self.groups = groups
        self.start = self.sample()

    def sample(self) -> dict[str, float]:
        out = {}
        for name, pids in self.groups.items():
            every = list(pids)
            for pid in pids:
                every += _children_of(pid)
            out[name] = sum(_cpu_seconds(pid) for pid in set(every))
        out["load generator"] = sum(os.times()[:4])  # this process and its reaped client processes
        return out

    def per(self, count: int) -> dict[str, float]:
        """CPU ms per one of ``count`` operations since the meter started, by component."""
        end = self.sample()
        return {name: 1000 * (end[name] - self.start[name]) / max(count, 1) for name in end}

    def report(self, count: int, label: str, per: dict[str, float] | None = None) -> str:
        per = per if per is not None else self.per(count)
        parts = ", ".join(f"{name} {value:.2f}" for name, value in per.items())
        return f"  CPU ms per {label}: {parts}"


def stop_children(children: list[Any], sig: int = 15, grace: float = 15.0) -> None:
    """Signal every child (SIGTERM by default) at once, then wait for each, killing one that outstays ``grace``."""
    for child in children:
        child.send_signal(sig)
    for child in children:
        try:
            child.wait(grace)
        except subprocess.TimeoutExpired:
            child.kill()


def drain(log_url: str, work_url: str, timeout: float = 60.0) -> None:
    """Wait until the replay workers' projections have caught up with every log (the backlog of phase 2)."""
    from referee.store import RedisStore

    store = RedisStore.from_url(log_url, work_url=work_url)
    start = time.monotonic()
    while store.lagging_games() and time.monotonic() - start < timeout:
        time.sleep(0.2)
    print(f"replay workers caught up with every log {time.monotonic() - start:.1f} s after the phase ended")
    store.close()


def wait_http(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if Client(port).request("GET", "/health")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the web server did not start")


def _observe_env(observe: str, tmp: Path) -> dict[str, str]:
    """``--observe off``: no metrics (``REFEREE_METRICS=0``), text logs; ``on``: what ``referee serve`` runs with
    ``REFEREE_LOG_FORMAT=json``: metrics in prometheus_client's multi-process mode over every process, JSON
    logs and gunicorn's access log (into the processes' log file)."""
    if observe == "off":
        return {"REFEREE_METRICS": "0", "REFEREE_LOG_FORMAT": "text"}
    directory = tmp / "metrics"
    directory.mkdir(exist_ok=True)
    return {"REFEREE_METRICS": "1", "REFEREE_LOG_FORMAT": "json", "PROMETHEUS_MULTIPROC_DIR": str(directory)}


def run_layout(args: Any, phases: set[str], observe: str) -> dict[str, Any]:
    """One layout (Redis, gunicorn, replay workers), the phases run against it, then stopped."""

    children: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as tmp:
        redis = EmbeddedRedis(directory=Path(tmp) / "redis", durable=True).start()
        work = EmbeddedRedis(directory=Path(tmp) / "redis-work", durable=False).start()
        try:
            port = free_port()
            env = {**os.environ, "REDIS_URL": redis.url, "REFEREE_WORK_REDIS_URL": work.url,
                   "REFEREE_VAR": str(Path(tmp) / "var"),
                   "REFEREE_BENCH_NOOP": "1", "REFEREE_QUEUE": "bench", "PYTHONPATH": str(REPO),
                   # the load generator creates games from one address and unsigned: lift the creation limits
                   "REFEREE_RATE_CREATE": "1000000 per minute", "REFEREE_RATE_CREATE_PER_KEY": "1000000 per minute",
                   **_observe_env(observe, Path(tmp))}
            log = open(Path(tmp) / "processes.log", "wb")
            children.append(subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "--config", "python:referee.running.gunicorn_conf", "--workers", "2",
                 *(["--worker-class", args.worker_class] if args.worker_class else []),
                 "--bind", f"127.0.0.1:{port}", "--log-level", "warning", "referee.app:create_app()"],
                env=env, cwd=REPO, stdout=log, stderr=log))
            for i in range(args.replay_workers):
                children.append(subprocess.Popen(
                    [sys.executable, "-m", "referee.cli", "worker", "--queue", "bench", "--name", f"bench-{i}"],
                    env={**env, "REFEREE_RECONCILE_EVERY": "5"}, cwd=REPO, stdout=log, stderr=log))
            wait_http(port)
            print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; logs on Redis "
                  f"{redis.public_url} (AOF, appendfsync always), queue and projections on {work.public_url}; "
                  f"gunicorn 2 {args.worker_class or 'gevent'} workers; "
                  f"{args.replay_workers} replay workers; {args.clients} client processes; metrics and JSON logs "
                  f"{observe}")
            noop_rate = accept_rate = float("nan")
            result: dict[str, Any] = {}
            summary: dict[str, Any] = {}
            groups = {"web": [children[0].pid], "replay workers": [c.pid for c in children[1:]],
                      "log Redis": [redis.process.pid], "work Redis": [work.process.pid]}
            if "noop" in phases:
                closed_loop(_noop_client, port, args.clients, 2.0, [])  # warm-up
                meter = CpuMeter(groups)
                noop_outcome = closed_loop(_noop_client, port, args.clients, args.duration, [])
                noop = sum(count for count, _errors in noop_outcome)
                noop_rate = noop / args.duration
                print(f"no-op POST:              {noop_rate:8.1f} requests/s  ({noop} in {args.duration:.0f} s, "
                      f"{sum(errors for _count, errors in noop_outcome)} errors)")
                print(meter.report(noop, "request"))
            if "accept" in phases:
                closed_loop(_submit_client, port, args.clients, 2.0,
                            [lambda i: 1000 + i, lambda i: 2])  # warm-up: engines loaded in every web worker
                meter = CpuMeter(groups)
                commands = CommandMeter({"log Redis": redis.url, "work Redis": work.url})
                outcome = closed_loop(_submit_client, port, args.clients, args.duration,
                                      [lambda i: i, lambda i: args.games_per_client])
                accepted = sum(count for count, _failed in outcome)
                refused = sum(failed for _count, failed in outcome)
                accept_rate = accepted / args.duration
                share = 100 * accept_rate / noop_rate
                print(f"accepted submissions:    {accept_rate:8.1f} submissions/s  ({accepted} in "
                      f"{args.duration:.0f} s, {refused} refused or failed) = {share:.0f}% of the no-op rate "
                      f"(target >= 50%)")
                drain(redis.url, work.url)
                per = meter.per(accepted)
                print(meter.report(accepted, "accepted submission (incl. replaying it)", per))
                server = {name: round(ms, 4) for name, ms in per.items() if name != "load generator"}
                summary["server_cpu_ms_per_accept"] = server  # per process group; side-by-side.sh sums them
                summary["server_cpu_ms_per_accept_total"] = round(sum(server.values()), 4)
                summary["client_cpu_ms_per_accept"] = round(per["load generator"], 4)
                print(commands.report(accepted, "accepted submission"))
            if "latency" in phases:
                meter = CpuMeter(groups)
                commands = CommandMeter({"log Redis": redis.url, "work Redis": work.url})
                result = latency(port, args.rate, args.games, args.latency_duration)
                print(f"submit -> verdict at {result['offered_per_s']:.0f}/s offered "
                      f"({result['achieved_per_s']:.1f}/s achieved) over {args.games} games: "
                      f"p50 {result['p50_ms']:.1f} ms, p90 {result['p90_ms']:.1f} ms, "
                      f"p99 {result['p99_ms']:.1f} ms, max {result['max_ms']:.1f} ms (target p99 < 50 ms); "
                      f"{result['samples']} verdicts, {result['timeout']} waits timed out, "
                      f"{result['refused']} refused, {result['skipped']} skipped")
                per = meter.per(result["verdict"] + result["timeout"])
                print(meter.report(result["verdict"] + result["timeout"], "submission (latency phase)", per))
                print(commands.report(result["verdict"] + result["timeout"], "submission (latency phase)"))
                summary["latency_server_cpu_ms_per_submission"] = {
                    name: round(ms, 4) for name, ms in per.items() if name != "load generator"}
        finally:
            stop_children(children)
            redis.stop()
            work.stop()
    return {"noop_per_s": noop_rate, "accepted_per_s": accept_rate, "accept_vs_noop": accept_rate / noop_rate,
            **summary, **({"latency": result} if result else {})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of each throughput phase")
    parser.add_argument("--latency-duration", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=4, help="load-generating processes")
    parser.add_argument("--games-per-client", type=int, default=12)
    parser.add_argument("--rate", type=float, default=100.0, help="submissions per second in the latency phase")
    parser.add_argument("--games", type=int, default=50, help="concurrent games in the latency phase")
    parser.add_argument("--phases", default="noop,accept,latency,memory",
                        help="which phases to run (comma-separated): noop, accept, latency, memory (Redis bytes per "
                             "live game, by bench_memory.py), and curves, cluster (the flat-cost curves and the "
                             "cluster's accept ratio, by bench_scale.py and bench_cluster.py)")
    parser.add_argument("--memory-games", type=int, default=40, help="model games of the memory phase")
    parser.add_argument("--worker-class", default=None,
                        help="gunicorn worker class (default: referee/running/gunicorn_conf.py's, gevent, "
                             "as `referee serve`)")
    parser.add_argument("--replay-workers", type=int, default=2, help="`referee worker` processes")
    parser.add_argument("--observe", choices=["off", "on", "both"], default="off",
                        help="metrics and JSON logs off (REFEREE_METRICS=0), on (multi-process metrics, "
                             "REFEREE_LOG_FORMAT=json, access log), or both: the layout twice, and the ratio")
    args = parser.parse_args()
    phases = set(args.phases.split(","))
    results = {}
    for observe in (["off", "on"] if args.observe == "both" else [args.observe]):
        results[observe] = run_layout(args, phases, observe)
    if len(results) == 2 and "accept" in phases:
        off, on = results["off"]["accepted_per_s"], results["on"]["accepted_per_s"]
        print(f"accept path, metrics and JSON logs on vs off: {on:.1f} / {off:.1f} submissions/s = {on / off:.3f} "
              f"(target >= 0.95); no-op POST {results['on']['noop_per_s']:.1f} / {results['off']['noop_per_s']:.1f} "
              f"= {results['on']['noop_per_s'] / results['off']['noop_per_s']:.3f}")
    summary: dict[str, Any] = dict(results[args.observe if args.observe != "both" else "off"])
    if len(results) == 2:
        summary["observed"] = results["on"]
    if "memory" in phases:  # after the layout is stopped: its own two redis-servers (tests/bench/bench_memory.py)
        print("\n-- Redis bytes per live game (tests/bench/bench_memory.py: the docs/scale.md model game, MEMORY USAGE "
              "of every key)", flush=True)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_memory import run as memory_run

        found = memory_run(args.memory_games)
        summary.update({"redis_bytes_per_live_game": round(found["redis_bytes_per_live_game"]),
                        "redis_fixed_bytes_per_game": round(found["fixed_bytes"]),
                        "redis_bytes_per_entry": round(found["bytes_per_entry"])})
    # one JSON object, the last thing printed before the other benchmarks below: every figure of this run as a
    # number (../shared/peer-bgio/side-by-side.sh reads it)
    print(json.dumps(summary, indent=1), flush=True)
    # issue 13's other figures, by the benchmarks that measure them (after this layout is stopped, so that
    # they do not share the machine with it)
    if "curves" in phases:
        print("\n-- the flat-cost curves (tests/bench/bench_scale.py --phases length,stored,rq)", flush=True)
        subprocess.run([sys.executable, str(REPO / "tests/bench/bench_scale.py"), "--phases", "length,stored,rq"],
                       check=False)
    if "cluster" in phases:
        print("\n-- the same accept ratio on a local 3-master Redis Cluster beside one Redis "
              "(tests/bench/bench_cluster.py)", flush=True)
        subprocess.run([sys.executable, str(REPO / "tests/bench/bench_cluster.py"), "--duration", str(args.duration),
                        "--clients", str(args.clients)], check=False)


if __name__ == "__main__":
    main()
