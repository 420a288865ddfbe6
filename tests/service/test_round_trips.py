"""Round trips to Redis on the hot paths (issue 13): counted on a real connection to the suite's real Redis.

:class:`CountingConnection` is redis-py's own connection, unchanged, that counts the batches of commands it
sends (``send_packed_command``): N commands in one pipeline are one batch, one network round trip."""

from __future__ import annotations

import redis as redis_lib

from referee.store import RedisStore


class CountingConnection(redis_lib.Connection):
    flushes = 0

    def send_packed_command(self, command, check_health=True):
        type(self).flushes += 1
        return super().send_packed_command(command, check_health)


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
