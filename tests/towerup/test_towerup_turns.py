"""Tower Up turns: TAKE (TU-T*), BUILD (TU-B*), the worked example, TU-G1, TU-G4, TU-G8, TU-G10."""

from __future__ import annotations

from towerup_helpers import (
    EXAMPLE_STARTS,
    EXAMPLE_TOP,
    RULES,
    build,
    check_invariants,
    construct_box,
    construct_building,
    construct_market,
    construct_supply,
    deck,
    expect_illegal,
    play,
    recorded_game,
    seat_view,
    take,
)

from referee.games.randomness import Rng

SEED = bytes(range(32))
# back side (2 players): B2-B3, B2-B6, B3-B6, B1-B2, B5-B1/B2/B4/B6/E1, A1-A2/A4


def example_game():
    """The rulebook's worked example, reached by real play on the 2-player side."""
    game = recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)
    play(game, build("B1", "grey", "B1"))  # seat 0 pays the white building B2
    play(game, build("B5", "black", "B5"))  # seat 1 pays grey B1, white B2 and brown B6
    play(game, take(0))  # seat 0: c05 = white + brown, grey locomotive +1
    play(game, take(2))  # seat 1: c01 = 2 black + 2 white
    return game


def test_rulebook_worked_example_black_next_to_brown_pays_white_and_brown_roof_on_white():
    game = example_game()
    assert game.to_move() == 0
    buildings = game.view()["buildings"]
    assert (buildings["B2"]["color"], buildings["B2"]["height"]) == ("white", 3)
    assert buildings["B6"]["color"] == "brown"
    # the site next to another black building is out (the rulebook's X)
    expect_illegal(game, build("E1", "black", "E1"), "build/same_color", "TU-B1")
    white_before = seat_view(game, 0)["locomotives"]["white"]
    play(game, build("B3", "black", "B2"))
    view = game.view()
    assert view["buildings"]["B3"]["height"] == 1 and view["buildings"]["B3"]["color"] == "black"
    assert view["buildings"]["B2"]["height"] == 4 and view["buildings"]["B6"]["height"] == 3
    assert view["seats"][0]["locomotives"]["white"] == white_before + 4
    assert view["buildings"]["B2"]["top_roof"] == 0
    check_invariants(game)


def test_TU_T1_take_gains_floors_locomotives_discards_and_refills():
    game = recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)
    before = game.view()
    play(game, take(0))  # c05: white + brown, grey locomotive +1
    view = game.view()
    assert view["seats"][0]["supply"] == {"black": 1, "grey": 1, "white": 2, "brown": 2}
    assert view["seats"][0]["locomotives"]["grey"] == 1
    assert view["box"]["white"] == before["box"]["white"] - 1 and view["box"]["brown"] == before["box"]["brown"] - 1
    assert view["discard"] == ["c05"]
    assert view["market"] == ["c03", "c02", "c01"]  # the slot is refilled from the top of the deck
    assert view["deck_count"] == 40
    assert game.to_move() == 1


def test_TU_T1_wildcards_are_chosen_in_card_order():
    game = recorded_game(2, ("c03", "c02", "c01"), starts=EXAMPLE_STARTS)
    expect_illegal(game, take(0), "take/choose_count", "TU-T1")
    expect_illegal(game, take(0, choose=["grey"]), "take/choose_count", "TU-T1")
    play(game, take(0, choose=["grey", "grey"]))
    assert seat_view(game, 0)["supply"]["grey"] == 3
    expect_illegal(game, take(1, choose=["grey"]), "take/choose_not_needed", "TU-T1")


def test_TU_T2_scarcity_replacement_of_the_players_choice_triggers_the_end():
    game = recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)
    construct_box(game, "black", 1, dump_site="D5")  # only 1 black floor left in the box
    # c01 shows 2 black + 2 white: one black comes from the box, the other is a floor of another colour
    expect_illegal(game, take(2), "take/choose_count", "TU-T2")
    expect_illegal(game, take(2, choose=["black"]), "take/choose_unavailable", "TU-T2")
    play(game, take(2, choose=["brown"]))
    view = game.view()
    assert view["seats"][0]["supply"] == {"black": 2, "grey": 1, "white": 3, "brown": 2}
    assert view["box"]["black"] == 0
    assert view["end"]["trigger"] == {"kind": "scarcity", "seat": 0, "rule": "TU-E2"}
    check_invariants(game)


