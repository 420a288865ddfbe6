"""The pure core of the players' own decisions (``referee/rulings/decisions.py``) against the engines directly:
which moves reveal something hidden (DC-T2: TU-T1, TU-G1, FT-G3, FT-R8), who may offer what (DC-O1,
DC-A1, DC-T1), when an offer has every answer (DC-O2), and the ranks (DC-R3, DC-D1)."""

from __future__ import annotations

from referee.games import ruleset
from referee.rulings.decisions import Decisions, Offer, agreed, answer_problem, offer_problem, rank_decisions, revealing


def _reveals(name: str, game, seat: int, move: dict) -> str | None:
    before = game.view()
    game.play(seat, move)
    return revealing(name, before, game.view())


def test_dc_t2_tower_up_a_take_reveals_tu_t1_a_start_placement_does_not():
    game = ruleset("towerup").new_game(2, {}, seed=bytes(32))
    while game.legal_moves()[0]["type"] == "place_start":  # TU-G3: quiet
        assert _reveals("towerup", game, game.to_move(), game.legal_moves()[0]) is None
    take = next(m for m in game.legal_moves() if m["type"] == "take")
    assert _reveals("towerup", game, game.to_move(), take) == "TU-T1"


def test_dc_t2_five_towers_a_bid_is_quiet_the_end_of_a_round_reveals_ft_g3():
    game = ruleset("fivetowers").new_game(2, {}, seed=bytes(32))
    assert _reveals("fivetowers", game, 0, {"type": "bid", "amount": 0}) is None  # FT-R1
    assert _reveals("fivetowers", game, 1, {"type": "pass"}) == "FT-G3"  # FT-R7: the 0 stands, next display


def test_dc_o1_dc_a1_dc_t1_who_may_offer_what():
    d = Decisions.start(2)
    assert offer_problem(d, "abort", 0, standing=[0, 1], tournament=True, all_moved=False)[2] == "DC-A1"
    assert offer_problem(d, "abort", 0, standing=[0, 1], tournament=False, all_moved=True)[2] == "DC-A1"
    assert offer_problem(d, "abort", 0, standing=[0, 1], tournament=False, all_moved=False) is None
    assert offer_problem(d, "takeback", 0, standing=[0, 1], tournament=False, all_moved=True,
                         last_move=(1, "move", 7))[2] == "DC-T1"
    assert offer_problem(d, "takeback", 1, standing=[0, 1], tournament=False, all_moved=True,
                         last_move=(1, "auto_move", 7))[2] == "DC-T1"
    assert offer_problem(d, "takeback", 1, standing=[0, 1], tournament=False, all_moved=True,
                         last_move=(1, "move", 7), revealed_rule="FT-G3")[2] == "DC-T2"
    assert offer_problem(d, "takeback", 1, standing=[0, 1], tournament=False, all_moved=True,
                         last_move=(1, "move", 7)) is None
    assert offer_problem(d, "draw", 1, standing=[0], tournament=False, all_moved=True)[0] == "decision/left"
    assert offer_problem(d, "resign", 0, standing=[0, 1], tournament=False, all_moved=True)[0] == "offer/bad_kind"


def test_dc_o2_an_offer_passes_with_every_other_standing_seat_and_lapses_at_a_decline():
    d = Decisions.start(4).resigned(3, 5).offered(Offer(position=9, seat=0, kind="end"))
    standing = [0, 1, 2]
    assert answer_problem(d, 8, 1, True, standing=standing)[0] == "offer/none_pending"
    assert answer_problem(d, 9, 0, True, standing=standing)[0] == "answer/own_offer"
    assert answer_problem(d, 9, 3, True, standing=standing)[0] == "decision/left"
    d = d.answered(1, True)
    assert not agreed(d.pending, standing) and agreed(d.answered(2, True).pending, standing)
    declined = d.answered(2, False)
    assert declined.pending is None and declined.last["outcome"] == "declined"
    assert d.answered(0, False).last["outcome"] == "withdrawn"
    assert d.resigned(1, 12).pending is None  # a resignation lapses the offer


def test_dc_r3_dc_d1_ranks():
    base = {"seats": [{"seat": s, "total": t, "rank": r} for s, t, r in [(0, 9, 1), (1, 8, 2), (2, 7, 3), (3, 1, 4)]]}
    # seat 0 resigned first, seat 3 forfeited later: the seats still in rank first, then 3, then 0
    d = Decisions.start(4).resigned(0, 10)
    out = rank_decisions(base, d, [10, None, None, 14], ended_early=False)
    assert [s["rank"] for s in out["seats"]] == [4, 1, 2, 3]
    assert [s["resigned"] for s in out["seats"]] == [True, False, False, False]
    assert out["seats"][3]["forfeited"] and out["seats"][3]["basis"]["rule"] == "TC-F1"
    drawn = Decisions.start(4).resigned(0, 10).offered(Offer(20, 1, "draw")).agreed(22)
    out = rank_decisions(base, drawn, [10, None, None, None], ended_early=True)
    assert [s["rank"] for s in out["seats"]] == [4, 1, 1, 1] and out["ended_by"]["rule"] == "DC-D1"
