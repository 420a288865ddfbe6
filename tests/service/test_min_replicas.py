"""``REFEREE_MIN_REPLICAS`` (CONTRACT sections 6 and 13): what a write answers when its replicas do not confirm
it, what becomes of the entry, and which wait command is sent. Real Redis servers; the fail-over itself is
``test_failover.py``."""

from __future__ import annotations

import time

import pytest
import redis as redis_lib
from failover_load import first_entry, game_ids, next_entry
from ports import free_port
from svc_helpers import Http, accept_all, create_game, move_envelope, signed

from referee.config import ConfigError, load_config
from referee.running.embedded_redis import EmbeddedRedis
from referee.store import DuplicateSubmission, RedisStore
from referee.store.redis_store import REPLICA_TIMEOUT_MS, NotReplicated


def test_the_settings_default_to_no_wait_and_are_checked():
    config = load_config(environ={})
    assert config["REFEREE_MIN_REPLICAS"] == 0 and config["REFEREE_REPLICA_TIMEOUT_MS"] == REPLICA_TIMEOUT_MS == 1000
    config = load_config(environ={"REFEREE_MIN_REPLICAS": "1", "REFEREE_REPLICA_TIMEOUT_MS": "250"})
    assert config["REFEREE_MIN_REPLICAS"] == 1 and config["REFEREE_REPLICA_TIMEOUT_MS"] == 250
    with pytest.raises(ConfigError, match="REFEREE_MIN_REPLICAS"):
        load_config(environ={"REFEREE_MIN_REPLICAS": "-1"})
    with pytest.raises(ConfigError, match="REFEREE_REPLICA_TIMEOUT_MS"):
        load_config(environ={"REFEREE_REPLICA_TIMEOUT_MS": "0"})


class _FakeInfo:
    def __init__(self, version: str, aof: int):
        self.reply = {"redis_version": version, "aof_enabled": aof}

    def info(self):
        return self.reply


@pytest.mark.parametrize(("version", "aof", "expected"), [
    ("6.2.14", 1, ("WAIT", 1, 1000)),
    ("7.0.15", 1, ("WAIT", 1, 1000)),
    ("7.2.4", 1, ("WAITAOF", 1, 1, 1000)),
    ("7.4.0", 0, ("WAITAOF", 0, 1, 1000)),
])
def test_waitaof_where_redis_has_it(version, aof, expected):
    store = RedisStore(redis_lib.Redis()).require_replicas(1, 1000)  # never connects
    assert store._wait_command(_FakeInfo(version, aof), "node") == expected  # type: ignore[arg-type]
    assert store._replicas_of(1) == 1 and store._replicas_of([1, 0]) == 0 and store._replicas_of([1, 2]) == 2


def test_a_real_wait_on_a_master_with_its_replica(tmp_path):
    master = EmbeddedRedis(port=free_port(), directory=tmp_path / "m", durable=True).start()
    replica = EmbeddedRedis(port=free_port(), directory=tmp_path / "r", durable=True, replica_of=master).start()
    try:
        store = RedisStore.from_url(master.url).require_replicas(1, 5000)
        game = game_ids(1)[0]
        deadline = time.monotonic() + 20
        while True:  # the replica's first sync
            try:
                store.create(game, first_entry(game), None)
                break
            except NotReplicated:
                assert time.monotonic() < deadline
        prev = store.read_log(game)[-1]["hash"]
        for seq in range(1, 20):
            entry = next_entry(game, seq, prev)
            assert store.append(game, entry, prev, signature=f"s{seq}").position == seq
            prev = entry["hash"]
        # what the master acknowledged, the replica has
        copy = RedisStore.from_url(replica.url)
        assert copy.read_log(game) == store.read_log(game)
        copy.close()
        store.close()
    finally:
        replica.stop()
        master.stop()


def test_no_replica_in_time_is_a_503_and_the_same_request_again_a_duplicate(make_app, redis_url):
    """On a Redis without replicas, MIN_REPLICAS=1: the move is in the master's log but not confirmed: 503
    ``log/unavailable`` saying so; sent again, the same 503 (still not on a replica); once the service does not
    ask for replicas, the same signed move answers 409 ``submission/duplicate`` with its position."""
    plain = make_app(REFEREE_DISPATCH="none")
    http = Http(plain.test_client())
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    strict = make_app(REFEREE_DISPATCH="none", REFEREE_MIN_REPLICAS=1, REFEREE_REPLICA_TIMEOUT_MS=50)
    strict_http = Http(strict.test_client())
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat = legal["to_move"]
    body = signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][0]))
    for _ in range(2):
        status, answer = strict_http.post(f"/games/{game.game_id}/moves", body)
        error = answer["error"]
        assert status == 503 and error["code"] == "log/unavailable", answer
        assert "may or may not survive a fail-over" in error["message"]
        assert "0 of the 1 replica" in error["message"] and "submission/duplicate" in error["message"]
    status, answer = http.post(f"/games/{game.game_id}/moves", body)
    assert status == 409 and answer["error"]["code"] == "submission/duplicate"
    assert answer["error"]["details"]["position"] == legal["seq"]
    # a creation too: 503, the game's first entry in the log
    status, answer = strict_http.post("/games", {"ruleset": "towerup", "seats": [
        {"name": "a", "key": game_key(game, 0)}, {"name": "b", "key": game_key(game, 1)}]})
    assert status == 503 and answer["error"]["code"] == "log/unavailable" and "creation" in answer["error"]["message"]


