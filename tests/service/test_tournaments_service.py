"""Tournaments through the HTTP API against the real Redis (CONTRACT section 10): a whole small Swiss
tournament of real games played by signed random moves, its certificate verified offline with the games'
bundles; a round deadline adjudicating an unfinished game; an organiser's decision; withdrawals; and the
refusals of bad joins and bodies."""

from __future__ import annotations

import json
import random
import time

from click.testing import CliRunner
from svc_helpers import signed
from tournament_helpers import Players, join, join_all, play_round, start_game, tournament_state, withdraw

from referee.cli.verification import verify_tournament_command
from referee.protocol.signing import generate_key, public_key_b64, sign
from referee.store.keys import TOURNAMENT_TIMER
from referee.tournaments.certificate import verify_certificate
from workers.deadlines import DeadlineScheduler
from workers.queue import ReplayDispatch


def create(http, body) -> str:
    status, created = http.post("/tournaments", body)
    assert status == 201, created
    assert created["status"] == "waiting" and created["seq"] == 1 and len(created["commitment"]) == 64
    return created["tournament"]


def bundles_of(http, game_ids) -> dict:
    out = {}
    for game_id in game_ids:
        status, bundle = http.get(f"/games/{game_id}/export")
        assert status == 200, bundle
        out[game_id] = bundle
    return out


def test_a_swiss_tournament_played_through_http_certifies_and_verifies_offline(http, run_worker, store, tmp_path):
    players = Players(5)
    tid = create(http, players.body(format={"kind": "swiss", "rounds": 2, "table_sizes": [3]}))
    status, error = http.get(f"/tournaments/{tid}/export")
    assert status == 409 and error["error"]["code"] == "tournament/not_revealed"
    join_all(http, tid, players)
    state = tournament_state(http, tid)
    assert state["status"] == "active"
    first = state["rounds"][0]
    assert [len(t["players"]) for t in first["tables"]] == [3, 2] and first["byes"] == []
    # every paired game exists, with the table's players in seat order and the tournament named in `created`
    for table in first["tables"]:
        status, game = http.get(f"/games/{table['game']}")
        assert status == 200 and [s["key"] for s in game["seats"]] == table["players"]
        created = store.read_log(table["game"], 0, 1)[0]
        assert created["tournament"] == tid and "accept_by" not in created  # the round deadline decides
    round_events = [e for e in store.read_outbox() if e["type"] == "tournament_round"]
    assert sorted(e["key"] for e in round_events) == sorted(players.public)
    assert all(e["game"] in {t["game"] for t in first["tables"]} and e["link"].endswith(e["game"])
               for e in round_events)

    rng = random.Random(12)
    games = play_round(http, tid, players, rng)
    run_worker()  # the replay jobs see the games finished: results, round 1 closed, round 2 paired
    state = tournament_state(http, tid)
    assert state["rounds"][0]["closed"] and all(t["result"]["method"] == "played" for t in state["rounds"][0]["tables"])
    assert len(state["rounds"]) == 2
    games += play_round(http, tid, players, rng)
    run_worker()
    state = tournament_state(http, tid)
    assert state["status"] == "finished" and state["revealed"]
    assert [row["rank"] for row in state["standings"]] == [1, 2, 3, 4, 5]
    assert all(set(row["tie_breaks"]) == set(state["tie_breaks"]) for row in state["standings"])
    assert all(row["tie_breaks"]["lot"] is not None for row in state["standings"])
    types = [e["type"] for e in http.get(f"/tournaments/{tid}/log?limit=1000")[1]["entries"]]
    assert types == ["created"] + ["joined"] * 5 + ["paired"] + ["game_finished"] * 2 + ["round_closed", "paired"] \
        + ["game_finished"] * 2 + ["round_closed", "finished", "revealed"]

    status, certificate = http.get(f"/tournaments/{tid}/export")
    assert status == 200, certificate
    bundles = bundles_of(http, games)
    report = verify_certificate(certificate, bundles, referee_key=certificate["referee_key"])
    assert report.ok and report.check("game_bundles").status == "passed", report.to_dict()
    # offline, as a user runs it: `referee verify-tournament certificate.json --games DIR`
    (tmp_path / "games").mkdir()
    for game_id, bundle in bundles.items():
        (tmp_path / "games" / f"{game_id}.json").write_text(json.dumps(bundle))
    (tmp_path / "certificate.json").write_text(json.dumps(certificate))
    result = CliRunner().invoke(verify_tournament_command, [str(tmp_path / "certificate.json"), "--games",
                                                            str(tmp_path / "games")])
    assert result.exit_code == 0 and "VERIFIED" in result.output, result.output
    tampered = json.loads(json.dumps(certificate))
    tampered["standings"][0]["points"] = 99
    assert not verify_certificate(tampered, bundles).ok

    status, ratings = http.get("/ratings/fivetowers")
    assert status == 200 and sorted(r["key"] for r in ratings["ratings"]) == sorted(players.public)
    assert all(r["games"] == 2 for r in ratings["ratings"])
    assert http.get("/ratings/chess")[0] == 404
    # the change per game, on its result: the winner's ordinal rises, the last's falls
    rated = certificate["games"][0]["id"]
    status, one = http.get(f"/ratings/fivetowers?game={rated}")
    assert status == 200 and one["game"] == rated
    _s, result = http.get(f"/games/{rated}/result")
    ranks = {s["seat"]: s["rank"] for s in result["result"]["seats"]}
    best, worst = min(ranks, key=ranks.get), max(ranks, key=ranks.get)
    changes = one["change"]
    assert changes[best]["ordinal"][1] > changes[best]["ordinal"][0]
    assert changes[worst]["ordinal"][1] < changes[worst]["ordinal"][0]
    assert http.get("/ratings/fivetowers?game=g_nosuchgame")[0] == 404


