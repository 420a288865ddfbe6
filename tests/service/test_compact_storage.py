"""What a live game keeps in Redis, kept small (issue 28, item 2; ``docs/scale.md``, "Memory"): log entries packed
and served byte for byte, signatures indexed by their first characters, projections' long values deflated, the
``?wait`` stream only while somebody waits. On the session's real Redis (``RedisStore``)."""

from __future__ import annotations

import json
import zlib

import pytest
import redis as redis_lib

from referee.protocol.logchain import GENESIS, first_broken_link, seal
from referee.protocol.signing import generate_key, sign
from referee.running.embedded_redis import HASH_MAX_ZIPLIST_VALUE
from referee.store import DuplicateSubmission, RedisStore, codec, keys
from referee.store.redis_store import WAIT_STREAM_TTL


@pytest.fixture
def store(redis_url):
    redis_store = RedisStore(redis_lib.Redis.from_url(redis_url))
    yield redis_store
    redis_store.close()


def signed_move(game: str, seq: int, prev: str, key, move: dict, *, at: str = "2026-11-21T10:00:01.250Z") -> dict:
    envelope = {"v": 1, "ctx": "referee/move", "game": game, "seat": seq % 2, "seq": seq, "prev": prev, "move": move}
    sig = sign(key, envelope)
    return seal({"v": 1, "type": "move", "seq": seq, "at": at, "seat": seq % 2,
                 "submission": {"envelope": envelope, "sig": sig}}, prev)


def a_game(store: RedisStore, game: str = "g_compact", moves: int = 6) -> list[dict]:
    log = [seal({"v": 1, "type": "created", "seq": 0, "at": "2026-11-21T10:00:00.000Z", "game": game,
                 "ruleset": {"name": "fivetowers", "version": "1d28de91f51057ac"}, "mode": "seeded",
                 "commitment": "ab" * 32, "seats": [{"key": "k0", "name": "Ann"}, {"key": "k1", "name": "Bo"}]},
                GENESIS)]
    store.create(game, log[0], b"\x01" * 32)
    key = generate_key()
    for i in range(moves):
        move = {"type": "build", "cards": ["stone-4", "lava-14"], "demolish": "ice"} if i % 2 else {"type": "pass"}
        entry = signed_move(game, len(log), log[-1]["hash"], key, move)
        store.append(game, entry, log[-1]["hash"], signature=entry["submission"]["sig"])
        log.append(entry)
    return log


def test_log_entries_are_kept_packed_and_read_and_streamed_byte_for_byte(store):
    log = a_game(store)
    rows = store.redis.xrange(keys.game_keys("g_compact").log)
    assert len(rows) == len(log)
    for (_id, fields), entry in zip(rows, log, strict=True):
        kept = fields[b"e"]
        assert kept[0] == codec.PACKED_V1 and len(kept) < len(codec.stored_json(entry)) * 0.6
    assert store.read_log("g_compact") == log
    assert store.read_log("g_compact", 2, 3) == log[2:5]
    assert store.read_since("g_compact", 4)[0] == log[4:]
    assert store.read_since_many([("g_compact", 5)])[0][0] == log[5:]
    assert store.read_created(["g_compact"]) == [log[0]] and store.read_last_entries(["g_compact"]) == [log[-1]]
    assert first_broken_link(store.read_log("g_compact")) is None
    # what an event stream serves: the stored JSON, byte for byte what it was before entries were packed
    assert store.follow_log("g_compact", 0, 0.1) == [(p, codec.stored_json(e)) for p, e in enumerate(log) if p > 0]
    assert [list(entry) for entry in store.read_log("g_compact")] == [sorted(entry) for entry in log]


def test_an_entry_stored_before_packing_is_read_as_it_was_and_the_chain_goes_on(store):
    log = a_game(store, moves=2)
    key = generate_key()
    plain = signed_move("g_compact", 3, log[-1]["hash"], key, {"type": "pass"})
    k = keys.game_keys("g_compact")
    # an entry as the store wrote it before issue 28: its JSON as it is, its whole signature in the index
    store._append(keys=[k.log, k.head, k.sigs, k.pending], args=[
        3, log[-1]["hash"], codec.stored_json(plain), plain["hash"], "", 0, "g_compact"])
    store.redis.hset(k.sigs, plain["submission"]["sig"], 3)
    log.append(plain)
    assert store.read_log("g_compact") == log
    assert store.follow_log("g_compact", 2, 0.1) == [(3, codec.stored_json(plain))]
    assert store.find_submission("g_compact", plain["submission"]["sig"]) == 3
    with pytest.raises(DuplicateSubmission) as refused:
        store.append("g_compact", {**plain, "seq": 4}, plain["hash"], signature=plain["submission"]["sig"])
    assert refused.value.position == 3
    after = signed_move("g_compact", 4, plain["hash"], key, {"type": "pass"})
    store.append("g_compact", after, plain["hash"], signature=after["submission"]["sig"])
    assert store.read_log("g_compact") == [*log, after]


