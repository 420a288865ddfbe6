"""The tournament log fold: whole tournaments, and every entry it refuses (a refusal changes nothing)."""

from __future__ import annotations

import copy
import itertools

import pytest

from referee.protocol.logchain import first_broken_link, seal
from referee.protocol.signing import public_key_b64, sign
from referee.replay import LogError
from referee.tournaments.log import ADJUDICATE_CTX, WITHDRAW_CTX, TournamentReplayer, replay_tournament
from referee.tournaments.pairing import meetings, pair_key
from referee.tournaments.spec import SpecError, resolve_tournament

from .helpers import KEYS, ORGANISER, Builder, at, by_key_order


def all_ok(replayer):
    return [v.to_dict() for v in replayer.verdicts if v.status != "ok"] == []


def refused(builder, entry, code):
    """``entry`` is refused with ``code`` and leaves the state as it was."""
    before = builder.replayer.to_dict()
    verdict, replica = builder.attempt(entry)
    assert verdict.status == "rejected", verdict
    assert verdict.error["code"] == code, verdict.error
    after = replica.to_dict()
    assert {**after, "seq": before["seq"], "head": before["head"]} == before
    return verdict


# -- whole tournaments ---------------------------------------------------------------------------
def test_a_swiss_tournament_plays_through_and_replays_from_its_log_alone():
    b = Builder(10, fmt={"kind": "swiss", "rounds": 4, "table_sizes": [4]})
    assert b.created_payload["format"] == {"kind": "swiss", "rounds": 4, "table_sizes": [4, 3, 2]}
    b.join_all()
    b.play_out(by_key_order)
    assert b.replayer.status == "finished" and b.replayer.revealed
    assert [sorted(len(t["players"]) for t in r.tables) for r in b.replayer.rounds] == [[3, 3, 4]] * 4
    again = replay_tournament(b.log)  # the verifier: seed taken from the revealed entry
    assert all_ok(again)
    assert again.to_dict() == b.replayer.to_dict()
    assert first_broken_link(b.log) is None


def test_before_the_reveal_pairings_cannot_be_recomputed_and_lot_is_hidden():
    b = Builder(6, fmt={"kind": "swiss", "rounds": 2, "table_sizes": [3]})
    b.join_all()
    b.play_round(by_key_order)
    public = replay_tournament(b.log)  # no seed revealed yet
    assert [v.status for v in public.verdicts if v.type == "paired"] == ["unknown"]
    assert all(row["tie_breaks"]["lot"] is None for row in public.to_dict()["standings"])
    assert b.replayer.standings(public=False)[0]["tie_breaks"]["lot"] is not None


def test_round_robin_nine_players_at_tables_of_three_every_pair_meets_once():
    b = Builder(9, fmt={"kind": "round_robin", "table_sizes": [3, 3]})
    assert b.created_payload["format"]["rounds"] == 4
    b.join_all()
    b.play_out(by_key_order)
    met = meetings([[t["players"] for t in r.tables] for r in b.replayer.rounds])
    assert {met[pair_key(x, y)] for x, y in itertools.combinations(b.public, 2)} == {1}
    assert all_ok(replay_tournament(b.log))


def test_a_series_seats_everyone_each_round():
    b = Builder(3, ruleset="towerup", fmt={"kind": "series"})
    assert b.created_payload["format"] == {"kind": "series", "rounds": 3, "table_sizes": [3, 2]}
    b.join_all()
    b.play_out(by_key_order)
    assert [sorted(r.tables[0]["players"]) for r in b.replayer.rounds] == [sorted(b.public)] * 3
    assert sorted(r.tables[0]["players"][0] for r in b.replayer.rounds) == sorted(b.public)


def test_swiss_byes_rotate_and_score_the_bye_points():
    b = Builder(5, fmt={"kind": "swiss", "rounds": 5, "table_sizes": [2]}, bye_points=7)
    b.join_all()
    b.play_out(by_key_order)
    byes = [r.byes for r in b.replayer.rounds]
    assert all(len(x) == 1 for x in byes) and len({x[0] for x in byes}) == 5
    rows = b.replayer.standings()
    total = sum(row["points"] for row in rows)
    assert total == 5 * 7 + 10 * 12  # five byes, ten games of 12 points
    assert all_ok(replay_tournament(b.log))


