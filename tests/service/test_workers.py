"""Replay workers: one notification per burst, a failed catch-up handed to RQ and retried by a real ``rq
worker`` subprocess, a worker SIGKILLed in the middle of a catch-up, the reconciler, the referee's own
entries appended by the worker, and ``referee rebuild``."""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest
import redis as redis_lib
from click.testing import CliRunner
from ports import free_port
from svc_helpers import Http, accept_all, create_game, move_envelope, play_random, signed, wait_until

from referee.cli import main as cli
from referee.games import ruleset
from referee.games_service import fold, projection_of
from referee.games_service.entries import make_entry
from referee.notify.events import next_alarm
from referee.protocol.signing import generate_key, public_key_b64
from referee.store import RedisStore, keys
from workers import jobs
from workers.projector import DELAY_ENV, Projector
from workers.queue import REPLAY_JOB, enqueue_replay, ready_count, ready_key, replay_queue
from workers.reconciler import reconcile_once


def assert_projection_is_the_fold(store, game_id):
    stored = store.read_projection(game_id, with_verdicts=True)
    fresh = fold(store, game_id)
    expected = projection_of(fresh)
    assert stored is not None
    for name in ("seq", "head", "status", "to_move", "view", "result", "accepted", "last_verdict"):
        assert stored[name] == expected[name], name
    assert stored["verdicts"] == [v.to_dict() for v in fresh.verdicts]
    return stored


def test_a_burst_of_appends_costs_one_notification(http, app, store, run_worker):
    queue = app.extensions["referee.queue"]
    game = create_game(http, "fivetowers", 3)
    accept_all(http, game)
    rng = random.Random(1)
    for _ in range(6):
        _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat = legal["to_move"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], rng.choice(legal["moves"]))
        assert http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))[0] == 202
    assert store.tip(game.game_id).seq == 11  # created, 3 accepted, started, 6 moves
    assert ready_count(store, queue) == 1  # the creation raised the pending flag; nothing ran since
    assert queue.count == 0  # and no RQ job: RQ is for retries
    run_worker()
    assert ready_count(store, queue) == 0
    assert_projection_is_the_fold(store, game.game_id)
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat = legal["to_move"]
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][0])
    assert http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))[0] == 202
    assert ready_count(store, queue) == 1
    run_worker()
    assert store.read_projection(game.game_id)["seq"] == 12


def test_a_failed_catch_up_is_handed_to_rq(app, store):
    """A catch-up that raises (here: a game id with no log) is not lost in the loop: it becomes an RQ job
    (``replay_game``, with retries), and the loop goes on with the next game."""
    queue = app.extensions["referee.queue"]
    http = Http(app.test_client())
    game = create_game(http, "towerup", 2)
    store.ready_redis.lpush(ready_key(queue), "g_" + "n" * 16)
    loop = jobs.replay_loop(queue, Projector(store))
    assert loop.drain() == 2
    assert (loop.done, loop.failed) == (1, 1)
    assert store.read_projection(game.game_id)["seq"] == 1
    [job] = queue.jobs
    assert job.func_name == REPLAY_JOB and job.args == ["g_" + "n" * 16] and job.retries_left == 3


def test_real_rq_worker_subprocess_runs_a_retry(make_app, spawn_worker, redis_url):
    """A replay handed to RQ is run by the stock ``rq worker`` command (the allow-listing SimpleWorker, JSON
    serializer, scheduler), and ``?wait`` returns its verdicts."""
    app = make_app(REFEREE_DISPATCH="none")  # nothing reaches a replay loop: only the RQ job below replays
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    queue = app.extensions.get("referee.queue") or replay_queue(store.queue_redis, app.config["REFEREE_QUEUE"])
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    play_random(http, game, random.Random(7), max_moves=12)
    rq = str(Path(sys.executable).parent / "rq")
    spawn_worker([rq, "worker", "--url", redis_url, "--serializer", "rq.serializers.JSONSerializer",
                  "--worker-class", "workers.allowlist.RefereeSimpleWorker", "--with-scheduler",
                  app.config["REFEREE_QUEUE"]])
    length = store.tip(game.game_id).seq
    enqueue_replay(queue, game.game_id, f"retry-{game.game_id}-test")
    wait_until(lambda: (store.read_projection(game.game_id) or {}).get("seq") == length, timeout=30)
    assert_projection_is_the_fold(store, game.game_id)