def test_what_packing_cannot_give_back_exactly_is_kept_as_json():
    entry = seal({"v": 1, "type": "move", "seq": 1, "at": "2026-11-21T10:00:01.000+00:00", "seat": 0,
                  "submission": {"envelope": {"prev": "AB" * 32, "x": 1.5, "s": "é\u2028"}, "sig": "not-base64!" * 8}},
                 GENESIS)
    packed = codec.pack(entry, "g_x")
    assert codec.unpack(packed, "g_x") == entry and codec.unpack_json(packed, "g_x") == codec.stored_json(entry)
    odd = {"v": 1, "type": "note", "seq": 1, "at": "0001-01-01T00:00:00.000Z", "hash": "0" * 64}
    assert codec.unpack_json(codec.pack(odd, "g_x"), "g_x") == codec.stored_json(odd)
    for kept in ({"seq": 1}, {"q": "\u00ff"}, odd, entry):  # never longer than the JSON
        assert len(codec.pack(kept, "g_x")) <= len(codec.stored_json(kept))
    # the same entry read under another log's id is not read as this one (its dictionary differs)
    real = signed_move("g_one", 1, "cd" * 32, generate_key(), {"type": "pass"})
    try:
        misread = codec.unpack(codec.pack(real, "g_one"), "g_two")
    except (ValueError, zlib.error):  # or a wrong entry: never this one
        misread = None
    assert misread != real and codec.unpack(codec.pack(real, "g_one"), "g_one") == real


def test_signatures_are_indexed_by_their_first_characters(store):
    log = a_game(store, moves=3)
    sigs = store.redis.hgetall(keys.game_keys("g_compact").sigs)
    assert sorted(sigs) == sorted(e["submission"]["sig"][:keys.SIG_FIELD_CHARS].encode() for e in log[1:])
    assert store.redis.object("encoding", keys.game_keys("g_compact").sigs) in {b"ziplist", b"listpack"}
    second = log[2]
    assert store.find_submission("g_compact", second["submission"]["sig"]) == 2
    assert store.find_submission("g_compact", second["submission"]["sig"][:-1] + "A") in {None, 2}
    assert store.find_submission("g_compact", "Z" * 86) is None
    with pytest.raises(DuplicateSubmission) as refused:
        store.append("g_compact", {**second, "seq": 4}, log[-1]["hash"], signature=second["submission"]["sig"])
    assert refused.value.position == 2 and store.tip("g_compact").seq == 4


def test_projection_values_are_deflated_and_read_back_and_the_wait_stream_lives_only_while_waited_on(store):
    log = a_game(store, moves=1)
    k = keys.game_keys("g_compact")
    view = {"ruleset": "fivetowers", "seats": [{"seat": s, "towers": {"ice": [f"ice-{n}" for n in range(9)]}}
                                               for s in range(2)], "discard": [f"lava-{n}" for n in range(15)]}
    projection = {"seq": 2, "head": log[1]["hash"], "status": "active", "to_move": 0, "view": view,
                  "result": None, "version_mismatch": None, "blocked": None, "accepted": [0, 1],
                  "last_verdict": {"seq": 1, "type": "move", "status": "applied", "seat": 1},
                  "updated_at": "2026-11-21T10:00:02.000Z", "clocks": None, "decisions": None}
    verdicts = [{"seq": 0, "type": "created", "status": "ok"}, projection["last_verdict"]]
    assert store.write_projection("g_compact", projection, verdicts, 0) == 1
    kept = store.work.hget(k.projection, "view")
    assert kept[0] == codec.PACKED_PROJ_V1 and len(kept) < len(json.dumps(view, separators=(",", ":"))) / 2
    assert store.read_projection("g_compact", with_verdicts=True) == {**projection, "verdicts": verdicts}
    assert store.read_projections(["g_compact"], ("view", "status")) == [
        {**{name: None for name in projection}, "seq": 2, "view": view, "status": "active"}]
    # nobody waited: no events stream
    assert not store.work.exists(k.events)
    assert store.wait_for_verdict("g_compact", 1, 0) == projection["last_verdict"]
    assert not store.work.exists(k.events)  # the verdict was there: nothing to wait on
    assert store.wait_for_verdict("g_compact", 2, 0.05) is None
    assert store.work.exists(k.events) and 0 < store.work.ttl(k.events) <= WAIT_STREAM_TTL
    store.write_projection("g_compact", {**projection, "seq": 3}, [{"seq": 2, "type": "move", "status": "ok"}], 2)
    assert store.work.xlen(k.events) == 1  # the write woke the (finished) wait; capped at one event


def test_the_embedded_servers_keep_projections_as_compact_hashes(redis_url):
    client = redis_lib.Redis.from_url(redis_url)
    try:
        assert int(client.config_get("hash-max-ziplist-value")["hash-max-ziplist-value"]) == HASH_MAX_ZIPLIST_VALUE
    finally:
        client.close()
