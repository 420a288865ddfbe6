"""The ready list's shards (issue 28 item 1): each game's notifications go onto one shard, and each shard is
drained by one live replay loop, so that one worker folds each of a game's entries once. Loops on a real Redis:
they split the shards between them, a loop that stops hands its shards over at once, a loop that died hands
them over once its entry is old, and nothing pushed is ever left behind."""

from __future__ import annotations

import random
import time

from svc_helpers import accept_all, create_game, move_envelope, signed

from referee.store.keys import READY_SHARDS, ready_shard
from workers.projector import Projector
from workers.queue import ReplayDispatch, ready_count, ready_key_for
from workers.replayloop import LIVE_MS, ReplayLoop, shard_owner

NAMES = ["host:1:aaaa", "host:2:bbbb", "other:7:cccc"]


def owned(loop: ReplayLoop) -> set[int]:
    """The shards a loop drains (its lists after the unsharded one)."""
    return {int(key.rsplit(":", 1)[1]) for key in loop.keys[1:]}


def test_every_shard_has_one_owner_and_only_the_leavers_shards_move():
    owners = {shard: shard_owner(shard, NAMES) for shard in range(READY_SHARDS)}
    assert set(owners.values()) == set(NAMES)  # with 32 shards, each of three loops gets some
    without = {shard: shard_owner(shard, NAMES[:2]) for shard in range(READY_SHARDS)}
    for shard in range(READY_SHARDS):
        if owners[shard] != NAMES[2]:
            assert without[shard] == owners[shard], shard  # rendezvous: the others' shards stay where they are
        else:
            assert without[shard] in NAMES[:2]
    assert shard_owner(5, list(reversed(NAMES))) == owners[5]  # the order of the list does not matter


def test_a_games_notifications_always_go_onto_its_shard(app, store):
    queue = app.extensions["referee.queue"]
    dispatch = ReplayDispatch(queue, store)
    ids = [f"g_{n:016d}" for n in range(200)]
    assert len({ready_shard(game_id) for game_id in ids}) == READY_SHARDS  # spread over every shard
    for game_id in ids[:5]:
        dispatch.notify(game_id, 1)
        assert store.ready_redis.lrange(ready_key_for(queue, game_id), 0, -1)[0] == game_id.encode()
    assert ready_count(store, queue) == 5


def test_two_loops_split_the_shards_and_each_takes_only_its_own_games(app, store):
    queue = app.extensions["referee.queue"]
    first = ReplayLoop(queue, Projector(store), name=NAMES[0])
    second = ReplayLoop(queue, Projector(store), name=NAMES[1])
    first.refresh(force=True)
    assert owned(first) == set(range(READY_SHARDS))  # alone: every shard
    second.refresh(force=True)
    first.refresh(force=True)
    assert owned(first) and owned(second)
    assert owned(first) | owned(second) == set(range(READY_SHARDS)) and not owned(first) & owned(second)

    dispatch = ReplayDispatch(queue, store)
    ids = [f"g_{n:016d}" for n in range(64)]
    for game_id in ids:
        dispatch.notify(game_id, 1)
    taken_first = set(first.take(block=0.5))
    taken_second = set(second.take(block=0.5))
    assert taken_first == {g for g in ids if ready_shard(g) in owned(first)}
    assert taken_second == {g for g in ids if ready_shard(g) in owned(second)}
    assert ready_count(store, queue) == 0

    # the first stops: it leaves the set, and the second owns every shard at its next refresh
    first.leave()
    second.refresh(force=True)
    assert owned(second) == set(range(READY_SHARDS))


def test_a_dead_loops_shards_are_taken_over_once_its_entry_is_old(app, store):
    queue = app.extensions["referee.queue"]
    alive = ReplayLoop(queue, Projector(store), name=NAMES[0])
    stale_ms = int(time.time() * 1000) - LIVE_MS - 1000  # a loop killed more than LIVE_MS ago
    alive.liveness.zadd(alive.replayers_key, {NAMES[1]: stale_ms})
    live = alive.refresh(force=True)
    assert live == [NAMES[0]]
    assert alive.liveness.zscore(alive.replayers_key, NAMES[1]) is None  # taken off the set
    assert owned(alive) == set(range(READY_SHARDS))
    # one killed a moment ago still holds its shards: the live loop leaves them alone for now
    alive.liveness.zadd(alive.replayers_key, {NAMES[1]: int(time.time() * 1000)})
    alive.refresh(force=True)
    assert owned(alive) == {s for s in range(READY_SHARDS) if shard_owner(s, NAMES[:2]) == NAMES[0]}


def test_two_running_loops_catch_up_every_game_and_each_game_in_one_loop(app, http, store):
    """Two loops in threads, as two ``referee worker`` processes run them: every game is caught up, and each
    game's entries are folded by the one loop that owns its shard (its projector's cache holds the game)."""
    queue = app.extensions["referee.queue"]
    loops = [ReplayLoop(queue, Projector(store), name=name) for name in NAMES[:2]]
    for _ in range(2):  # the second round: each has seen the other (start() refreshes again, as a worker does)
        for loop in loops:
            loop.refresh(force=True)
    for loop in loops:
        loop.start()
    try:
        rng = random.Random(3)
        games = []
        for _ in range(6):
            game = create_game(http, "fivetowers", 2)
            accept_all(http, game)
            games.append(game)
        for _ in range(4):
            for game in games:
                _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
                seat = legal["to_move"]
                envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], rng.choice(legal["moves"]))
                assert http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))[0] == 202
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if all((store.read_projection(g.game_id) or {}).get("seq") == store.tip(g.game_id).seq for g in games):
                break
            time.sleep(0.05)
        for game in games:
            assert store.read_projection(game.game_id)["seq"] == store.tip(game.game_id).seq
            holders = [loop for loop in loops if game.game_id in loop.projector._cache]
            assert len(holders) == 1, game.game_id  # one loop folded this game
            assert ready_shard(game.game_id) in owned(holders[0])
    finally:
        for loop in loops:
            loop.request_stop()
        for loop in loops:
            loop.stop()
    assert loops[0].liveness.zcard(loops[0].replayers_key) == 0  # both left the set
