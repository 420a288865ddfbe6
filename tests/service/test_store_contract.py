"""ONE contract for every log store, run against the in-memory store, the Redis store (real Redis) and the
Redis store on a real 3-master Redis Cluster (``REDIS_URL=redis+cluster://…``; ``cluster_server``)."""

from __future__ import annotations

import threading

import pytest
import redis as redis_lib
from cluster_server import cluster_url  # noqa: F401 - a fixture

from referee.protocol.logchain import GENESIS, first_broken_link, seal
from referee.store import (
    DuplicateSubmission,
    GameExists,
    GameNotFound,
    MemoryStore,
    RedisStore,
    StaleAppend,
)


@pytest.fixture(params=["memory", "redis", "cluster"])
def store(request):
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "cluster":
        # the logs and projections on the cluster, RQ's queue on the session's plain Redis
        cluster_store = RedisStore.from_url(request.getfixturevalue("cluster_url"),
                                            work_url=request.getfixturevalue("redis_url"))
        assert cluster_store.cluster and cluster_store.queue_redis is not cluster_store.redis
        yield cluster_store
        cluster_store.close()
        return
    url = request.getfixturevalue("redis_url")
    redis_store = RedisStore(redis_lib.Redis.from_url(url))
    yield redis_store
    redis_store.close()


def created(game_id: str = "g_test") -> dict:
    return seal({"v": 1, "type": "created", "seq": 0, "at": "2026-11-21T10:00:00.000Z", "game": game_id}, GENESIS)


def entry(seq: int, prev: str, **payload) -> dict:
    return seal({"v": 1, "type": "move", "seq": seq, "at": "2026-11-21T10:00:01.000Z", **payload}, prev)


def grow(store, game_id: str, count: int) -> list[dict]:
    """A game with ``count`` entries after ``created``; returns the whole log."""
    log = [created(game_id)]
    store.create(game_id, log[0], None)
    for i in range(count):
        item = entry(len(log), log[-1]["hash"], n=i)
        store.append(game_id, item, log[-1]["hash"], signature=f"sig-{i}")
        log.append(item)
    return log


def test_create_then_read_back_exactly(store):
    first = created()
    appended = store.create("g_test", first, b"\x01" * 32)
    assert appended.position == 0 and appended.head == first["hash"] and appended.pending_set
    assert store.read_log("g_test") == [first]
    assert store.tip("g_test") == (1, first["hash"])
    assert store.exists("g_test")
    assert store.read_secret("g_test") == b"\x01" * 32
    assert store.list_games() == ["g_test"]


def test_create_twice_is_refused_and_keeps_the_first(store):
    first = created()
    store.create("g_test", first, None)
    with pytest.raises(GameExists):
        store.create("g_test", created() | {"at": "2027-01-01T00:00:00.000Z"}, b"\x02" * 32)
    assert store.read_log("g_test") == [first]
    assert store.read_secret("g_test") is None


def test_unknown_game(store):
    for call in (lambda: store.read_log("g_none"), lambda: store.tip("g_none"),
                 lambda: store.read_since("g_none", 0), lambda: store.read_log("g_none", 3),
                 lambda: store.append("g_none", entry(1, GENESIS), GENESIS)):
        with pytest.raises(GameNotFound):
            call()
    assert not store.exists("g_none")
    assert store.read_secret("g_none") is None
    assert store.read_projection("g_none") is None


def test_ids_that_could_escape_their_hash_tag_are_refused(store):
    for bad in ("a}b", "a{b", "a:b", "", "x" * 65, "a b"):
        with pytest.raises((ValueError, GameNotFound)):
            store.read_log(bad)
        with pytest.raises(ValueError):
            store.create(bad, created(bad), None)


def test_append_at_the_expected_position_chains(store):
    log = grow(store, "g_test", 5)
    assert store.read_log("g_test") == log
    assert first_broken_link(store.read_log("g_test")) is None
    assert store.tip("g_test") == (6, log[-1]["hash"])