def test_a_real_worker_serves_wait(http, app, store, spawn_worker):
    """``referee worker`` (its replay loop) answers ``?wait`` with its verdicts, move after move."""
    spawn_worker()
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    rng = random.Random(7)
    verdicts = []
    for _ in range(20):
        status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat = legal["to_move"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], rng.choice(legal["moves"]))
        status, receipt = http.post(f"/games/{game.game_id}/moves?wait=20", signed(game.keys[seat], envelope))
        assert status == 200, receipt
        verdicts.append(receipt["verdict"])
    assert all(v["status"] == "applied" and v["type"] == "move" for v in verdicts)
    assert [v["seq"] for v in verdicts] == list(range(4, 24))  # after created, 2 accepted, started
    assert_projection_is_the_fold(store, game.game_id)


def test_worker_killed_mid_job_loses_nothing(app, http, store, spawn_worker):
    """A whole game is logged with no worker running; a worker that folds slowly (test-only delay) is
    SIGKILLed in the middle of the job; a new worker finishes the projection from the log."""
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    play_random(http, game, random.Random(3))
    length = store.tip(game.game_id).seq
    assert store.read_projection(game.game_id) is None and store.pending_since(game.game_id) is not None

    queue = app.extensions["referee.queue"]
    assert ready_count(store, queue) == 1
    slow = spawn_worker(env={DELAY_ENV: "5"})  # 5 s an entry: it cannot finish before it is killed
    wait_until(lambda: ready_count(store, queue) == 0, timeout=30)  # the slow worker has taken the game
    time.sleep(0.5)  # into the job (its first entry)
    assert slow.poll() is None
    os.kill(slow.pid, signal.SIGKILL)
    slow.wait(10)
    assert slow.returncode == -signal.SIGKILL
    projection = store.read_projection(game.game_id)
    assert projection is None or projection["seq"] < length  # killed before it could finish

    assert store.pending_since(game.game_id) is not None  # the dead job still holds the game's flag
    spawn_worker()  # a fresh worker: its reconciler finds the lagging game, its flag stale, and replays it
    wait_until(lambda: (store.read_projection(game.game_id) or {}).get("seq") == length, timeout=30)
    stored = assert_projection_is_the_fold(store, game.game_id)
    assert stored["status"] == "finished"


def test_reconciler_queues_games_whose_job_was_lost(make_app, run_worker):
    """An append whose enqueue never happened (dispatch off: as if the web process died right after
    appending) is picked up by the reconciler once its pending flag is stale."""
    app = make_app(REFEREE_DISPATCH="none")
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = create_game(http, "towerup", 2)
    accept_all(http, game)
    queue = replay_queue(store.redis, "reconcile-test")
    assert reconcile_once(store, queue, stale_after=60) == []  # the flag is fresh: a job may be on its way
    assert reconcile_once(store, queue, stale_after=0) == [game.game_id]
    assert reconcile_once(store, queue, stale_after=60) == []  # it just marked the game pending again
    assert ready_count(store, queue) == 1
    run_worker(queue)
    assert_projection_is_the_fold(store, game.game_id)
    assert reconcile_once(store, queue, stale_after=0) == []


def test_reads_fold_in_the_web_process_while_the_projection_lags(make_app):
    app = make_app(REFEREE_DISPATCH="none")
    http = Http(app.test_client())
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    status, state = http.get(f"/games/{game.game_id}")
    assert status == 200 and state["projection"] == "web" and state["status"] == "active"
    assert state["seq"] == 4 and state["state"]["phase"] == "bidding"


