"""Open tournament registration through the HTTP API against the real Redis (CONTRACT section 14): keys not
listed join an organiser-signed tournament (open to anyone, or by an invitation link's key); round 1 is paired
when max_players have joined, at ``closes`` (the deadline scheduler) or on the organiser's signed start; too
few players cancel it; the certificate of an open tournament verifies offline and a swapped join fails."""

from __future__ import annotations

import json
import random
from typing import Any

from click.testing import CliRunner
from freezegun import freeze_time
from svc_helpers import Http, signed
from tournament_helpers import Players, join_envelope, play_round, tournament_state

from referee.cli.verification import verify_tournament_command
from referee.games_service.players import rebuild_tournament_index
from referee.protocol.logchain import seal
from referee.protocol.signing import generate_key, public_key_b64, sign
from referee.store.keys import TOURNAMENT_TIMER, player_tournaments_key
from referee.timecontrol import parse_ms
from workers.deadlines import DeadlineScheduler
from workers.queue import ReplayDispatch

ORGANISER = generate_key()


def organised(body: dict[str, Any], organiser=ORGANISER) -> dict[str, Any]:
    return {**body, "organiser": {"key": public_key_b64(organiser),
                                  "sig": sign(organiser, {"v": 1, "ctx": "referee/tournament", **body})}}


def open_body(**extra: Any) -> dict[str, Any]:
    return {"ruleset": "fivetowers", "registration": {"open": True}, "format": {"kind": "swiss", "table_sizes": [2]},
            **extra}


def create_open(http: Http, **extra: Any) -> str:
    status, created = http.post("/tournaments", organised(open_body(**extra)))
    assert status == 201, created
    assert created["status"] == "waiting"
    return created["tournament"]


def join_open(http: Http, tid: str, key, name: str, invite=None) -> tuple[int, Any]:
    envelope = join_envelope(http, tid, key, name=name)
    body = signed(key, envelope)
    if invite is not None:
        body["invite_sig"] = sign(invite, envelope)
    return http.post(f"/tournaments/{tid}/join", body)


def start(http: Http, tid: str, signer=ORGANISER) -> tuple[int, Any]:
    state = tournament_state(http, tid)
    envelope = {"v": 1, "ctx": "referee/start", "tournament": tid, "seq": state["seq"], "prev": state["head"]}
    return http.post(f"/tournaments/{tid}/start", signed(signer, envelope))


def entry_types(http: Http, tid: str) -> list[str]:
    return [e["type"] for e in http.get(f"/tournaments/{tid}/log?limit=1000")[1]["entries"]]


def test_a_twelve_player_open_swiss_fills_from_unlisted_keys_and_pairs_round_1_when_full(http, store):
    tid = create_open(http, max_players=12)
    state = tournament_state(http, tid)
    assert state["registration"] == {"open": True} and state["max_players"] == 12 and state["registration_open"]
    assert state["format"]["rounds"] == 4 and state["players"] == []
    players = Players(13)
    for i, key in enumerate(players.keys[:12]):
        assert tournament_state(http, tid)["rounds"] == []
        status, receipt = join_open(http, tid, key, f"Joiner {i}")
        assert status == 202, receipt
    state = tournament_state(http, tid)
    assert state["status"] == "active" and not state["registration_open"]
    assert [p["name"] for p in state["players"]] == [f"Joiner {i}" for i in range(12)]
    assert [p["key"] for p in state["players"]] == players.public[:12]  # join order
    first = state["rounds"][0]
    assert len(first["tables"]) == 6 and sorted(k for t in first["tables"] for k in t["players"]) == \
        sorted(players.public[:12])
    assert entry_types(http, tid) == ["created"] + ["joined"] * 12 + ["registration_closed", "paired"]
    closed = http.get(f"/tournaments/{tid}/log?from=13&limit=1")[1]["entries"][0]
    assert closed["reason"] == "full"
    # the games seat the joiners under the names they gave
    status, game = http.get(f"/games/{first['tables'][0]['game']}")
    assert status == 200 and all(s["name"].startswith("Joiner ") for s in game["seats"])
    status, error = join_open(http, tid, players.keys[12], "Too late")
    assert status == 409 and error["error"]["code"] == "registration/closed"
    # the joiners find the tournament under their keys
    status, mine = http.get(f"/players/{players.public[0]}/tournaments")
    assert status == 200 and [t["tournament"] for t in mine["tournaments"]] == [tid]
    # and again after `referee rebuild --all` lists the tournaments anew from their logs
    kept = {p: store.player_tournaments(p) for p in players.public[:12]}
    store.redis.delete(*(player_tournaments_key(p) for p in players.public[:12]))
    assert rebuild_tournament_index(store) == 12
    assert {p: store.player_tournaments(p) for p in players.public[:12]} == kept