def test_stale_seq_or_prev_writes_nothing(store):
    log = grow(store, "g_test", 2)
    stale_seq = entry(2, log[-1]["hash"], n="late")  # seq 2, but the log has 3 entries
    with pytest.raises(StaleAppend) as caught:
        store.append("g_test", stale_seq, log[-1]["hash"])
    assert (caught.value.seq, caught.value.head) == (3, log[-1]["hash"])
    wrong_prev = entry(3, log[-2]["hash"], n="fork")
    with pytest.raises(StaleAppend):
        store.append("g_test", wrong_prev, log[-2]["hash"])
    assert store.read_log("g_test") == log


def test_duplicate_signature_writes_nothing_and_names_the_position(store):
    log = grow(store, "g_test", 3)  # signatures sig-0, sig-1, sig-2 at positions 1, 2, 3
    again = entry(4, log[-1]["hash"], n="retry")
    with pytest.raises(DuplicateSubmission) as caught:
        store.append("g_test", again, log[-1]["hash"], signature="sig-1")
    assert caught.value.position == 2
    assert (caught.value.seq, caught.value.head) == (4, log[-1]["hash"])
    assert store.find_submission("g_test", "sig-1") == 2
    assert store.find_submission("g_test", "sig-unknown") is None
    assert store.read_log("g_test") == log


def test_concurrent_appends_at_one_position_exactly_one_wins(store):
    log = grow(store, "g_test", 1)
    barrier = threading.Barrier(12)
    outcomes: list[str] = []

    def submit(i: int) -> None:
        item = entry(2, log[-1]["hash"], n=f"racer-{i}")
        barrier.wait()
        try:
            store.append("g_test", item, log[-1]["hash"], signature=f"racer-{i}")
            outcomes.append("ok")
        except StaleAppend:
            outcomes.append("stale")

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["ok"] + ["stale"] * 11
    assert len(store.read_log("g_test")) == 3
    assert first_broken_link(store.read_log("g_test")) is None


def test_paging_and_read_since(store):
    log = grow(store, "g_test", 9)
    assert store.read_log("g_test", 3, 4) == log[3:7]
    assert store.read_log("g_test", 8) == log[8:]
    assert store.read_log("g_test", 10) == []
    entries, tip = store.read_since("g_test", 6)
    assert entries == log[6:] and tip == (10, log[-1]["hash"])
    entries, tip = store.read_since("g_test", 10)
    assert entries == [] and tip.seq == 10


def test_pending_flag_is_raised_once_until_released(store):
    log = [created()]
    assert store.create("g_test", log[0], None).pending_set
    assert store.pending_since("g_test") is not None
    item = entry(1, log[-1]["hash"])
    assert not store.append("g_test", item, log[-1]["hash"]).pending_set  # a job is on its way since creation
    log.append(item)
    store.mark_pending("g_test", 1234)
    assert store.pending_since("g_test") == 1234
    assert not store.release_pending("g_test", 1)  # the job folded 1 entry, the log has 2: it must go on
    assert store.pending_since("g_test") > 1234  # ... and the flag is refreshed
    assert store.release_pending("g_test", 2)
    assert store.pending_since("g_test") is None
    item = entry(2, log[-1]["hash"])
    assert store.append("g_test", item, log[-1]["hash"]).pending_set
    log.append(item)
    item = entry(3, log[-1]["hash"])
    assert not store.append("g_test", item, log[-1]["hash"]).pending_set


def test_list_games_newest_first_and_scan(store):
    for name in ("g_a", "g_b", "g_c"):
        store.create(name, created(name), None)
    assert store.list_games() == ["g_c", "g_b", "g_a"]
    assert store.list_games(1, 1) == ["g_b"]
    assert store.scan_games() == ["g_a", "g_b", "g_c"]


def projection(seq: int, head: str, **extra) -> dict:
    return {"seq": seq, "head": head, "status": "active", "to_move": 1, "view": {"x": [1, 2]}, "result": None,
            "version_mismatch": None, "blocked": None, "accepted": [0, 1], "last_verdict": {"seq": seq - 1},
            "updated_at": "2026-11-21T10:00:00.000Z", "clocks": None, "decisions": None, **extra}


def verdicts(start: int, stop: int) -> list[dict]:
    return [{"seq": i, "type": "move", "status": "applied"} for i in range(start, stop)]


