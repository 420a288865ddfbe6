"""Time control through the API on the real Redis (CONTRACT section 8): creation, clocks in GET /games,
signed receipts, the expired move that writes its own timeout, vacations, the scheduler, the race of a
move against its deadline, and bundles with timeouts that verify (or do not). freezegun sets the time."""

from __future__ import annotations

import threading

from freezegun import freeze_time
from svc_helpers import accept_all, create_game, move_envelope, signed

from referee.cli.clocks import check_receipt
from referee.protocol.logchain import seal
from referee.protocol.signing import VACATION_CTX, public_key_b64, verify
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle
from workers.deadlines import DeadlineScheduler

T0 = "2026-11-21T10:00:00Z"
PER_HOUR = {"kind": "per_move", "per_move": 3600, "reminders": [1800, 60]}


def timed_game(http, players=2, time_control=PER_HOUR, ruleset_name="fivetowers"):
    with freeze_time(T0):
        game = create_game(http, ruleset_name, players, options={"time_control": time_control})
        accept_all(http, game)
    return game


def submit_first_legal(http, game, seat=None, **envelope_extra):
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat = legal["to_move"] if seat is None else seat
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][0], **envelope_extra)
    return http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))


def test_TC_C1_the_resolved_time_control_is_in_created_and_each_seat_shows_its_clock(http, store):
    game = timed_game(http)
    created = store.read_log(game.game_id)[0]
    assert created["options"]["time_control"] == PER_HOUR  # as requested (an organiser may have signed it)
    assert created["time_control"] == {**PER_HOUR, "vacation": 604800, "on_timeout": "auto_move",
                                                  "max_auto_moves": 3, "reminders": [1800, 60]}
    with freeze_time("2026-11-21T10:20:00Z"):
        _status, state = http.get(f"/games/{game.game_id}")
    to_move = state["to_move"]
    clock = state["seats"][to_move]["clock"]
    assert clock == {"deadline": "2026-11-21T11:00:00.000Z", "left": 2400, "bank": None, "vacation_left": 604800,
                     "on_vacation": False, "vacation_until": None, "forfeited": False}
    assert state["seats"][1 - to_move]["clock"]["deadline"] is None
    assert state["time_control"]["kind"] == "per_move"


def test_TC_C1_a_bad_time_control_is_a_400_naming_the_member_and_writes_nothing(http, store):
    before = store.list_games()
    status, body = http.post("/games", {"ruleset": "fivetowers", "seats": [
        {"name": name, "key": public_key_b64(k)} for name, k in (("a", _key(1)), ("b", _key(2)))],
        "options": {"time_control": {"kind": "per_move", "per_move": 60, "speed": "fast"}}})
    assert status == 400 and body["error"]["code"] == "game/bad_time_control"
    assert body["error"]["details"]["problems"][0]["path"] == "$.options.time_control.speed"
    assert store.list_games() == before


def test_rulesets_show_the_time_control_option(http):
    _status, body = http.get("/rulesets/towerup")
    variants = body["options"]["properties"]["time_control"]["oneOf"]
    kinds = [variant["properties"]["kind"]["const"] for variant in variants]
    assert kinds == ["none", "per_move", "bank"]


def test_receipts_are_signed_by_the_referee_and_check_offline(http, store):
    game = timed_game(http)
    with freeze_time("2026-11-21T10:30:00.125Z"):
        status, answer = submit_first_legal(http, game)
    assert status == 202
    receipt = answer["receipt"]
    entry = store.read_log(game.game_id)[receipt["seq"]]
    assert receipt == {"ctx": "referee/receipt", "game": game.game_id, "seq": answer["position"],
                       "hash": entry["hash"], "at": "2026-11-21T10:30:00.125Z"}
    _status, key = http.get("/referee-key")
    assert verify(key["key"], receipt, answer["receipt_sig"])
    assert check_receipt(answer, key["key"]) is None
    forged = {**answer, "receipt": {**receipt, "at": "2026-11-21T10:00:00.000Z"}}
    assert "not the referee's" in check_receipt(forged, key["key"])
    assert "not the referee's" in check_receipt(answer, public_key_b64(_key(9)))


