"""``GET /games/{id}/events`` (CONTRACT section 9) against real servers: the app served by werkzeug on
real sockets, and gunicorn started with the deployment's worker model (``referee/running/gunicorn_conf.py``)."""

from __future__ import annotations

import contextlib
import os
import random
import selectors
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests
from live_server import serving
from ports import free_port
from sse_helpers import SSEClient
from svc_helpers import Http, accept_all, create_game, move_envelope, signed

REPO = Path(__file__).resolve().parents[2]


def test_an_event_per_new_entry_with_its_position_and_data(server, store):
    http = Http(requests.Session(), server)
    game = create_game(http, "fivetowers", 2)
    stream = SSEClient(server, f"/games/{game.game_id}/events")
    try:
        assert stream.status == 200
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        opening = stream.next_block()
        assert opening.id == "0" and opening.data is None and opening.retry  # starts at the end of the log
        accept_all(http, game)  # accepted, accepted, started
        events = [stream.next_event() for _ in range(3)]
        log = store.read_log(game.game_id)
        assert [e.id for e in events] == ["1", "2", "3"]
        assert [e.entry() for e in events] == log[1:4]
        assert all("hash" in e.entry() for e in events)
        assert [e.entry()["type"] for e in events] == ["accepted", "accepted", "started"]
    finally:
        stream.close()


def test_last_event_id_resumes_exactly_after_n(server, store):
    http = Http(requests.Session(), server)
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    log = store.read_log(game.game_id)
    assert len(log) == 4
    for headers, path in (({"Last-Event-ID": "1"}, ""), ({}, "?last_event_id=1")):
        stream = SSEClient(server, f"/games/{game.game_id}/events{path}", headers=headers)
        try:
            assert stream.next_block().id == "1"
            first, second = stream.next_event(), stream.next_event()
            assert (first.id, second.id) == ("2", "3")
            assert [first.entry(), second.entry()] == log[2:4]
        finally:
            stream.close()
    # the header wins over the query; from the last entry on, the next event is the next move
    stream = SSEClient(server, f"/games/{game.game_id}/events?last_event_id=0", headers={"Last-Event-ID": "3"})
    try:
        assert stream.next_block().id == "3"
        status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat = legal["to_move"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][0])
        status, receipt = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
        assert status == 202, receipt
        event = stream.next_event()
        assert event.id == "4" and event.entry()["hash"] == receipt["hash"]
    finally:
        stream.close()


def test_unknown_game_is_404_and_a_bad_last_event_id_400(server):
    for game_id in ("nope", "bad:id"):
        stream = SSEClient(server, f"/games/{game_id}/events")
        assert stream.status == 404
        assert stream.body_json()["error"]["code"] == "game/not_found"
        stream.close()
    http = Http(requests.Session(), server)
    game = create_game(http, "towerup", 2)
    for headers, path in (({"Last-Event-ID": "x"}, ""), ({}, "?last_event_id=-1"), ({"Last-Event-ID": "1"}, "")):
        stream = SSEClient(server, f"/games/{game.game_id}/events{path}", headers=headers)
        assert stream.status == 400
        assert stream.body_json()["error"]["code"] == "request/invalid"
        stream.close()


def test_heartbeats_and_a_bounded_lifetime(make_app):
    app = make_app(REFEREE_SSE_HEARTBEAT=0.1, REFEREE_SSE_LIFETIME=0.5)
    with serving(app) as url:
        game = create_game(Http(requests.Session(), url), "towerup", 2)
        stream = SSEClient(url, f"/games/{game.game_id}/events")
        blocks = []
        while (block := stream.next_block(timeout=5)) is not None:
            blocks.append(block)
        stream.close()
    assert blocks[0].id == "0"
    assert any(b.comment for b in blocks[1:])  # heartbeats while nothing happened
    assert not any(b.data for b in blocks)  # and then the server ended the stream by itself


def test_memory_store_streams_too(tmp_path):
    from referee.app import create_app

    app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": str(tmp_path), "TESTING": True})
    with serving(app) as url:
        http = Http(requests.Session(), url)
        game = create_game(http, "fivetowers", 2)
        stream = SSEClient(url, f"/games/{game.game_id}/events", headers={"Last-Event-ID": "0"})
        accept_all(http, game)
        assert [stream.next_event().id for _ in range(3)] == ["1", "2", "3"]
        stream.close()