def test_worker_appends_the_referees_entries_the_web_process_did_not(make_app):
    """The web process died after logging the last acceptance but before ``started``, and after the
    final move but before ``revealed``: the replay job appends both."""
    app = make_app(REFEREE_DISPATCH="none")
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    entries = store.read_log(game.game_id)
    assert entries[-1]["type"] == "started"
    # rebuild the same situation by hand in a second game: acceptances appended straight to the store
    other = create_game(http, "fivetowers", 2, keys=game.keys)
    head = store.tip(other.game_id).head
    for seat, key in enumerate(other.keys):
        envelope = {"v": 1, "ctx": "referee/accept", "game": other.game_id, "seat": seat, "seq": 1 + seat,
                    "prev": head, "entropy": "A" * 43}
        entry = make_entry("accepted", 1 + seat, head, seat=seat, submission=signed(key, envelope))
        store.append(other.game_id, entry, head)
        head = entry["hash"]
    assert store.tip(other.game_id).seq == 3
    Projector(store).catch_up(other.game_id)
    assert store.read_log(other.game_id)[-1]["type"] == "started"
    assert store.read_projection(other.game_id)["status"] == "active"
    # play to one move before the end through the API, then log the final move behind the service's back
    replayer = fold(store, other.game_id)
    rng = random.Random(5)
    while True:
        game_copy = replayer.game.copy()
        seat = game_copy.to_move()
        move = rng.choice(game_copy.legal_moves())
        game_copy.play(seat, move)
        envelope = move_envelope(other.game_id, seat, replayer.seq, replayer.head, move)
        if game_copy.is_over():
            submission = signed(other.keys[seat], envelope)
            entry = make_entry("move", replayer.seq, replayer.head, seat=seat, submission=submission)
            store.append(other.game_id, entry, replayer.head)
            break
        assert http.post(f"/games/{other.game_id}/moves", signed(other.keys[seat], envelope))[0] == 202
        replayer = fold(store, other.game_id)
    assert store.read_log(other.game_id)[-1]["type"] == "move"
    Projector(store).catch_up(other.game_id)
    last = store.read_log(other.game_id)[-1]
    assert last["type"] == "revealed" and last["reason"] == "finished"
    assert store.read_projection(other.game_id)["status"] == "finished"
    assert_projection_is_the_fold(store, other.game_id)


def test_rebuild_from_scratch(make_app, redis_url, run_worker):
    app = make_app()
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    games = []
    for ruleset_name in ("fivetowers", "towerup"):
        game = create_game(http, ruleset_name, 2)
        accept_all(http, game)
        play_random(http, game, random.Random(ruleset_name), max_moves=15)
        games.append(game.game_id)
    run_worker(app.extensions["referee.queue"])
    before = {g: store.read_projection(g, with_verdicts=True) for g in games}
    # wreck the projections, and drop one game from the index
    for g in games:
        store.redis.delete(keys.game_keys(g).projection, keys.game_keys(g).verdicts)
    store.redis.zrem(keys.GAMES_INDEX, games[1])
    runner = CliRunner()
    result = runner.invoke(cli, ["rebuild", games[0], "--url", redis_url])
    assert result.exit_code == 0, result.output
    assert store.read_projection(games[1]) is None
    result = runner.invoke(cli, ["rebuild", "--all", "--url", redis_url])
    assert result.exit_code == 0, result.output
    assert games[1] in store.list_games()
    for g in games:
        after = store.read_projection(g, with_verdicts=True)
        # the projection rebuilt from the log equals the stored one (its long values kept deflated: issue 28)
        for name in ("seq", "head", "status", "to_move", "view", "verdicts", "result", "accepted", "clocks",
                     "decisions", "last_verdict", "blocked", "version_mismatch"):
            assert after[name] == before[g][name]
    result = runner.invoke(cli, ["rebuild", "g_nosuchgame", "--url", redis_url])
    assert result.exit_code == 1 and "no such game" in result.output


@pytest.mark.parametrize("worker_class", ["fork"])
def test_forking_worker_class_folds_from_scratch_correctly(make_app, spawn_worker, redis_url, worker_class):
    app = make_app()
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    spawn_worker([sys.executable, "-m", "referee.cli", "worker", "--url", redis_url, "--queue",
                  app.config["REFEREE_QUEUE"], "--worker-class", worker_class])
    game = create_game(http, "towerup", 2)
    accept_all(http, game)
    play_random(http, game, random.Random(11), max_moves=10, wait=20)
    length = store.tip(game.game_id).seq
    wait_until(lambda: (store.read_projection(game.game_id) or {}).get("seq") == length)
    assert_projection_is_the_fold(store, game.game_id)