def test_a_round_deadline_adjudicates_the_unfinished_game_in_both_logs(app, http, store):
    players = Players(4)
    tid = create(http, players.body(format={"kind": "swiss", "rounds": 1, "table_sizes": [2]}, round_deadline=1))
    join_all(http, tid, players)
    timers = dict(store.due_timers(2**62))
    assert TOURNAMENT_TIMER.format(tournament=tid) in timers
    rng = random.Random(5)
    games = play_round(http, tid, players, rng, skip=1)  # the second game stops after two moves
    unfinished = games[1]
    scheduler = DeadlineScheduler(store, ReplayDispatch(app.extensions["referee.queue"], store),
                                  tournaments=app.extensions["referee.tournaments"])
    due = timers[TOURNAMENT_TIMER.format(tournament=tid)]
    # not due a moment before the deadline (asked at that moment: on a loaded machine the round above can take
    # longer than the 1 s deadline itself)
    assert [d for d in scheduler.run_once(now=int(due) - 1) if "tournament" in d] == []
    assert tournament_state(http, tid)["status"] == "active"
    time.sleep(max(0.0, int(due) / 1000 - time.time()) + 0.1)
    done = [d for d in scheduler.run_once() if "tournament" in d]
    assert done and done[0]["adjudicated"] == [unfinished], done
    game_log = store.read_log(unfinished)
    adjudicated = [e for e in game_log if e["type"] == "adjudicated"]
    assert len(adjudicated) == 1 and adjudicated[0]["method"] == "provisional"
    status, result = http.get(f"/games/{unfinished}/result")
    assert status == 200 and result["result"]["adjudicated"]["method"] == "provisional"
    entries = http.get(f"/tournaments/{tid}/log?limit=1000")[1]["entries"]
    mine = [e for e in entries if e.get("game") == unfinished]
    assert [e["type"] for e in mine] == ["adjudicated"]
    assert mine[0]["method"] == "provisional" and mine[0]["head"] == game_log[-1]["hash"]
    assert mine[0]["ranks"] == [s["rank"] for s in result["result"]["seats"]]
    closed = [e for e in entries if e["type"] == "round_closed"]
    assert closed and closed[0]["reason"] == "deadline"
    assert tournament_state(http, tid)["status"] == "finished"
    assert store.due_timers(2**62) == [] or TOURNAMENT_TIMER.format(tournament=tid) not in dict(store.due_timers(2**62))
    status, certificate = http.get(f"/tournaments/{tid}/export")
    assert status == 200
    report = verify_certificate(certificate, bundles_of(http, games))
    assert report.ok, report.to_dict()


