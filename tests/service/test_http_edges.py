"""What a keep-alive client sees when a body is refused, over one raw socket, against the servers the
referee runs under: gunicorn (production: the Procfile, ``referee serve``) and Werkzeug's threaded server
(the suite's ``live_server``). Issue 14, items 1 and 10."""

from __future__ import annotations

import json
import socket
import uuid

import pytest
from live_server import serving
from raw_http import Connection, gunicorn
from raw_http import request as raw

from referee.app import create_app

LIMIT = 65536


@pytest.fixture(scope="module", params=["gunicorn", "werkzeug"])
def server(request, tmp_path_factory, redis_server):
    var = tmp_path_factory.mktemp("edges")
    settings = {"REDIS_URL": redis_server.url, "REFEREE_VAR": str(var), "REFEREE_DISPATCH": "none",
                "REFEREE_QUEUE": f"edges-{uuid.uuid4().hex[:8]}", "REFEREE_MAX_BODY": LIMIT}
    if request.param == "gunicorn":
        with gunicorn(settings, var / "gunicorn.log") as port:
            yield request.param, port
    else:
        app = create_app(settings)
        with serving(app) as url:
            yield request.param, int(url.rsplit(":", 1)[1])
        app.extensions["referee.store"].close()


def keeps_its_word(connection, headers) -> str:
    """What the server said about the connection, after checking that it does it: with ``keep-alive`` the
    next request on the connection is answered; with ``close`` the server closes it (once the client has
    finished sending: Werkzeug's server reads what the client sends until then)."""
    said = headers.get("connection", "keep-alive").lower()
    if said == "close":
        try:
            connection.sock.shutdown(socket.SHUT_WR)
        except OSError:  # ENOTCONN: the server has already closed (reset) the connection
            return said
        assert connection.closed_by_server(), "the server said 'Connection: close' but kept the connection"
    else:
        connection.send(raw("GET", "/rulesets"))
        status, _, body = connection.response()
        assert status == 200 and "rulesets" in json.loads(body), "the server said keep-alive but broke it"
    return said


def test_an_oversized_body_is_refused_and_the_connection_closed_saying_so(server):
    connection = Connection(server[1])
    try:
        connection.send(raw("POST", "/games", b'{"x": "' + b"a" * (LIMIT * 2) + b'"}'), background=True)
        status, headers, body = connection.response()
        assert status == 413, body
        assert json.loads(body)["error"] == {"code": "request/too_large", "details": {"limit": LIMIT},
                                             "message": f"the body is larger than the limit of {LIMIT} bytes"}
        # the rest of the body is not read: the server says it closes the connection, and does
        assert keeps_its_word(connection, headers) == "close"
    finally:
        connection.close()


def test_a_refused_body_within_the_limit_keeps_the_connection(server):
    """415 is answered without parsing the body, which was read all the same: the next request on the same
    connection is answered (gunicorn; Werkzeug's server closes every connection, and says so)."""
    name, port = server
    connection = Connection(port)
    try:
        connection.send(raw("POST", "/games", b'{"ruleset": "fivetowers"' + b" " * 50000 + b"}",
                                content_type="text/plain"))
        status, headers, body = connection.response()
        assert status == 415 and json.loads(body)["error"]["code"] == "request/unsupported_media_type"
        assert keeps_its_word(connection, headers) == ("keep-alive" if name == "gunicorn" else "close")
    finally:
        connection.close()


def test_a_chunked_body_over_the_limit_is_413_not_a_truncated_400(server):
    connection = Connection(server[1])
    try:
        body = b'{"ruleset": "' + b"a" * (10 * 1024 * 1024) + b'"}'  # 10 MB, no Content-Length
        connection.send(raw("POST", "/games", body, chunked=True), background=True)
        status, headers, answer = connection.response()
        assert status == 413, answer
        assert json.loads(answer)["error"]["code"] == "request/too_large"
        assert keeps_its_word(connection, headers) == "close"
    finally:
        connection.close()


def test_a_chunked_body_within_the_limit_is_read_whole(server):
    name, port = server
    connection = Connection(port)
    try:
        body = json.dumps({"ruleset": "fivetowers", "seats": [], "nonce": "x" * 100}).encode()
        connection.send(raw("POST", "/games", body, chunked=True, chunk=7))
        status, headers, answer = connection.response()
        # the whole body reached the schema: the only problem is the empty seat list
        assert status == 400, answer
        problems = json.loads(answer)["error"]["details"]["problems"]
        assert [p["path"] for p in problems] == ["$.seats"], problems
        assert keeps_its_word(connection, headers) == ("keep-alive" if name == "gunicorn" else "close")
    finally:
        connection.close()
