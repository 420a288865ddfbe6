"""The players' own decisions through the HTTP API on real Redis (CONTRACT section 12, ``referee.rulings.decisions``):
resignations (DC-R1–R3), offers and answers (DC-O1, DC-O2, DC-D1, DC-E1, DC-A1, DC-T1, DC-T2), the bundle
that verifies afterwards, a tournament game's resignation counted as a loss, and the decisions around time
control (issue 37, item 10: an offer lapses at a timeout's default move; an agreed take-back recounts the seats
that have moved and gives the clock back only what the voided move earned; freezegun sets the time)."""

from __future__ import annotations

import random
from typing import Any

from freezegun import freeze_time
from svc_helpers import accept_all, create_game, move_envelope, play_random, signed
from tournament_helpers import Players, join_all, start_game, tournament_state

from referee.protocol.signing import ANSWER_CTX, OFFER_CTX, RESIGN_CTX, public_key_b64
from referee.verify import verify_bundle
from workers.deadlines import DeadlineScheduler


def _tip(http, game_id: str) -> dict[str, Any]:
    status, state = http.get(f"/games/{game_id}")
    assert status == 200, state
    return state


def resign(http, game, seat: int):
    state = _tip(http, game.game_id)
    envelope = {"v": 1, "ctx": RESIGN_CTX, "game": game.game_id, "seat": seat, "seq": state["seq"],
                "prev": state["head"]}
    return http.post(f"/games/{game.game_id}/resign", signed(game.keys[seat], envelope))


def offer(http, game, seat: int, kind: str):
    state = _tip(http, game.game_id)
    envelope = {"v": 1, "ctx": OFFER_CTX, "game": game.game_id, "seat": seat, "seq": state["seq"],
                "prev": state["head"], "offer": kind}
    return http.post(f"/games/{game.game_id}/offers", signed(game.keys[seat], envelope))


def answer(http, game, seat: int, position: int, accept: bool):
    state = _tip(http, game.game_id)
    envelope = {"v": 1, "ctx": ANSWER_CTX, "game": game.game_id, "seat": seat, "seq": state["seq"],
                "prev": state["head"], "offer": position, "accept": accept}
    return http.post(f"/games/{game.game_id}/offers/{position}/answer", signed(game.keys[seat], envelope))


def move(http, game, move_dict: dict[str, Any] | None = None):
    """The seat to move plays ``move_dict`` (default: its first legal move)."""
    status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    assert status == 200, legal
    seat = legal["to_move"]
    chosen = move_dict or legal["moves"][0]
    envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], chosen)
    status, receipt = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
    assert status in (200, 202), receipt
    game.moves.append((seat, chosen))
    return seat, chosen


def started(http, ruleset_name: str, players: int, seed: int = 0, **extra: Any):
    game = create_game(http, ruleset_name, players, **extra)
    accept_all(http, game, random.Random(seed))
    return game


def kinds(store, game_id: str) -> list[str]:
    return [entry["type"] for entry in store.read_log(game_id)]


def verified(app, http, game_id: str) -> None:
    status, bundle = http.get(f"/games/{game_id}/export")
    assert status == 200, bundle
    report = verify_bundle(bundle, referee_key=public_key_b64(app.extensions["referee.key"]))
    assert report.ok, report.to_dict()


# -- resign (DC-R1, DC-R2, DC-R3) --------------------------------------------------------------------
def test_dc_r1_a_two_seat_resignation_ends_the_game_and_the_bundle_verifies(app, http, store):
    game = started(http, "fivetowers", 2)
    play_random(http, game, random.Random(1), max_moves=3)
    waiting = 1 - _tip(http, game.game_id)["to_move"]  # resigning is allowed whoever is to move
    status, receipt = resign(http, game, waiting)
    assert status == 202, receipt
    assert receipt["receipt"]["ctx"] == "referee/receipt" and receipt["receipt_sig"]
    assert receipt["status"] == "finished" and receipt["to_move"] is None
    assert kinds(store, game.game_id)[-2:] == ["resigned", "revealed"]
    status, result = http.get(f"/games/{game.game_id}/result")
    assert status == 200, result
    seats = result["result"]["seats"]
    assert [(s["rank"], s["resigned"]) for s in seats] == [(2, True) if s["seat"] == waiting else (1, False)
                                                          for s in seats]
    assert seats[waiting]["basis"]["rule"] == "DC-R3" and "resigned" in seats[waiting]["basis"]["reason"]
    assert result["result"]["winners"] == [1 - waiting] and result["result"]["ended_by"]["rule"] == "DC-R1"
    verified(app, http, game.game_id)
    # the game is over: nothing more to resign
    status, error = resign(http, game, 1 - waiting)
    assert status == 409 and error["error"]["code"] == "game/not_active"