def test_projection_advances_only_from_where_it_is(store):
    log = grow(store, "g_test", 5)
    assert store.write_projection("g_test", projection(3, log[2]["hash"]), verdicts(0, 3), 0) == 1
    stored = store.read_projection("g_test")
    assert stored == projection(3, log[2]["hash"])
    assert store.read_verdicts("g_test") == verdicts(0, 3)
    # a job that started from 0 again (stale) must not overwrite
    assert store.write_projection("g_test", projection(2, log[1]["hash"]), verdicts(0, 2), 0) == 0
    assert store.write_projection("g_test", projection(5, log[4]["hash"]), verdicts(1, 5), 1) == -1
    assert store.read_projection("g_test")["seq"] == 3
    assert store.write_projection("g_test", projection(6, log[5]["hash"]), verdicts(3, 6), 3) == 1
    assert store.read_verdicts("g_test") == verdicts(0, 6)
    assert store.read_verdicts("g_test", 4, 5) == verdicts(4, 5)
    assert store.read_verdicts("g_test", 6, 7) == []
    full = store.read_projection("g_test", with_verdicts=True)
    assert full["verdicts"] == verdicts(0, 6) and full["seq"] == 6


def test_projection_replace_rebuilds_from_scratch(store):
    log = grow(store, "g_test", 3)
    store.write_projection("g_test", projection(2, log[1]["hash"]), verdicts(0, 2), 0)
    assert store.write_projection("g_test", projection(4, log[3]["hash"], status="finished"), verdicts(0, 4), 0,
                                  replace=True) == 1
    stored = store.read_projection("g_test", with_verdicts=True)
    assert stored["status"] == "finished" and stored["verdicts"] == verdicts(0, 4)


def test_lagging_games(store):
    log = grow(store, "g_test", 2)
    grow(store, "g_other", 0)
    lagging = {game: (length, seq) for game, length, seq, _pending in store.lagging_games()}
    assert lagging == {"g_test": (3, 0), "g_other": (1, 0)}
    store.write_projection("g_test", projection(3, log[-1]["hash"]), verdicts(0, 3), 0)
    assert [game for game, *_ in store.lagging_games()] == ["g_other"]


def test_wait_for_verdict_wakes_on_the_projection_write(store):
    import time

    log = grow(store, "g_test", 2)
    assert store.wait_for_verdict("g_test", 1, 0.05) is None
    store.write_projection("g_test", projection(2, log[1]["hash"]), verdicts(0, 2), 0)
    assert store.wait_for_verdict("g_test", 1, 0) == verdicts(1, 2)[0]

    def later() -> None:
        time.sleep(0.3)
        store.write_projection("g_test", projection(3, log[2]["hash"]), verdicts(2, 3), 2)

    thread = threading.Thread(target=later)
    started = time.monotonic()
    thread.start()
    assert store.wait_for_verdict("g_test", 2, 10) == verdicts(2, 3)[0]
    assert time.monotonic() - started < 5  # woken by the write, not by the timeout
    thread.join()


# -- time control: timers and the outbox (CONTRACT section 8) ------------------------------------------------
def test_timers_come_due_in_time_order_and_can_be_moved_or_cleared(store):
    store.set_timer("g_b", 2_000)
    store.set_timer("g_a", 1_000)
    store.set_timer("g_c", 5_000)
    assert store.due_timers(999) == []
    assert store.due_timers(2_000) == [("g_a", 1_000), ("g_b", 2_000)]
    assert store.due_timers(10_000, limit=1) == [("g_a", 1_000)]
    store.set_timer("g_a", 9_000)  # moved later: one timer per game
    store.set_timer("g_b", None)   # cleared
    assert store.due_timers(10_000) == [("g_c", 5_000), ("g_a", 9_000)]