def test_an_organisers_signed_decision_adjudicates_a_game(make_app):
    from svc_helpers import Http

    organiser = generate_key()
    app = make_app(REFEREE_ORGANISER_KEYS=public_key_b64(organiser))
    http = Http(app.test_client())
    players = Players(2)
    body = players.body(format={"kind": "series", "rounds": 1}, adjudication="organiser")
    status, error = http.post("/tournaments", body)
    assert status == 401 and error["error"]["code"] == "organiser/required"
    signed_body = {**body, "organiser": {"key": public_key_b64(organiser),
                                         "sig": sign(organiser, {"v": 1, "ctx": "referee/tournament", **body})}}
    tid = create(http, signed_body)
    assert http.post("/tournaments", signed_body)[0] == 409  # the same signed request makes one tournament
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][0]["tables"][0]
    start_game(http, table, players, random.Random(3))
    state = tournament_state(http, tid)
    envelope = {"v": 1, "ctx": "referee/adjudicate", "tournament": tid, "game": table["game"], "ranks": [2, 1],
                "reason": "seat 0 left the club", "seq": state["seq"], "prev": state["head"]}
    status, error = http.post(f"/tournaments/{tid}/adjudicate", signed(players.keys[0], envelope))
    assert status == 401 and error["error"]["code"] == "adjudication/bad_signature"
    stale = {**envelope, "seq": state["seq"] - 1}
    status, error = http.post(f"/tournaments/{tid}/adjudicate", signed(organiser, stale))
    assert status == 409 and error["error"]["code"] == "submission/stale"
    assert tournament_state(http, tid)["seq"] == state["seq"]
    status, answer = http.post(f"/tournaments/{tid}/adjudicate", signed(organiser, envelope))
    assert status == 202, answer
    assert [s["rank"] for s in answer["result"]["seats"]] == [2, 1]
    entries = http.get(f"/tournaments/{tid}/log?limit=1000")[1]["entries"]
    decided = [e for e in entries if e["type"] == "adjudicated"]
    assert len(decided) == 1 and decided[0]["method"] == "organiser" and decided[0]["decision"]["envelope"] == envelope
    assert tournament_state(http, tid)["status"] == "finished"
    status, certificate = http.get(f"/tournaments/{tid}/export")
    assert status == 200 and verify_certificate(certificate, bundles_of(http, [table["game"]])).ok


def test_a_withdrawn_player_is_paired_no_more(http, run_worker):
    players = Players(4)
    tid = create(http, players.body(format={"kind": "swiss", "rounds": 2, "table_sizes": [2]}))
    status, error = withdraw(http, tid, players.keys[3])
    assert status == 409 and error["error"]["code"] == "tournament/not_active"
    join_all(http, tid, players)
    stranger = generate_key()
    status, error = withdraw(http, tid, players.keys[3], signer=stranger)
    assert status == 401
    status, receipt = withdraw(http, tid, players.keys[3])
    assert status == 202, receipt
    status, error = withdraw(http, tid, players.keys[3])
    assert status == 409 and error["error"]["code"] == "withdraw/duplicate"
    state = tournament_state(http, tid)
    assert [p["withdrawn"] for p in state["players"]] == [False, False, False, True]
    play_round(http, tid, players, random.Random(9))  # round 1 was paired before: the withdrawn player plays it
    run_worker()
    state = tournament_state(http, tid)
    second = state["rounds"][1]
    seated = [k for t in second["tables"] for k in t["players"]] + second["byes"]
    assert sorted(seated) == sorted(players.public[:3]) and len(second["byes"]) == 1


