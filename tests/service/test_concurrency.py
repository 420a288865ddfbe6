"""20 threads submit to the same log position at once through a real threaded HTTP server: exactly one
gets a 2xx, the others a 409, and the log grows by exactly one entry (the atomic append script)."""

from __future__ import annotations

import threading

import pytest
import requests
from svc_helpers import Http, accept_all, create_game, move_envelope, signed

from referee.protocol.logchain import first_broken_link

THREADS = 20


def race(url: str | list[str], bodies: list[dict]) -> list[tuple[int, dict]]:
    """Post every body at once (one thread each, released together); with several URLs, body ``i`` goes to
    ``url[i % len(url)]``. The answers, in the bodies' order."""
    urls = [url] if isinstance(url, str) else url
    barrier = threading.Barrier(len(bodies))
    results: list[tuple[int, dict]] = [None] * len(bodies)  # type: ignore[list-item]

    def submit(i: int) -> None:
        session = requests.Session()
        barrier.wait()
        response = session.post(urls[i % len(urls)], json=bodies[i], timeout=60)
        results[i] = (response.status_code, response.json())

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


@pytest.mark.parametrize("same_envelope", [False, True], ids=["distinct-envelopes", "one-envelope"])
def test_twenty_submissions_for_one_position(server, app, store, same_envelope):
    http = Http(requests, server)
    game = create_game(http, "fivetowers", 3)
    accept_all(http, game)
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat, moves = legal["to_move"], legal["moves"]
    before = store.read_log(game.game_id)
    bodies = []
    for i in range(THREADS):
        # distinct: each a validly signed envelope for this position (different legal moves and client times)
        move = moves[0] if same_envelope else moves[i % len(moves)]
        at = "2026-11-21T10:00:00Z" if same_envelope else f"2026-11-21T10:00:{i:02d}Z"
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], move, at=at)
        bodies.append(signed(game.keys[seat], envelope))
    results = race(f"{server}/games/{game.game_id}/moves", bodies)
    statuses = sorted(status for status, _body in results)
    assert statuses == [202] + [409] * (THREADS - 1), results
    codes = {body["error"]["code"] for status, body in results if status == 409}
    assert codes <= {"submission/stale", "submission/duplicate"}
    if same_envelope:
        winner = next(body for status, body in results if status == 202)
        assert all(body["error"]["details"]["position"] == winner["position"]
                   for status, body in results if status == 409 and body["error"]["code"] == "submission/duplicate")
    after = store.read_log(game.game_id)
    assert after[:len(before)] == before and len(after) == len(before) + 1
    assert first_broken_link(after) is None
    winner = next(body for status, body in results if status == 202)
    assert after[-1]["submission"] == bodies[[s for s, _ in results].index(202)]
    assert winner["position"] == len(before)
