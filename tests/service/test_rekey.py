"""A seat's new key through the HTTP API on real Redis (CONTRACT section 15, ``referee.replay.keys``): a holder's
rekey mid-game (RK-H1), a recovery of a lost key answered by the other seat and completed by the real deadline
scheduler only after its wait (RK-R1, RK-R2, RK-R4; freezegun sets the time), a recovery ended by the old key's
signed act (RK-R3), a second recovery refused while one is pending, and the bundles that verify afterwards."""

from __future__ import annotations

import random
from typing import Any

from freezegun import freeze_time
from svc_helpers import accept_all, create_game, move_envelope, signed

from referee.protocol.logchain import GENESIS, seal
from referee.protocol.signing import ANSWER_CTX, RESIGN_CTX, generate_key, public_key_b64, sign, verify
from referee.replay import RECOVER_CTX, REKEY_CTX
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle
from workers.deadlines import DeadlineScheduler


def _tip(http, game_id: str) -> dict[str, Any]:
    status, state = http.get(f"/games/{game_id}")
    assert status == 200, state
    return state


def _started(http, **extra: Any):
    game = create_game(http, "fivetowers", 2, **extra)
    accept_all(http, game, random.Random(3))
    return game


def rekey(http, game, seat: int, old, new, *, new_signer=None):
    state = _tip(http, game.game_id)
    envelope = {"v": 1, "ctx": REKEY_CTX, "game": game.game_id, "seat": seat, "key": public_key_b64(new),
                "seq": state["seq"], "prev": state["head"]}
    return http.post(f"/games/{game.game_id}/rekey", {"envelope": envelope, "sig": sign(old, envelope),
                                                      "new_sig": sign(new_signer or new, envelope)})


def recover(http, game, seat: int, new):
    state = _tip(http, game.game_id)
    envelope = {"v": 1, "ctx": RECOVER_CTX, "game": game.game_id, "seat": seat, "key": public_key_b64(new),
                "seq": state["seq"], "prev": state["head"]}
    return http.post(f"/games/{game.game_id}/recover", signed(new, envelope))


def answer(http, game, seat: int, key, position: int, *, accept: bool):
    state = _tip(http, game.game_id)
    envelope = {"v": 1, "ctx": ANSWER_CTX, "game": game.game_id, "seat": seat, "seq": state["seq"],
                "prev": state["head"], "offer": position, "accept": accept}
    return http.post(f"/games/{game.game_id}/offers/{position}/answer", signed(key, envelope))


def play(http, game, key, seat: int | None = None):
    """The seat to move (or ``seat``) plays its first legal move signed by ``key``: (status, body)."""
    status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    assert status == 200, legal
    envelope = move_envelope(game.game_id, seat if seat is not None else legal["to_move"], legal["seq"],
                             legal["head"], legal["moves"][0])
    return http.post(f"/games/{game.game_id}/moves", signed(key, envelope))


def bundle(http, game_id: str) -> dict[str, Any]:
    status, body = http.get(f"/games/{game_id}/export")
    assert status == 200, body
    return body


def resealed(bundle_: dict[str, Any], referee_key, edit, signers: list[Any], swap: dict[str, Any] | None = None):
    """What a dishonest referee holding every key in ``signers`` could make of ``bundle_``: its log edited by
    ``edit(entries)``, every signed envelope bound again to the new chain and signed again by the key that signed
    it (or by ``swap[that key's public key]``), the chain recomputed, the bundle signed again."""
    entries = [dict(entry, submission=dict(entry["submission"], envelope=dict(entry["submission"]["envelope"])))
               if isinstance(entry.get("submission"), dict) else dict(entry) for entry in bundle_["log"]]
    entries = edit(entries)
    out, prev = [], GENESIS
    for seq, given in enumerate(entries):
        entry = {k: v for k, v in given.items() if k != "hash"}
        submission = entry.get("submission")
        if isinstance(submission, dict) and "prev" in submission["envelope"]:
            envelope = submission["envelope"]
            signer = next((k for k in signers if verify(public_key_b64(k), envelope, submission["sig"])), None)
            if signer is not None:
                signer = (swap or {}).get(public_key_b64(signer), signer)
                submission["envelope"] = envelope = {**envelope, "prev": prev}
                submission["sig"] = sign(signer, envelope)
        sealed = seal({**entry, "seq": seq}, prev)
        out.append(sealed)
        prev = sealed["hash"]
    return build_bundle(out, referee_key, result=bundle_.get("result"))