def test_the_lobby_stream_notices_new_entries_of_the_games_it_follows(server):
    http = Http(requests.Session(), server)
    one, two, other = (create_game(http, "fivetowers", 2) for _ in range(3))
    stream = SSEClient(server, f"/games/events?games={one.game_id},{two.game_id},g_unknown")
    try:
        assert stream.status == 200
        assert stream.next_block().retry
        accept_all(http, other)  # not followed: nothing arrives for it
        accept_all(http, two)
        notices = [stream.next_event().entry() for _ in range(3)]
        assert notices == [{"game": two.game_id, "position": p, "type": t}
                           for p, t in ((1, "accepted"), (2, "accepted"), (3, "started"))]
    finally:
        stream.close()
    for query, status in (("", 400), ("?games=a:b", 400), ("?games=g_nothing", 404),
                          ("?games=" + ",".join(f"g_{i}" for i in range(101)), 400)):
        stream = SSEClient(server, f"/games/events{query}")
        assert stream.status == status, query
        assert stream.body_json()["error"]["code"] == ("request/invalid" if status == 400 else "game/not_found")
        stream.close()


# -- the deployment's worker model ------------------------------------------------------------------


@pytest.fixture
def gunicorn_server(redis_url, tmp_path):
    """gunicorn as ``referee serve`` and the Procfile start it (``--config python:referee.running.gunicorn_conf``); its
    300 streams stand for 300 clients, all from 127.0.0.1 here: no cap of streams per client."""
    with gunicorn(redis_url, tmp_path, REFEREE_MAX_STREAMS_PER_CLIENT="0") as url:
        yield url


@contextlib.contextmanager
def gunicorn(redis_url, tmp_path, **settings: str):
    """gunicorn as ``referee serve`` and the Procfile start it, two workers, with these settings: its URL."""
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "REFEREE_VAR": str(tmp_path / "var"),
           "REFEREE_QUEUE": f"test-{uuid.uuid4().hex[:8]}", "REFEREE_SSE_HEARTBEAT": "2", **settings}
    log = (tmp_path / "gunicorn.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", "--config", "python:referee.running.gunicorn_conf",
                                "--workers", "2", "--bind", f"127.0.0.1:{port}", "referee.app:create_app()"],
                               cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, (tmp_path / "gunicorn.log").read_text()[-3000:]
            try:
                if requests.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.1)
        yield url
    finally:
        process.send_signal(signal.SIGINT)  # quick shutdown (SIGTERM would wait for the streams)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _open_raw(port: int, request: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(request)
    return sock


def test_the_deployment_holds_hundreds_of_streams_and_slow_clients(gunicorn_server):
    """300 open event streams (more than 2 workers × 8 threads could ever hold) and 200 clients trickling
    a POST body (and 50 their headers): ``/health`` and a signed move still answer, and every stream gets the move."""
    port = int(gunicorn_server.rsplit(":", 1)[1])
    http = Http(requests.Session(), gunicorn_server)
    game = create_game(http, "towerup", 2)
    accept_all(http, game)
    seq = http.get(f"/games/{game.game_id}")[1]["seq"]
    streams = [_open_raw(port, f"GET /games/{game.game_id}/events HTTP/1.1\r\nHost: x\r\n"
                               f"Accept: text/event-stream\r\n\r\n".encode()) for _ in range(300)]
    slow = [_open_raw(port, b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            b"Content-Length: 1000\r\n\r\n{") for _ in range(200)]
    slow += [_open_raw(port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: a") for _ in range(50)]  # slow headers
    try:
        received = {s: b"" for s in streams}
        selector = selectors.DefaultSelector()
        for s in streams:
            s.setblocking(False)
            selector.register(s, selectors.EVENT_READ)

        def pump(until) -> None:
            deadline = time.monotonic() + 60
            while not until() and time.monotonic() < deadline:
                for key, _ in selector.select(timeout=0.5):
                    try:
                        chunk = key.fileobj.recv(65536)
                    except BlockingIOError:
                        continue
                    received[key.fileobj] += chunk

        pump(lambda: all(b"id: %d\n" % (seq - 1) in data for data in received.values()))
        assert all(data.startswith(b"HTTP/1.1 200") for data in received.values())
        for s in slow:  # one more byte each: still trickling
            s.sendall(b" ")
        assert requests.get(f"{gunicorn_server}/health", timeout=10).status_code == 200
        legal = http.get(f"/games/{game.game_id}/legal-moves")[1]
        seat = legal["to_move"]
        move = random.Random(1).choice(legal["moves"])
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], move)
        status, receipt = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
        assert status == 202, receipt
        wanted = b"id: %d\ndata: " % receipt["position"]
        pump(lambda: all(wanted in data for data in received.values()))
        assert sum(wanted in data for data in received.values()) == len(streams)
        selector.close()
    finally:
        for s in streams + slow:
            s.close()


