"""The deadline scheduler's passes on the real Redis (workers/deadlines.py): the games of a pass are looked
at by several threads at once, and each timeout is stamped with the time it is written, not the time the
pass began (found by tests/bench/bench_timecontrol.py: with one thread a pass over many due games spent
most of its time waiting for fsync'd writes, and the timeouts at the end of a batch were stamped seconds
before they were written)."""

from __future__ import annotations

import threading

from freezegun import freeze_time
from svc_helpers import accept_all, create_game

from referee.timecontrol import parse_ms
from workers.deadlines import DeadlineScheduler

T0 = "2026-11-21T10:00:00Z"
PER_HOUR = {"kind": "per_move", "per_move": 3600, "reminders": []}
DEADLINE = parse_ms("2026-11-21T11:00:00.000Z")


def due_games(http, count):
    with freeze_time(T0):
        games = [create_game(http, "fivetowers", 2, options={"time_control": PER_HOUR}) for _ in range(count)]
        for game in games:
            accept_all(http, game)
    return games


def timeouts(store, game):
    return [e for e in store.read_log(game.game_id) if e["type"] == "timeout"]


class MeetingScheduler(DeadlineScheduler):
    """Each look waits (at most 5 s) until ``meet`` looks are under way at once: a pass that looks at one
    game after another breaks the barrier."""

    def __init__(self, store, meet, **kwargs):
        super().__init__(store, **kwargs)
        self.barrier = threading.Barrier(meet, timeout=5)
        self.threads_seen: set[str] = set()

    def handle(self, game_id, now):
        self.threads_seen.add(threading.current_thread().name)
        self.barrier.wait()
        return super().handle(game_id, now)


def test_a_pass_looks_at_the_due_games_of_a_batch_in_several_threads_and_fires_each_once(http, store):
    games = due_games(http, 4)
    scheduler = MeetingScheduler(store, meet=4, threads=4)
    done = scheduler.run_once(now=DEADLINE + 1000)
    assert sorted(d["game"] for d in done) == sorted(g.game_id for g in games)
    assert all(d["appended"][0] == "timeout" for d in done)
    assert len(scheduler.threads_seen) == 4
    for game in games:
        assert len(timeouts(store, game)) == 1
    assert DeadlineScheduler(store).run_once(now=DEADLINE + 2000) == []  # the next deadlines are an hour away


def test_one_thread_still_looks_at_one_game_after_another(http, store):
    games = due_games(http, 2)
    scheduler = MeetingScheduler(store, meet=1, threads=1)
    done = scheduler.run_once(now=DEADLINE + 1000)
    assert len(done) == 2 and len(scheduler.threads_seen) == 1
    assert all(len(timeouts(store, game)) == 1 for game in games)


def test_each_timeout_is_stamped_with_the_server_time_of_its_own_look(http, store):
    """The clock moves 1 s at each reading: the timeouts of one pass must not share the pass's first reading."""
    games = due_games(http, 3)
    with freeze_time("2026-11-21T11:00:00.000Z", auto_tick_seconds=1):
        done = DeadlineScheduler(store, threads=1).run_once()
    assert len(done) == 3
    stamps = [parse_ms(timeouts(store, game)[0]["at"]) for game in games]
    assert len(set(stamps)) == 3, stamps
    assert all(stamp > DEADLINE for stamp in stamps)