def test_the_projection_has_the_contract_shape():
    b = Builder(5, fmt={"kind": "swiss", "rounds": 2, "table_sizes": [2]}, tournament="t_shape")
    assert b.replayer.to_dict()["status"] == "waiting"
    b.join_all()
    b.play_round(by_key_order)
    view = b.replayer.to_dict()
    assert {"tournament", "status", "seq", "head", "format", "points", "tie_breaks", "rounds",
            "standings"} <= set(view)
    assert view["tournament"] == "t_shape" and view["status"] == "active"
    assert view["seq"] == len(b.log) and view["head"] == b.log[-1]["hash"]
    rnd = view["rounds"][0]
    assert rnd["round"] == 1 and rnd["closed"] and len(rnd["byes"]) == 1
    table = rnd["tables"][0]
    assert set(table) == {"game", "players", "result"} and table["result"]["method"] == "played"
    row = view["standings"][0]
    assert set(row) == {"rank", "key", "name", "points", "tie_breaks"}
    assert list(row["tie_breaks"]) == view["tie_breaks"]


def test_due_says_what_the_referee_writes_next():
    b = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]})
    assert b.replayer.due() is None  # waiting for joins
    b.join_all()
    assert b.replayer.due()["type"] == "paired"
    b.pair()
    assert b.replayer.due() is None  # games running
    for t in b.replayer.rounds[0].tables:
        b.finish_game(t["game"], [1, 2])
    assert b.replayer.due() == {"type": "round_closed", "round": 1, "reason": "complete"}
    b.append("round_closed", round=1, reason="complete")
    assert b.replayer.due() == {"type": "finished"}
    b.append("finished")
    assert b.replayer.due()["type"] == "revealed"


# -- created -------------------------------------------------------------------------------------
def test_defaults_are_resolved_and_written():
    players = [{"name": f"p{i}", "key": public_key_b64(k)} for i, k in enumerate(KEYS[:6])]
    spec = resolve_tournament({"ruleset": "fivetowers", "format": {"kind": "round_robin", "table_sizes": [2]},
                               "players": players})
    assert spec["format"] == {"kind": "round_robin", "rounds": 5, "table_sizes": [2]}
    assert spec["points"] == {"2": [12, 0]} and spec["bye_points"] == 6
    assert spec["tie_breaks"][-1] == "lot" and spec["adjudication"] == "provisional"
    assert spec["round_deadline"] is None


def test_bad_tournament_bodies_list_every_problem():
    with pytest.raises(SpecError) as err:
        resolve_tournament({"ruleset": "towerup", "format": {"kind": "knockout", "table_sizes": [6]},
                            "players": [{"name": "a", "key": "nope"}], "tie_breaks": ["elo"],
                            "adjudication": "coin", "points": {"9": [1]}})
    paths = {p["path"] for p in err.value.problems}
    assert {"$.players", "$.players[0].key", "$.format.kind", "$.format.table_sizes", "$.tie_breaks",
            "$.adjudication", "$.points.9"} <= paths


def test_a_created_entry_not_in_resolved_form_is_a_broken_log():
    b = Builder(4)
    entry = copy.deepcopy(b.log[0])
    entry["format"]["table_sizes"] = [2, 4]  # resolved sizes are written largest first
    with pytest.raises(LogError):
        TournamentReplayer().feed(entry)


def test_an_organiser_signed_tournament_checks_the_signature_and_the_request():
    b = Builder(4, organiser=True)
    assert b.replayer.created["organiser"] == public_key_b64(ORGANISER)
    forged = copy.deepcopy(b.log[0])
    forged["request"]["bye_points"] = 12
    with pytest.raises(LogError, match="organiser_sig"):
        TournamentReplayer().feed(forged)
    changed = copy.deepcopy(b.log[0])
    changed["bye_points"] = 12  # the written value differs from the signed request's
    with pytest.raises(LogError, match="bye_points"):
        TournamentReplayer().feed(changed)


# -- joins ---------------------------------------------------------------------------------------
def test_joins_are_signed_by_the_player_and_bound_to_the_log():
    b = Builder(3)
    refused(b, b.join_entry(0, signer=KEYS[1]), "submission/bad_signature")
    refused(b, b.join_entry(0, seq=5), "submission/stale")
    refused(b, b.join_entry(0, prev="0" * 64), "submission/stale")
    refused(b, b.join_entry(0, ctx="referee/accept"), "submission/wrong_context")
    refused(b, b.join_entry(0, tournament="t_other"), "submission/wrong_tournament")
    refused(b, b.join_entry(0, entropy=b"short"), "join/bad_entropy")
    outsider = b.join_entry(0)
    outsider["key"] = public_key_b64(KEYS[20])
    refused(b, outsider, "join/not_player")
    assert b.join(0).status == "ok"
    refused(b, b.join_entry(0), "join/duplicate")


def test_the_join_order_changes_the_seed():
    one, two = Builder(3), Builder(3)
    for i in (0, 1, 2):
        one.join(i)
    for i in (2, 1, 0):
        two.join(i)
    assert one.replayer.seed != two.replayer.seed