def test_outbox_takes_each_event_id_once(store):
    first = {"id": "g_x:3:turn", "type": "turn", "game": "g_x", "seq": 4, "seat": 1}
    assert store.emit_events([first, {"id": "g_x:4:timeout", "type": "timeout", "game": "g_x", "seq": 5}]) == 2
    assert store.emit_events([first, {**first, "seat": 0}]) == 0  # a retry (or a re-fold) adds nothing
    assert [e["id"] for e in store.read_outbox()] == ["g_x:3:turn", "g_x:4:timeout"]
    assert store.read_outbox()[0] == first


def test_claimed_timers_are_leased_to_one_scheduler(store):
    for n, game in enumerate(("g_a", "g_b", "g_c")):
        store.set_timer(game, 1_000 + n)
    assert store.claim_timers(5_000, limit=2, lease_ms=10_000) == [("g_a", 1_000), ("g_b", 1_001)]
    assert store.claim_timers(5_000) == [("g_c", 1_002)]  # a second scheduler gets what is left
    assert store.claim_timers(5_000) == []
    assert store.claim_timers(15_000) == [("g_a", 15_000), ("g_b", 15_000)]  # the first one's lease ran out


def test_tournament_logs_append_atomically_apart_from_games(store):
    first = seal({"v": 1, "type": "created", "seq": 0, "at": "2026-11-21T10:00:00.000Z", "tournament": "t_one"},
                 GENESIS)
    store.create_tournament("t_one", first, b"\x07" * 32)
    with pytest.raises(GameExists):
        store.create_tournament("t_one", first, b"\x08" * 32)
    second = entry(1, first["hash"], n=1)
    assert store.append_tournament("t_one", second, first["hash"], signature="sig-join").position == 1
    with pytest.raises(StaleAppend) as caught:
        store.append_tournament("t_one", entry(1, first["hash"], n="late"), first["hash"])
    assert (caught.value.seq, caught.value.head) == (2, second["hash"])
    with pytest.raises(DuplicateSubmission):
        store.append_tournament("t_one", entry(2, second["hash"]), second["hash"], signature="sig-join")
    entries, tip = store.read_tournament("t_one")
    assert entries == [first, second] and tip == (2, second["hash"])
    assert store.read_tournament("t_one", 1)[0] == [second]
    assert store.tournament_secret("t_one") == b"\x07" * 32
    assert store.list_tournaments() == ["t_one"]
    assert not store.exists("t_one")  # a tournament is no game
    with pytest.raises(GameNotFound):
        store.read_tournament("t_none")
    with pytest.raises(GameNotFound):
        store.append_tournament("t_none", entry(1, first["hash"]), first["hash"])
    with pytest.raises(ValueError):
        store.read_tournament("t_{x}")


def test_tournaments_newest_first_in_pages(store):
    for name in ("t_a", "t_b", "t_c"):
        first = seal({"v": 1, "type": "created", "seq": 0, "at": "2026-11-21T10:00:00.000Z", "tournament": name},
                     GENESIS)
        store.create_tournament(name, first, b"\x07" * 32)
    assert store.list_tournaments() == ["t_a", "t_b", "t_c"]  # oldest first (ratings fold in creation order)
    assert store.newest_tournaments() == ["t_c", "t_b", "t_a"]
    assert store.newest_tournaments(1, 1) == ["t_b"]
    assert store.newest_tournaments(2, 100) == ["t_a"]
    assert store.newest_tournaments(3, 100) == []


def test_batched_reads_projections_and_releases_answer_as_one_by_one(store):
    """The replay worker's batch (``read_since_many``, ``write_projections``, ``release_many``; one round trip
    each on a plain Redis, one call per game on a cluster) answers exactly as the single calls do."""
    logs = {game: grow(store, game, count) for game, count in (("g_a", 3), ("g_b", 5))}
    answers = store.read_since_many([("g_a", 2), ("g_b", 6), ("g_nosuch", 0)])
    assert answers[0] == (logs["g_a"][2:], (4, logs["g_a"][-1]["hash"])) == store.read_since("g_a", 2)
    assert answers[1] == ([], (6, logs["g_b"][-1]["hash"]))
    assert isinstance(answers[2], GameNotFound)
    assert store.write_projection("g_b", projection(2, logs["g_b"][1]["hash"]), verdicts(0, 2), 0) == 1
    assert store.write_projections([
        ("g_a", projection(4, logs["g_a"][3]["hash"]), verdicts(0, 4), 0),
        ("g_b", projection(6, logs["g_b"][5]["hash"]), verdicts(0, 6), 0),  # stored at 2, not 0: refused
    ]) == [1, -1]
    assert store.read_verdicts("g_a") == verdicts(0, 4) and store.read_projection("g_b")["seq"] == 2
    assert store.release_many([("g_a", 4), ("g_b", 5)]) == [True, False]  # g_b's log is 6 long: not released
    assert store.pending_since("g_a") is None and store.pending_since("g_b") is not None
    assert store.read_since_many([]) == [] and store.write_projections([]) == [] and store.release_many([]) == []


