"""``GET /players/events`` (docs/service.md, "A browser's one stream"): every running game of some keys, the games
named besides, and the lobby's new games on one stream, resumable with ``Last-Event-ID``."""

from __future__ import annotations

import requests
from sse_helpers import SSEClient
from svc_helpers import Http, accept_all, create_game

from referee.api.events import open_streams
from referee.protocol.signing import generate_key, public_key_b64


def test_one_stream_follows_every_game_of_a_key_named_games_and_the_lobby(app, server, store):
    http = Http(requests.Session(), server)
    mine = generate_key()
    key = public_key_b64(mine)
    one = create_game(http, "fivetowers", 2, keys=[mine, generate_key()])
    watched, other = create_game(http, "fivetowers", 2), create_game(http, "fivetowers", 2)
    before = open_streams(app).snapshot()["players"]
    stream = SSEClient(server, f"/players/events?keys={key}&games={watched.game_id}")
    try:
        assert stream.status == 200 and stream.headers["Content-Type"].startswith("text/event-stream")
        opening = stream.next_block()
        assert opening.retry and opening.id.isdigit() and opening.data is None
        now = open_streams(app).snapshot()
        assert now["players"] == before + 1 and [key] in now["player_keys"]
        accept_all(http, other)  # neither mine nor named: nothing comes of it
        accept_all(http, one)
        notices = [stream.next_event().entry() for _ in range(3)]
        # each notice carries its entry, as the log gives it (a page needs no GET …/log for it)
        status, log = http.get(f"/games/{one.game_id}/log?from=1&limit=3")
        assert status == 200 and [e["type"] for e in log["entries"]] == ["accepted", "accepted", "started"]
        assert notices == [{"game": one.game_id, "position": p, "type": e["type"], "entry": e}
                           for p, e in enumerate(log["entries"], 1)]
        accept_all(http, watched)
        assert [stream.next_event().entry()["game"] for _ in range(3)] == [watched.game_id] * 3
        # a game of the key created after the stream opened: the lobby's notice, then its entries
        two = create_game(http, "fivetowers", 2, keys=[generate_key(), mine])
        listed = stream.next_event()
        assert listed.entry() == {"game": two.game_id, "position": None, "type": "listed"}
        accept_all(http, two)
        seen = [stream.next_event() for _ in range(4)]
        assert [(e.entry()["game"], e.entry()["position"]) for e in seen] == [(two.game_id, p) for p in range(4)]
        last_id = seen[-1].id
        assert int(last_id) >= int(opening.id)
    finally:
        stream.close()
    # resuming: the games that changed since the id are announced at once (their last position)
    resumed = SSEClient(server, f"/players/events?keys={key}", headers={"Last-Event-ID": last_id})
    try:
        assert resumed.next_block().retry
        again = {n["game"]: n for n in (resumed.next_event().entry() for _ in range(2))}
        assert set(again) == {one.game_id, two.game_id}
        for game, notice in again.items():  # the last entry of each, itself
            status, log = http.get(f"/games/{game}/log?from={notice['position']}&limit=1")
            assert notice["entry"] == log["entries"][0] and notice["type"] == notice["entry"]["type"]
    finally:
        resumed.close()
    for query, where in (("", "$query"), ("?keys=nokey", "$query.keys"), ("?games=a:b", "$query.games"),
                         ("?keys=" + ",".join([key] * 1 + [public_key_b64(generate_key()) for _ in range(10)]),
                          "$query.keys")):
        bad = SSEClient(server, f"/players/events{query}")
        assert bad.status == 400, query
        body = bad.body_json()
        assert body["error"]["code"] == "request/invalid" and body["error"]["details"]["problems"][0]["path"] == where
        bad.close()
    bad = SSEClient(server, f"/players/events?keys={key}", headers={"Last-Event-ID": "x"})
    assert bad.status == 400
    bad.close()