# -- pairings and results ------------------------------------------------------------------------
def test_a_pairing_other_than_the_recomputed_one_is_refused():
    b = Builder(6, fmt={"kind": "swiss", "rounds": 2, "table_sizes": [3]})
    refused(b, b.entry("paired", round=1, tables=[], byes=[]), "tournament/not_active")
    b.join_all()
    pairing = b.replayer.due()["pairing"]
    tables = [{"game": f"g{i}", "players": list(t)} for i, t in enumerate(pairing.tables)]
    swapped = copy.deepcopy(tables)
    swapped[0]["players"][0], swapped[1]["players"][0] = swapped[1]["players"][0], swapped[0]["players"][0]
    refused(b, b.entry("paired", round=1, tables=swapped, byes=[]), "paired/mismatch")
    reseated = copy.deepcopy(tables)
    reseated[0]["players"].reverse()
    refused(b, b.entry("paired", round=1, tables=reseated, byes=[]), "paired/mismatch")
    refused(b, b.entry("paired", round=2, tables=tables, byes=[]), "round/unexpected")
    same_ids = [{**t, "game": "g0"} for t in tables]
    refused(b, b.entry("paired", round=1, tables=same_ids, byes=[]), "paired/game_ids")
    assert b.add(b.entry("paired", round=1, tables=tables, byes=[])).status == "ok"
    refused(b, b.entry("paired", round=2, tables=tables, byes=[]), "round/open")


def test_results_must_name_an_open_game_with_valid_ranks():
    b = Builder(4, fmt={"kind": "swiss", "rounds": 2, "table_sizes": [2]})
    b.join_all()
    b.pair()
    game = b.replayer.rounds[0].tables[0]["game"]
    head = "ab" * 32
    refused(b, b.entry("game_finished", game="g_nope", head=head, ranks=[1, 2]), "game/not_open")
    refused(b, b.entry("game_finished", game=game, head=head, ranks=[1, 3]), "game/bad_result")
    refused(b, b.entry("game_finished", game=game, head=head, ranks=[1, 2, 3]), "game/bad_result")
    refused(b, b.entry("game_finished", game=game, head="xyz", ranks=[1, 2]), "game/bad_result")
    refused(b, b.entry("game_finished", game=game, head=head, ranks=[1, 2], scores=[1]), "game/bad_result")
    refused(b, b.entry("round_closed", round=1, reason="complete"), "round/games_running")
    assert b.finish_game(game, [1, 1]).status == "ok"  # a draw
    refused(b, b.entry("game_finished", game=game, head=head, ranks=[1, 2]), "game/not_open")
    refused(b, b.entry("finished"), "tournament/not_over")


def test_round_deadline_is_read_from_the_entries_times():
    b = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]}, round_deadline=600)
    b.join_all()
    b.pair()  # at(seq) is one minute per position
    for t in b.replayer.rounds[0].tables:
        b.finish_game(t["game"], [2, 1])
    refused(b, b.entry("round_closed", round=1, reason="deadline"), "round/deadline_not_passed")
    late = b.entry("round_closed", round=1, reason="deadline")
    late["at"] = "2026-01-01T00:15:00.000Z"  # paired at 00:05, ten minutes later
    late = seal(late, b.log[-1]["hash"])
    assert b.attempt(late)[0].status == "ok"


def test_adjudication_by_the_organiser_is_signed_by_the_organiser():
    b = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]}, adjudication="organiser", organiser=True)
    b.join_all()
    b.pair()
    game = b.replayer.rounds[0].tables[0]["game"]

    def decision(signer, **override):
        env = b.envelope(ADJUDICATE_CTX, **{"game": game, "ranks": [2, 1], "reason": "deadline passed", **override})
        return {"envelope": env, "sig": sign(signer, env)}

    head = "cd" * 32
    common = {"game": game, "method": "organiser", "ranks": [2, 1], "head": head, "reason": "deadline passed"}
    refused(b, b.entry("adjudicated", **common, decision=decision(KEYS[0])), "submission/bad_signature")
    refused(b, b.entry("adjudicated", **common, decision=decision(ORGANISER, ranks=[1, 2])),
            "submission/wrong_ranks")
    refused(b, b.entry("adjudicated", **{**common, "method": "provisional"}), "adjudication/method")
    assert b.add(b.entry("adjudicated", **common, decision=decision(ORGANISER))).status == "ok"
    assert b.replayer.rounds[0].results[game]["method"] == "organiser"


