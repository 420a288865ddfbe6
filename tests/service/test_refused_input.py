"""Input that must be refused (issue 14, item 10): paging parameters out of range, bodies that are not JSON
in UTF-8, and an ``envelope.at`` that is no RFC 3339 UTC time or lies in the future. Each is a clear 4xx
and leaves the log as it was."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from svc_helpers import accept_all, create_game, move_envelope, signed

from schemas.games import GAMES_MAX_PAGE, LOG_MAX_PAGE, MAX_POSITION


@pytest.fixture
def active(http):
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    return game, legal


@pytest.mark.parametrize("query", [
    "/log?from=1009631121282225143808", "/log?from=9223372036854775807", "/log?from=-1", "/log?limit=0",
    f"/log?limit={LOG_MAX_PAGE + 1}", "/log?limit=99999999999999999999999",
    "/replay?from=1009631121282225143808", "/replay?at=9223372036854775807", "/replay?limit=18446744073709551617",
    "/replay?at=-1",
])
def test_game_paging_parameters_out_of_range_are_400(http, active, query):
    game, _legal = active
    status, body = http.get(f"/games/{game.game_id}{query}")
    assert status == 400, body
    assert body["error"]["code"] == "request/invalid"
    assert body["error"]["details"]["problems"][0]["path"].startswith("query.")


@pytest.mark.parametrize("query", ["offset=9223372036854775807", f"offset={MAX_POSITION + 1}", "offset=-1",
                                   "limit=0", f"limit={GAMES_MAX_PAGE + 1}", "limit=1e3", "offset=x"])
def test_lobby_paging_parameters_out_of_range_are_400(http, active, query):
    status, body = http.get(f"/games?{query}")
    assert status == 400, body
    assert body["error"]["code"] == "request/invalid"


def test_paging_at_the_edges_of_the_range_answers(http, active):
    game, legal = active
    status, page = http.get(f"/games/{game.game_id}/log?from={MAX_POSITION}&limit={LOG_MAX_PAGE}")
    assert status == 200 and page["entries"] == [] and page["total"] == legal["seq"]
    status, games = http.get(f"/games?offset={MAX_POSITION}&limit={GAMES_MAX_PAGE}")
    assert status == 200 and games["games"] == []
    status, games = http.get("/games")
    assert status == 200 and [g["game"] for g in games["games"]] == [game.game_id]
    status, _ = http.get(f"/games/{game.game_id}/replay?at={MAX_POSITION}")
    assert status in {400, 404}  # a position past the end: a clear 4xx, never 5xx


def _raw_move(app, game_id, data, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    response = app.test_client().post(f"/games/{game_id}/moves", data=data, headers=headers)
    return response.status_code, response.get_json()


@pytest.mark.parametrize(("content_type", "encoding", "status", "code"), [
    ("text/plain", "utf-8", 415, "request/unsupported_media_type"),
    (None, "utf-8", 415, "request/unsupported_media_type"),
    ("application/x-www-form-urlencoded", "utf-8", 415, "request/unsupported_media_type"),
    ("application/json; charset=utf-16", "utf-16", 415, "request/unsupported_media_type"),
    ("application/json", "utf-8-sig", 400, "request/invalid"),  # a byte-order mark
    ("application/json", "utf-16", 400, "request/invalid"),
    ("application/json", "utf-32", 400, "request/invalid"),
])
def test_a_valid_signed_move_needs_json_in_utf8(app, http, store, active, content_type, encoding, status, code):  # noqa: PLR0917
    game, legal = active
    seat = legal["to_move"]
    submission = signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"],
                                                       {"type": "bid", "amount": 1}))
    before = store.read_log(game.game_id)
    got, body = _raw_move(app, game.game_id, json.dumps(submission).encode(encoding), content_type)
    assert (got, body["error"]["code"]) == (status, code), body
    assert store.read_log(game.game_id) == before
    # the same submission as JSON in UTF-8 is taken (with or without the charset parameter)
    got, body = _raw_move(app, game.game_id, json.dumps(submission).encode(), "application/json; charset=UTF-8")
    assert got == 202, body


def _at(delta: timedelta) -> str:
    return (datetime.now(UTC) + delta).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@pytest.mark.parametrize("at", ["yesterday", "2026-11-21", "2026-11-21T10:00:00", "2026-11-21T10:00:00+01:00",
                                "2026-02-30T10:00:00Z", "2026-11-21 10:00:00Z", timedelta(minutes=6),
                                "9999-12-31T23:59:59Z"])
def test_envelope_at_must_be_rfc3339_utc_and_not_in_the_future(http, store, active, at):
    """(A ``timedelta`` is from now, when the test runs.)"""
    at = _at(at) if isinstance(at, timedelta) else at
    game, legal = active
    seat = legal["to_move"]
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], {"type": "bid", "amount": 1}, at=at)
    before = store.read_log(game.game_id)
    status, body = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
    assert status == 400, body
    assert [p["path"] for p in body["error"]["details"]["problems"]] == ["$.envelope.at"]
    assert store.read_log(game.game_id) == before


@pytest.mark.parametrize("at", [timedelta(hours=-30), timedelta(minutes=4), "2020-01-01T00:00:00Z",
                                "2026-11-21T10:00:00+00:00", "2026-11-21T10:00:00.123456789Z"])
def test_an_earlier_at_or_one_within_the_skew_is_taken(http, active, at):
    """(A ``timedelta`` is from now, when the test runs.)"""
    at = _at(at) if isinstance(at, timedelta) else at
    game, legal = active
    seat = legal["to_move"]
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], {"type": "bid", "amount": 1}, at=at)
    status, body = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
    assert status == 202, body