def test_joins_that_are_refused_change_nothing(http):
    players = Players(3)
    tid = create(http, players.body(format={"kind": "round_robin", "table_sizes": [3]}))
    before = tournament_state(http, tid)["seq"]
    stranger = generate_key()
    status, error = join(http, tid, stranger)
    assert status == 403 and error["error"]["code"] == "join/not_player"
    status, error = join(http, tid, players.keys[0], signer=players.keys[1])
    assert status == 401 and error["error"]["code"] == "submission/bad_signature"
    status, error = join(http, tid, players.keys[0], tournament="t_other")
    assert status == 403 and error["error"]["code"] == "submission/wrong_tournament"
    status, error = join(http, tid, players.keys[0], seq=0)
    assert status == 409 and error["error"]["code"] == "submission/stale"
    status, error = join(http, tid, players.keys[0], entropy="short")
    assert status == 400 and error["error"]["code"] == "request/invalid"
    assert http.post("/tournaments/t_nothere/join", {"envelope": {}, "sig": "x"})[0] == 400
    assert tournament_state(http, tid)["seq"] == before
    assert join(http, tid, players.keys[0])[0] == 202
    status, error = join(http, tid, players.keys[0])
    assert status == 409 and error["error"]["code"] == "join/duplicate"
    assert tournament_state(http, tid)["seq"] == before + 1
    assert http.get("/tournaments/t_nothere")[0] == 404
    assert http.get("/tournaments/t_nothere/log")[0] == 404


def test_bad_tournament_bodies_are_400_and_the_rate_limit_429(make_app):
    from svc_helpers import Http

    http = Http(make_app().test_client())
    players = Players(3)
    good = players.body(format={"kind": "swiss", "rounds": 2})
    for body, path in [({**good, "ruleset": "chess"}, "$.ruleset"),
                       ({**good, "players": [good["players"][0], {**good["players"][1], "name": "PLAYER 0"}]},
                        "$.players[1].name"),
                       ({**good, "format": {"kind": "knockout"}}, "$.format.kind"),
                       ({**good, "adjudication": "organiser"}, "$.adjudication")]:
        status, error = http.post("/tournaments", body)
        assert status == 400 and error["error"]["code"] == "request/invalid", error
        assert path in [p["path"] for p in error["error"]["details"]["problems"]], error
    status, error = http.post("/tournaments", {**good, "options": {"time_control": {"kind": "sundial"}}})
    assert status == 400 and error["error"]["code"] == "game/bad_time_control"
    limited = Http(make_app(REFEREE_RATE_TOURNAMENTS="2 per minute").test_client())
    assert [limited.post("/tournaments", good)[0] for _ in range(2)] == [201, 201]
    status, error = limited.post("/tournaments", good)
    assert status == 429 and error["error"]["code"] == "rate/limited"


def test_tournament_round_events_name_each_players_game_and_render_as_mail():
    from referee.notify.events import tournament_round_events
    from referee.notify.render import render_event

    entry = {"seq": 7, "round": 2, "tables": [{"game": "t_x-r2-t1", "players": ["ka", "kb"]}], "byes": ["kc"]}
    events = tournament_round_events("t_x", entry)
    assert [(e["key"], e["game"], e["seat"], e["bye"]) for e in events] == [
        ("ka", "t_x-r2-t1", 0, False), ("kb", "t_x-r2-t1", 1, False), ("kc", None, None, True)]
    assert len({e["id"] for e in events}) == 3 and events == tournament_round_events("t_x", entry)  # stable ids
    subject, text, _html = render_event(events[1], base_url="https://ref.example")
    assert "t_x-r2-t1" in subject and "referee accept t_x-r2-t1" in text and "/tournaments/t_x" in text
    subject, text, _html = render_event(events[2], base_url="https://ref.example")
    assert "bye" in subject