def test_logs_and_derived_data_on_two_redis_servers(tmp_path, redis_url, spawn_worker):
    """The production layout of ``referee serve``: logs on the durable Redis, the queue and projections on
    a second, non-persisted one; losing the second loses nothing (the reconciler rebuilds)."""
    from referee.app import create_app
    from referee.running.embedded_redis import EmbeddedRedis

    with EmbeddedRedis(port=free_port(), durable=False) as work:
        app = create_app({"REDIS_URL": redis_url, "REFEREE_WORK_REDIS_URL": work.url, "REFEREE_QUEUE": "two",
                          "REFEREE_VAR": str(tmp_path / "var")})
        http, store = Http(app.test_client()), app.extensions["referee.store"]
        assert app.extensions["referee.queue"].connection.connection_pool.connection_kwargs["port"] == work.port
        spawn_worker([sys.executable, "-m", "referee.cli", "worker", "--url", redis_url, "--work-url", work.url,
                      "--queue", "two"])
        game = create_game(http, "fivetowers", 2)
        accept_all(http, game)
        play_random(http, game, random.Random(21), max_moves=6, wait=20)
        length = store.tip(game.game_id).seq
        wait_until(lambda: (store.read_projection(game.game_id) or {}).get("seq") == length)
        assert store.redis.exists(keys.game_keys(game.game_id).projection) == (redis_url == work.url)
        assert store.work.exists(keys.game_keys(game.game_id).projection)
        store.work.flushall()  # the work server lost everything: queue, projections
        assert store.read_projection(game.game_id) is None
        wait_until(lambda: (store.read_projection(game.game_id) or {}).get("seq") == length, timeout=30)
        assert_projection_is_the_fold(store, game.game_id)
        store.close()


def test_a_worker_that_appends_started_first_does_not_leave_the_web_behind(app, store, monkeypatch):
    """Race: the creation's notification reaches a replay worker, which appends ``started`` before the web
    process does; the web's append is then stale. Its answer and its cache must be the log's (active, seq
    2), not its own fold's (waiting, seq 1): else the first move would be refused as ``game/not_active``."""
    from referee.games_service import lifecycle as service_module

    real = service_module.append_system_entries
    worker = Projector(store)

    def worker_first(store_, game_id, replayer, secret, **kwargs):
        worker.catch_up(game_id)  # the worker folds `created` and appends `started` itself
        return real(store_, game_id, replayer, secret, **kwargs)

    monkeypatch.setattr(service_module, "append_system_entries", worker_first)
    http = Http(app.test_client())
    players = [generate_key(), generate_key()]
    deck = [card["id"] for card in ruleset("fivetowers").components()["cards"] if card["min_players"] <= 2]
    status, created = http.post("/games", {"ruleset": "fivetowers", "deck": deck, "seats": [
        {"name": f"p{i}", "key": public_key_b64(k)} for i, k in enumerate(players)]})  # recorded: starts at once
    assert status == 201, created
    game_id = created["game"]
    assert [e["type"] for e in store.read_log(game_id)] == ["created", "started"]
    assert (created["seq"], created["head"], created["status"]) == (2, store.tip(game_id).head, "active")
    monkeypatch.setattr(service_module, "append_system_entries", real)
    _status, legal = http.get(f"/games/{game_id}/legal-moves")
    envelope = move_envelope(game_id, legal["to_move"], created["seq"], created["head"], legal["moves"][0])
    status, receipt = http.post(f"/games/{game_id}/moves", signed(players[legal["to_move"]], envelope))
    assert status == 202, receipt