def game_key(game, seat: int) -> str:
    from referee.protocol.signing import public_key_b64

    return public_key_b64(game.keys[seat])


def test_with_min_replicas_0_nothing_waits(redis_url):
    """The default sends no WAIT: a Redis without replicas takes every write."""
    store = RedisStore.from_url(redis_url)
    assert store.min_replicas == 0
    monitor = redis_lib.Redis.from_url(redis_url)
    before = int(monitor.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))
    game = game_ids(1)[0]
    entry = first_entry(game)
    store.create(game, entry, None)
    store.append(game, next_entry(game, 1, entry["hash"]), entry["hash"], signature="s1")
    with pytest.raises(DuplicateSubmission):
        store.append(game, next_entry(game, 1, entry["hash"]), entry["hash"], signature="s1")
    assert int(monitor.info("commandstats").get("cmdstat_wait", {}).get("calls", 0)) == before
    monitor.close()
    store.close()


def _waits(client) -> int:
    stats = client.info("commandstats")
    return sum(int(stats.get(name, {}).get("calls", 0)) for name in ("cmdstat_wait", "cmdstat_waitaof"))


def test_the_workers_own_appends_wait_for_a_replica_and_a_shortfall_leaves_the_entry_in_the_masters_log(
        tmp_path, monkeypatch):
    """A replay worker's own entries (here the deadline scheduler's ``timeout`` and what follows it) are followed by
    ``WAIT`` with ``REFEREE_MIN_REPLICAS=1`` and are on the replica when the worker goes on; with no replica in time
    the entry stays in the master's log (not appended twice) and the worker goes on with the other games."""
    from freezegun import freeze_time
    from logging_state import kept

    from referee.app import create_app
    from workers.runner import run_worker as run_worker_here

    def run_worker(*args, **kwargs):
        with kept():  # (RQ's worker sets its loggers' levels)
            return run_worker_here(*args, **kwargs)

    master = EmbeddedRedis(port=free_port(), directory=tmp_path / "m", durable=True).start()
    replica = EmbeddedRedis(port=free_port(), directory=tmp_path / "r", durable=True, replica_of=master).start()
    try:
        watcher = redis_lib.Redis.from_url(master.url)
        deadline = time.monotonic() + 20
        while watcher.info("replication").get("slave0", {}).get("state") != "online":  # the first sync
            assert time.monotonic() < deadline
            time.sleep(0.05)
        app = create_app({"REDIS_URL": master.url, "REFEREE_VAR": str(tmp_path / "var"), "REFEREE_QUEUE": "mr",
                          "REFEREE_DISPATCH": "none", "TESTING": True})
        http = Http(app.test_client())
        store = app.extensions["referee.store"]
        hour = {"kind": "per_move", "per_move": 3600, "reminders": []}

        def overdue() -> str:  # a game whose seat to move is long past its deadline now
            with freeze_time("2020-01-01T10:00:00Z"):
                game = create_game(http, "fivetowers", 2, options={"time_control": hour})
                accept_all(http, game)
            return game.game_id

        game = overdue()
        before = len(store.read_log(game))
        monkeypatch.setenv("REFEREE_MIN_REPLICAS", "1")
        monkeypatch.setenv("REFEREE_REPLICA_TIMEOUT_MS", "5000")
        waits = _waits(watcher)
        run_worker(master.url, "mr", burst=True, notify=False)
        log = store.read_log(game)
        added = log[before:]
        assert [e["type"] for e in added][:1] == ["timeout"], added
        assert _waits(watcher) - waits >= len(added)  # one WAIT (or WAITAOF) at least per entry the worker wrote
        copy = RedisStore.from_url(replica.url)
        assert copy.read_log(game) == log  # on the replica as soon as the worker went on
        copy.close()

        replica.stop()  # no replica now: the worker's append is in the master's log, unconfirmed
        monkeypatch.setenv("REFEREE_REPLICA_TIMEOUT_MS", "100")
        game = overdue()
        before = len(store.read_log(game))
        waits = _waits(watcher)
        run_worker(master.url, "mr", burst=True, notify=False)  # goes on: the shortfall is logged
        types = [e["type"] for e in store.read_log(game)[before:]]
        assert types[:1] == ["timeout"] and types.count("timeout") == 1, types
        assert _waits(watcher) > waits
        store.set_timer(game, 1)  # looked at again: the timeout is in the log, not appended twice
        run_worker(master.url, "mr", burst=True, notify=False)
        assert [e["type"] for e in store.read_log(game)[before:]].count("timeout") == 1
        watcher.close()
    finally:
        from workers import jobs

        jobs._URLS.clear()  # run_worker configured this process's jobs for the master, stopped now
        replica.stop()
        master.stop()