def test_raised_pending_flags_are_indexed_by_their_time(store):
    """The index the reconciler reads instead of every game (``stale_pending``): a flag raised by a creation
    or an append, refreshed by ``mark_pending`` or a release that found more entries, is there with its
    time; a released flag is not."""
    log = grow(store, "g_a", 1)  # created: flag raised; the append found it up
    grow(store, "g_b", 0)
    store.mark_pending("g_a", 1_000)
    store.mark_pending("g_b", 2_000)
    assert store.stale_pending(1_500) == ["g_a"]
    assert store.stale_pending(2_000) == ["g_a", "g_b"]
    assert store.release_pending("g_b", 1)  # its log is 1 long: released
    assert store.stale_pending(2**62) == ["g_a"]
    assert not store.release_pending("g_a", 1)  # 2 long: refreshed to now, not released
    assert store.stale_pending(1_500) == []
    assert store.stale_pending(2**62) == ["g_a"]
    item = entry(2, log[-1]["hash"])
    store.release_pending("g_a", 2)
    assert store.append("g_a", item, log[-1]["hash"]).pending_set  # raised again: indexed again
    assert store.stale_pending(2**62) == ["g_a"]


def test_an_append_can_set_or_clear_the_games_timer(store):
    """``append(timer=…)``: the game's next timer with the entry (one script on one Redis; a second command on
    a cluster); the default leaves it alone; a refused append sets nothing."""
    log = grow(store, "g_t", 0)
    store.set_timer("g_t", 5_000)
    item = entry(1, log[-1]["hash"])
    store.append("g_t", item, log[-1]["hash"])
    assert dict(store.due_timers(2**62)) == {"g_t": 5_000}
    log.append(item)
    item = entry(2, log[-1]["hash"])
    store.append("g_t", item, log[-1]["hash"], timer=7_000)
    assert dict(store.due_timers(2**62)) == {"g_t": 7_000}
    log.append(item)
    with pytest.raises(StaleAppend):
        store.append("g_t", entry(2, log[1]["hash"]), log[1]["hash"], timer=9_000)
    assert dict(store.due_timers(2**62)) == {"g_t": 7_000}
    store.append("g_t", entry(3, log[-1]["hash"]), log[-1]["hash"], timer=None)
    assert store.due_timers(2**62) == []


# -- a game's messages (CONTRACT section 12): their own chained stream beside the log ------------------------
def message(seq: int, prev: str, log_seq: int, text: str = "hi") -> dict:
    return seal({"v": 1, "type": "message", "seq": seq, "prev": prev, "at": "2026-11-21T10:00:02.000Z",
                 "log_seq": log_seq, "submission": {"envelope": {"text": text}, "sig": f"msig-{seq}-{text}"}}, prev)


def test_messages_chain_beside_the_log_and_record_its_length(store):
    from referee.store.messages import messages_of

    messages = messages_of(store)
    log = grow(store, "g_msg", 2)
    assert messages.tip("g_msg") == (0, GENESIS, 3)
    assert messages.read("g_msg") == []
    first = message(0, GENESIS, 3)
    assert messages.append("g_msg", first, "s0") == 0
    store.append("g_msg", entry(3, log[-1]["hash"]), log[-1]["hash"])  # a move between two messages
    second = message(1, first["hash"], 4, "again")
    assert messages.append("g_msg", second, "s1") == 1
    assert messages.read("g_msg") == [first, second]
    assert messages.read("g_msg", 1) == [second]
    assert messages.tip("g_msg") == (2, second["hash"], 4)
    assert first_broken_link(messages.read("g_msg")) is None
    assert store.tip("g_msg").seq == 4  # the log holds no message


