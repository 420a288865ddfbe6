"""The lifecycle in detail: server time in the log (frozen with freezegun), commit–reveal, the log and
replay reads, aborts, and the same API on the in-memory store."""

from __future__ import annotations

import hashlib
import random

from freezegun import freeze_time
from svc_helpers import (
    Http,
    accept_all,
    create_game,
    move_envelope,
    play_random,
    random_entropy,
    signed,
    with_no_forfeits,
)

from referee.games_service import ABORT_CTX
from referee.protocol.logchain import first_broken_link


def test_server_time_is_written_into_every_entry(http, store):
    with freeze_time("2026-11-21T10:00:00.250Z"):
        game = create_game(http, "fivetowers", 2)
    with freeze_time("2026-11-21T10:05:00Z"):
        accept_all(http, game)
    with freeze_time("2026-11-22T08:00:00.999Z"):
        _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat = legal["to_move"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][0],
                                 at="1999-01-01T00:00:00Z")  # the signer's clock is informative only
        assert http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))[0] == 202
    entries = store.read_log(game.game_id)
    assert [(e["type"], e["at"]) for e in entries] == [
        ("created", "2026-11-21T10:00:00.250Z"),
        ("accepted", "2026-11-21T10:05:00.000Z"),
        ("accepted", "2026-11-21T10:05:00.000Z"),
        ("started", "2026-11-21T10:05:00.000Z"),
        ("move", "2026-11-22T08:00:00.999Z"),
    ]
    assert entries[-1]["submission"]["envelope"]["at"] == "1999-01-01T00:00:00Z"
    _status, state = http.get(f"/games/{game.game_id}")
    assert state["created_at"] == "2026-11-21T10:00:00.250Z"


def test_commitment_secret_and_reveal(http, store, run_worker):
    game = create_game(http, "fivetowers", 2)
    created = store.read_log(game.game_id)[0]
    secret = store.read_secret(game.game_id)
    assert created["commitment"] == hashlib.sha256(secret).hexdigest()
    accept_all(http, game)
    _status, log = http.get(f"/games/{game.game_id}/log")
    assert secret.hex() not in str(log)  # the seed stays secret while the game runs
    play_random(http, game, random.Random(2))
    entries = store.read_log(game.game_id)
    assert entries[-1]["type"] == "revealed" and entries[-1]["server_seed"] == secret.hex()


def test_log_paging_and_replay_steps(http, store, run_worker):
    game = create_game(http, "towerup", 2)
    accept_all(http, game)
    play_random(http, game, random.Random(4), max_moves=12)
    entries = store.read_log(game.game_id)
    status, page = http.get(f"/games/{game.game_id}/log?from=2&limit=5")
    assert status == 200 and page["entries"] == entries[2:7] and page["next"] == 7 and page["total"] == len(entries)
    _status, last = http.get(f"/games/{game.game_id}/log?from=10&limit=1000")
    assert last["entries"] == entries[10:] and last["next"] is None
    assert http.get(f"/games/{game.game_id}/log?limit=0")[0] == 400
    assert http.get(f"/games/{game.game_id}/log?from=-1")[0] == 400
    status, replay = http.get(f"/games/{game.game_id}/replay")
    assert status == 200 and [step["entry"] for step in replay["steps"]] == entries
    steps = replay["steps"]
    assert steps[0]["state"] is None and steps[0]["verdict"] == {"seq": 0, "type": "created", "status": "ok"}
    assert steps[3]["verdict"]["type"] == "started" and steps[3]["state"] is not None
    assert all(step["verdict"]["status"] == "applied" for step in steps[4:])
    status, one = http.get(f"/games/{game.game_id}/replay?at=6")
    assert status == 200 and one["steps"] == [steps[6]]
    _status, paged = http.get(f"/games/{game.game_id}/replay?from=4&limit=3")
    assert paged["steps"] == steps[4:7] and paged["next"] == 7
    status, body = http.get(f"/games/{game.game_id}/replay?at=999")
    assert status == 404 and body["error"]["code"] == "replay/no_such_entry"
    _status, state = http.get(f"/games/{game.game_id}")
    assert state["state"] == steps[-1]["state"]
    run_worker()
    assert store.read_verdicts(game.game_id) == [step["verdict"] for step in steps]


def abort_body(game_id, seq, head, key):
    envelope = {"v": 1, "ctx": ABORT_CTX, "game": game_id, "seq": seq, "prev": head, "reason": "no show"}
    return signed(key, envelope)


def test_abort_reveals_the_seed(http, store, run_worker):
    game = create_game(http, "fivetowers", 2)
    _status, state = http.get(f"/games/{game.game_id}")
    from referee.protocol.signing import generate_key

    status, body = http.post(f"/games/{game.game_id}/abort",
                             abort_body(game.game_id, state["seq"], state["head"], generate_key()))
    assert status == 401
    status, receipt = http.post(f"/games/{game.game_id}/abort",
                                abort_body(game.game_id, state["seq"], state["head"], game.keys[1]))
    assert status == 202 and receipt["status"] == "aborted"
    last = store.read_log(game.game_id)[-1]
    assert last["type"] == "revealed" and last["reason"] == "aborted"
    assert last["server_seed"] == store.read_secret(game.game_id).hex()
    run_worker()
    _status, state = http.get(f"/games/{game.game_id}")
    assert state["status"] == "aborted" and state["projection"] == "worker"
    envelope = {"v": 1, "ctx": "referee/accept", "game": game.game_id, "seat": 0, "seq": state["seq"],
                "prev": state["head"], "entropy": random_entropy()}
    status, body = http.post(f"/games/{game.game_id}/accept", signed(game.keys[0], envelope))
    assert status == 409 and body["error"]["code"] == "game/not_waiting"
    status, body = http.post(f"/games/{game.game_id}/abort",
                             abort_body(game.game_id, state["seq"], state["head"], game.keys[0]))
    assert status == 409 and body["error"]["code"] == "game/over"


