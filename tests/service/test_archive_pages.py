"""The pages of an archived game and every API call they make (CONTRACT section 13, issue 23 item 1), against
the real Redis: the game and replay pages, the lobby, ``/legal-moves``, the ruleset, the public and a seat's
private messages, the game's event stream (resumed from an earlier position: the entries after it and the
public messages, then heartbeats until the stream's lifetime ends, as for a finished game still in Redis) and
the lobby's stream of several games: the same answers before and after archiving, never a 5xx."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from svc_helpers import Http
from test_archive import _archive, _finished, _game_keys, _reads, _same_reads

from referee.clock import now
from referee.games_service.archiving import archive_game
from referee.protocol.signing import MESSAGES_READ_CTX, public_key_b64, sign


def _stream(client, path: str, last_event_id: str | None = None) -> bytes:
    response = client.get(path, headers={"Last-Event-ID": last_event_id} if last_event_id else {}, buffered=True)
    assert response.status_code == 200, (path, response.data[:300])
    return response.data


def _events(data: bytes) -> list[str]:
    """The stream's blocks that are not comments (heartbeats come as many times as the clock allows)."""
    return [block for block in data.decode().split("\n\n") if block and not block.startswith(":")]


def _private_query(game, seat: int) -> str:
    at = now()
    key = game.keys[seat]
    sig = sign(key, {"v": 1, "ctx": MESSAGES_READ_CTX, "game": game.game_id, "key": public_key_b64(key), "at": at})
    return "?" + urlencode({"since": 0, "key": public_key_b64(key), "at": at, "sig": sig})


def _page_calls(app, game) -> dict[str, bytes]:
    client = app.test_client()
    game_id = game.game_id
    state = json.loads(client.get(f"/games/{game_id}").data)
    out: dict[str, bytes] = {}
    for path in (f"/play/games/{game_id}", f"/play/games/{game_id}/replay", "/play/", f"/games/{game_id}/legal-moves",
                 f"/games/{game_id}/log?from=0&limit=1", f"/games/{game_id}/replay?at={state['seq'] - 1}",
                 f"/rulesets/{state['ruleset']['name'] if isinstance(state['ruleset'], dict) else state['ruleset']}",
                 f"/games/{game_id}/messages?since=0",
                 "/games?offset=0&limit=100"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.data[:300])
        out[path] = response.data
    response = client.get(f"/games/{game_id}/messages{_private_query(game, 0)}")
    assert response.status_code == 200, response.data[:300]
    out["private messages"] = response.data
    out["events"] = "\n\n".join(_events(_stream(client, f"/games/{game_id}/events", "1"))).encode()
    out["events from the end"] = "\n\n".join(_events(_stream(client, f"/games/{game_id}/events"))).encode()
    out["events from message 0"] = "\n\n".join(_events(_stream(
        client, f"/games/{game_id}/events?messages_from=0", str(state["seq"] - 1)))).encode()
    out["lobby events"] = "\n\n".join(_events(_stream(client, f"/games/events?games={game_id}"))).encode()
    return out


def test_the_pages_and_their_api_calls_answer_for_an_archived_game(make_app, run_worker):
    app = make_app(REFEREE_SSE_HEARTBEAT=0.05, REFEREE_SSE_LIFETIME=0.3)
    http = Http(app.test_client())
    game = _finished(http, lambda: run_worker(app.extensions["referee.queue"]), "towerup", 2, seed=29)
    before, reads = _page_calls(app, game), _reads(app, game.game_id)
    assert b"event: chat" in before["events from message 0"] and b"to seat 0 only" not in before[
        "events from message 0"]
    assert json.loads(before[f"/games/{game.game_id}/legal-moves"])
    assert b"to seat 0 only" in before["private messages"]
    assert before["events"].count(b"\nid: ") >= 3 and before["events from the end"].startswith(b"retry: ")

    store, messages, archive, key = _archive(app)
    assert archive_game(store, messages, archive, game.game_id, key, older_than=0).action == "archived"
    assert _game_keys(store, game.game_id) == []
    _same_reads(_page_calls(app, game), before)
    _same_reads(_reads(app, game.game_id), reads)

