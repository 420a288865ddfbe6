"""Objectives: TU-O1, the 10 cards of TU-O2, TU-G9.

Each card is met by a real build of seat 0 on top of a constructed presence (roofs placed with
``construct_building``); the test checks that the chip comes with that build and not before.
"""

from __future__ import annotations

import pytest
from towerup_helpers import (
    build,
    check_invariants,
    construct_building,
    construct_supply,
    play,
    recorded_game,
    seat_view,
    take,
)

TOP = ("c01", "c02", "c05", "c06", "c07", "c08", "c09", "c10")  # bottoms black, brown, white; plain cards after
STARTS_2P = [("C5", "black"), ("E4", "brown"), ("B3", "white")]  # back side


def objective_game(number, players=2, starts=None):
    others = [n for n in (9, 10, 8) if n != number][:2]  # not met by the scenarios of other cards
    return recorded_game(players, TOP, starts=starts or STARTS_2P, options={"objectives": [number, *others]})


def chips(game, seat):
    return seat_view(game, seat)["chips"]


def meet_by_build(game, move, number, value=7):
    """``move`` by seat 0 meets objective ``number``: no chip before, the highest chip right after."""
    assert chips(game, 0) == []
    play(game, take(0))  # seat 0 acts once first: the constructed presence alone is not enough
    play(game, take(0))  # seat 1
    assert chips(game, 0) == []
    play(game, move)
    assert chips(game, 0) == [{"objective": number, "value": value}]
    assert number in seat_view(game, 0)["objectives_met"]
    check_invariants(game)


def test_TU_O2_1_presence_in_all_four_colours():
    game = objective_game(1)
    construct_building(game, "A1", "black", 1, roofs=[(1, 0)])
    construct_building(game, "C3", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "E6", "white", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"brown": 1, "black": 1})
    meet_by_build(game, build("A2", "brown", "A2"), 1)


def test_TU_O2_2_four_buildings_in_one_park():
    game = objective_game(2)
    construct_building(game, "D1", "black", 1, roofs=[(1, 0)])
    construct_building(game, "D3", "white", 1, roofs=[(1, 0)])
    construct_building(game, "D4", "grey", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"brown": 1, "grey": 1})
    meet_by_build(game, build("D2", "brown", "D2"), 2)


def test_TU_O2_3_all_five_districts():
    game = objective_game(3)
    construct_building(game, "A1", "black", 1, roofs=[(1, 0)])
    construct_building(game, "B1", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "C3", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "D6", "white", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"brown": 1, "white": 1})
    meet_by_build(game, build("E5", "brown", "E5"), 3)


def test_TU_O2_4_four_buildings_at_one_lake():
    game = objective_game(4)
    construct_building(game, "B2", "black", 1, roofs=[(1, 0)])
    construct_building(game, "B6", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "E2", "white", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"brown": 1, "black": 1, "grey": 1})
    meet_by_build(game, build("B5", "brown", "B5"), 4)


def test_TU_O2_5_five_buildings_connected_by_roads():
    game = objective_game(5)
    construct_building(game, "A1", "black", 1, roofs=[(1, 0)])
    construct_building(game, "A2", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "A5", "black", 1, roofs=[(1, 0)])
    construct_building(game, "C1", "brown", 1, roofs=[(1, 0)])  # not yet joined to the others
    construct_supply(game, 0, {"white": 1, "black": 2, "brown": 1})
    meet_by_build(game, build("A4", "white", "A4"), 5)  # A4 joins A1, A5 and C1


def test_TU_O2_6_four_different_brown_buildings():
    game = objective_game(6)
    construct_building(game, "A1", "brown", 2, roofs=[(1, 0), (2, 0)])  # two roofs, still one building
    construct_building(game, "C3", "brown", 1, roofs=[(1, 0)])
    construct_building(game, "D6", "brown", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"brown": 1, "white": 1})
    meet_by_build(game, build("B2", "brown", "B2"), 6)


def test_TU_O2_7_three_in_one_grey_district_two_in_the_other():
    game = objective_game(7)
    construct_building(game, "A1", "black", 1, roofs=[(1, 0)])
    construct_building(game, "A2", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "A5", "black", 1, roofs=[(1, 0)])
    construct_building(game, "D1", "white", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"black": 1, "white": 1})
    meet_by_build(game, build("D3", "black", "D3"), 7)


def test_TU_O2_8_both_sides_of_two_borders():
    game = objective_game(8)
    construct_building(game, "A3", "black", 1, roofs=[(1, 0)])  # border A-B: A3 | B1
    construct_building(game, "B1", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "C2", "white", 1, roofs=[(1, 0)])  # border C-D: C2 | D1 (to come)
    construct_supply(game, 0, {"black": 1, "white": 1})
    meet_by_build(game, build("D1", "black", "D1"), 8)


