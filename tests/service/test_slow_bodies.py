"""A client that trickles its request body is cut off (issue 17 item 1): the body must arrive within
``REFEREE_BODY_TIMEOUT`` seconds, else 408 and the connection is closed — against a real gunicorn with the
deployment's worker model (gevent, ``referee/running/gunicorn_conf.py``), over raw sockets."""

from __future__ import annotations

import json
import socket

from raw_http import gunicorn


def test_a_trickled_body_gets_408_and_the_server_keeps_answering(redis_url, tmp_path):
    env = {"REDIS_URL": redis_url, "REFEREE_VAR": tmp_path / "var", "REFEREE_BODY_TIMEOUT": "1"}
    deployment = ["--config", "python:referee.running.gunicorn_conf", "--workers", "1"]
    with gunicorn(env, tmp_path / "gunicorn.log", deployment) as port:
        slow = socket.create_connection(("127.0.0.1", port), timeout=10)
        slow.sendall(b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n")
        answer, sent = b"", 0
        for _ in range(100):  # one byte every 0.2 s: the whole body would take 20 s
            try:
                slow.sendall(b" ")
                sent += 1
            except OSError:
                break
            slow.settimeout(0.2)
            try:
                chunk = slow.recv(4096)
            except TimeoutError:
                continue
            if not chunk:
                break
            answer += chunk
            if b"\r\n\r\n" in answer:
                break
        slow.settimeout(5)
        while True:  # the head and the body may come in separate segments: read until the server closes
            try:
                chunk = slow.recv(4096)
            except OSError:
                break
            if not chunk:
                break
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"connection: close" in head.lower()
        assert json.loads(body)["error"]["code"] == "request/timeout"
        assert sent < 100  # cut off before the body was complete
        health = socket.create_connection(("127.0.0.1", port), timeout=5)
        health.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert health.recv(64).startswith(b"HTTP/1.1 200")
        slow.close()
        health.close()
