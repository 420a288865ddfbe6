"""Round trips to Redis on the hot paths (issue 13): counted on a real connection to the suite's real Redis.

:class:`CountingConnection` is redis-py's own connection, unchanged, that counts the batches of commands it
sends (``send_packed_command``): N commands in one pipeline are one batch, one network round trip; and the
commands it packs."""

from __future__ import annotations

import random

import redis as redis_lib
from svc_helpers import Http, accept_all, create_game, move_envelope, signed

from referee.games_service import fold
from referee.notify.events import next_alarm
from referee.store import RedisStore, keys
from referee.timecontrol.times import parse_ms
from workers.projector import Projector
from workers.queue import ready_key, ready_key_for


class CountingConnection(redis_lib.Connection):
    flushes = 0
    #: commands packed (a pipeline's count one each)
    commands = 0

    def send_packed_command(self, command, check_health=True):
        type(self).flushes += 1
        return super().send_packed_command(command, check_health)

    def send_command(self, *args, **kwargs):
        type(self).commands += 1
        return super().send_command(*args, **kwargs)

    def pack_commands(self, commands):
        type(self).commands += len(commands)
        return super().pack_commands(commands)


def counting_store(url: str) -> RedisStore:
    pool = redis_lib.ConnectionPool.from_url(url, connection_class=CountingConnection)
    return RedisStore(redis_lib.Redis(connection_pool=pool))


def event(n: int) -> dict:
    return {"id": f"g_rt:{n}:turn", "type": "turn", "game": "g_rt", "seq": n + 1, "seat": n % 2}


def test_emit_events_is_one_round_trip_whatever_the_batch(redis_url):
    store = counting_store(redis_url)
    store.emit_events([event(0)])  # a fresh server: NOSCRIPT, SCRIPT LOAD, then the batch again
    CountingConnection.flushes = 0
    assert store.emit_events([event(n) for n in range(1, 51)]) == 50
    assert CountingConnection.flushes == 1  # was 50: one EVALSHA (and one fsync wait) per event
    CountingConnection.flushes = 0
    assert store.emit_events([event(n) for n in range(0, 60)]) == 9  # the 51 seen ones add nothing
    assert CountingConnection.flushes == 1
    assert [e["id"] for e in store.read_outbox()] == [f"g_rt:{n}:turn" for n in range(60)]  # in order, once each
    assert store.emit_events([]) == 0
    store.redis.script_flush()  # a restarted Redis has forgotten the script: the batch is sent again, once
    assert store.emit_events([event(n) for n in range(55, 65)]) == 5
    assert [e["id"] for e in store.read_outbox()][-5:] == [f"g_rt:{n}:turn" for n in range(60, 65)]
    store.close()


def _one_move(http, game, rng):
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat = legal["to_move"]
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], rng.choice(legal["moves"]))
    return signed(game.keys[seat], envelope)


def test_an_accepted_move_is_one_round_trip_that_also_notifies_the_workers(app, http, store, redis_url):
    """The append script checks the chain, appends, raises the pending flag and pushes the game onto the
    replay workers' ready list: one round trip per accept, and no notification to lose after it."""
    queue = app.extensions["referee.queue"]
    game = create_game(http, "fivetowers", 2)
    ready = ready_key_for(queue, game.game_id)  # the game's shard of the ready list
    assert ready.startswith(ready_key(queue) + ":")
    accept_all(http, game)
    assert store.ready_redis.lrange(ready, 0, -1) == [game.game_id.encode()]  # pushed by CREATE_GAME
    store.ready_redis.delete(ready)
    Projector(store).catch_up(game.game_id)  # a worker caught up and released the flag
    assert store.pending_since(game.game_id) is None
    rng = random.Random(2)
    store.redis.connection_pool = redis_lib.ConnectionPool.from_url(redis_url, connection_class=CountingConnection)
    for expected in ([game.game_id.encode()], [game.game_id.encode()]):  # the second finds the flag still up
        submission = _one_move(http, game, rng)
        CountingConnection.flushes = 0
        status, receipt = http.post(f"/games/{game.game_id}/moves", submission)
        assert status == 202, receipt
        assert CountingConnection.flushes == 1
        assert store.ready_redis.lrange(ready, 0, -1) == expected
    assert store.pending_since(game.game_id) is not None


def test_on_a_store_that_cannot_push_in_its_script_the_dispatcher_pushes(make_app):
    """Where the store's script cannot push (a cluster: its scripts touch one slot), the dispatcher does,
    after the append; here a store told not to use the list shows the same answers."""
    app = make_app()
    http, store, queue = Http(app.test_client()), app.extensions["referee.store"], app.extensions["referee.queue"]
    store.ready_key = None  # as on a cluster
    game = create_game(http, "towerup", 2)
    accept_all(http, game)
    assert store.ready_redis.lrange(ready_key_for(queue, game.game_id), 0, -1) == [game.game_id.encode()]


def test_a_move_in_a_game_with_a_clock_sets_its_timer_in_the_same_round_trip(app, http, store, redis_url):
    """With a running clock the seat's next deadline goes into ``referee:timers`` in the append's own script:
    still one round trip (and one fsync) per accept, where it used to be two."""
    game = create_game(http, "fivetowers", 2, options={"time_control": {"kind": "per_move", "per_move": 3600}})
    accept_all(http, game)
    rng = random.Random(3)
    store.redis.connection_pool = redis_lib.ConnectionPool.from_url(redis_url, connection_class=CountingConnection)
    submission = _one_move(http, game, rng)
    store.redis.zrem(keys.TIMERS, game.game_id)  # so that only the move's own write can put it back
    CountingConnection.flushes = 0
    status, receipt = http.post(f"/games/{game.game_id}/moves", submission)
    assert status == 202, receipt
    assert CountingConnection.flushes == 1
    due = dict(store.due_timers(2**62))
    assert due[game.game_id] == next_alarm(fold(store, game.game_id), 0) == parse_ms(receipt["clocks"][1]["deadline"])