def test_bad_joins_are_refused_and_store_nothing(http):
    tid = create_open(http, max_players=4)
    players = Players(3)
    assert join_open(http, tid, players.keys[0], "Alice")[0] == 202
    seq = tournament_state(http, tid)["seq"]
    status, error = join_open(http, tid, players.keys[0], "Alice 2")
    assert status == 409 and error["error"]["code"] == "join/duplicate"
    status, error = join_open(http, tid, players.keys[1], "alice")
    assert status == 409 and error["error"]["code"] == "registration/name_taken"
    envelope = join_envelope(http, tid, players.keys[1], name="Bob")
    status, error = http.post(f"/tournaments/{tid}/join", signed(players.keys[2], envelope))
    assert status == 401 and error["error"]["code"] == "submission/bad_signature"
    status, error = http.post(f"/tournaments/{tid}/join", signed(players.keys[1], {**envelope, "name": ""}))
    assert status == 400
    assert tournament_state(http, tid)["seq"] == seq


def test_by_invitation_a_join_needs_the_invitation_key_signature(http):
    invite = generate_key()
    tid = create_open(http, registration={"invite": public_key_b64(invite)}, max_players=2)
    players = Players(2)
    seq = tournament_state(http, tid)["seq"]
    status, error = join_open(http, tid, players.keys[0], "A")
    assert status == 403 and error["error"]["code"] == "registration/bad_invite"
    status, error = join_open(http, tid, players.keys[0], "A", invite=generate_key())  # another invitation's
    assert status == 403 and error["error"]["code"] == "registration/bad_invite"
    assert tournament_state(http, tid)["seq"] == seq  # nothing stored
    assert join_open(http, tid, players.keys[0], "A", invite=invite)[0] == 202
    assert join_open(http, tid, players.keys[1], "B", invite=invite)[0] == 202
    joined = http.get(f"/tournaments/{tid}/log?from=1&limit=1")[1]["entries"][0]
    assert joined["type"] == "joined" and "invite_sig" in joined["submission"]
    assert tournament_state(http, tid)["status"] == "active"


def test_creation_refuses_bad_open_registrations(http):
    status, error = http.post("/tournaments", open_body(max_players=4))
    assert status == 401 and error["error"]["code"] == "organiser/required"
    for extra, path in [({"max_players": 1}, "max_players"),
                        ({"closes": "2020-01-01T00:00:00Z", "max_players": 4}, "$.closes"),
                        ({"max_players": 9, "format": {"kind": "series"}}, "$.format"),
                        ({}, "$.format.rounds")]:
        status, error = http.post("/tournaments", organised(open_body(**extra)))
        assert status == 400, (extra, error)
        assert path in json.dumps(error), (path, error)
    status, error = http.post("/tournaments", organised({"ruleset": "fivetowers", "format": {"kind": "swiss"}}))
    assert status == 400 and "players" in json.dumps(error)


def test_the_registration_closes_at_closes_by_the_deadline_scheduler(app, http, store):
    players = Players(4)
    with freeze_time("2026-11-21T10:00:00Z"):
        tid = create_open(http, closes="2026-11-21T12:00:00Z", format={"kind": "swiss", "rounds": 2,
                                                                          "table_sizes": [2]})
        for i, key in enumerate(players.keys[:3]):
            assert join_open(http, tid, key, f"P{i}")[0] == 202
    timers = dict(store.due_timers(2**62))
    closes = parse_ms("2026-11-21T12:00:00Z")
    assert int(timers[TOURNAMENT_TIMER.format(tournament=tid)]) == closes
    scheduler = DeadlineScheduler(store, ReplayDispatch(app.extensions["referee.queue"], store),
                                  tournaments=app.extensions["referee.tournaments"])
    with freeze_time("2026-11-21T11:59:59Z"):
        assert [d for d in scheduler.run_once(now=closes - 1000) if "tournament" in d] == []
        assert tournament_state(http, tid)["registration_open"]
    with freeze_time("2026-11-21T12:00:00.500Z"):
        done = [d for d in scheduler.run_once(now=closes + 500) if "tournament" in d]
        assert done and done[0]["appended"][:2] == ["registration_closed", "paired"], done
        status, error = join_open(http, tid, players.keys[3], "Late")
    assert status == 409 and error["error"]["code"] == "registration/closed"
    state = tournament_state(http, tid)
    assert state["status"] == "active" and len(state["players"]) == 3
    assert [len(t["players"]) for t in state["rounds"][0]["tables"]] == [2] and len(state["rounds"][0]["byes"]) == 1
    closed = [e for e in http.get(f"/tournaments/{tid}/log?limit=100")[1]["entries"]
              if e["type"] == "registration_closed"]
    assert closed[0]["reason"] == "closes" and closed[0]["at"] >= "2026-11-21T12:00:00"