def test_the_stream_text_resumes_after_n_sends_heartbeats_and_ends():
    """The pure core of the endpoint: ``sse_stream`` over a log in a list, with a clock of its own."""
    from referee.api.events import sse_stream

    log = [b'{"n":0}', b'{"n":1}', b'{"n":2}']
    now = [0.0]
    asked = []

    def follow(after: int, timeout: float) -> list[tuple[int, bytes]]:
        asked.append((after, timeout))
        rows = list(enumerate(log))[after + 1:]
        if not rows:
            now[0] += timeout  # waited the whole block: nothing came
        return rows

    text = b"".join(sse_stream(follow, 0, heartbeat=15, lifetime=40, clock=lambda: now[0])).decode()
    assert text == ("retry: 1000\nid: 0\n\n"
                    'id: 1\ndata: {"n":1}\n\nid: 2\ndata: {"n":2}\n\n'
                    ": heartbeat\n\n: heartbeat\n\n: heartbeat\n\n")
    assert asked == [(0, 15), (2, 15), (2, 15), (2, 10)]  # the last block only until the lifetime ends


def test_the_stream_carries_offers_answers_resignations_and_the_public_messages_never_the_private(server, store):
    """Issue 22 item 4: the live page hears of the players' own decisions (log entries like the others) and
    of their public messages (``chat`` events without ``id:``), never of a private message."""
    from test_decisions_service import answer, offer, resign
    from test_messages import say

    http = Http(requests.Session(), server)
    game = create_game(http, "fivetowers", 3)
    accept_all(http, game)
    stream = SSEClient(server, f"/games/{game.game_id}/events")
    try:
        opening = stream.next_block()
        status, offered = offer(http, game, 0, "draw")
        assert status == 202, offered
        assert http.post(f"/games/{game.game_id}/messages", say(game, 1, "just between us", to=[2]))[0] == 201
        assert http.post(f"/games/{game.game_id}/messages", say(game, 1, "never!"))[0] == 201
        assert answer(http, game, 1, offered["position"], False)[0] == 202
        assert resign(http, game, 2)[0] == 202
        blocks = [stream.next_event() for _ in range(4)]
    finally:
        stream.close()
    entries = [b for b in blocks if b.event is None]
    assert [b.entry()["type"] for b in entries] == ["offer", "answered", "resigned"]
    assert [int(b.id) for b in entries] == [int(opening.id) + 1, int(opening.id) + 2, int(opening.id) + 3]
    assert [b.entry() for b in entries] == store.read_log(game.game_id)[int(opening.id) + 1:]
    chats = [b for b in blocks if b.event == "chat"]
    assert len(chats) == 1 and chats[0].id is None
    assert (chats[0].entry()["text"], chats[0].entry()["position"], chats[0].entry()["seat"]) == ("never!", 1, 1)
    assert all("between us" not in (b.data or "") for b in blocks)
    # a page that has messages up to k resumes them with ?messages_from=k (the public ones only)
    stream = SSEClient(server, f"/games/{game.game_id}/events?messages_from=0")
    try:
        stream.next_block()
        chat = stream.next_event()
        assert chat.event == "chat" and chat.entry()["text"] == "never!"
    finally:
        stream.close()
    bad = SSEClient(server, f"/games/{game.game_id}/events?messages_from=9")
    assert bad.status == 400 and bad.body_json()["error"]["details"]["problems"][0]["path"] == "$query.messages_from"