def test_a_real_worker_process_closes_a_round_at_its_deadline(http, spawn_worker):
    from svc_helpers import play_random, wait_until

    players = Players(2)
    tid = create(http, players.body(format={"kind": "series", "rounds": 1}, round_deadline=1))
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][0]["tables"][0]
    game = start_game(http, table, players, random.Random(4))
    play_random(http, game, random.Random(4), max_moves=3)
    spawn_worker()  # `referee worker`: its deadline scheduler holds the tournament's timer
    state = wait_until(lambda: (s := tournament_state(http, tid))["status"] == "finished" and s, timeout=30)
    result = state["rounds"][0]["tables"][0]["result"]
    assert result["method"] == "provisional"
    # `finished` comes a moment before the seed's `revealed`: wait for the log's last entry
    entries = wait_until(lambda: (log := http.get(f"/tournaments/{tid}/log?limit=1000")[1]["entries"])
                         and log[-1]["type"] == "revealed" and log, timeout=10)
    assert [e["reason"] for e in entries if e["type"] == "round_closed"] == ["deadline"]
    assert entries[-1]["type"] == "revealed"


def test_the_timer_of_an_unknown_tournament_is_dropped(app, store):
    member = TOURNAMENT_TIMER.format(tournament="t_gone")
    store.set_timer(member, 1)
    scheduler = DeadlineScheduler(store, tournaments=app.extensions["referee.tournaments"])
    assert scheduler.run_once() == [{"tournament": "t_gone", "appended": [], "dropped": True}]
    assert store.due_timers(2**62) == []


def test_the_standings_as_csv(http):
    players = Players(3)
    body = players.body(format={"kind": "series", "rounds": 1})
    body["players"][2]["name"] = "=HYPERLINK(1)"
    tid = create(http, body)
    response = http.client.get(f"/tournaments/{tid}/standings.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    lines = response.get_data(as_text=True).splitlines()
    assert lines[0] == "rank,name,key,points,opponents_points,head_to_head,wins,game_score,average_rank,lot"
    assert len(lines) == 4 and any(line.split(",")[1] == "'=HYPERLINK(1)" for line in lines[1:])
    assert http.client.get("/tournaments/t_none/standings.csv").status_code == 404


def test_an_organisers_decision_is_written_before_other_results_that_wait(make_app):
    """Game A ended (not yet recorded: no worker ran) when the organiser decides game B for the log's current
    position: B's decision goes in first, bound as signed, then A's result."""
    from svc_helpers import Http, play_random

    organiser = generate_key()
    http = Http(make_app().test_client())
    players = Players(4)
    body = players.body(format={"kind": "swiss", "rounds": 1, "table_sizes": [2]}, adjudication="organiser")
    body["organiser"] = {"key": public_key_b64(organiser),
                         "sig": sign(organiser, {"v": 1, "ctx": "referee/tournament", **body})}
    tid = create(http, body)
    join_all(http, tid, players)
    first, second = tournament_state(http, tid)["rounds"][0]["tables"]
    rng = random.Random(8)
    play_random(http, start_game(http, first, players, rng), rng)
    start_game(http, second, players, rng)
    state = tournament_state(http, tid)
    assert state["rounds"][0]["tables"][0]["result"] is None  # game A's end is not in the tournament yet
    envelope = {"v": 1, "ctx": "referee/adjudicate", "tournament": tid, "game": second["game"], "ranks": [1, 1],
                "reason": "agreed draw", "seq": state["seq"], "prev": state["head"]}
    status, answer = http.post(f"/tournaments/{tid}/adjudicate", signed(organiser, envelope))
    assert status == 202, answer
    entries = http.get(f"/tournaments/{tid}/log?limit=1000")[1]["entries"]
    results = [(e["type"], e["game"]) for e in entries if e["type"] in ("game_finished", "adjudicated")]
    assert results == [("adjudicated", second["game"]), ("game_finished", first["game"])]
    assert tournament_state(http, tid)["status"] == "finished"


def test_a_seat_cannot_abort_a_tournament_game(http):
    players = Players(2)
    tid = create(http, players.body(format={"kind": "series", "rounds": 1}))
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][0]["tables"][0]
    status, game = http.get(f"/games/{table['game']}")
    envelope = {"v": 1, "ctx": "referee/abort", "game": table["game"], "seq": game["seq"], "prev": game["head"]}
    status, error = http.post(f"/games/{table['game']}/abort", signed(players.key_of[table["players"][0]], envelope))
    assert status == 409 and error["error"]["code"] == "game/in_tournament"
    assert http.get(f"/games/{table['game']}")[1]["seq"] == game["seq"]