def test_dc_r1_not_before_the_start(http):
    game = create_game(http, "fivetowers", 2)
    status, error = resign(http, game, 0)
    assert status == 409 and error["error"]["code"] == "game/not_active"


def _three_seats_resign_and_play_out(app, http, store, ruleset_name: str, **extra: Any) -> None:
    game = started(http, ruleset_name, 3, **extra)
    rng = random.Random(7)
    play_random(http, game, rng, max_moves=4)
    assert resign(http, game, 1)[0] == 202
    state = _tip(http, game.game_id)
    assert state["status"] == "active" and state["decisions"]["resigned"] == [1]
    # a resigned seat cannot move nor resign again
    status, error = resign(http, game, 1)
    assert status == 403 and error["error"]["code"] == "decision/resigned", error
    play_random(http, game, rng)  # the others play on; the referee plays seat 1's turns by default moves
    log = kinds(store, game.game_id)
    assert "auto_move" in log and log[-1] == "revealed"
    assert all(entry["seat"] == 1 for entry in store.read_log(game.game_id) if entry["type"] == "auto_move")
    status, result = http.get(f"/games/{game.game_id}/result")
    seats = result["result"]["seats"]
    assert seats[1]["rank"] == 3 and seats[1]["resigned"] and not seats[0]["resigned"]
    assert {s["rank"] for s in seats if s["seat"] != 1} <= {1, 2}
    assert all("basis" in s for s in seats)
    verified(app, http, game.game_id)


def test_dc_r2_a_three_seat_five_towers_game_goes_on_after_a_resignation(app, http, store):
    _three_seats_resign_and_play_out(app, http, store, "fivetowers")


def test_dc_r2_a_three_seat_tower_up_game_goes_on_after_a_resignation(app, http, store):
    _three_seats_resign_and_play_out(app, http, store, "towerup")


def test_dc_r3_seats_that_left_rank_by_who_left_later(app, http, store):
    game = started(http, "fivetowers", 4)
    play_random(http, game, random.Random(3), max_moves=2)
    assert resign(http, game, 2)[0] == 202
    assert resign(http, game, 0)[0] == 202
    assert resign(http, game, 3)[0] == 202  # two left: seat 1 wins at once
    _s, result = http.get(f"/games/{game.game_id}/result")
    assert [s["rank"] for s in result["result"]["seats"]] == [3, 1, 4, 2]
    verified(app, http, game.game_id)


def test_dc_r1_a_tournament_resignation_counts_as_a_loss(http, store, run_worker):
    players = Players(2)
    status, created = http.post("/tournaments", players.body(format={"kind": "series", "rounds": 1,
                                                                       "table_sizes": [2]}))
    assert status == 201, created
    tid = created["tournament"]
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][-1]["tables"][0]
    game = start_game(http, table, players, random.Random(2))
    assert resign(http, game, 0)[0] == 202
    run_worker()
    state = tournament_state(http, tid)
    assert state["status"] == "finished"
    standings = {row["key"]: row for row in state["standings"]}
    loser, winner = table["players"][0], table["players"][1]
    assert standings[winner]["rank"] == 1 and standings[loser]["rank"] == 2
    assert standings[winner]["points"] > standings[loser]["points"]
    entries = http.get(f"/tournaments/{tid}/log?limit=100")[1]["entries"]
    assert [e["ranks"] for e in entries if e["type"] == "game_finished"] == [[2, 1]]
    assert not any(e["type"] == "withdrawn" for e in entries)


# -- offers and answers (DC-O1, DC-O2, DC-D1, DC-E1, DC-A1) --------------------------------------------
def _pending(http, game) -> dict[str, Any] | None:
    return _tip(http, game.game_id)["decisions"]["pending"]