def test_a_join_after_closes_closes_the_registration_itself(http):
    players = Players(3)
    with freeze_time("2026-11-21T10:00:00Z"):
        tid = create_open(http, closes="2026-11-21T10:05:00Z", format={"kind": "swiss", "rounds": 1,
                                                                          "table_sizes": [2]})
        assert join_open(http, tid, players.keys[0], "A")[0] == 202
        assert join_open(http, tid, players.keys[1], "B")[0] == 202
    with freeze_time("2026-11-21T10:06:00Z"):
        status, error = join_open(http, tid, players.keys[2], "C")
    assert status == 409 and error["error"]["code"] == "registration/closed"
    assert entry_types(http, tid)[-2:] == ["registration_closed", "paired"]


def test_the_organisers_signed_start_pairs_round_1_and_too_few_cancel(http):
    tid = create_open(http, max_players=8)
    players = Players(3)
    for i, key in enumerate(players.keys):
        assert join_open(http, tid, key, f"P{i}")[0] == 202
    status, error = start(http, tid, signer=players.keys[0])
    assert status == 401 and error["error"]["code"] == "submission/bad_signature"
    status, receipt = start(http, tid)
    assert status == 202, receipt
    state = tournament_state(http, tid)
    assert state["status"] == "active" and len(state["rounds"]) == 1
    status, error = start(http, tid)
    assert status == 409 and error["error"]["code"] == "registration/not_open"

    lonely = create_open(http, max_players=8, nonce="lonely")
    assert join_open(http, lonely, players.keys[0], "Alone")[0] == 202
    assert start(http, lonely)[0] == 202
    state = tournament_state(http, lonely)
    assert state["status"] == "cancelled" and state["revealed"] and state["rounds"] == []
    assert entry_types(http, lonely) == ["created", "joined", "registration_closed", "revealed"]
    revealed = http.get(f"/tournaments/{lonely}/log?from=3&limit=1")[1]["entries"][0]
    assert revealed["reason"] == "cancelled" and len(revealed["server_seed"]) == 64
    status, error = join_open(http, lonely, players.keys[1], "Late")
    assert status == 409 and error["error"]["code"] == "registration/closed"


def test_the_certificate_of_an_open_tournament_verifies_offline_and_a_swapped_join_fails(http, run_worker, tmp_path):
    tid = create_open(http, max_players=4, format={"kind": "swiss", "rounds": 1, "table_sizes": [2]})
    players = Players(4)
    for i, key in enumerate(players.keys):
        assert join_open(http, tid, key, f"P{i}")[0] == 202
    play_round(http, tid, players, random.Random(7))
    run_worker()
    assert tournament_state(http, tid)["status"] == "finished"
    status, certificate = http.get(f"/tournaments/{tid}/export")
    assert status == 200, certificate
    path = tmp_path / "certificate.json"
    path.write_text(json.dumps(certificate))
    result = CliRunner().invoke(verify_tournament_command, [str(path)])
    assert result.exit_code == 0 and "VERIFIED" in result.output, result.output
    # the second join's key swapped for another (its chain sealed again): the replay fails at position 2
    log = json.loads(json.dumps(certificate["log"]))
    other = public_key_b64(generate_key())
    log[2]["key"] = other
    log[2]["submission"]["envelope"]["key"] = other
    prev = "0" * 64
    for i, entry in enumerate(log):
        log[i] = seal({k: v for k, v in entry.items() if k != "hash"}, prev)
        prev = log[i]["hash"]
    path.write_text(json.dumps({**certificate, "log": log}))
    result = CliRunner().invoke(verify_tournament_command, [str(path), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    failed = [c for c in report["checks"] if c["status"] == "failed"]
    assert failed and failed[0]["name"] in ("referee_signature", "hash_chain", "replay")
    replay = next(c for c in report["checks"] if c["name"] == "replay")
    assert replay["status"] == "failed" and replay["position"] == 2, replay