def test_a_tournament_runs_inline_on_the_memory_store(tmp_path):
    """``REFEREE_STORE=memory`` (one process, ``inline`` dispatch): the projector's hook advances the
    tournament within the request that ends a game."""
    from svc_helpers import Http, play_random

    from referee.app import create_app

    app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": str(tmp_path / "var"), "TESTING": True})
    http = Http(app.test_client())
    players = Players(3)
    tid = create(http, players.body(format={"kind": "round_robin", "table_sizes": [2], "rounds": 2}))
    join_all(http, tid, players)
    rng = random.Random(2)
    for round_no in (1, 2):
        state = tournament_state(http, tid)
        assert len(state["rounds"]) == round_no and len(state["rounds"][-1]["byes"]) == 1
        for table in state["rounds"][-1]["tables"]:
            play_random(http, start_game(http, table, players, rng), rng)
    state = tournament_state(http, tid)
    assert state["status"] == "finished" and state["revealed"]
    status, certificate = http.get(f"/tournaments/{tid}/export")
    assert status == 200 and verify_certificate(certificate).ok


def test_concurrent_advances_write_each_owed_entry_once(app, http, store):
    """Four services (as in four processes) race to write what the last join made due: one ``paired``, its
    games created once, every entry valid."""
    import threading

    from tournament_helpers import join_envelope

    from referee.games_service import GameService
    from referee.games_service.entries import make_entry
    from referee.tournaments.log import replay_tournament
    from referee.tournaments.service import TournamentService

    players = Players(4)
    tid = create(http, players.body(format={"kind": "swiss", "rounds": 1, "table_sizes": [2]}))
    for key in players.keys[:3]:
        assert join(http, tid, key)[0] == 202
    envelope = join_envelope(http, tid, players.keys[3])  # the last join, written behind the services' backs
    entry = make_entry("joined", envelope["seq"], envelope["prev"], key=envelope["key"],
                       submission=signed(players.keys[3], envelope))
    store.append_tournament(tid, entry, envelope["prev"])
    services = [TournamentService(store, GameService(store)) for _ in range(4)]
    barrier = threading.Barrier(len(services))
    written: list[list[str]] = []

    def race(service: TournamentService) -> None:
        barrier.wait()
        written.append(service.advance(tid))

    threads = [threading.Thread(target=race, args=(s,)) for s in services]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(t for w in written for t in w) == ["paired"]
    entries, _tip = store.read_tournament(tid)
    replayer = replay_tournament(entries, store.tournament_secret(tid))
    assert all(v.status == "ok" for v in replayer.verdicts)
    for table in replayer.rounds[0].tables:
        assert store.read_log(table["game"], 0, 1)[0]["seats"][0]["key"] == table["players"][0]