def test_dc_d1_a_draw_accepted_ends_the_game_shared_first_and_verifies(app, http, store):
    game = started(http, "fivetowers", 2)
    play_random(http, game, random.Random(5), max_moves=3)
    status, receipt = offer(http, game, 0, "draw")
    assert status == 202, receipt
    position = receipt["position"]
    assert _pending(http, game) == {"offer": position, "seat": 0, "kind": "draw", "accepted": []}
    status, receipt = answer(http, game, 1, position, True)
    assert status == 202, receipt
    assert receipt["status"] == "finished"  # `agreed` was appended in the same step
    log = store.read_log(game.game_id)
    assert [e["type"] for e in log[-4:]] == ["offer", "answered", "agreed", "revealed"]
    assert log[-2]["offer"] == position and log[-4]["offer"] == "draw"
    _s, result = http.get(f"/games/{game.game_id}/result")
    assert [s["rank"] for s in result["result"]["seats"]] == [1, 1]
    assert result["result"]["ended_by"]["rule"] == "DC-D1"
    assert all(s["basis"]["rule"] == "DC-D1" and not s["resigned"] for s in result["result"]["seats"])
    verified(app, http, game.game_id)


def test_dc_o2_declined_withdrawn_and_lapsed_by_a_move(http, store):
    game = started(http, "fivetowers", 2)
    play_random(http, game, random.Random(6), max_moves=2)
    # declined
    position = offer(http, game, 0, "draw")[1]["position"]
    assert answer(http, game, 1, position, False)[0] == 202
    state = _tip(http, game.game_id)
    assert state["status"] == "active" and state["decisions"]["pending"] is None
    assert state["decisions"]["last"]["outcome"] == "declined"
    # withdrawn by the offerer's own `accept: false`
    position = offer(http, game, 1, "end")[1]["position"]
    status, error = answer(http, game, 1, position, True)
    assert status == 409 and error["error"]["code"] == "answer/own_offer"
    assert answer(http, game, 1, position, False)[0] == 202
    assert _tip(http, game.game_id)["decisions"]["last"]["outcome"] == "withdrawn"
    # lapsed by the next move
    position = offer(http, game, 0, "draw")[1]["position"]
    move(http, game)
    state = _tip(http, game.game_id)
    assert state["decisions"]["pending"] is None and state["decisions"]["last"]["outcome"] == "lapsed"
    status, error = answer(http, game, 1, position, True)
    assert status == 409 and error["error"]["code"] == "offer/none_pending"
    assert _tip(http, game.game_id)["status"] == "active"


def test_dc_o1_one_offer_at_a_time(http):
    game = started(http, "fivetowers", 3)
    play_random(http, game, random.Random(8), max_moves=2)
    position = offer(http, game, 0, "draw")[1]["position"]
    status, error = offer(http, game, 2, "end")
    assert status == 409 and error["error"]["code"] == "offer/pending"
    assert error["error"]["details"]["pending"]["offer"] == position
    # one acceptance of two needed: still pending
    assert answer(http, game, 1, position, True)[0] == 202
    assert _pending(http, game)["accepted"] == [1]
    status, error = answer(http, game, 1, position, True)
    assert status == 409 and error["error"]["code"] == "answer/duplicate"
    # an answer naming another position, and a URL that does not match the envelope
    status, error = answer(http, game, 2, position + 1, True)
    assert status == 409 and error["error"]["code"] == "offer/none_pending"
    state = _tip(http, game.game_id)
    envelope = {"v": 1, "ctx": ANSWER_CTX, "game": game.game_id, "seat": 2, "seq": state["seq"],
                "prev": state["head"], "offer": position, "accept": True}
    status, error = http.post(f"/games/{game.game_id}/offers/{position + 1}/answer", signed(game.keys[2], envelope))
    assert status == 400, error


def test_dc_e1_an_end_accepted_scores_the_position_as_it_stands(app, http, store):
    game = started(http, "fivetowers", 3)
    play_random(http, game, random.Random(9), max_moves=9)
    position = offer(http, game, 2, "end")[1]["position"]
    assert answer(http, game, 0, position, True)[1]["status"] == "active"
    assert answer(http, game, 1, position, True)[1]["status"] == "finished"
    _s, result = http.get(f"/games/{game.game_id}/result")
    assert result["result"]["ended_by"]["rule"] == "DC-E1" and result["result"]["provisional"] is True
    assert "provisional result" in result["result"]["ended_by"]["reason"]
    verified(app, http, game.game_id)