def sound(report) -> bool:
    """Whether every check of a (running game's, interim) bundle passed or was skipped as interim."""
    return report.status in ("verified", "incomplete") and not any(c.status == "failed" for c in report.checks)


def kinds(store, game_id: str) -> list[str]:
    return [entry["type"] for entry in store.read_log(game_id)]


def test_rk_h1_a_holders_rekey_mid_game_moves_the_seat_and_the_bundle_verifies(app, http, store):
    game = _started(http)
    assert play(http, game, game.keys[_tip(http, game.game_id)["to_move"]])[0] == 202
    seat = _tip(http, game.game_id)["to_move"]
    old, new = game.keys[seat], generate_key()
    # a new_sig that is not the new key's, and a key that holds the other seat, are refused; nothing is written
    length = len(kinds(store, game.game_id))
    status, error = rekey(http, game, seat, old, new, new_signer=generate_key())
    assert status == 401 and error["error"]["code"] == "submission/bad_signature", error
    status, error = rekey(http, game, seat, old, game.keys[1 - seat])
    assert status == 409 and error["error"]["code"] == "seat/same_key", error
    status, german = http.post(f"/games/{game.game_id}/rekey", {  # the message in the request's language
        "envelope": {**(envelope := {"v": 1, "ctx": REKEY_CTX, "game": game.game_id, "seat": seat,
                                     "key": public_key_b64(game.keys[1 - seat]), "seq": _tip(http, game.game_id)["seq"],
                                     "prev": _tip(http, game.game_id)["head"]})},
        "sig": sign(old, envelope), "new_sig": sign(game.keys[1 - seat], envelope)},
        headers={"Accept-Language": "de"})
    assert status == 409 and german["error"]["message"] == f"dieser Schlüssel hat schon Platz {1 - seat} dieser Partie"
    assert len(kinds(store, game.game_id)) == length
    status, receipt = rekey(http, game, seat, old, new)
    assert status == 202, receipt
    entry = store.read_log(game.game_id)[receipt["position"]]
    assert (entry["type"], entry["seat"], entry["key"], entry["reason"]) == ("rekeyed", seat, public_key_b64(new),
                                                                            "holder")
    # the old key's next move is refused; the new key's is taken
    status, error = play(http, game, old)
    assert status == 401 and error["error"]["code"] == "submission/bad_signature", error
    status, receipt = play(http, game, new)
    assert status == 202, receipt
    # the new key lists the game, the old one no longer does
    status, listed = http.get(f"/players/{public_key_b64(new)}/games")
    assert status == 200 and [row["game"] for row in listed["games"]] == [game.game_id], listed
    assert listed["games"][0]["my_seats"] == [seat]
    status, listed = http.get(f"/players/{public_key_b64(old)}/games")
    assert status == 200 and listed["games"] == [], listed
    # rebuilt from the logs, the index lists the key that holds the seat now (and the read follows the fold anyway)
    from referee.games_service.players import rebuild_player_index

    rebuild_player_index(store, [game.game_id])
    assert http.get(f"/players/{public_key_b64(old)}/games")[1]["games"] == []
    assert [row["game"] for row in http.get(f"/players/{public_key_b64(new)}/games")[1]["games"]] == [game.game_id]
    # the game names the seat's key now, and the replay the step from which it holds
    state = _tip(http, game.game_id)
    assert state["seats"][seat]["key"] == public_key_b64(new), state
    assert state["decisions"]["rekeys"] == [{"position": entry["seq"], "seat": seat, "old": public_key_b64(old),
                                             "new": public_key_b64(new), "reason": "holder"}]
    status, step = http.get(f"/games/{game.game_id}/replay?at={entry['seq']}")
    assert status == 200 and step["steps"][0]["seat_keys"][seat] == public_key_b64(new), step
    good = bundle(http, game.game_id)
    referee = app.extensions["referee.key"]
    report = verify_bundle(good, referee_key=public_key_b64(referee))
    assert sound(report), report.to_dict()
    replay = next(c for c in report.checks if c.name == "replay")
    assert replay.details["keys"][seat] == [{"key": public_key_b64(old), "from": None, "reason": None},
                                            {"key": public_key_b64(new), "from": entry["seq"], "reason": "holder"}]
    check = next(c for c in report.checks if c.name == "seat_signatures")
    assert check.details["checked"] >= 5

    # the seat resigns with its new key (a decision, signed by the new key): the result names its keys in turn
    state = _tip(http, game.game_id)
    resign = {"v": 1, "ctx": RESIGN_CTX, "game": game.game_id, "seat": seat, "seq": state["seq"],
              "prev": state["head"]}
    assert http.post(f"/games/{game.game_id}/resign", signed(old, resign))[0] == 401
    status, receipt = http.post(f"/games/{game.game_id}/resign", signed(new, resign))
    assert status == 202 and receipt["status"] == "finished", receipt
    status, result = http.get(f"/games/{game.game_id}/result")
    assert status == 200 and [row["key"] for row in result["seat_keys"][seat]] == [public_key_b64(old),
                                                                                  public_key_b64(new)], result
    assert verify_bundle(bundle(http, game.game_id), referee_key=public_key_b64(referee)).ok

    # a forger's rekeyed: the forger's key in place of the new one (its new_sig by the forger), the chain and the
    # referee's signature redone, the seat's later moves signed by the forger: it fails at the rekeyed entry
    forger = generate_key()
    position = next(i for i, e in enumerate(good["log"]) if e["type"] == "rekeyed")

    def forge(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        entry = entries[position]
        envelope = {**entry["submission"]["envelope"], "key": public_key_b64(forger)}
        entry["key"] = envelope["key"]
        entry["submission"] = {**entry["submission"], "envelope": envelope, "new_sig": sign(forger, envelope)}
        return entries

    forged = resealed(good, referee, forge, [*game.keys, new], swap={public_key_b64(new): forger})
    report = verify_bundle(forged, referee_key=public_key_b64(referee))
    by_name = {c.name: c for c in report.checks}
    assert not report.ok and by_name["hash_chain"].ok and by_name["referee_signature"].ok, report.to_dict()
    assert by_name["seat_signatures"].position == position, report.to_dict()
    assert by_name["replay"].position == position, report.to_dict()


def _recovery_game(http, at: str):
    with freeze_time(at):
        game = _started(http)
        assert play(http, game, game.keys[_tip(http, game.game_id)["to_move"]])[0] == 202
    return game


def test_rk_r4_an_accepted_recovery_completes_only_after_the_wait_by_the_scheduler(make_app):
    app = make_app(REFEREE_RECOVERY_WAIT=3600)
    from svc_helpers import Http
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = _recovery_game(http, "2026-11-21T10:00:00Z")
    lost, new = 0, generate_key()
    with freeze_time("2026-11-21T10:05:00Z"):
        status, receipt = recover(http, game, lost, new)
        assert status == 202, receipt
        position = receipt["position"]
        assert receipt["recovery"]["not_before"] == "2026-11-21T11:05:00.000Z", receipt
        # a second recovery of the seat while one is pending is refused
        status, error = recover(http, game, lost, generate_key())
        assert status == 409 and error["error"]["code"] == "recovery/pending", error
        # the new key is no seat's key yet
        assert play(http, game, new, seat=lost)[0] == 401
        status, receipt = answer(http, game, 1, game.keys[1], position, accept=True)
        assert status == 202, receipt
    with freeze_time("2026-11-21T11:04:59Z"):
        done = DeadlineScheduler(store).run_once()
    assert "rekeyed" not in kinds(store, game.game_id), done
    with freeze_time("2026-11-21T11:05:00.500Z"):
        done = DeadlineScheduler(store).run_once()
    assert done and done[0]["appended"] == ["rekeyed"], done
    entry = store.read_log(game.game_id)[-1]
    assert (entry["reason"], entry["recovery"], entry["key"]) == ("recovered", position, public_key_b64(new))
    with freeze_time("2026-11-21T11:06:00Z"):
        # the old key is refused now; the new one moves (whichever seat is to move, the old key cannot sign)
        state = _tip(http, game.game_id)
        signer = new if state["to_move"] == lost else game.keys[1]
        assert play(http, game, game.keys[lost], seat=lost)[0] == 401
        assert play(http, game, signer)[0] == 202
    status, listed = http.get(f"/players/{public_key_b64(new)}/games")
    assert [row["game"] for row in listed["games"]] == [game.game_id], listed
    good = bundle(http, game.game_id)
    referee_key = public_key_b64(app.extensions["referee.key"])
    assert sound(verify_bundle(good, referee_key=referee_key))

    # a forged early rekeyed (the completion dated before not_before), and an unaccepted one (the other seat's
    # acceptance taken out), fail at their position; the chain and the referee's signature are redone
    signers = [*game.keys, new]
    early = resealed(good, app.extensions["referee.key"],
                     lambda log: _move_time(log, "rekeyed", "2026-11-21T10:30:00.000Z"), signers)
    unaccepted = resealed(good, app.extensions["referee.key"],
                          lambda log: [e for e in log if e["type"] != "answered"], signers)
    for forged, code in ((early, "recovery/early"), (unaccepted, "recovery/not_accepted")):
        report = verify_bundle(forged, referee_key=referee_key)
        replay = next(c for c in report.checks if c.name == "replay")
        at = next(i for i, e in enumerate(forged["log"]) if e["type"] == "rekeyed")
        assert not report.ok and replay.position == at and code in replay.reason, report.to_dict()


def _move_time(log: list[dict[str, Any]], kind: str, at: str) -> list[dict[str, Any]]:
    return [{**entry, "at": at} if entry["type"] == kind else entry for entry in log]


def test_rk_r3_a_recovery_answered_by_the_old_keys_move_is_declined_and_never_completes(make_app):
    app = make_app(REFEREE_RECOVERY_WAIT=60)
    from svc_helpers import Http
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = _recovery_game(http, "2026-11-21T10:00:00Z")
    with freeze_time("2026-11-21T10:01:00Z"):
        lost = _tip(http, game.game_id)["to_move"]
        status, receipt = recover(http, game, lost, generate_key())
        assert status == 202, receipt
        position = receipt["position"]
        assert answer(http, game, 1 - lost, game.keys[1 - lost], position, accept=True)[0] == 202
        # whoever still holds the key keeps the seat: its move ends the recovery in the same step
        status, receipt = play(http, game, game.keys[lost])
        assert status == 202, receipt
    log = store.read_log(game.game_id)
    assert [e["type"] for e in log[-2:]] == ["move", "recovery_declined"]
    assert (log[-1]["recovery"], log[-1]["by"]) == (position, log[-2]["seq"])
    with freeze_time("2026-11-21T12:00:00Z"):
        DeadlineScheduler(store).run_once()
        status, error = answer(http, game, 1 - lost, game.keys[1 - lost], position, accept=True)
    assert status == 409 and error["error"]["code"] == "offer/none_pending", error
    assert "rekeyed" not in kinds(store, game.game_id)
    assert sound(verify_bundle(bundle(http, game.game_id)))


def test_the_cli_moves_every_seat_of_a_key_and_recovers_and_answers(server, tmp_path, store):
    """``referee rekey --all`` moves a key's seats in its two unfinished games (one line per seat, then the summary);
    ``referee recover`` asks for a seat, ``referee answer`` (no position: the one pending recovery) declines it."""
    from svc_helpers import Http, run_cli

    from referee.protocol.keyfile import read_key_text

    http = Http(__import__("requests").Session(), server)
    paths = {name: tmp_path / f"{name}.key" for name in ("alice", "bob", "alice2", "carol")}
    for path in paths.values():
        assert run_cli("keygen", "--out", str(path))[0] == 0
    keys = {name: read_key_text(path.read_text()) for name, path in paths.items()}
    games = [create_game(http, "fivetowers", 2, keys=[keys["alice"], keys["bob"]]) for _ in range(2)]
    accept_all(http, games[0])  # one running, one still waiting for its acceptances
    code, out = run_cli("rekey", "--all", "--key", str(paths["alice"]), "--new-key", str(paths["alice2"]),
                        "--server", server)
    assert code == 0, out
    lines = out.strip().splitlines()
    assert len(lines) == 3 and sorted(line.split(" ")[0] for line in lines[:-1]) == ["[1/2]", "[2/2]"], out
    assert {line.split(" ")[1] for line in lines[:-1]} == {game.game_id for game in games}, out
    assert all(": moved (log position" in line for line in lines[:-1]) and lines[-1].startswith("2 seat(s) moved")
    for game in games:
        assert _tip(http, game.game_id)["seats"][0]["key"] == public_key_b64(keys["alice2"])
        assert store.read_log(game.game_id)[-1]["type"] == "rekeyed"
    code, out = run_cli("rekey", games[0].game_id, "--key", str(paths["alice"]), "--new-key", str(paths["carol"]),
                        "--server", server)
    assert code == 1 and "this key holds no seat there" in out, out
    # carol asks for bob's seat; bob's key answers (the one pending recovery) with a decline and keeps it
    code, out = run_cli("recover", games[0].game_id, "--seat", "1", "--key", str(paths["carol"]), "--server", server)
    assert code == 0, out
    assert '"recovery"' in out and '"not_before"' in out
    code, out = run_cli("answer", games[0].game_id, "--decline", "--key", str(paths["bob"]), "--server", server)
    assert code == 0, out
    assert [e["type"] for e in store.read_log(games[0].game_id)][-3:] == ["recovery", "answered", "recovery_declined"]


def test_rk_r3_a_message_of_the_old_key_ends_the_recovery_and_the_bundle_holds_it_to_the_message(app, http, store):
    from referee.clock import now
    from referee.protocol.signing import MESSAGE_CTX

    game = _started(http)
    status, receipt = recover(http, game, 0, generate_key())
    assert status == 202, receipt
    message = {"v": 1, "ctx": MESSAGE_CTX, "game": game.game_id, "seat": 0, "text": "still here", "to": None,
               "at": now()}
    status, posted = http.post(f"/games/{game.game_id}/messages", signed(game.keys[0], message))
    assert status == 201, posted
    entry = store.read_log(game.game_id)[-1]
    assert entry["type"] == "recovery_declined" and entry["recovery"] == receipt["position"], entry
    assert entry["message"] == {"position": posted["position"], "hash": posted["hash"], "log_seq": posted["log_seq"]}
    assert _tip(http, game.game_id)["decisions"].get("recoveries", []) == []
    good = bundle(http, game.game_id)
    assert sound(verify_bundle(good))
    # a decline naming another message than the stream holds fails the messages check (the log resealed; the
    # messages carried as they were)
    forged = resealed(good, app.extensions["referee.key"],
                      lambda log: [{**e, "message": {**e["message"], "hash": "0" * 64}}
                                   if e["type"] == "recovery_declined" else e for e in log], game.keys)
    report = verify_bundle({**forged, "messages": good["messages"]})
    check = next(c for c in report.checks if c.name == "messages")
    assert check.status == "failed" and "names a message that is not this one" in check.reason, report.to_dict()


def test_rk_r2_a_tournament_games_organiser_accepts_a_recovery_for_the_other_seats(make_app):
    from svc_helpers import Http
    from tournament_helpers import Players, join_all, start_game, tournament_state

    organiser = generate_key()
    app = make_app(REFEREE_ORGANISER_KEYS=public_key_b64(organiser), REFEREE_RECOVERY_WAIT=60)
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    players = Players(2)
    body = players.body(format={"kind": "series", "rounds": 1})
    status, created = http.post("/tournaments", {**body, "organiser": {
        "key": public_key_b64(organiser), "sig": sign(organiser, {"v": 1, "ctx": "referee/tournament", **body})}})
    assert status == 201, created
    join_all(http, created["tournament"], players)
    table = tournament_state(http, created["tournament"])["rounds"][0]["tables"][0]
    with freeze_time("2026-11-21T10:00:00Z"):
        game = start_game(http, table, players, random.Random(5))
        new = generate_key()
        status, receipt = recover(http, game, 0, new)
        assert status == 202, receipt
        position = receipt["position"]
        # a stranger cannot answer for the seats; the organiser can (its envelope names the recovered seat)
        assert answer(http, game, 0, generate_key(), position, accept=True)[0] == 401
        status, receipt = answer(http, game, 0, organiser, position, accept=True)
        assert status == 202, receipt
    assert store.read_log(game.game_id)[-1]["by"] == "organiser"
    with freeze_time("2026-11-21T10:01:00.500Z"):
        done = DeadlineScheduler(store).run_once()
    assert done and done[0]["appended"] == ["rekeyed"], done
    assert _tip(http, game.game_id)["seats"][0]["key"] == public_key_b64(new)
    assert sound(verify_bundle(bundle(http, game.game_id)))


def test_rk_r1_a_seat_on_vacation_is_asked_no_earlier_than_its_vacations_end_plus_the_wait(make_app):
    from svc_helpers import Http

    from referee.protocol.signing import VACATION_CTX

    app = make_app(REFEREE_RECOVERY_WAIT=3600)
    http = Http(app.test_client())
    with freeze_time("2026-11-21T10:00:00Z"):
        game = _started(http, options={"time_control": {"kind": "per_move", "per_move": 86400}})
        state = _tip(http, game.game_id)
        envelope = {"v": 1, "ctx": VACATION_CTX, "game": game.game_id, "seat": 1, "seq": state["seq"],
                    "prev": state["head"], "seconds": 2 * 86400}
        status, receipt = http.post(f"/games/{game.game_id}/vacation", signed(game.keys[1], envelope))
        assert status == 202, receipt
    with freeze_time("2026-11-22T10:00:00Z"):
        status, receipt = recover(http, game, 1, generate_key())
    assert status == 202, receipt
    assert receipt["recovery"]["not_before"] == "2026-11-23T11:00:00.000Z", receipt  # the vacation's end + 1 h