def test_TC_T1_a_move_after_the_deadline_is_refused_and_the_timeout_takes_its_position(http, store):
    game = timed_game(http)
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat, position = legal["to_move"], legal["seq"]
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][0])
    with freeze_time("2026-11-21T11:00:00.001Z"):
        status, body = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
    assert status == 409 and body["error"]["code"] == "time/expired" and body["error"]["rule"] == "TC-T1"
    assert body["error"]["details"]["deadline"] == "2026-11-21T11:00:00.000Z"
    entries = store.read_log(game.game_id)
    timeout = entries[position]
    assert timeout["type"] == "timeout" and timeout["seat"] == seat and timeout["at"] == "2026-11-21T11:00:00.001Z"
    assert not any(e["type"] == "move" for e in entries)
    # the same signed move again: the position is gone
    with freeze_time("2026-11-21T11:00:01Z"):
        status, body = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
    assert status == 409 and body["error"]["code"] == "submission/stale"
    assert len(store.read_log(game.game_id)) == len(entries)


def test_TC_T1_a_move_at_the_deadline_is_still_in_time(http, store):
    game = timed_game(http)
    with freeze_time("2026-11-21T11:00:00.000Z"):
        status, _answer = submit_first_legal(http, game)
    assert status == 202


def test_TC_V1_vacation_stops_the_clock_within_the_allowance(http, store):
    game = timed_game(http, time_control={**PER_HOUR, "vacation": 7200})
    _status, state = http.get(f"/games/{game.game_id}")
    seat = state["to_move"]

    def vacation(seconds, when):
        _s, st = http.get(f"/games/{game.game_id}")
        envelope = {"v": 1, "ctx": VACATION_CTX, "game": game.game_id, "seat": seat, "seq": st["seq"],
                    "prev": st["head"], "seconds": seconds}
        with freeze_time(when):
            return http.post(f"/games/{game.game_id}/vacation", signed(game.keys[seat], envelope))

    status, answer = vacation(3600, "2026-11-21T10:10:00Z")
    assert status == 202 and answer["receipt"]["ctx"] == "referee/receipt"
    with freeze_time("2026-11-21T10:40:00Z"):
        _s, state = http.get(f"/games/{game.game_id}")
    clock = state["seats"][seat]["clock"]
    assert clock["deadline"] == "2026-11-21T12:00:00.000Z" and clock["on_vacation"] and clock["left"] == 3000
    assert clock["vacation_until"] == "2026-11-21T11:10:00.000Z"
    assert clock["vacation_left"] == 3600
    length = len(store.read_log(game.game_id))
    status, body = vacation(3601, "2026-11-21T10:41:00Z")
    assert status == 422 and body["error"]["code"] == "vacation/exceeded" and body["error"]["rule"] == "TC-V1"
    assert len(store.read_log(game.game_id)) == length


def test_a_vacation_in_a_game_without_a_clock_is_refused(http, store):
    game = timed_game(http, time_control={"kind": "none"})
    _s, st = http.get(f"/games/{game.game_id}")
    envelope = {"v": 1, "ctx": VACATION_CTX, "game": game.game_id, "seat": 0, "seq": st["seq"], "prev": st["head"],
                "seconds": 60}
    status, body = http.post(f"/games/{game.game_id}/vacation", signed(game.keys[0], envelope))
    assert status == 409 and body["error"]["code"] == "time/no_clock"


def test_scheduler_fires_each_timeout_once_and_reminders_before_it(app, http, store):
    game = timed_game(http, time_control={**PER_HOUR, "on_timeout": "forfeit"})
    scheduler = DeadlineScheduler(store)
    assert scheduler.run_once(now=_ms("2026-11-21T10:29:59Z")) == []  # the timer is at the first reminder
    done = scheduler.run_once(now=_ms("2026-11-21T10:59:10Z"))
    assert done[0]["reminders"] == 2 and done[0]["appended"] == []
    with freeze_time("2026-11-21T11:00:00.500Z"):
        done = scheduler.run_once()
    assert done[0]["appended"] == ["timeout", "forfeited", "revealed"]
    with freeze_time("2026-11-21T11:00:01Z"):
        assert scheduler.run_once() == []  # no timer left: the game is over
    entries = store.read_log(game.game_id)
    assert [e["type"] for e in entries].count("timeout") == 1
    kinds = [e["type"] for e in store.read_outbox()]
    assert kinds.count("reminder") == 2
    _status, result = http.get(f"/games/{game.game_id}/result")
    assert sorted((s["rank"], s["forfeited"]) for s in result["result"]["seats"]) == [(1, False), (2, True)]