def test_dc_a1_abort_before_every_seat_moved_reveals_the_seed_with_no_result(app, http, store):
    game = started(http, "fivetowers", 2)
    move(http, game)  # one seat has moved, not both
    position = offer(http, game, 1, "abort")[1]["position"]
    status, receipt = answer(http, game, 0, position, True)
    assert status == 202 and receipt["status"] == "aborted", receipt
    log = store.read_log(game.game_id)
    assert [e["type"] for e in log[-2:]] == ["agreed", "revealed"] and log[-1]["reason"] == "abort_agreed"
    assert http.get(f"/games/{game.game_id}/result")[0] == 409
    verified(app, http, game.game_id)


def test_dc_a1_abort_not_after_every_seat_moved(http):
    game = started(http, "fivetowers", 2)
    move(http, game)
    move(http, game)
    status, error = offer(http, game, 0, "abort")
    assert status == 409 and error["error"]["code"] == "offer/not_allowed" and error["error"]["rule"] == "DC-A1"
    assert "every seat has moved" in error["error"]["message"]


def test_dc_a1_a_tournament_game_cannot_be_aborted(http):
    players = Players(2)
    status, created = http.post("/tournaments", players.body(format={"kind": "series", "rounds": 1,
                                                                       "table_sizes": [2]}))
    tid = created["tournament"]
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][-1]["tables"][0]
    game = start_game(http, table, players, random.Random(2))
    status, error = offer(http, game, 0, "abort")
    assert status == 409 and error["error"]["code"] == "offer/not_allowed"
    assert "tournament" in error["error"]["message"]


def test_dc_o2_offers_and_answers_need_a_running_game(http):
    game = create_game(http, "fivetowers", 2)
    status, error = offer(http, game, 0, "draw")
    assert status == 409 and error["error"]["code"] == "game/not_active"


# -- take-back (DC-T1, DC-T2) --------------------------------------------------------------------------
def test_dc_t1_a_quiet_move_taken_back_leaves_the_state_before_it_and_dc_t2_a_revealing_one_cannot_be(
        app, http, store, run_worker):
    game = started(http, "towerup", 2)
    before = _tip(http, game.game_id)
    assert before["to_move"] == 1  # TU-G3: the last seat places the start floors (a quiet move)
    seat, _move = move(http, game)
    assert _tip(http, game.game_id)["state"] != before["state"]
    status, error = offer(http, game, 0, "takeback")  # not seat 0's move
    assert status == 409 and error["error"]["code"] == "offer/not_allowed" and error["error"]["rule"] == "DC-T1"
    status, receipt = offer(http, game, seat, "takeback")
    assert status == 202, receipt
    voided = receipt["position"] - 1
    assert _pending(http, game)["move"] == voided
    status, receipt = answer(http, game, 0, receipt["position"], True)
    assert status == 202 and receipt["to_move"] == 1, receipt
    after = _tip(http, game.game_id)
    assert after["state"] == before["state"] and after["to_move"] == before["to_move"]
    assert after["decisions"]["voided"] == [voided]
    agreed_at = after["seq"] - 1
    run_worker()  # the worker's fold writes the events
    assert any(e["type"] == "turn" and e["id"] == f"{game.game_id}:{agreed_at}:turn" and e["seat"] == 1
               for e in store.read_outbox())  # the seat whose move was voided is told it is its turn again
    # play on from there: seat 1 places its start floors, then a seat takes a card, which refills the
    # market from the deck (TU-T1)
    while True:
        legal = http.get(f"/games/{game.game_id}/legal-moves")[1]
        take = next((m for m in legal["moves"] if m["type"] == "take"), None)
        if take is not None:
            break
        move(http, game)
    taker, _move = move(http, game, take)
    status, error = offer(http, game, taker, "takeback")
    assert status == 409 and error["error"]["code"] == "offer/not_allowed", error
    assert error["error"]["rule"] == "DC-T2" and "TU-T1" in error["error"]["message"]
    # the log with its voided move verifies once the game is over
    assert resign(http, game, 1)[0] == 202
    verified(app, http, game.game_id)


def test_dc_t1_a_five_towers_bid_can_be_taken_back(http):
    game = started(http, "fivetowers", 3)
    before = _tip(http, game.game_id)
    seat, _move = move(http, game, {"type": "bid", "amount": 0})
    position = offer(http, game, seat, "takeback")[1]["position"]
    assert answer(http, game, 1, position, True)[0] == 202
    assert _tip(http, game.game_id)["status"] == "active" and _tip(http, game.game_id)["seq"] == position + 2
    assert answer(http, game, 2, position, True)[0] == 202
    after = _tip(http, game.game_id)
    assert after["state"] == before["state"] and after["to_move"] == seat