def test_a_message_at_a_stale_position_or_log_length_or_twice_writes_nothing(store):
    from referee.store.messages import messages_of

    messages = messages_of(store)
    log = grow(store, "g_msg", 0)
    first = message(0, GENESIS, 1)
    messages.append("g_msg", first, "s0")
    with pytest.raises(StaleAppend) as stale:
        messages.append("g_msg", message(0, GENESIS, 1, "late"), "s1")
    assert (stale.value.seq, stale.value.head) == (1, first["hash"])
    with pytest.raises(StaleAppend):
        messages.append("g_msg", message(1, "ab" * 32, 1), "s1")
    store.append("g_msg", entry(1, log[-1]["hash"]), log[-1]["hash"])
    with pytest.raises(StaleAppend):  # the log moved on since the message was built
        messages.append("g_msg", message(1, first["hash"], 1), "s1")
    with pytest.raises(DuplicateSubmission) as dup:
        messages.append("g_msg", message(1, first["hash"], 2, "same sig"), "s0")
    assert dup.value.position == 0 and dup.value.seq == 1
    assert messages.read("g_msg") == [first]
    with pytest.raises(GameNotFound):
        messages.append("g_none", message(0, GENESIS, 1), "s9")
    with pytest.raises(GameNotFound):
        messages.tip("g_none")


def test_concurrent_messages_at_one_position_exactly_one_wins(store):
    from referee.store.messages import messages_of

    messages = messages_of(store)
    grow(store, "g_msg", 0)
    wins, losses = [], []

    def post(i: int) -> None:
        try:
            wins.append(messages.append("g_msg", message(0, GENESIS, 1, f"t{i}"), f"s{i}"))
        except StaleAppend:
            losses.append(i)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wins == [0] and len(losses) == 7 and len(messages.read("g_msg")) == 1


def test_a_seats_mute_is_replaced_only_by_a_later_request(store):
    from referee.store.messages import messages_of

    messages = messages_of(store)
    grow(store, "g_msg", 0)
    assert messages.mutes("g_msg") == {}
    assert messages.set_mute("g_msg", 0, [1, 2], 1000)
    assert not messages.set_mute("g_msg", 0, [], 1000)  # the same request again, or an older one
    assert not messages.set_mute("g_msg", 0, [], 999)
    assert messages.set_mute("g_msg", 1, [0], 500)
    assert messages.mutes("g_msg") == {0: [1, 2], 1: [0]}
    assert messages.set_mute("g_msg", 0, [], 1001)
    assert messages.mutes("g_msg") == {0: [], 1: [0]}


def test_follow_waits_for_the_next_entry_or_message_of_the_game(store):
    """What the live stream reads (issue 22 item 4): one blocking read of the log and the messages."""
    import json
    import threading
    import time

    from referee.store.messages import messages_of

    messages = messages_of(store)
    log = grow(store, "g_follow", 2)
    assert messages.follow("g_follow", 2, 0, timeout=0.1) == ([], [])
    first = message(0, GENESIS, 3)
    started = time.monotonic()
    threading.Timer(0.3, lambda: messages.append("g_follow", first, "s0")).start()
    entries, found = messages.follow("g_follow", 2, 0, timeout=10)
    assert entries == [] and found == [first] and time.monotonic() - started < 5  # woken, not timed out
    assert messages.follow("g_follow", 2, 1, timeout=0.1) == ([], [])
    store.append("g_follow", entry(3, log[-1]["hash"]), log[-1]["hash"])
    entries, found = messages.follow("g_follow", 2, 0, timeout=10)
    assert [position for position, _raw in entries] == [3] and found == [first]
    assert json.loads(entries[0][1])["seq"] == 3


ALICE, BOB = "A" * 43, "B-_" + "b" * 40