def test_TU_T2_a_wildcard_never_causes_scarcity():
    game = recorded_game(2, ("c03", "c02", "c01"), starts=EXAMPLE_STARTS)
    construct_box(game, "black", 0, dump_site="D5")
    expect_illegal(game, take(0, choose=["black", "grey"]), "take/choose_unavailable", "TU-T2")
    play(game, take(0, choose=["white", "grey"]))
    assert game.view()["end"]["trigger"] is None


def test_TU_T2_an_empty_box_gives_what_is_left():
    game = recorded_game(2, ("c03", "c02", "c01"), starts=EXAMPLE_STARTS)
    construct_box(game, "black", 0, dump_site="D5")
    construct_box(game, "grey", 0, dump_site="E6")
    construct_box(game, "white", 1, dump_site="C1")
    construct_box(game, "brown", 0, dump_site="E3")
    # two wildcards, one floor left in the whole box: a single pick
    expect_illegal(game, take(0, choose=["white", "white"]), "take/choose_count", "TU-T1")
    play(game, take(0, choose=["white"]))
    assert sum(game.view()["box"].values()) == 0
    check_invariants(game)


def test_TU_T3_and_TU_G10_discard_exactly_down_to_ten_as_part_of_the_take():
    game = recorded_game(2, ("c01", "c34", "c33", "c35"), starts=[("B2", "grey"), ("B6", "brown"), ("A1", "black")])
    # a discard that is not needed is illegal
    expect_illegal(game, take(0, discard={"grey": 1}), "take/discard_not_needed", "TU-T3")
    play(game, take(0))  # seat 0: 4 + 4 = 8 floors
    play(game, take(2))  # seat 1: c33
    assert seat_view(game, 0)["supply_total"] == 8
    # c34 = 2 brown + 2 black -> 12 floors: return exactly 2
    expect_illegal(game, take(1), "take/discard_count", "TU-T3")
    expect_illegal(game, take(1, discard={"black": 1}), "take/discard_count", "TU-T3")
    expect_illegal(game, take(1, discard={"black": 3}), "take/discard_count", "TU-T3")
    expect_illegal(game, take(1, discard={"grey": 2}), "take/bad_discard", "TU-T3")
    expect_illegal(game, take(1, discard={"grey": 0, "black": 2}), "take/bad_discard", "TU-T3")
    box_black = game.view()["box"]["black"]
    play(game, take(1, discard={"black": 1, "white": 1}))
    view = game.view()
    assert view["seats"][0]["supply_total"] == 10
    assert view["seats"][0]["supply"] == {"black": 4, "grey": 1, "white": 2, "brown": 3}
    assert view["box"]["black"] == box_black - 2 + 1


def test_TU_B1_build_on_an_empty_site_next_to_a_building_in_another_colour():
    game = recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)
    expect_illegal(game, build("B2", "grey", "B2"), "build/site_taken", "TU-B1")
    expect_illegal(game, build("D4", "grey", "D4"), "build/not_adjacent", "TU-B1")
    expect_illegal(game, build("B3", "white", "B3"), "build/same_color", "TU-B1")
    expect_illegal(game, build("B3", "brown", "B3"), "build/same_color", "TU-B1")
    expect_illegal(game, build("Q9", "grey", "Q9"), "build/unknown_site", "TU-C1")
    construct_supply(game, 0, {"white": 1, "brown": 1})
    expect_illegal(game, build("B3", "grey", "B3"), "build/no_floor", "TU-B1")
    construct_supply(game, 0, {"grey": 1, "white": 1, "brown": 1})
    play(game, build("B3", "grey", "B3"))
    assert game.view()["buildings"]["B3"] == {
        "color": "grey", "height": 1, "stack": ["grey", {"owner": 0}], "roofs": [{"level": 1, "owner": 0}],
        "top_roof": 0}