# -- the verifier: a forged agreement fails at its position --------------------------------------------
def test_a_forged_agreement_fails_verification_at_its_position(app, http, store):
    from referee.protocol.logchain import seal
    from referee.verify.bundle import build_bundle

    game = started(http, "fivetowers", 3)
    play_random(http, game, random.Random(11), max_moves=3)
    position = offer(http, game, 0, "draw")[1]["position"]
    assert answer(http, game, 1, position, True)[0] == 202  # seat 2 never answered
    log = store.read_log(game.game_id)
    forged = seal({"v": 1, "type": "agreed", "seq": len(log), "at": log[-1]["at"], "offer": position},
                  log[-1]["hash"])
    secret = store.read_secret(game.game_id)
    reveal = seal({"v": 1, "type": "revealed", "seq": len(log) + 1, "at": log[-1]["at"],
                   "server_seed": secret.hex(), "reason": "finished"}, forged["hash"])
    bundle = build_bundle([*log, forged, reveal], app.extensions["referee.key"])
    report = verify_bundle(bundle)
    assert not report.ok
    replay = report.check("replay")
    assert replay.position == len(log), report.to_dict()
    assert "agreement/not_agreed" in replay.reason and "[2]" in replay.reason


def test_a_resignation_signed_by_another_seat_fails_verification_at_its_position(app, http, store):
    from referee.protocol.logchain import seal
    from referee.verify.bundle import build_bundle

    game = started(http, "fivetowers", 2)
    play_random(http, game, random.Random(12), max_moves=2)
    log = store.read_log(game.game_id)
    envelope = {"v": 1, "ctx": RESIGN_CTX, "game": game.game_id, "seat": 1, "seq": len(log), "prev": log[-1]["hash"]}
    forged = seal({"v": 1, "type": "resigned", "seq": len(log), "at": log[-1]["at"], "seat": 1,
                   "submission": signed(game.keys[0], envelope)}, log[-1]["hash"])  # seat 0 resigns for seat 1
    reveal = seal({"v": 1, "type": "revealed", "seq": len(log) + 1, "at": log[-1]["at"],
                   "server_seed": store.read_secret(game.game_id).hex(), "reason": "finished"}, forged["hash"])
    report = verify_bundle(build_bundle([*log, forged, reveal], app.extensions["referee.key"]))
    assert report.check("seat_signatures").position == len(log), report.to_dict()
    assert report.check("replay").position == len(log)


# -- the command line ---------------------------------------------------------------------------------
def test_cli_offer_answer_and_resign(server, tmp_path, store):
    import json

    from svc_helpers import run_cli as run

    keys = {}
    for name in ("alice", "bob"):
        code, out = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        keys[name] = out.strip()
    code, out = run("create", "fivetowers", "--seat", f"alice={keys['alice']}", "--seat", f"bob={keys['bob']}",
                    "--server", server)
    game_id = json.loads(out)["game"]
    key = {name: str(tmp_path / f"{name}.key") for name in keys}
    for name in ("alice", "bob"):
        assert run("accept", game_id, "--key", key[name], "--server", server)[0] == 0
    code, out = run("offer", game_id, "draw", "--key", key["alice"], "--server", server)
    assert code == 0, out
    position = json.loads(out)["position"]
    code, out = run("answer", game_id, "--key", key["bob"], "--server", server)
    assert code != 0 and "--accept or --decline" in out
    code, out = run("answer", game_id, "--decline", "--key", key["bob"], "--server", server)  # the pending one
    assert code == 0, out
    assert store.read_log(game_id)[-1]["type"] == "answered" and store.read_log(game_id)[-1]["offer"] == position
    code, out = run("answer", game_id, str(position), "--accept", "--key", key["bob"], "--server", server)
    assert code == 1 and json.loads(out)["error"]["code"] == "offer/none_pending"
    code, out = run("offer", game_id, "takeback", "--key", key["bob"], "--server", server)
    assert code == 1 and json.loads(out)["error"]["code"] == "offer/not_allowed"
    code, out = run("resign", game_id, "--key", key["bob"], "--server", server)
    assert code == 0 and json.loads(out)["status"] == "finished", out