def test_provisional_adjudication_records_the_engine_result():
    b = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]})
    b.join_all()
    b.pair()
    game = b.replayer.rounds[0].tables[0]["game"]
    verdict = b.append("adjudicated", game=game, method="provisional", ranks=[1, 2], scores=[30, 20],
                       head="ef" * 32, reason="round deadline")
    assert verdict.status == "ok"
    assert b.replayer.rounds[0].to_dict()["tables"][0]["result"]["method"] == "provisional"


def test_a_withdrawn_player_is_paired_no_more():
    b = Builder(5, fmt={"kind": "swiss", "rounds": 2, "table_sizes": [2]})
    gone = b.public[0]
    early = b.envelope(WITHDRAW_CTX, key=gone)
    refused(b, b.entry("withdrawn", key=gone, submission={"envelope": early, "sig": sign(KEYS[0], early)}),
            "tournament/not_active")
    b.join_all()
    b.play_round(by_key_order)
    env = b.envelope(WITHDRAW_CTX, key=gone)
    stranger = b.entry("withdrawn", key=gone, submission={"envelope": env, "sig": sign(KEYS[3], env)})
    refused(b, stranger, "submission/bad_signature")
    assert b.append("withdrawn", key=gone, submission={"envelope": env, "sig": sign(KEYS[0], env)}).status == "ok"
    b.pair()
    rnd = b.replayer.rounds[1]
    assert gone not in [k for t in rnd.tables for k in t["players"]] + rnd.byes
    assert not rnd.byes  # four players left: two tables, no bye


def test_a_bye_entry_gives_bye_points_to_a_player_without_a_table():
    b = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]})
    b.join_all()
    b.pair()
    seated = b.replayer.rounds[0].tables[0]["players"][0]
    refused(b, b.entry("bye", round=1, key=seated, reason="x"), "bye/not_allowed")
    refused(b, b.entry("bye", round=2, key=seated, reason="x"), "round/not_open")


def test_the_reveal_must_match_the_commitment_and_ends_the_log():
    b = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]})
    b.join_all()
    b.play_out(by_key_order)
    after = b.entry("finished")
    refused(b, after, "log/after_reveal")
    other = Builder(4, fmt={"kind": "swiss", "rounds": 1, "table_sizes": [2]})
    refused(other, other.entry("revealed", server_seed="00" * 32, reason="aborted"), "reveal/commitment_mismatch")
    refused(other, other.entry("revealed", server_seed=other.server_seed.hex(), reason="finished"),
            "reveal/not_finished")
    assert other.attempt(other.entry("revealed", server_seed=other.server_seed.hex(), reason="aborted"))[0].status \
        == "ok"


def test_unknown_entries_are_refused_and_the_first_entry_must_be_created():
    b = Builder(3)
    refused(b, b.entry("teleported"), "log/unknown_entry")
    with pytest.raises(LogError):
        TournamentReplayer().feed(b.log[0] | {"type": "joined"})
    assert at(61) == "2026-01-01T01:01:00.000Z"


def test_a_fork_goes_on_alone_and_leaves_the_fold_it_came_from_as_it_was():
    """``fork`` (the service's per-process cache hands out forks, not deep copies): everything the fold
    changes — results, byes, closed rounds, withdrawals, verdicts, the standings' sums — changes in the
    fork only."""
    b = Builder(6, fmt={"kind": "swiss", "rounds": 2, "table_sizes": [2]})
    b.join_all()
    b.play_round(by_key_order)
    b.pair()
    before = copy.deepcopy(b.replayer)
    twin = b.replayer.fork()
    rnd = twin.rounds[-1]
    for table in rnd.tables:
        ranks, scores = by_key_order(table["players"])
        entry = b.entry("game_finished", game=table["game"], head="1" * 64, ranks=ranks, scores=scores)
        assert twin.feed(entry).status == "ok"
        b.log.append(entry)
    env = b.envelope(WITHDRAW_CTX, key=b.public[0])
    entry = b.entry("withdrawn", key=b.public[0], submission={"envelope": env, "sig": sign(KEYS[0], env)})
    assert twin.feed(entry).status == "ok"
    b.log.append(entry)
    closing = b.entry("round_closed", round=2, reason="complete")
    assert twin.feed(closing).status == "ok"
    assert b.replayer.to_dict() == before.to_dict() and b.replayer.seq == before.seq
    assert b.replayer.standings(public=False) == before.standings(public=False)
    assert b.replayer.withdrawn == [] and not b.replayer.rounds[-1].closed
    assert twin.to_dict() != before.to_dict()
    b.log.append(closing)
    again = replay_tournament(b.log, server_seed=b.server_seed)
    assert twin.to_dict() == again.to_dict() and twin.standings(public=False) == again.standings(public=False)