def test_a_batched_catch_up_ends_where_one_by_one_does(app, http, store):
    """``Projector.catch_up_many`` (the replay loop's batch): games folded here before are caught up in four
    round trips; a game never folded here, and one whose stored projection was lost, are handed back for the
    single path; in the end every projection is the fold and every pending flag is released."""
    games = []
    for i, ruleset_name in enumerate(("fivetowers", "towerup", "fivetowers", "towerup")):
        clock = {"options": {"time_control": {"kind": "per_move", "per_move": 3600}}} if i == 0 else {}
        game = create_game(http, ruleset_name, 2, **clock)
        accept_all(http, game)
        games.append(game)
    projector = Projector(store)
    for game in games:
        projector.catch_up(game.game_id)
    rng = random.Random(4)
    for game in games:
        play_random(http, game, rng, max_moves=3)
    stranger = create_game(http, "towerup", 2)  # never folded by this projector
    lost = games[1].game_id
    store.work.delete(keys.game_keys(lost).projection, keys.game_keys(lost).verdicts)  # the work Redis forgot it
    ids = [game.game_id for game in games] + [stranger.game_id]
    rest = projector.catch_up_many(ids)
    assert rest == [stranger.game_id, lost]
    for game_id in rest:
        projector.catch_up(game_id)
    for game_id in ids:
        assert_projection_is_the_fold(store, game_id)
        assert store.pending_since(game_id) is None
    clocked = games[0].game_id
    store.set_timer(clocked, None)
    play_random(http, games[0], rng, max_moves=1)
    store.set_timer(clocked, None)  # only the batch's own timer write can put it back
    assert projector.catch_up_many(ids) == ids[1:]  # the clocked game had news; the rest is checked one by one
    assert dict(store.due_timers(2**62)) == {clocked: next_alarm(fold(store, clocked), 0)}
    assert projector.catch_up_many(ids) == ids  # nothing new anywhere: each is checked by the single path


def test_a_reconciler_pass_costs_the_same_whatever_the_games_stored(make_app, redis_url):
    """Issue 13, flat costs: a pass reads the index of stale pending flags, not every game. Two passes with 3
    and with 60 caught-up games stored send the same commands (a scan of every game: 3 per game); the full
    pass (a work Redis that lost its projections) looks at every game and finds the one that lags."""
    from test_round_trips import CountingConnection

    app = make_app()
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    queue = app.extensions["referee.queue"]
    projector = Projector(store)
    costs = []
    for count in (3, 60):
        while len(store.list_games()) < count:
            game = create_game(http, "towerup", 2)
            projector.catch_up(game.game_id)
        reconcile_once(store, queue, stale_after=0, full=True)  # marks the derived data intact
        counting = RedisStore(redis_lib.Redis(connection_pool=redis_lib.ConnectionPool.from_url(
            redis_url, connection_class=CountingConnection)))
        counting.redis.ping()  # the connection's handshake is not the pass's
        CountingConnection.flushes = CountingConnection.commands = 0
        assert reconcile_once(counting, queue, stale_after=0) == []
        costs.append((CountingConnection.flushes, CountingConnection.commands))
        counting.close()
    assert costs[0] == costs[1] == (2, 2), costs  # is the marker there; the stale flags (none)
    lagging = store.list_games()[0]
    store.work.delete(keys.game_keys(lagging).projection, keys.WORK_MARKER)  # the work Redis lost data
    assert reconcile_once(store, queue, stale_after=0) == [lagging]
    assert store.work_intact()


def test_a_stale_flag_on_a_game_that_does_not_lag_is_released(make_app):
    """A worker died after storing the projection and before releasing the flag: the reconciler releases it
    (and pushes nothing), so the index does not keep it for ever."""
    app = make_app()
    http, store, queue = Http(app.test_client()), app.extensions["referee.store"], app.extensions["referee.queue"]
    game = create_game(http, "towerup", 2)
    Projector(store).catch_up(game.game_id, release=False)
    assert store.pending_since(game.game_id) is not None
    reconcile_once(store, queue, stale_after=0, full=True)
    assert store.stale_pending(2**62) == [game.game_id]
    assert reconcile_once(store, queue, stale_after=0) == []
    assert store.pending_since(game.game_id) is None and store.stale_pending(2**62) == []