def test_the_organiser_may_withdraw_a_player(http):
    organiser = generate_key()
    players = Players(3)
    body = players.body(format={"kind": "swiss", "rounds": 2, "table_sizes": [2]})
    body["organiser"] = {"key": public_key_b64(organiser),
                         "sig": sign(organiser, {"v": 1, "ctx": "referee/tournament", **body})}
    tid = create(http, body)
    join_all(http, tid, players)
    status, error = withdraw(http, tid, players.keys[1], signer=players.keys[2])  # another player may not
    assert status == 401 and error["error"]["code"] == "submission/bad_signature"
    status, receipt = withdraw(http, tid, players.keys[1], signer=organiser)
    assert status == 202, receipt
    assert [p["withdrawn"] for p in tournament_state(http, tid)["players"]] == [False, True, False]


def test_a_game_never_accepted_by_the_deadline_is_adjudicated_and_the_round_closes(app, http, store):
    """A seat that never accepts its game must not hold the round open: at the deadline the unplayed game
    is adjudicated (the seats that accepted share the first rank), both logs say so, and the round closes."""
    from svc_helpers import signed as signed_submission  # noqa: F401 - the acceptance is signed in start_game

    players = Players(2)
    tid = create(http, players.body(format={"kind": "swiss", "rounds": 1, "table_sizes": [2]}, round_deadline=1))
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][-1]["tables"][0]
    game = table["game"]
    first = players.key_of[table["players"][0]]
    from referee.protocol.signing import ACCEPT_CTX, b64url_encode

    _s, state = http.get(f"/games/{game}")
    envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game, "seat": 0, "seq": state["seq"], "prev": state["head"],
                "entropy": b64url_encode(bytes(32))}
    assert http.post(f"/games/{game}/accept", signed(first, envelope))[0] == 202  # only seat 0 accepts
    scheduler = DeadlineScheduler(store, ReplayDispatch(app.extensions["referee.queue"], store),
                                  tournaments=app.extensions["referee.tournaments"])
    time.sleep(1.1)
    done = [d for d in scheduler.run_once() if "tournament" in d]
    assert done and done[0]["adjudicated"] == [game], done
    kinds = [e["type"] for e in store.read_log(game)]
    assert kinds == ["created", "accepted", "adjudicated", "revealed"]
    status, result = http.get(f"/games/{game}/result")
    assert status == 200 and result["result"]["unplayed"] is True
    assert [(s["rank"], s["accepted"]) for s in result["result"]["seats"]] == [(1, True), (2, False)]
    entries = http.get(f"/tournaments/{tid}/log?limit=1000")[1]["entries"]
    assert [e["ranks"] for e in entries if e.get("game") == game and e["type"] == "adjudicated"] == [[1, 2]]
    assert tournament_state(http, tid)["status"] == "finished"
    status, certificate = http.get(f"/tournaments/{tid}/export")
    assert status == 200
    report = verify_certificate(certificate, bundles_of(http, [game]))
    assert report.ok, report.to_dict()


def _three_at_a_table(http, withdrawal):
    players = Players(3)
    tid = create(http, players.body(format={"kind": "series", "rounds": 1, "table_sizes": [3]},
                                    withdrawal=withdrawal))
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][-1]["tables"][0]
    rng = random.Random(4)
    game = start_game(http, table, players, rng)
    from svc_helpers import play_random

    play_random(http, game, rng, max_moves=3)
    quitter = table["players"][1]
    return players, tid, table, game, quitter, rng


def test_a_withdrawal_forfeits_the_seat_and_its_turns_are_default_moves(app, http, store, run_worker):
    players, tid, table, game, quitter, rng = _three_at_a_table(http, "default_moves")
    status, receipt = withdraw(http, tid, players.key_of[quitter])
    assert status == 202, receipt
    kinds = [e["type"] for e in store.read_log(game.game_id)]
    assert "forfeited" in kinds and store.read_log(game.game_id)[kinds.index("forfeited")]["reason"] == "withdrawn"
    from svc_helpers import play_random

    play_random(http, game, rng)  # the others play on; the referee plays the withdrawn seat's turns
    kinds = [e["type"] for e in store.read_log(game.game_id)]
    assert "auto_move" in kinds and kinds[-1] == "revealed"
    _s, result = http.get(f"/games/{game.game_id}/result")
    seat = table["players"].index(quitter)
    assert result["result"]["seats"][seat]["forfeited"] and result["result"]["seats"][seat]["rank"] == 3
    run_worker()
    assert tournament_state(http, tid)["status"] == "finished"