def test_lobby_lists_games_newest_first(http, run_worker):
    first = create_game(http, "fivetowers", 2)
    second = create_game(http, "towerup", 3)
    accept_all(http, second)
    run_worker()
    status, listing = http.get("/games")
    assert status == 200
    assert [g["game"] for g in listing["games"]] == [second.game_id, first.game_id]
    top = listing["games"][0]
    assert top["ruleset"]["name"] == "towerup" and top["status"] == "active" and top["to_move"] is not None
    assert [s["name"] for s in top["seats"]] == ["p0", "p1", "p2"]
    _status, page = http.get("/games?offset=1&limit=1")
    assert [g["game"] for g in page["games"]] == [first.game_id] and page["games"][0]["status"] == "waiting"


def test_memory_store_app_plays_a_whole_game(make_app):
    """The same API over the in-memory store with inline projections (no Redis, no RQ)."""
    app = make_app(REFEREE_STORE="memory")
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = create_game(http, "fivetowers", 3)
    accept_all(http, game)
    play_random(http, game, random.Random(8), wait=1)
    entries = store.read_log(game.game_id)
    assert first_broken_link(entries) is None and entries[-1]["type"] == "revealed"
    _status, state = http.get(f"/games/{game.game_id}")
    assert state["projection"] == "worker" and state["status"] == "finished"
    status, result = http.get(f"/games/{game.game_id}/result")
    engine_result = game.engine_replay(bytes.fromhex(entries[-1]["server_seed"])).result()
    assert status == 200 and result["result"] == with_no_forfeits(engine_result)


def test_a_lone_seat_cannot_abort_a_game_under_way_and_a_log_that_holds_one_fails_to_verify(app, http, store):
    """Issue 37, item 1: a seat's signed abort is for a game that has not started (docs/service.md, "Aborting");
    once both seats have moved, an abort needs the other's agreement (an offer, DC-A1). The service refuses the
    lone abort, and a log into which one was written anyway fails the fold and the verifier at its position."""
    from referee.games_service.entries import make_entry
    from referee.verify import verify_bundle
    from referee.verify.bundle import build_bundle

    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    play_random(http, game, random.Random(5), max_moves=2)
    _status, state = http.get(f"/games/{game.game_id}")
    assert state["status"] == "active" and state["seq"] >= 5
    before = store.read_log(game.game_id)
    body = abort_body(game.game_id, state["seq"], state["head"], game.keys[0])
    status, answer = http.post(f"/games/{game.game_id}/abort", body)
    assert status == 409 and answer["error"]["code"] == "abort/started", answer
    assert store.read_log(game.game_id) == before  # nothing written

    # the same abort written into the log by a referee that took it: the fold rejects it, the bundle fails
    forged = [*before, make_entry("revealed", state["seq"], state["head"], reason="aborted", abort=body,
                                  server_seed=store.read_secret(game.game_id).hex())]
    report = verify_bundle(build_bundle(forged, app.extensions["referee.key"]))
    assert not report.ok
    failed = {check.name: check for check in report.checks if not check.ok}
    assert "replay" in failed and failed["replay"].position == state["seq"], [c.to_dict() for c in report.checks]
    assert "abort/started" in failed["replay"].reason


def test_an_organiser_aborts_a_game_under_way_and_it_verifies(app, http, store):
    """What the signed abort is for stays: an organiser's abort of a game under way (a club's director)."""
    from svc_helpers import create_organised_game

    from referee.protocol.signing import generate_key, public_key_b64
    from referee.verify import verify_bundle
    from referee.verify.bundle import build_bundle

    organiser = generate_key()
    game = create_organised_game(http, "fivetowers", organiser, [generate_key(), generate_key()])
    accept_all(http, game)
    play_random(http, game, random.Random(6), max_moves=2)
    _status, state = http.get(f"/games/{game.game_id}")
    assert state["status"] == "active"
    status, _body = http.post(f"/games/{game.game_id}/abort",
                              abort_body(game.game_id, state["seq"], state["head"], game.keys[0]))
    assert status == 401  # a seat of a game with an organiser may not
    status, receipt = http.post(f"/games/{game.game_id}/abort",
                                abort_body(game.game_id, state["seq"], state["head"], organiser))
    assert status == 202 and receipt["status"] == "aborted", receipt
    assert store.read_log(game.game_id)[0]["organiser"] == public_key_b64(organiser)
    report = verify_bundle(build_bundle(store.read_log(game.game_id), app.extensions["referee.key"]))
    assert report.ok, [c.to_dict() for c in report.checks if not c.ok]
