"""Benchmark of correspondence time control (issue 10, "Measure"), run by hand; prints figures, asserts
nothing about speed.

    .venv/bin/python tests/bench/bench_timecontrol.py [--games 100000] [--quick] [--phases ...]

Everything runs on this machine, on 127.0.0.1 only, laid out as ``referee serve`` does: an embedded
durable Redis for the logs and the timers (AOF, appendfsync always) and an embedded non-persisted one for
the RQ queue and the projections. Phases (``--phases``, comma-separated; all by default):

``memory``  ``--games`` active 5 Towers games (2 seats, recorded mode, ``per_move`` 3 days, default
            reminders), each with a pending deadline. Their logs (``created`` + ``started``) are sealed by
            the service's own :func:`~referee.games_service.entries.make_entry` exactly as
            ``GameService.create_game`` builds them (checked: a sample is folded by the real
            ``LogReplayer``, every verdict ok, and its ``next_alarm`` is the timer we set) and written by the
            store's own Lua scripts (``CREATE_GAME``, ``APPEND_ENTRY``, ``RELEASE_PENDING``) and index,
            pipelined 500 games per round trip by 2 writer processes; then the timers (``ZADD
            referee:timers``) alone. ``INFO memory used_memory`` before/after each step, divided by N. The
            replay worker's share (projection, verdicts, its events stream on the work Redis; the outbox
            events and their ids on the log Redis) is measured on a sample of games caught up by the real
            ``Projector.catch_up`` and divided by the sample's size.
``pass``    ``--due`` games (default min(N, 2000)) whose deadline has passed, among the N pending timers:
            one ``DeadlineScheduler.run_once()`` (production dispatcher: ``ReplayDispatch``, the ready list)
            writes every timeout, with 1 thread and then with 4 (the default); timeouts per second and the
            scheduler's CPU per timeout. Then another ``--due`` games with 2 scheduler processes running
            ``run_once()`` at once: timeouts per second, and how many looks were wasted (both looked).
``lag``     ``--lag-games`` games whose deadlines are spread evenly over ``--lag-window`` seconds while a
            scheduler thread runs (``--every``, default 0.25 s as ``REFEREE_DEADLINES_EVERY``): the lag
            between each deadline and its ``timeout`` entry's ``at`` (what the log says), and between the
            deadline and the moment the timeout's outbox event was written (Redis's own clock: the event's
            stream id), p50/p99/max. Goal p99 <= 1 s.
``accept``  signed moves through the Flask app (test client, in process; production dispatch: the ready list) into games
            with ``{"kind": "none"}`` vs ``{"kind": "per_move", "per_move": 86400}``, alternating short
            rounds so both see the same machine load; rate and ratio.
``rq``      the alternative: RQ's own scheduler (``Queue.enqueue_at``, RQ 3.0), on a fresh durable Redis
            like the timers' one: memory per scheduled job for ``--rq-jobs`` deadlines (default min(N,
            20000)), the rate at which ``RQScheduler.enqueue_scheduled_jobs()`` moves due jobs to the queue,
            and the rate of moving one game's deadline (RQ: ``enqueue_at`` again with the same job id;
            sorted set: one ``ZADD``), one round trip each, as the web process would after a move.

``--quick`` is a smoke run (5000 games and smaller phases). Bounded: a full run takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_service import FlaskClient, LocalGame, alternate  # noqa: E402

from referee.clock import now_ms  # noqa: E402
from referee.games import ruleset  # noqa: E402
from referee.games_service.entries import make_entry  # noqa: E402
from referee.notify.events import next_alarm  # noqa: E402
from referee.protocol.logchain import GENESIS  # noqa: E402
from referee.protocol.signing import generate_key, public_key_b64  # noqa: E402
from referee.replay import LogReplayer  # noqa: E402
from referee.running.embedded_redis import EmbeddedRedis  # noqa: E402
from referee.store import RedisStore, keys  # noqa: E402
from referee.store.redis_store import stored_json  # noqa: E402
from referee.timecontrol import format_ms, parse_ms, resolve  # noqa: E402

RULESET = "fivetowers"
PLAYERS = 2
DAY = 86400
PENDING_TC = {"kind": "per_move", "per_move": 3 * DAY}  # reminders default: 24 h and 1 h before
LAG_TC = {"kind": "per_move", "per_move": 60}  # reminders (24 h, 1 h) fall before the decision: none
CHUNK = 500


# -- games written straight into the store ----------------------------------------------------------------
class GameMaker:
    """Sealed ``created`` + ``started`` entries of recorded-mode games, as ``GameService.create_game`` makes
    them (same payload fields, same :func:`make_entry`), with a chosen ``at`` for both."""

    def __init__(self, seed: int):
        rules = ruleset(RULESET)
        self.rules = rules
        self.deck = [card["id"] for card in rules.components()["cards"] if card["min_players"] <= PLAYERS]
        self.keys = [public_key_b64(generate_key()) for _ in range(16)]
        self.rng = random.Random(seed)

    def entries(self, game_id: str, started_ms: int, time_control: dict[str, Any]) -> list[dict[str, Any]]:
        deck = list(self.deck)
        self.rng.shuffle(deck)
        seats = [{"name": f"p{i}", "key": self.rng.choice(self.keys)} for i in range(PLAYERS)]
        payload = {"game": game_id, "ruleset": {"name": self.rules.name, "version": self.rules.version},
                   "seats": seats, "options": {"time_control": time_control},
                   "time_control": resolve(time_control), "organiser": None,
                   "mode": "recorded", "deck": deck}
        at = format_ms(started_ms)
        created = make_entry("created", 0, GENESIS, at=at, **payload)
        return [created, make_entry("started", 1, created["hash"], at=at)]


def expected_alarm(started_ms: int, time_control: dict[str, Any], now: int) -> int:
    """``next_alarm`` of a just-started per_move game, by hand (checked against the real fold on a sample)."""
    spec = resolve(time_control)
    deadline = started_ms + spec["per_move"] * 1000
    later = [deadline - before * 1000 for before in spec["reminders"]
             if started_ms < deadline - before * 1000 and deadline - before * 1000 > now]
    return min([*later, deadline])


def write_games(url: str, ids: list[str], starts: list[int], time_control: dict[str, Any], seed: int, *,
                timers: bool) -> None:
    """Write the logs of ``ids`` (and, with ``timers``, their timers) through the store's own scripts."""
    store = RedisStore.from_url(url)
    maker = GameMaker(seed)
    now = now_ms()
    for begin in range(0, len(ids), CHUNK):
        pipe = store.redis.pipeline(transaction=False)
        for game_id, started_ms in zip(ids[begin:begin + CHUNK], starts[begin:begin + CHUNK], strict=True):
            created, started = maker.entries(game_id, started_ms, time_control)
            k = keys.game_keys(game_id)
            store._create(keys=[k.log, k.head, k.secret, k.pending],
                          args=[stored_json(created), created["hash"], "", now], client=pipe)
            pipe.zadd(keys.GAMES_INDEX, {game_id: now})
            store._append(keys=[k.log, k.head, k.sigs, k.pending],
                          args=[1, created["hash"], stored_json(started), started["hash"], "", now], client=pipe)
            # the replay worker lets go of the pending flag once it has folded the game
            store._release_pending(keys=[k.log, k.pending], args=[2, now], client=pipe)
            if timers:
                pipe.zadd(keys.TIMERS, {game_id: expected_alarm(started_ms, time_control, now)})
        for reply in pipe.execute():
            if isinstance(reply, list) and reply and reply[0] not in (b"ok", "ok"):
                raise RuntimeError(f"a write was refused: {reply}")
    store.close()