def test_a_players_games_are_listed_newest_first_in_pages(store):
    assert store.player_games(ALICE) == []
    store.index_player_games([(ALICE, "g_a", 1000), (BOB, "g_a", 1000), (ALICE, "g_b", 3000)])
    store.index_player_games([(ALICE, "g_c", 2000), (ALICE, "g_b", 3000)])  # listed again: nothing changes
    assert store.player_games(ALICE) == [("g_b", 3000), ("g_c", 2000), ("g_a", 1000)]
    assert store.player_games(ALICE, 1, 1) == [("g_c", 2000)]
    assert store.player_games(ALICE, 0, 0) == []
    assert store.player_games(ALICE, 5, 10) == []
    assert store.player_games(BOB) == [("g_a", 1000)]
    store.index_player_games([])
    # tournaments: their own index per key, apart from the games'
    assert store.player_tournaments(ALICE) == []
    store.index_player_tournaments([(ALICE, "t_a", 5000), (ALICE, "t_b", 4000), (BOB, "t_b", 4000)])
    assert store.player_tournaments(ALICE) == [("t_a", 5000), ("t_b", 4000)]
    assert store.player_tournaments(ALICE, 1, 5) == [("t_b", 4000)] and store.player_tournaments(BOB) == [("t_b", 4000)]
    assert len(store.player_games(ALICE)) == 3


def test_a_game_leaves_a_players_list_and_nobody_elses(store):
    store.index_player_games([(ALICE, "g_a", 1000), (BOB, "g_a", 1000), (ALICE, "g_b", 3000)])
    store.unindex_player_games([(ALICE, "g_a"), (ALICE, "g_unlisted"), (BOB, "g_b")])
    assert store.player_games(ALICE) == [("g_b", 3000)]
    assert store.player_games(BOB) == [("g_a", 1000)]
    store.unindex_player_games([])
    store.index_player_games([(ALICE, "g_a", 1000)])  # taken again: listed again
    assert store.player_games(ALICE) == [("g_b", 3000), ("g_a", 1000)]


def test_open_games_are_listed_oldest_first_and_counted_per_creator(store):
    assert store.open_games() == [] and store.count_open_games() == 0 and store.count_open_games(ALICE) == 0
    store.list_open_games([("g_b", ALICE, 2000), ("g_a", BOB, 1000), ("g_c", ALICE, 3000), ("g_d", None, 1500)])
    assert store.open_games() == [("g_a", 1000), ("g_d", 1500), ("g_b", 2000), ("g_c", 3000)]
    assert store.open_games(1, 2) == [("g_d", 1500), ("g_b", 2000)] and store.open_games(0, 0) == []
    assert store.open_games(9, 5) == []
    assert (store.count_open_games(), store.count_open_games(ALICE), store.count_open_games(BOB)) == (4, 2, 1)
    store.list_open_games([("g_b", ALICE, None), ("g_b", ALICE, None), ("g_x", BOB, None)])  # off the lists, twice
    assert [game for game, _ms in store.open_games()] == ["g_a", "g_d", "g_c"]
    assert (store.count_open_games(), store.count_open_games(ALICE), store.count_open_games(BOB)) == (3, 1, 1)
    store.list_open_games([("g_b", ALICE, 2000)])  # a seat left: listed again, at its creation time
    assert [game for game, _ms in store.open_games()] == ["g_a", "g_d", "g_b", "g_c"]
    with pytest.raises(ValueError):
        store.list_open_games([("g_e", "a{b}", 1)])
    with pytest.raises(ValueError):
        store.count_open_games("a b")


def test_a_stored_projection_write_keeps_the_open_listing_and_a_refused_one_does_not(store):
    grow(store, "g_open", 2)
    listing = {"creator": ALICE, "created_ms": 5000, "open": True}
    assert store.write_projection("g_open", {"seq": 1, "open_listing": listing}, [{"seq": 0}], 0) == 1
    assert store.open_games() == [("g_open", 5000)] and store.count_open_games(ALICE) == 1
    # a write the store refuses (already there) leaves the listing as it is
    assert store.write_projection("g_open", {"seq": 1, "open_listing": {**listing, "open": False}}, [{"seq": 0}],
                                  0) == 0
    assert store.open_games() == [("g_open", 5000)]
    assert store.write_projection("g_open", {"seq": 2, "open_listing": {**listing, "open": False}}, [{"seq": 1}],
                                  1) == 1
    assert store.open_games() == [] and store.count_open_games(ALICE) == 0
    # a projection without it leaves the listing alone
    store.list_open_games([("g_open", ALICE, 5000)])
    assert store.write_projection("g_open", {"seq": 3}, [{"seq": 2}], 2) == 1
    assert store.open_games() == [("g_open", 5000)]
    assert "open_listing" not in (store.read_projection("g_open") or {})