def test_cli_armor_prints_signed_blocks_for_the_mail_gateway_and_posts_nothing(server, tmp_path, store, http):
    import json

    from svc_helpers import run_cli as run

    from referee.notify.armor import find_blocks

    keys = {}
    for name in ("alice", "bob"):
        code, out = run("keygen", "--out", str(tmp_path / f"{name}.key"))
        keys[name] = out.strip()
    code, out = run("create", "fivetowers", "--seat", f"alice={keys['alice']}", "--seat", f"bob={keys['bob']}",
                    "--server", server)
    game_id = json.loads(out)["game"]
    key = {name: str(tmp_path / f"{name}.key") for name in keys}
    for name in ("alice", "bob"):
        assert run("accept", game_id, "--key", key[name], "--server", server)[0] == 0
    before = store.read_log(game_id)
    blocks = {}
    for command in (("resign", game_id), ("offer", game_id, "draw"), ("answer", game_id, "4", "--decline"),
                    ("say", game_id, "good game", "--to", "1")):
        code, out = run(*command, "--key", key["alice"], "--armor", "--server", server)
        assert code == 0, out
        found = find_blocks(out)
        assert out.startswith("-----BEGIN REFEREE SUBMISSION-----") and len(found) == 1, out
        blocks[command[0]] = found[0].submission
    assert store.read_log(game_id) == before  # --armor posts nothing
    assert {name: block["envelope"]["ctx"] for name, block in blocks.items()} == {
        "resign": RESIGN_CTX, "offer": OFFER_CTX, "answer": ANSWER_CTX, "say": "referee/message"}
    assert blocks["offer"]["envelope"]["seq"] == len(before) and blocks["offer"]["envelope"]["offer"] == "draw"
    assert blocks["answer"]["envelope"] | {"seq": 0, "prev": ""} == {
        "v": 1, "ctx": ANSWER_CTX, "game": game_id, "seat": 0, "seq": 0, "prev": "", "offer": 4, "accept": False}
    assert blocks["say"]["envelope"]["to"] == [1] and blocks["say"]["envelope"]["text"] == "good game"
    # what it signed is what the referee takes
    status, receipt = http.post(f"/games/{game_id}/offers", blocks["offer"])
    assert status == 202, receipt


def test_offer_answered_events_say_accepted_declined_and_lapsed_to_every_seat_but_the_actor(app, http, store,
                                                                                          run_worker):
    """Issue 22 item 4: what became of an offer, from the fold (``referee.notify.events``)."""
    game = started(http, "fivetowers", 3)
    status, first = offer(http, game, 0, "draw")
    assert status == 202, first
    assert answer(http, game, 1, first["position"], True)[0] == 202  # still pending: seat 2 must accept too
    assert answer(http, game, 2, first["position"], False)[0] == 202  # declined
    status, second = offer(http, game, 1, "end")
    assert status == 202, second
    moved_at = _tip(http, game.game_id)["seq"]
    move(http, game)  # a move lapses it
    run_worker()
    answered = [e for e in store.read_outbox() if e["type"] == "offer_answered" and e["game"] == game.game_id]
    assert [(e["position"], e["by"], e["seat"], e["outcome"]) for e in answered] == [
        (first["position"], 0, 1, "accepted"), (first["position"], 0, 2, "declined"),
        (second["position"], 1, None, "lapsed")]
    assert [[r["seat"] for r in e["recipients"]] for e in answered] == [[0, 2], [0, 1], [0, 1, 2]]
    assert answered[2]["id"] == f"{game.game_id}:{moved_at}:offer_answered"
    offers = [e for e in store.read_outbox() if e["type"] == "offer" and e["game"] == game.game_id]
    assert [(e["seat"], e["offer"], [r["seat"] for r in e["recipients"]]) for e in offers] == [
        (0, "draw", [1, 2]), (1, "end", [0, 2])]


# -- decisions around time control (issue 37, item 10; DC-O2, DC-T1, DC-A1, TC-D3) ----------------------------
_BANK = {"kind": "bank", "initial": 3600, "increment": 600, "max": 36000}


def _clock_game(http, time_control: dict[str, Any]):
    with freeze_time("2026-11-21T10:00:00Z"):
        return started(http, "fivetowers", 2, options={"time_control": time_control})