def test_TU_B2_must_pay_every_neighbour():
    game = recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)
    construct_supply(game, 0, {"grey": 1, "white": 1})  # no brown floor for B6
    exc = expect_illegal(game, build("B3", "grey", "B2"), "build/cannot_pay", "TU-B2")
    assert exc.message == "cannot pay the brown building at B6"
    assert exc.details == {"site": "B6", "color": "brown"}
    construct_supply(game, 0, {"grey": 1, "white": 1, "brown": 1})
    play(game, build("B3", "grey", "B2"))
    view = game.view()
    assert view["buildings"]["B2"]["stack"] == ["white", "white", {"owner": 0}]
    assert view["buildings"]["B6"]["stack"] == ["brown", "brown"]  # paid in its own colour
    assert view["seats"][0]["supply_total"] == 0


def test_TU_B2_two_neighbours_of_one_colour_cost_two_floors():
    game = recorded_game(2, ("c01", "c06", "c02"), starts=[("B1", "black"), ("B6", "black"), ("A1", "brown")])
    # B2 touches B1 and B6, both black
    expect_illegal(game, build("B2", "grey", "B2"), "build/cannot_pay", "TU-B2")
    construct_supply(game, 0, {"grey": 1, "black": 2})
    play(game, build("B2", "grey", "B1"))
    assert game.view()["seats"][0]["supply_total"] == 0


def test_TU_B3_roof_on_the_new_building_or_a_just_raised_neighbour():
    game = example_game()
    expect_illegal(game, build("B3", "black", "B5"), "build/bad_roof", "TU-B3")
    expect_illegal(game, build("B3", "black", "A1"), "build/bad_roof", "TU-B3")
    expect_illegal(game, build("B3", "black", "nowhere"), "build/bad_roof", "TU-B3")
    play(game, build("B3", "black", "B6"))
    assert game.view()["buildings"]["B6"]["top_roof"] == 0


def test_TU_B4_locomotive_of_the_roofed_colour_advances_by_its_height():
    game = example_game()
    play(game, build("B3", "black", "B6"))  # B6 brown becomes 3 floors high
    assert seat_view(game, 0)["locomotives"]["brown"] == 3
    assert seat_view(game, 0)["locomotives"]["black"] == 0


def test_TU_B5_floors_cover_roofs_even_your_own():
    game = example_game()
    # seat 1's payment already covered seat 0's roof on B1
    assert game.view()["buildings"]["B1"]["stack"] == ["grey", {"owner": 0}, "grey"]
    play(game, build("B3", "black", "B6"))  # seat 0 roofs the brown B6 (level 3)
    play(game, take(1))  # seat 1
    construct_supply(game, 0, {"grey": 1, "brown": 1})
    play(game, build("E2", "grey", "E2"))  # E2 touches B6: seat 0 must cover its own roof
    view = game.view()
    assert view["buildings"]["B6"]["stack"] == ["brown", "brown", "brown", {"owner": 0}, "brown"]
    assert view["buildings"]["B6"]["top_roof"] is None
    assert view["seats"][0]["visible_roofs"] == 1  # only E2's roof is on top
    check_invariants(game)


def test_TU_B5_several_roofs_in_one_building_also_of_one_player():
    game = recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)
    play(game, build("B1", "grey", "B2"))  # seat 0 roofs the white building B2 (level 2)
    construct_supply(game, 1, {"black": 1, "grey": 1, "white": 1, "brown": 1})
    play(game, build("B5", "black", "B2"))  # seat 1 covers it and roofs B2 (level 3)
    construct_supply(game, 0, {"black": 1, "white": 1, "brown": 1})
    play(game, build("B3", "black", "B2"))  # seat 0 covers seat 1's roof and roofs B2 again (level 4)
    building = game.view()["buildings"]["B2"]
    assert building["stack"] == ["white", "white", {"owner": 0}, "white", {"owner": 1}, "white", {"owner": 0}]
    assert building["roofs"] == [{"level": 2, "owner": 0}, {"level": 3, "owner": 1}, {"level": 4, "owner": 0}]