def test_TU_O2_8_one_building_may_not_count_for_two_borders():
    game = objective_game(8)
    # E1 lies on border B-E (B5 | E1) and on border D-E (D2 | E1): counted once only
    construct_building(game, "B5", "black", 1, roofs=[(1, 0)])
    construct_building(game, "E1", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "D2", "white", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"black": 1, "grey": 1, "brown": 1})
    meet_by_build(game, build("E3", "black", "E3"), 8)  # D2 | E3 frees E1 for border B-E


def test_TU_O2_9_two_roofs_in_each_of_two_buildings():
    game = objective_game(9)
    construct_building(game, "A1", "black", 2, roofs=[(1, 0), (2, 0)])
    construct_building(game, "C3", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "D6", "grey", 2, roofs=[(1, 1), (2, 0)])  # another player's roof does not count
    construct_supply(game, 0, {"white": 1, "grey": 1})
    meet_by_build(game, build("C4", "white", "C3"), 9)


def test_TU_O2_10_roofs_standing_on_levels_one_to_four():
    game = objective_game(10)
    construct_building(game, "A1", "black", 1, roofs=[(1, 0)])
    construct_building(game, "C3", "grey", 3, roofs=[(2, 0)])  # covered roofs count (TU-O1)
    construct_building(game, "D6", "white", 3, roofs=[(3, 0)])
    construct_building(game, "B1", "grey", 3)
    construct_supply(game, 0, {"black": 1, "grey": 1, "white": 1})
    meet_by_build(game, build("B2", "black", "B1"), 10)  # the roof stands on B1's 4th floor


@pytest.mark.parametrize("number", range(1, 11))
def test_TU_O2_no_objective_is_met_by_an_empty_board(number):
    game = objective_game(number)
    play(game, take(0))
    assert chips(game, 0) == [] and chips(game, 1) == []


def test_TU_O1_highest_chip_left_once_per_player_covered_roofs_count():
    starts = [("C5", "black"), ("D8", "brown"), ("B8", "white")]  # front side, 3 players: chips 7, 5, 3
    game = recorded_game(3, TOP, starts=starts, options={"objectives": [1, 2, 3]})
    construct_building(game, "A1", "black", 2, roofs=[(1, 0)])  # seat 0's roof here is covered
    construct_building(game, "A3", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "A7", "white", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"brown": 1, "black": 1, "grey": 1})
    play(game, build("A2", "brown", "A2"))
    assert chips(game, 0) == [{"objective": 1, "value": 7}]
    construct_building(game, "E9", "black", 1, roofs=[(1, 1)])
    construct_building(game, "E8", "grey", 1, roofs=[(1, 1)])
    construct_building(game, "E5", "white", 1, roofs=[(1, 1)])
    construct_supply(game, 1, {"brown": 1, "white": 1})
    play(game, build("E4", "brown", "E4"))
    assert chips(game, 1) == [{"objective": 1, "value": 5}]
    assert game.view()["objectives"][0]["chips_left"] == [3]
    play(game, take(0))  # seat 2
    construct_supply(game, 0, {"grey": 1, "brown": 1})
    play(game, build("A6", "grey", "A2"))  # seat 0 meets objective 1 again: no second chip
    assert chips(game, 0) == [{"objective": 1, "value": 7}]
    assert game.view()["objectives"][0]["chips_left"] == [3]


def test_TU_O1_no_chip_left_means_no_chip():
    game = objective_game(1)
    game.chips_left[0] = ()  # both chips of slot 0 already gone (constructed)
    construct_building(game, "A1", "black", 1, roofs=[(1, 0)])
    construct_building(game, "C3", "grey", 1, roofs=[(1, 0)])
    construct_building(game, "E6", "white", 1, roofs=[(1, 0)])
    construct_supply(game, 0, {"brown": 1, "black": 1})
    play(game, build("A2", "brown", "A2"))
    assert chips(game, 0) == [] and seat_view(game, 0)["objectives_met"] == [1]


def test_TU_G9_objectives_are_checked_for_every_player_after_every_action():
    game = objective_game(1)
    # seat 1 already stands in buildings of all four colours (constructed, not yet checked)
    construct_building(game, "A1", "black", 1, roofs=[(1, 1)])
    construct_building(game, "C3", "grey", 1, roofs=[(1, 1)])
    construct_building(game, "E6", "white", 1, roofs=[(1, 1)])
    construct_building(game, "D1", "brown", 1, roofs=[(1, 1)])
    assert game.to_move() == 0
    play(game, take(0))  # seat 0's action: seat 1 is checked too and takes the chip now
    assert chips(game, 1) == [{"objective": 1, "value": 7}]
    assert chips(game, 0) == []