def test_a_withdrawal_with_adjudication_ends_the_game_at_once(app, http, store, run_worker):
    players, tid, table, game, quitter, _rng = _three_at_a_table(http, "adjudicate")
    assert withdraw(http, tid, players.key_of[quitter])[0] == 202
    kinds = [e["type"] for e in store.read_log(game.game_id)]
    assert kinds[-2:] == ["adjudicated", "revealed"]  # (an auto move follows the forfeit if the seat was to move)
    assert kinds.index("forfeited") > max(i for i, kind in enumerate(kinds) if kind == "move")
    _s, result = http.get(f"/games/{game.game_id}/result")
    seat = table["players"].index(quitter)
    assert result["result"]["adjudicated"]["method"] == "provisional"
    assert result["result"]["seats"][seat]["rank"] == 3 and result["result"]["seats"][seat]["forfeited"]
    run_worker()
    assert tournament_state(http, tid)["status"] == "finished"


def test_a_tournament_game_that_ends_by_timeout_counts_like_any_result(app, http, store, run_worker):
    """The games take the tournament's time control: a seat that lets its clock run out forfeits (here at
    the first timeout), the game ends, and its result goes into the tournament's standings."""
    players = Players(2)
    tid = create(http, players.body(format={"kind": "series", "rounds": 1, "table_sizes": [2]},
                                    options={"time_control": {"kind": "per_move", "per_move": 1,
                                                              "on_timeout": "forfeit", "vacation": 0}}))
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][-1]["tables"][0]
    start_game(http, table, players, random.Random(2))
    time.sleep(1.1)
    scheduler = DeadlineScheduler(store, ReplayDispatch(app.extensions["referee.queue"], store),
                                  tournaments=app.extensions["referee.tournaments"])
    scheduler.run_once()
    kinds = [e["type"] for e in store.read_log(table["game"])]
    assert kinds[-3:] == ["timeout", "forfeited", "revealed"]
    run_worker()
    state = tournament_state(http, tid)
    assert state["status"] == "finished"
    result = state["rounds"][0]["tables"][0]["result"]
    _s, game_result = http.get(f"/games/{table['game']}/result")
    assert result["ranks"] == [s["rank"] for s in game_result["result"]["seats"]]
    assert sorted(result["ranks"]) == [1, 2]


def test_referee_tournament_create_names_the_pairing_rule(server, store):
    """``--pairing``: a 2-seat Swiss made from the command line takes rule 2 unless rule 1 is asked for, and a
    rule for a format without the 2-seat matching is refused by the referee, naming the field."""
    from svc_helpers import run_cli

    ann, bo = (public_key_b64(generate_key()) for _ in range(2))
    base = ["tournament", "create", "fivetowers", "--player", f"ann={ann}", "--player", f"bo={bo}",
            "--table-size", "2", "--server", server]
    for extra, expected in (([], {"pairing": 2}), (["--pairing", "1"], {}), (["--pairing", "2"], {"pairing": 2})):
        code, out = run_cli(*base, *extra)
        assert code == 0, out
        entries, _tip = store.read_tournament(json.loads(out)["tournament"])
        assert entries[0]["format"] == {"kind": "swiss", "rounds": 1, "table_sizes": [2], **expected}, extra
    code, out = run_cli(*base, "--format", "round_robin", "--pairing", "2")
    assert code != 0 and "$.format.pairing" in out, out
    code, out = run_cli(*base, "--pairing", "3")
    assert code != 0 and "--pairing" in out, out
