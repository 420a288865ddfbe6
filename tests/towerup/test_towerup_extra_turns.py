"""Extra turns: TU-X1, TU-X2, TU-X3, TU-G5; the end of a track (TU-C4)."""

from __future__ import annotations

from towerup_helpers import (
    build,
    check_invariants,
    construct_building,
    construct_locomotives,
    construct_supply,
    play,
    recorded_game,
    seat_view,
    take,
)

# c44: brown + black, brown locomotive +1; c41: wildcard, brown locomotive +2; c02: brown, white, black
TOP = ("c44", "c41", "c02", "c06", "c07", "c08")
STARTS = [("B2", "brown"), ("A1", "brown"), ("E6", "black")]


def test_TU_X1_all_four_locomotives_reaching_a_star_column_give_an_extra_turn():
    game = recorded_game(2, TOP, starts=STARTS)
    construct_locomotives(game, 0, {"black": 3, "grey": 4, "white": 5, "brown": 2})
    play(game, take(0))  # brown 2 -> 3: every locomotive has reached the first star column (3)
    view = game.view()
    assert view["seats"][0]["locomotives"]["brown"] == 3
    assert game.to_move() == 0 and view["extra_turn"] is True
    assert view["seats"][0]["stars_reached"] == 1
    play(game, take(2))  # the extra turn: TAKE or BUILD; no new star column -> turn passes
    assert game.to_move() == 1 and game.view()["extra_turn"] is False


def test_TU_X1_no_extra_turn_while_one_locomotive_lags():
    game = recorded_game(2, TOP, starts=STARTS)
    construct_locomotives(game, 0, {"black": 3, "grey": 4, "white": 5, "brown": 1})
    play(game, take(0))  # brown 1 -> 2: not yet
    assert game.to_move() == 1


def test_TU_X1_a_build_can_give_the_extra_turn():
    game = recorded_game(2, TOP, starts=STARTS)
    construct_locomotives(game, 0, {"black": 6, "grey": 6, "white": 6, "brown": 5})
    construct_supply(game, 0, {"grey": 1, "brown": 1})
    play(game, build("B3", "grey", "B2"))  # brown B2 reaches 2 floors: brown 5 -> 7, all past column 6
    assert seat_view(game, 0)["stars_reached"] == 2 and game.to_move() == 0


def test_TU_X2_passing_two_star_columns_at_once_gives_one_extra_turn():
    game = recorded_game(2, TOP, starts=STARTS)
    construct_locomotives(game, 0, {"black": 7, "grey": 7, "white": 7, "brown": 2})
    construct_building(game, "D3", "brown", 4)
    construct_supply(game, 0, {"grey": 1, "brown": 1})
    play(game, build("D1", "grey", "D3"))  # D3 becomes 5 high: brown 2 -> 7 passes columns 3 and 6
    view = game.view()
    assert view["seats"][0]["locomotives"]["brown"] == 7
    assert view["seats"][0]["stars_reached"] == 2 and game.to_move() == 0
    play(game, take(1, choose=["white"]))  # the one extra turn (c41 moves brown 7 -> 9: column 9 not all)
    assert game.to_move() == 1
    check_invariants(game)


def test_TU_X3_an_extra_turn_can_earn_another():
    game = recorded_game(2, TOP, starts=STARTS)
    construct_locomotives(game, 0, {"black": 9, "grey": 9, "white": 9, "brown": 2})
    construct_building(game, "D3", "brown", 4)
    construct_supply(game, 0, {"grey": 1, "brown": 1})
    play(game, build("D1", "grey", "D3"))  # brown 2 -> 7: columns 3 and 6, one extra turn
    assert game.to_move() == 0 and seat_view(game, 0)["stars_reached"] == 2
    play(game, take(1, choose=["white"]))  # c41: brown 7 -> 9, column 9 reached by all: another extra turn
    assert game.to_move() == 0 and seat_view(game, 0)["stars_reached"] == 3
    play(game, take(2))  # c02: no locomotive
    assert game.to_move() == 1


def test_TU_G5_one_extra_turn_per_action_and_used_columns_stay_used():
    game = recorded_game(2, TOP, starts=STARTS)
    construct_locomotives(game, 0, {"black": 3, "grey": 3, "white": 3, "brown": 2})
    play(game, take(0))  # brown 2 -> 3: column 3 reached by all -> one extra turn
    assert game.to_move() == 0
    play(game, take(2))  # extra turn, no locomotive moves
    play(game, take(2))  # seat 1
    construct_locomotives(game, 0, {"black": 3, "grey": 3, "white": 3, "brown": 3})
    play(game, take(1, choose=["white"]))  # brown 3 -> 5: moves, but column 3 is already used
    assert game.to_move() == 1


def test_TU_C4_locomotive_at_the_end_of_its_track_moves_no_more():
    game = recorded_game(2, TOP, starts=STARTS)
    last = len(game.cfg.track_values) - 1
    construct_locomotives(game, 0, {"black": 0, "grey": 0, "white": 0, "brown": last})
    play(game, take(1, choose=["white"]))  # c41 brown +2: already at the end (TU-C4)
    assert seat_view(game, 0)["locomotives"]["brown"] == last
    assert game.to_move() == 1
