"""Event streams per client address (issue 37, item 9), on real HTTP servers and the real work Redis: one client
holds at most ``REFEREE_MAX_STREAMS_PER_CLIENT`` streams (the three kinds together) over every web process; one
more is 429 ``rate/limited`` with ``Retry-After``; a closed stream gives its slot back; a crashed process's slots
run out with their leases; another client is not held back; ``/health`` answers throughout."""

from __future__ import annotations

import time

import pytest
import requests
from live_server import serving
from sse_helpers import SSEClient
from svc_helpers import Http, accept_all, create_game
from test_events import gunicorn

from referee.api.stream_slots import SLOTS_KEY


@pytest.fixture
def capped(make_app):
    """Two web processes' apps on one Redis (the cap is counted over both), with a cap of 4 and a quick heartbeat."""
    settings = {"REFEREE_MAX_STREAMS_PER_CLIENT": "4", "REFEREE_SSE_HEARTBEAT": "0.5"}
    first = make_app(**settings)
    second = make_app(**{**settings, "REFEREE_QUEUE": first.config["REFEREE_QUEUE"]})
    game = create_game(Http(first.test_client()), "fivetowers", 2)
    accept_all(Http(first.test_client()), game)
    with serving(first) as one, serving(second) as two:
        yield one, two, game.game_id, first


def _open(base: str, path: str) -> SSEClient:
    return SSEClient(base, path, timeout=10)


def test_one_client_holds_at_most_the_cap_over_every_process(capped):
    one, two, game_id, _app = capped
    held = [_open(one, f"/games/{game_id}/events"), _open(two, f"/games/{game_id}/events"),
            _open(one, f"/games/events?games={game_id}"), _open(two, f"/players/events?games={game_id}")]
    try:
        assert [s.status for s in held] == [200] * 4
        for stream in held:
            assert stream.next_block().retry is not None  # each is a live stream
        refused = [_open(base, f"/games/{game_id}/events") for base in (one, two)]
        assert [s.status for s in refused] == [429, 429]
        body = refused[0].body_json()
        assert body["error"]["code"] == "rate/limited"
        assert body["error"]["details"]["setting"] == "REFEREE_MAX_STREAMS_PER_CLIENT"
        assert int(refused[0].headers["Retry-After"]) >= 1
        for stream in refused:
            stream.close()
        assert requests.get(f"{one}/health", timeout=5).status_code == 200
        held.pop().close()  # a tab closed: its slot comes back once the server notices (its next heartbeat)
        deadline = time.monotonic() + 10
        while True:
            again = _open(two, f"/games/{game_id}/events")
            if again.status == 200 or time.monotonic() > deadline:
                break
            again.close()
            time.sleep(0.2)
        assert again.status == 200
        held.append(again)
    finally:
        for stream in held:
            stream.close()


def test_a_dead_process_slots_run_out_and_another_client_is_not_held_back(make_app):
    """Behind a trusted proxy (``X-Forwarded-For``): the slots another process holds in Redis count for their client;
    slots whose lease ended (a process that died) do not; another client has its own."""
    app = make_app(REFEREE_MAX_STREAMS_PER_CLIENT="2", REFEREE_SSE_HEARTBEAT="0.5",
                   REFEREE_TRUSTED_PROXIES="127.0.0.1")
    game = create_game(Http(app.test_client()), "fivetowers", 2)
    work = app.extensions["referee.store"].queue_redis
    now_ms = int(time.time() * 1000)
    work.zadd(SLOTS_KEY.format(address="192.0.2.9"), {f"live-{n}": now_ms + 60_000 for n in range(2)})
    work.zadd(SLOTS_KEY.format(address="192.0.2.10"), {f"dead-{n}": now_ms - 1000 for n in range(2)})
    path = f"/games/{game.game_id}/events"
    with serving(app) as base:
        full = SSEClient(base, path, headers={"X-Forwarded-For": "192.0.2.9"})
        streams = [SSEClient(base, path, headers={"X-Forwarded-For": "192.0.2.10"}) for _ in range(2)]
        extra = SSEClient(base, path, headers={"X-Forwarded-For": "192.0.2.10"})
        try:
            assert full.status == 429  # two live slots of another process
            assert [s.status for s in streams] == [200, 200]  # the dead process's slots ran out
            assert extra.status == 429
            held = work.zrange(SLOTS_KEY.format(address="192.0.2.10"), 0, -1)
            assert len(held) == 2 and not any(m.startswith(b"dead-") for m in held)
            assert 0 < work.pttl(SLOTS_KEY.format(address="192.0.2.10")) <= 30_000  # goes with its last lease
        finally:
            for stream in [full, extra, *streams]:
                stream.close()


def test_no_cap_with_zero(make_app):
    app = make_app(REFEREE_MAX_STREAMS_PER_CLIENT="0", REFEREE_SSE_HEARTBEAT="0.5")
    game = create_game(Http(app.test_client()), "fivetowers", 2)
    with serving(app) as base:
        streams = [_open(base, f"/games/{game.game_id}/events") for _ in range(6)]
        try:
            assert [s.status for s in streams] == [200] * 6
        finally:
            for stream in streams:
                stream.close()


def test_fifty_streams_from_one_client_leave_the_deployment_answering(redis_url, tmp_path):
    """gunicorn with two workers, as deployed (the default cap): fifty streams from one client, eight are held,
    the rest refused at once with 429, and ``/health`` and another request answer."""
    with gunicorn(redis_url, tmp_path) as url:
        http = Http(requests.Session(), url)
        game = create_game(http, "fivetowers", 2)
        streams = [_open(url, f"/games/{game.game_id}/events") for _ in range(50)]
        try:
            statuses = [s.status for s in streams]
            assert statuses.count(200) == 8 and statuses.count(429) == 42, statuses
            assert requests.get(f"{url}/health", timeout=5).status_code == 200
            assert http.get(f"/games/{game.game_id}")[0] == 200
        finally:
            for stream in streams:
                stream.close()


def test_a_browser_that_reconnects_takes_over_its_own_slot(make_app):
    """A browser names itself (``?client=``, as live-hub.js does): its new stream takes over the slot of the one it
    closed, which the server notices only at its next write (a long heartbeat here); other ids count as others."""
    app = make_app(REFEREE_MAX_STREAMS_PER_CLIENT="2", REFEREE_SSE_HEARTBEAT="30")
    game = create_game(Http(app.test_client()), "fivetowers", 2)
    path = f"/players/events?games={game.game_id}&client="
    with serving(app) as base:
        first = SSEClient(base, path + "browser-one-0001")
        other = SSEClient(base, path + "browser-two-0002")
        assert (first.status, other.status) == (200, 200)
        first.close()  # the page navigated: the server still counts it until its next write
        again = SSEClient(base, path + "browser-one-0001")
        third = SSEClient(base, path + "browser-three-03")
        bad = SSEClient(base, path + "x")
        try:
            assert again.status == 200 and again.next_block().retry is not None
            assert third.status == 429  # a third browser at this address: over the cap of 2
            assert bad.status == 400 and bad.body_json()["error"]["details"]["problems"][0]["path"] == "$query.client"
            members = app.extensions["referee.store"].queue_redis.zrange(SLOTS_KEY.format(address="127.0.0.1"), 0, -1)
            assert sorted(m.split(b":")[0] for m in members) == [b"browser-one-0001", b"browser-two-0002"]
        finally:
            for stream in (other, again, third, bad):
                stream.close()