def test_TU_B6_one_new_building_and_one_roof_per_turn():
    game = example_game()
    roofs = seat_view(game, 0)["roofs_left"]
    play(game, build("B3", "black", "B2"))
    assert game.to_move() == 1
    assert seat_view(game, 0)["roofs_left"] == roofs - 1
    expect_illegal(game, build("E1", "white", "E1"), "move/not_your_turn", None, seat=0)


def test_TU_G4_no_roof_left_no_build():
    game = recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)
    construct_building(game, "E6", "grey", 10, roofs=[(level, 0) for level in range(1, 11)])
    assert seat_view(game, 0)["roofs_left"] == 0
    expect_illegal(game, build("B3", "grey", "B3"), "build/no_roof", "TU-G4")
    assert all(m["type"] == "take" for m in game.legal_moves())


def test_TU_G1_reshuffle_the_discards_from_the_seed_when_the_deck_runs_out():
    game = RULES.new_game(2, deck=deck(*EXAMPLE_TOP), seed=SEED)
    play(game, {"type": "place_start", "placements": [{"site": s, "color": c} for s, c in EXAMPLE_STARTS]})
    while game.view()["deck_count"]:
        play(game, game.legal_moves()[0])  # takes only: the first legal move is always a take
        assert game.view()["end"]["trigger"] is None
    view = game.view()
    pile = [*view["discard"], view["market"][0]]
    move = next(m for m in game.legal_moves() if m["type"] == "take" and m["slot"] == 0)
    play(game, move)
    expected = Rng(SEED, "reshuffle/1").shuffle(pile)
    after = game.view()
    assert after["reshuffles"] == 1 and after["discard"] == []
    assert after["market"][0] == expected[0] and after["deck_count"] == len(pile) - 1
    check_invariants(game)


def test_TU_G1_recorded_reshuffles_and_a_missing_order():
    def to_empty_deck(game):
        play(game, {"type": "place_start", "placements": [{"site": s, "color": c} for s, c in EXAMPLE_STARTS]})
        while game.view()["deck_count"]:
            play(game, game.legal_moves()[0])
        return game

    probe = to_empty_deck(RULES.new_game(2, deck=deck(*EXAMPLE_TOP)))
    twin = to_empty_deck(RULES.new_game(2, deck=deck(*EXAMPLE_TOP), seed=SEED))  # same position, with a seed
    slot0 = next(m for m in twin.legal_moves() if m["type"] == "take" and m["slot"] == 0)
    view = probe.view()
    pile = [*view["discard"], view["market"][0]]
    # no seed and no recorded order: takes are not possible (and not listed)
    expect_illegal(probe, slot0, "deck/reshuffle_unknown", "TU-G1")
    assert not [m for m in probe.legal_moves() if m["type"] == "take"]
    order = list(reversed(pile))
    game = to_empty_deck(RULES.new_game(2, deck=deck(*EXAMPLE_TOP), options={"reshuffles": [order]}))
    play(game, next(m for m in game.legal_moves() if m["type"] == "take" and m["slot"] == 0))
    assert game.view()["market"][0] == order[0] and game.view()["reshuffles"] == 1
    wrong = to_empty_deck(RULES.new_game(2, deck=deck(*EXAMPLE_TOP), options={"reshuffles": [order[1:]]}))
    expect_illegal(wrong, slot0, "deck/reshuffle_mismatch", "TU-G1")


def test_TU_G8_pass_only_when_nothing_else_is_possible():
    game = recorded_game(2, EXAMPLE_TOP, starts=EXAMPLE_STARTS)
    expect_illegal(game, {"type": "pass"}, "pass/not_allowed", "TU-G8")
    construct_market(game, [None, None, None], deck_top_first=[], discard=[])
    expect_illegal(game, take(0), "take/empty_slot", "TU-G1")
    expect_illegal(game, {"type": "pass"}, "pass/not_allowed", "TU-G8")  # a build is still possible
    construct_supply(game, 0, {})
    assert game.legal_moves() == [{"type": "pass"}]
    play(game, {"type": "pass"})
    assert game.to_move() == 1