def _taken_back_bid(http, time_control: dict[str, Any]):
    """Two seats of 5 Towers: the first bids at 10:10, the second bids at 10:20 (a quiet move) and takes it back
    (offer 10:25, accepted 10:30). Returns the game, the first seat and the second."""
    game = _clock_game(http, time_control)
    with freeze_time("2026-11-21T10:10:00Z"):
        first, _move = move(http, game, {"type": "bid", "amount": 0})
    with freeze_time("2026-11-21T10:20:00Z"):
        second, _move = move(http, game, {"type": "bid", "amount": 1})
    with freeze_time("2026-11-21T10:25:00Z"):
        status, receipt = offer(http, game, second, "takeback")
        assert status == 202, receipt
    with freeze_time("2026-11-21T10:30:00Z"):
        status, receipt = answer(http, game, first, receipt["position"], True)
    assert status == 202 and receipt["to_move"] == second, receipt
    return game, first, second


def test_dc_a1_after_an_agreed_takeback_the_voided_seat_has_not_moved_so_the_game_may_be_aborted(app, http, store):
    game, first, second = _taken_back_bid(http, {"kind": "per_move", "per_move": 86400})
    with freeze_time("2026-11-21T10:31:00Z"):
        status, receipt = offer(http, game, first, "abort")
        assert status == 202, receipt  # before: 409 offer/not_allowed, "every seat has moved"
        status, receipt = answer(http, game, second, receipt["position"], True)
    assert status == 202 and receipt["status"] == "aborted", receipt
    assert kinds(store, game.game_id)[-2:] == ["agreed", "revealed"]
    verified(app, http, game.game_id)


def test_dc_a1_once_the_voided_seat_has_moved_again_an_abort_is_refused(http):
    game, first, _second = _taken_back_bid(http, {"kind": "per_move", "per_move": 86400})
    with freeze_time("2026-11-21T10:40:00Z"):
        move(http, game, {"type": "bid", "amount": 1})
        status, error = offer(http, game, first, "abort")
    assert status == 409 and error["error"]["code"] == "offer/not_allowed" and error["error"]["rule"] == "DC-A1"


def test_tc_d3_a_bank_after_an_agreed_takeback_is_the_bank_without_the_voided_move(app, http, store):
    game, first, second = _taken_back_bid(http, _BANK)
    with freeze_time("2026-11-21T10:45:00Z"):
        state = _tip(http, game.game_id)
    clocks = [seat["clock"] for seat in state["seats"]]
    # the second seat used 10 of its 60 minutes on the voided bid (10:10 → 10:20): 50 minutes are left, without
    # the move's 10-minute increment; its decision starts again at the agreement (10:30)
    assert clocks[second]["bank"] == 3000 and clocks[second]["deadline"] == "2026-11-21T11:20:00.000Z"
    assert clocks[second]["left"] == 3000 - 15 * 60
    assert clocks[first]["bank"] == 3600 - 600 + 600  # its own bid: 10 minutes used, 10 earned; untouched
    # the scheduler times the seat out at that deadline, not ten minutes later
    with freeze_time("2026-11-21T11:20:00.500Z"):
        done = DeadlineScheduler(store).run_once()
    assert done and done[0]["appended"][0] == "timeout", done
    timeout = next(e for e in store.read_log(game.game_id) if e["type"] == "timeout")
    assert timeout["seat"] == second and timeout["deadline"] == "2026-11-21T11:20:00.000Z"


def test_dc_o2_an_offer_made_before_a_timeouts_default_move_can_no_longer_be_accepted(app, http, store):
    game = _clock_game(http, {"kind": "per_move", "per_move": 3600})
    mover = _tip(http, game.game_id)["to_move"]
    with freeze_time("2026-11-21T10:10:00Z"):
        status, receipt = offer(http, game, 1 - mover, "draw")
    assert status == 202, receipt
    position = receipt["position"]
    with freeze_time("2026-11-21T11:00:00.500Z"):
        done = DeadlineScheduler(store).run_once()
    assert done[0]["appended"] == ["timeout"], done
    timeout = len(store.read_log(game.game_id)) - 1
    state = _tip(http, game.game_id)
    assert state["decisions"]["pending"] is None
    assert state["decisions"]["last"] == {"offer": position, "kind": "draw", "outcome": "lapsed",
                                          "position": timeout}
    before = store.read_log(game.game_id)
    with freeze_time("2026-11-21T11:01:00Z"):
        status, error = answer(http, game, mover, position, True)
    assert status == 409 and error["error"]["code"] == "offer/none_pending", error
    assert f"it lapsed at position {timeout}" in error["error"]["message"]
    assert error["error"]["details"]["lapsed"] == {"offer": position, "position": timeout}
    assert store.read_log(game.game_id) == before and _tip(http, game.game_id)["status"] == "active"