def write_parallel(url: str, ids: list[str], starts: list[int], time_control: dict[str, Any], *,
                   timers: bool, processes: int = 2) -> float:
    start = time.perf_counter()
    share = (len(ids) + processes - 1) // processes
    jobs = [multiprocessing.Process(target=write_games, args=(url, ids[i * share:(i + 1) * share],
                                                              starts[i * share:(i + 1) * share], time_control,
                                                              1000 + i),
                                    kwargs={"timers": timers})
            for i in range(processes)]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
        if job.exitcode:
            raise RuntimeError("a writer process failed")
    return time.perf_counter() - start


def write_timers(url: str, ids: list[str], starts: list[int], time_control: dict[str, Any]) -> None:
    store = RedisStore.from_url(url)
    now = now_ms()
    for begin in range(0, len(ids), 5000):
        store.redis.zadd(keys.TIMERS, {game_id: expected_alarm(started_ms, time_control, now)
                                       for game_id, started_ms in zip(ids[begin:begin + 5000],
                                                                      starts[begin:begin + 5000], strict=True)})
    store.close()


def check_sample(store: RedisStore, ids: list[str], starts: list[int], time_control: dict[str, Any]) -> None:
    """The written games fold cleanly with the real replayer, and the timer is the one ``next_alarm`` gives."""
    now = now_ms()
    for game_id, started_ms in list(zip(ids, starts, strict=True))[:: max(1, len(ids) // 50)]:
        replayer = LogReplayer(server_seed=store.read_secret(game_id))
        for entry in store.read_log(game_id):
            verdict = replayer.feed(entry)
            assert verdict.status in ("ok", "applied"), verdict
        assert replayer.status == "active", replayer.status
        assert next_alarm(replayer, now) == expected_alarm(started_ms, time_control, now), game_id
        score = store.redis.zscore(keys.TIMERS, game_id)
        assert score is None or int(score) == expected_alarm(started_ms, time_control, now)


def used(connection: Any) -> int:
    return int(connection.info("memory")["used_memory"])


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")


# -- phase: memory ----------------------------------------------------------------------------------------
def phase_memory(store: RedisStore, url: str, n: int, sample: int, out: dict[str, Any]) -> tuple[list[str], list[int]]:
    from workers.projector import Projector

    now = now_ms()
    rng = random.Random(7)
    ids = [f"g_pend{i:014d}" for i in range(n)]
    starts = [now - rng.randrange(0, 2 * DAY * 1000) for _ in range(n)]  # decisions begun in the last 2 days
    log0, work0 = used(store.redis), used(store.work)
    took = write_parallel(url, ids, starts, PENDING_TC, timers=False)
    log1 = used(store.redis)
    write_timers(url, ids, starts, PENDING_TC)
    log2 = used(store.redis)
    check_sample(store, ids, starts, PENDING_TC)
    timers_bytes = int(store.redis.memory_usage(keys.TIMERS, samples=0) or 0)
    k = keys.game_keys(ids[0])
    per_key = {"log stream": store.redis.memory_usage(k.log, samples=0),
               "head": store.redis.memory_usage(k.head, samples=0)}
    # the replay worker's share, on a sample: projection + verdicts + events (work), outbox (log)
    chosen = ids[:: max(1, n // sample)][:sample]
    projector = Projector(store, cache_size=16)
    log3, work3 = used(store.redis), used(store.work)
    t = time.perf_counter()
    for game_id in chosen:
        projector.catch_up(game_id)
    catch_up_s = time.perf_counter() - t
    log4, work4 = used(store.redis), used(store.work)
    per_key.update({"projection": store.work.memory_usage(k.projection, samples=0),
                    "verdicts": store.work.memory_usage(k.verdicts, samples=0),
                    "events stream": store.work.memory_usage(k.events, samples=0)})
    outbox_events = store.redis.xlen(keys.OUTBOX)
    seen = store.redis.memory_usage(keys.OUTBOX_SEEN.format(event=f"{ids[0]}:1:turn"), samples=0)
    res = {
        "games": n, "write_s": took,
        "log_redis_logs_per_game": (log1 - log0) / n,
        "timers_per_game_used_memory": (log2 - log1) / n,
        "timers_per_game_memory_usage": timers_bytes / n,
        "worker_sample": len(chosen), "catch_up_per_s": len(chosen) / catch_up_s,
        "outbox_per_game": (log4 - log3) / len(chosen), "outbox_events_per_game": outbox_events / len(chosen),
        "work_per_game": (work4 - work3) / len(chosen),
        "per_key_bytes": {**per_key, "outbox seen id": seen},
    }
    res["total_per_game"] = (res["log_redis_logs_per_game"] + res["timers_per_game_used_memory"]
                             + res["outbox_per_game"] + res["work_per_game"])
    res["work_before_sample"] = work0
    out["memory"] = res
    print(f"{n} active games written in {took:.1f} s ({n / took:.0f} games/s, 2 writer processes)")
    print(f"  log Redis, logs (created + started, head, index; no pending flag): "
          f"{res['log_redis_logs_per_game']:.0f} B/game")
    print(f"  log Redis, timer (one member of {keys.TIMERS}): {res['timers_per_game_used_memory']:.0f} B/game "
          f"by used_memory, {res['timers_per_game_memory_usage']:.0f} B/game by MEMORY USAGE of the set")
    print(f"  replay worker's share, from {len(chosen)} games caught up by Projector.catch_up "
          f"({res['catch_up_per_s']:.0f}/s): work Redis (projection, verdicts, events) {res['work_per_game']:.0f} "
          f"B/game; log Redis outbox ({res['outbox_events_per_game']:.1f} events + their ids) "
          f"{res['outbox_per_game']:.0f} B/game")
    print(f"  total per active game: {res['total_per_game']:.0f} B  (= {res['total_per_game'] * n / 2**20:.0f} MiB "
          f"for {n} games)")
    print("  MEMORY USAGE of one game's keys (B): " + ", ".join(f"{name} {v}" for name, v in per_key.items())
          + f", outbox seen id {seen}")
    return ids, starts


# -- phase: scheduler passes ------------------------------------------------------------------------------
def make_due(url: str, prefix: str, count: int) -> list[str]:
    now = now_ms()
    rng = random.Random(hash(prefix) & 0xFFFF)
    ids = [f"g_{prefix}{i:012d}" for i in range(count)]
    starts = [now - PENDING_TC["per_move"] * 1000 - rng.randrange(1000, 600_000) for _ in ids]  # late by 1-600 s
    write_parallel(url, ids, starts, PENDING_TC, timers=True)
    return ids


def _scheduler_process(url: str, work_url: str, go: Any, results: Any) -> None:
    from workers.deadlines import DeadlineScheduler
    from workers.queue import ReplayDispatch, replay_queue

    store = RedisStore.from_url(url, work_url=work_url)
    scheduler = DeadlineScheduler(store, ReplayDispatch(replay_queue(store.work, "bench"), store))
    go.wait()
    start, cpu = time.perf_counter(), time.process_time()
    done = scheduler.run_once()
    results.put((time.perf_counter() - start, len(done), sum("timeout" in d["appended"] for d in done),
                 time.process_time() - cpu))
    store.close()


def count_timeouts(store: RedisStore, ids: list[str]) -> tuple[int, int]:
    """(games whose entry 2 is a timeout, games with more than one timeout)."""
    one = more = 0
    for begin in range(0, len(ids), 1000):
        pipe = store.redis.pipeline(transaction=False)
        for game_id in ids[begin:begin + 1000]:
            pipe.xrange(keys.game_keys(game_id).log)
        for rows in pipe.execute():
            kinds = [json.loads(fields[b"e"])["type"] for _id, fields in rows]
            one += kinds[2:3] == ["timeout"]
            more += kinds.count("timeout") > 1
    return one, more


def phase_pass(store: RedisStore, url: str, work_url: str, due: int, out: dict[str, Any]) -> None:
    from workers.deadlines import DeadlineScheduler
    from workers.queue import ReplayDispatch, replay_queue

    res: dict[str, Any] = {"due": due}
    for threads in (1, 4):
        pending = store.redis.zcard(keys.TIMERS)
        ids = make_due(url, f"due{threads}t", due)
        scheduler = DeadlineScheduler(store, ReplayDispatch(replay_queue(store.work, "bench"), store), threads=threads)
        start, cpu = time.perf_counter(), time.process_time()
        done = scheduler.run_once()
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        fired = sum("timeout" in d["appended"] for d in done)
        one, more = count_timeouts(store, ids)
        res[f"{threads}t"] = {"timers_in_set": pending + due, "s": took, "fired": fired, "per_s": fired / took,
                              "cpu_ms_per_timeout": 1000 * cpu / max(fired, 1), "logged": one, "doubled": more,
                              "load": os.getloadavg()[0]}
        print(f"one DeadlineScheduler.run_once(), {threads} thread(s), over {due} due games among {pending + due} "
              f"timers: {took:.1f} s, {fired / took:.0f} timeouts/s, {1000 * cpu / max(fired, 1):.1f} ms CPU of "
              f"the scheduler per timeout ({one} logged, {more} games with two; load {os.getloadavg()[0]:.1f})")

    ids = make_due(url, "duetwo", due)
    go, results = multiprocessing.Event(), multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_scheduler_process, args=(url, work_url, go, results)) for _ in range(2)]
    for proc in procs:
        proc.start()
    time.sleep(1.0)  # both connected and waiting
    start = time.perf_counter()
    go.set()
    outcome = [results.get(timeout=600) for _ in procs]
    took = time.perf_counter() - start
    for proc in procs:
        proc.join(30)
    fired = sum(o[2] for o in outcome)
    looked = sum(o[1] for o in outcome)
    cpu = sum(o[3] for o in outcome)
    one, more = count_timeouts(store, ids)
    res["2p"] = {"s": took, "fired": fired, "per_s": fired / took, "looked": looked, "logged": one, "doubled": more,
                 "cpu_ms_per_timeout": 1000 * cpu / max(fired, 1), "load": os.getloadavg()[0]}
    print(f"two scheduler processes (4 threads each), run_once() each, over {due} due games: {took:.1f} s, "
          f"{fired / took:.0f} timeouts/s, {1000 * cpu / max(fired, 1):.1f} ms CPU per timeout ({one} logged, {more} "
          f"games with two; the two looked at {looked} games in all: {looked - due} looks were wasted)")
    out["pass"] = res


# -- phase: lag -------------------------------------------------------------------------------------------
def phase_lag(store: RedisStore, url: str, count: int, window: float, *, every: float, out: dict[str, Any]) -> None:
    from workers.deadlines import DeadlineScheduler
    from workers.queue import ReplayDispatch, replay_queue

    lead = 5.0 + count / 2000  # time to write the games before the first deadline
    first = now_ms() + int(lead * 1000)
    deadlines = [first + int(i * window * 1000 / count) for i in range(count)]
    ids = [f"g_lag{i:013d}" for i in range(count)]
    starts = [d - LAG_TC["per_move"] * 1000 for d in deadlines]
    last_event = store.redis.xrevrange(keys.OUTBOX, count=1)
    since = last_event[0][0].decode() if last_event else "0-0"
    write_parallel(url, ids, starts, LAG_TC, timers=True)
    if now_ms() > first:
        print(f"  (writing the games took longer than {lead:.0f} s: the first deadlines passed before the scheduler "
              "started)")
    scheduler = DeadlineScheduler(store, ReplayDispatch(replay_queue(store.work, "bench"), store), every=every).start()
    end = time.monotonic() + (deadlines[-1] - now_ms()) / 1000 + 5.0
    wanted = set(ids)
    by_game: dict[str, int] = {}
    cursor = since
    while time.monotonic() < end + 30 and len(by_game) < count:
        time.sleep(0.5)
        for event_id, fields in store.redis.xrange(keys.OUTBOX, min=f"({cursor}", max="+"):
            cursor = event_id.decode()
            event = json.loads(fields[b"e"])
            if event["type"] == "timeout" and event["game"] in wanted:
                by_game[event["game"]] = int(cursor.split("-")[0])
        if time.monotonic() > end and len(by_game) >= count:
            break
    scheduler.stop()
    logged, written = [], []
    for begin in range(0, count, 1000):
        pipe = store.redis.pipeline(transaction=False)
        for game_id in ids[begin:begin + 1000]:
            pipe.xrange(keys.game_keys(game_id).log, min="0-3", max="0-3")
        for game_id, deadline, rows in zip(ids[begin:begin + 1000], deadlines[begin:begin + 1000], pipe.execute(),
                                           strict=True):
            if not rows:
                continue
            entry = json.loads(rows[0][1][b"e"])
            if entry["type"] != "timeout":
                continue
            assert parse_ms(entry["deadline"]) == deadline
            logged.append((parse_ms(entry["at"]) - deadline) / 1000)
            if game_id in by_game:
                written.append((by_game[game_id] - deadline) / 1000)
    res = {"games": count, "window_s": window, "rate_per_s": count / window, "every_s": every,
           "timeouts": len(logged), "at_p50": pct(logged, 0.5), "at_p99": pct(logged, 0.99),
           "at_max": max(logged) if logged else float("nan"), "written_p50": pct(written, 0.5),
           "written_p99": pct(written, 0.99), "written_max": max(written) if written else float("nan")}
    out["lag"] = res
    print(f"lag: {count} deadlines over {window:.0f} s ({count / window:.0f}/s), scheduler every {every} s: "
          f"{len(logged)} timeouts")
    print(f"  deadline -> timeout's `at`:        p50 {res['at_p50']:.3f} s, p99 {res['at_p99']:.3f} s, "
          f"max {res['at_max']:.3f} s (goal p99 <= 1 s)")
    print(f"  deadline -> its outbox event written: p50 {res['written_p50']:.3f} s, p99 {res['written_p99']:.3f} s, "
          f"max {res['written_max']:.3f} s")


# -- phase: accept path, clock on vs off -----------------------------------------------------------------


def phase_accept(url: str, work_url: str, tmp: str, seconds: float, out: dict[str, Any]) -> None:
    from referee.app import create_app

    # the benchmark creates its games from one address and unsigned: lift the creation limits (issue 17)
    os.environ.setdefault("REFEREE_RATE_CREATE", "1000000 per minute")
    os.environ.setdefault("REFEREE_RATE_CREATE_PER_KEY", "1000000 per minute")
    app = create_app({"REDIS_URL": url, "REFEREE_WORK_REDIS_URL": work_url, "REFEREE_VAR": str(Path(tmp) / "var"),
                      "REFEREE_QUEUE": "bench-accept"})
    kinds = {"none": {"kind": "none"}, "per_move": {"kind": "per_move", "per_move": DAY}}
    rng = random.Random(5)
    clients = {name: FlaskClient(app, tc) for name, tc in kinds.items()}
    games = {name: [LocalGame(client, rng) for _ in range(8)] for name, client in clients.items()}
    rounds = 6
    measured = alternate(clients, games, rng, seconds, rounds)
    counts = {name: int(row["count"]) for name, row in measured.items()}
    spent = {name: row["spent"] for name, row in measured.items()}
    cpu = {name: row["cpu"] for name, row in measured.items()}
    refused = {name: int(row["refused"]) for name, row in measured.items()}
    rates = {name: counts[name] / spent[name] for name in kinds}
    cpu_ms = {name: 1000 * cpu[name] / max(counts[name], 1) for name in kinds}
    res = {"rates": rates, "counts": counts, "refused": refused, "ratio_on_off": rates["per_move"] / rates["none"],
           "cpu_ms_per_move": cpu_ms, "cpu_ratio_on_off": cpu_ms["per_move"] / cpu_ms["none"]}
    out["accept"] = res
    store = app.extensions["referee.store"]
    longest = max((g for pool in games.values() for g in pool), key=lambda g: g.seq)
    log_bytes = int(store.redis.memory_usage(keys.game_keys(longest.game_id).log, samples=0) or 0)
    moves = [e for e in store.read_log(longest.game_id) if e["type"] == "move"]
    res["longest_log"] = {"entries": longest.seq, "memory_usage": log_bytes,
                          "move_json_bytes": statistics.fmean(len(stored_json(e)) for e in moves) if moves else 0}
    store.close()
    print(f"accept path (Flask test client, 1 thread, production dispatch), {rounds} alternating rounds, "
          f"{seconds:.0f} s per kind:")
    print(f"  clock off ({{kind: none}}):     {rates['none']:7.1f} moves/s ({counts['none']} accepted, "
          f"{refused['none']} refused), {cpu_ms['none']:.2f} ms CPU per move in this process")
    print(f"  clock on (per_move 1 day):    {rates['per_move']:7.1f} moves/s ({counts['per_move']} accepted, "
          f"{refused['per_move']} refused), {cpu_ms['per_move']:.2f} ms CPU per move")
    print(f"  ratio on/off: {res['ratio_on_off']:.2f} in moves/s; CPU per move on/off {res['cpu_ratio_on_off']:.2f}")
    print(f"  the longest log played: {longest.seq} entries, MEMORY USAGE {log_bytes} B; a move entry is "
          f"{res['longest_log']['move_json_bytes']:.0f} B of JSON")


# -- phase: RQ's scheduler -------------------------------------------------------------------------------
def phase_rq(tmp: str, jobs: int, moves: int, out: dict[str, Any]) -> None:
    import redis as redis_lib
    from rq import Queue
    from rq.registry import ScheduledJobRegistry
    from rq.scheduler import RQScheduler
    from rq.serializers import JSONSerializer

    server = EmbeddedRedis(directory=Path(tmp) / "redis-rq", durable=True).start()
    try:
        connection = redis_lib.Redis.from_url(server.url)
        queue = Queue("deadlines", connection=connection, serializer=JSONSerializer)
        base = datetime.now(UTC) + timedelta(days=3)
        before = used(connection)
        start = time.perf_counter()
        for begin in range(0, jobs, CHUNK):
            pipe = connection.pipeline(transaction=False)
            for i in range(begin, min(jobs, begin + CHUNK)):
                game_id = f"g_pend{i:014d}"
                queue.enqueue_at(base + timedelta(seconds=i % DAY), "workers.deadlines.fire", game_id,
                                 job_id=f"deadline-{game_id}", result_ttl=0, failure_ttl=7 * DAY,
                                 description=f"deadline {game_id}", pipeline=pipe)
            pipe.execute()
        took = time.perf_counter() - start
        per_job = (used(connection) - before) / jobs
        registry = ScheduledJobRegistry(queue=queue)
        assert registry.count == jobs, registry.count
        print(f"RQ enqueue_at: {jobs} scheduled jobs: {per_job:.0f} B/job by used_memory (job hash + member of "
              f"{registry.key}); scheduled at {jobs / took:.0f}/s pipelined")
        # the rate at which RQ's scheduler moves due jobs to the queue
        due = min(jobs, 20000)
        past = datetime.now(UTC) - timedelta(seconds=5)
        for begin in range(0, due, CHUNK):
            pipe = connection.pipeline(transaction=False)
            for i in range(begin, min(due, begin + CHUNK)):
                queue.enqueue_at(past, "workers.deadlines.fire", f"g_due{i:014d}", job_id=f"deadline-due-{i}",
                                 result_ttl=0, pipeline=pipe)
            pipe.execute()
        scheduler = RQScheduler([queue], connection=connection, serializer=JSONSerializer)
        scheduler.prepare_registries([queue.name])
        start, calls = time.perf_counter(), 0
        while queue.count < due and calls < 1000:
            scheduler.enqueue_scheduled_jobs()
            calls += 1
        moved_s = time.perf_counter() - start
        print(f"RQScheduler.enqueue_scheduled_jobs(): {queue.count} due jobs moved in {moved_s:.2f} s "
              f"({queue.count / moved_s:.0f} jobs/s back to back, {calls} calls of at most 1000; RQ's scheduler "
              f"makes one call per interval, default 1 s, so at most 1000 jobs/s per queue; scores are whole "
              f"seconds)")
        # moving one game's deadline (after each move): RQ vs the sorted set, one round trip each
        start = time.perf_counter()
        for i in range(moves):
            game_id = f"g_pend{i % jobs:014d}"
            queue.enqueue_at(base + timedelta(seconds=DAY + i), "workers.deadlines.fire", game_id,
                             job_id=f"deadline-{game_id}", result_ttl=0, failure_ttl=7 * DAY,
                             description=f"deadline {game_id}")
        rq_move = moves / (time.perf_counter() - start)
        start = time.perf_counter()
        for i in range(moves):
            connection.zadd(keys.TIMERS, {f"g_pend{i % jobs:014d}": now_ms() + DAY * 1000 + i})
        zadd_move = moves / (time.perf_counter() - start)
        print(f"moving a deadline, one round trip each on the durable Redis: RQ enqueue_at (same job id) "
              f"{rq_move:.0f}/s, sorted set ZADD {zadd_move:.0f}/s")
        out["rq"] = {"jobs": jobs, "bytes_per_job": per_job, "schedule_per_s": jobs / took, "due": due,
                     "moved_per_s": queue.count / moved_s, "calls": calls, "reschedule_rq_per_s": rq_move,
                     "reschedule_zadd_per_s": zadd_move}
        connection.close()
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100_000, help="active games with pending deadlines")
    parser.add_argument("--quick", action="store_true", help="smoke run: 5000 games, smaller phases")
    parser.add_argument("--due", type=int, default=None, help="due games per scheduler pass (min(N, 2000))")
    parser.add_argument("--lag-games", type=int, default=None, help="deadlines spread over the window (2000)")
    parser.add_argument("--lag-window", type=float, default=None, help="seconds (30)")
    parser.add_argument("--every", type=float, default=0.25, help="scheduler poll (REFEREE_DEADLINES_EVERY)")
    parser.add_argument("--accept-seconds", type=float, default=None, help="seconds of moves per kind (12)")
    parser.add_argument("--rq-jobs", type=int, default=None, help="RQ scheduled jobs (min(N, 20000))")
    parser.add_argument("--phases", default="memory,pass,lag,accept,rq")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if args.quick:
        args.games = 5000 if args.games == 100_000 else args.games
    n = args.games
    due = args.due or min(n, 500 if args.quick else 2000)
    lag_games = args.lag_games or (300 if args.quick else 2000)
    lag_window = args.lag_window or (10.0 if args.quick else 30.0)
    accept_seconds = args.accept_seconds or (3.0 if args.quick else 12.0)
    rq_jobs = args.rq_jobs or min(n, 20000)
    phases = set(args.phases.split(","))
    out: dict[str, Any] = {"args": vars(args)}
    with tempfile.TemporaryDirectory(prefix="referee-bench-tc-") as tmp:
        log = EmbeddedRedis(directory=Path(tmp) / "redis", durable=True).start()
        work = EmbeddedRedis(directory=Path(tmp) / "redis-work", durable=False).start()
        try:
            store = RedisStore.from_url(log.url, work_url=work.url)
            version = store.redis.info("server")["redis_version"]
            out["machine"] = {"cpus": os.cpu_count(), "load_at_start": os.getloadavg()[0], "redis": version}
            print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; Redis {version}: "
                  f"logs and timers on {log.url} (AOF, appendfsync always), queue and projections on {work.url}")
            if "memory" in phases:
                phase_memory(store, log.url, n, min(n, 1000), out)
            if "pass" in phases:
                phase_pass(store, log.url, work.url, due, out)
            if "lag" in phases:
                phase_lag(store, log.url, lag_games, lag_window, every=args.every, out=out)
            if "accept" in phases:
                phase_accept(log.url, work.url, tmp, accept_seconds, out)
            if "rq" in phases:
                phase_rq(tmp, rq_jobs, 2000 if not args.quick else 500, out)
            out["machine"]["load_at_end"] = os.getloadavg()[0]
            print(f"load average at the end: {os.getloadavg()[0]:.1f}")
            store.close()
        finally:
            log.stop()
            work.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