def test_a_games_rematch_is_named_once_whoever_asks(store):
    grow(store, "g_done", 1)
    assert store.read_rematch("g_done") is None
    assert store.claim_rematch("g_unknown", "g_r1") is None  # no log in the store: nothing is named
    results: list[str | None] = []
    threads = [threading.Thread(target=lambda i=i: results.append(store.claim_rematch("g_done", f"g_r{i}")))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(results)) == 1 and results[0] in {f"g_r{i}" for i in range(8)}
    assert store.claim_rematch("g_done", "g_other") == results[0] == store.read_rematch("g_done")
    assert store.read_rematch("g_unknown") is None
    with pytest.raises(ValueError):
        store.claim_rematch("g_done", "a{b}")


@pytest.mark.parametrize("bad", ["", "a{b}", "a:b", "a b", "x" * 65])
def test_player_keys_that_could_escape_their_hash_tag_are_refused(store, bad):
    with pytest.raises(ValueError):
        store.unindex_player_games([(bad, "g_a")])
    with pytest.raises(ValueError):
        store.player_games(bad)
    with pytest.raises(ValueError):
        store.index_player_games([(bad, "g_a", 1)])
    with pytest.raises(ValueError):
        store.player_tournaments(bad)
    with pytest.raises(ValueError):
        store.index_player_tournaments([(bad, "t_a", 1)])


def test_batched_reads_of_created_last_entries_and_projections(store):
    first = grow(store, "g_one", 3)
    second = grow(store, "g_two", 0)
    assert store.write_projection("g_one", projection(4, first[3]["hash"]), verdicts(0, 4), 0) == 1
    games = ["g_one", "g_none", "g_two"]
    assert store.read_created(games) == [first[0], None, second[0]]
    assert store.read_last_entries(games) == [first[3], None, second[0]]
    assert store.read_projections(games) == [store.read_projection(g) for g in games]
    assert store.read_projections(games)[0]["seq"] == 4 and store.read_projections(games)[2] is None
    listed = store.read_projections(games, ("status", "accepted"))
    assert listed[1] is None and listed[2] is None
    assert listed[0] == {**{name: None for name in store.read_projections(games)[0]}, "seq": 4, "status": "active",
                         "accepted": [0, 1]}
    assert store.read_created([]) == store.read_last_entries([]) == store.read_projections([]) == []


def test_a_message_over_the_cap_of_bytes_writes_nothing_and_reads_come_in_pages(store):
    """Issue 37, item 4: ``append(..., max_bytes)`` refuses a message that would take the game's stored messages
    over the cap (``MessagesFull``, with the bytes stored); ``read(game, start, count)`` gives at most ``count``."""
    from referee.store.messages import MessagesFull, messages_of

    messages = messages_of(store)
    grow(store, "g_msg", 0)
    first = message(0, GENESIS, 1, "x" * 400)
    messages.append("g_msg", first, "s0", max_bytes=100_000)
    second = message(1, first["hash"], 1, "y" * 400)
    with pytest.raises(MessagesFull) as refused:
        messages.append("g_msg", second, "s1", max_bytes=2000)  # one is about 1,100 bytes: two are over
    assert 1000 < refused.value.stored < 2000 and refused.value.cap == 2000
    assert messages.read("g_msg") == [first] and messages.tip("g_msg").length == 1
    assert messages.append("g_msg", second, "s1", max_bytes=0) == 1  # 0: no cap
    assert messages.read("g_msg", 0, 1) == [first] and messages.read("g_msg", 1, 5) == [second]
    assert messages.read("g_msg", 2, 1) == []