def test_the_race_of_a_move_against_its_deadline_leaves_exactly_one_entry_at_the_position(app, http, store):
    """Twenty threads submit the seat's move while twenty run the scheduler, all at the deadline's
    millisecond ± 1: whatever wins, the position holds one entry and every entry holds by the fold."""
    for trial in range(3):
        game = timed_game(http, time_control={**PER_HOUR, "on_timeout": "forfeit"})
        _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat, position = legal["to_move"], legal["seq"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][0])
        submission = signed(game.keys[seat], envelope)
        scheduler = DeadlineScheduler(store)
        statuses: list[int] = []
        barrier = threading.Barrier(40)

        def mover(statuses=statuses, submission=submission, game=game, barrier=barrier):
            client = app.test_client()
            barrier.wait()
            statuses.append(client.post(f"/games/{game.game_id}/moves", json=submission).status_code)

        def timer(scheduler=scheduler, barrier=barrier):
            barrier.wait()
            scheduler.run_once()

        with freeze_time(["2026-11-21T10:59:59.999Z", "2026-11-21T11:00:00.000Z",
                          "2026-11-21T11:00:00.001Z"][trial]):
            threads = [threading.Thread(target=mover) for _ in range(20)]
            threads += [threading.Thread(target=timer) for _ in range(20)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        entries = store.read_log(game.game_id)
        at_position = entries[position]
        assert at_position["type"] in ("move", "timeout")
        assert [e["seq"] for e in entries] == list(range(len(entries)))
        assert sum(1 for e in entries if e["type"] in ("move", "timeout") and e.get("seat") == seat) == 1
        assert statuses.count(202) == (1 if at_position["type"] == "move" else 0)
        from referee.games_service.folds import fold

        replayer = fold(store, game.game_id)
        assert all(v.status != "rejected" for v in replayer.verdicts), replayer.verdicts


def test_a_bundle_with_timeouts_verifies_and_an_early_timeout_fails_at_its_position(app, http, store):
    game = timed_game(http, time_control={**PER_HOUR, "on_timeout": "forfeit"})
    with freeze_time("2026-11-21T11:00:00.001Z"):
        DeadlineScheduler(store).run_once()
    key = app.extensions["referee.key"]
    entries = store.read_log(game.game_id)
    bundle = build_bundle(entries, key)
    report = verify_bundle(bundle)
    assert report.ok, [c.to_dict() for c in report.checks]
    position = next(i for i, e in enumerate(entries) if e["type"] == "timeout")
    tampered = [dict(e) for e in entries]
    tampered[position]["at"] = "2026-11-21T10:59:59.000Z"  # came early; the chain re-sealed by a forger
    prev = tampered[position - 1]["hash"]
    for i in range(position, len(tampered)):
        tampered[i] = seal({k: v for k, v in tampered[i].items() if k != "hash"}, prev)
        prev = tampered[i]["hash"]
    report = verify_bundle(build_bundle(tampered, key, result=bundle["result"]))
    failure = report.first_failure
    assert failure is not None and failure.name == "replay" and failure.position == position
    assert "time/early" in failure.reason


def _key(n):
    import hashlib

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"k{n}".encode()).digest())


def _ms(text):
    from referee.timecontrol import parse_ms

    return parse_ms(text.replace("Z", ".000Z") if "." not in text else text)



def test_an_organiser_adjudicates_a_running_game_over_http(http, store):
    from svc_helpers import create_organised_game

    from referee.protocol.signing import generate_key, sign

    organiser = generate_key()
    keys = [_key(21), _key(22)]
    game = create_organised_game(http, "fivetowers", organiser, keys)
    accept_all(http, game)
    submit_first_legal(http, game)

    def adjudicate(key, **fields):
        envelope = {"v": 1, "ctx": "referee/adjudicate", "game": game.game_id, **fields}
        return http.post(f"/games/{game.game_id}/adjudicate", {"envelope": envelope, "sig": sign(key, envelope)})

    status, body = adjudicate(keys[0], ranks=[1, 2], reason="I win")  # a player is no adjudicator
    assert status == 401 and body["error"]["code"] == "adjudication/bad_signature"
    status, body = adjudicate(organiser, ranks=[2, 1], reason="seat 1 was ahead when the club closed")
    assert status == 202, body
    assert [s["rank"] for s in body["result"]["seats"]] == [2, 1]
    entries = store.read_log(game.game_id)
    assert [e["type"] for e in entries][-2:] == ["adjudicated", "revealed"]
    status, result = http.get(f"/games/{game.game_id}/result")
    assert status == 200 and result["result"]["adjudicated"]["method"] == "organiser"
    status, body = adjudicate(organiser, method="provisional", reason="again")
    assert status == 409 and body["error"]["code"] == "game/not_active"

