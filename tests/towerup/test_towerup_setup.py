"""Tower Up setup: TU-C*, TU-S*, TU-G2, TU-G3."""

from __future__ import annotations

import pytest
from json_values import assert_plain_json
from towerup_helpers import (
    CARD_IDS,
    RULES,
    check_invariants,
    deck,
    expect_illegal,
    play,
    recorded_game,
    seeded_game,
    take,
)

from referee.games import IllegalMove, ruleset
from referee.games.randomness import Rng

SEED = bytes(range(32))


def test_ruleset_identity_and_player_range():
    rules = ruleset("towerup")
    assert rules is RULES
    assert rules.name == "towerup"
    assert rules.min_players == 2 and rules.max_players == 4
    assert len(rules.version) == 16 and int(rules.version, 16) >= 0


def test_components_are_json_safe_and_a_fresh_copy():
    comps = RULES.components()
    assert_plain_json(comps)
    comps["cards"]["cards"].clear()
    assert len(RULES.components()["cards"]["cards"]) == 44
    assert_plain_json(RULES.options_schema())


def test_TU_C1_board_sides_districts_and_roads():
    comps = RULES.components()
    front, back = comps["board_sides"]["front"], comps["board_sides"]["back"]
    assert front["players"] == [3, 4] and back["players"] == [2]
    for side in (front, back):
        assert len(side["districts"]) == 5
        assert sum(1 for d in side["districts"] if d["color"] == "grey") == 2
        ids = {s["id"] for s in side["sites"]}
        assert all(a in ids and b in ids for a, b in side["roads"])
        assert side["parks"] and side["lakes"] and side["borders"]
        assert all(isinstance(s["x"], int) and isinstance(s["y"], int) for s in side["sites"])
    assert 45 <= len(front["sites"]) <= 50 and 28 <= len(back["sites"]) <= 32


def test_TU_C1_adjacent_means_joined_by_a_road():
    # back side: A1 and A3 are in the same district but have no road between them
    game = recorded_game(2, ("c01", "c02", "c05"), starts=[("A1", "black"), ("D6", "brown"), ("C5", "white")])
    expect_illegal(game, {"type": "build", "site": "A3", "color": "grey", "roof": "A3"}, "build/not_adjacent", "TU-B1")
    play(game, {"type": "build", "site": "A2", "color": "grey", "roof": "A2"})  # A1-A2 is a road
    assert game.view()["buildings"]["A1"]["height"] == 2


def test_TU_C2_120_floors_30_per_colour():
    for players in (2, 3, 4):
        game = seeded_game(players, SEED, {"start_floors": "random"})
        check_invariants(game)
        view = game.view()
        total = sum(view["box"].values()) + sum(s["supply_total"] for s in view["seats"])
        total += sum(b["height"] for b in view["buildings"].values())
        assert total == 120


def test_TU_C3_ten_roofs_per_player():
    game = seeded_game(3, SEED)
    assert [s["roofs_left"] for s in game.view()["seats"]] == [10, 10, 10]


def test_TU_C4_track_columns_and_stars_from_data():
    track = RULES.components()["personal_board"]["track"]
    assert track["values"][0] == 0 and track["values"][-1] == 13
    assert 3 in track["values"]
    assert all(b - a in (2, 3) for a, b in zip(track["stars"], track["stars"][1:], strict=False))
    assert RULES.components()["personal_board"]["cone"]["max"] == 7


def test_TU_C5_44_cards_floors_bottom_to_top_wildcards_and_locomotives():
    cards = RULES.components()["cards"]["cards"]
    assert len(cards) == 44 and len({c["id"] for c in cards}) == 44
    assert any("wild" in c["floors"] for c in cards)
    assert any(c["locomotives"] for c in cards)
    # the rulebook's printed examples
    by_id = {c["id"]: c for c in cards}
    assert by_id["c01"]["floors"] == ["black", "black", "white", "white"]
    assert by_id["c04"]["locomotives"] == [{"color": "black", "steps": 2}]


def test_TU_C6_ten_objectives_three_first_game_and_twelve_chips():
    comps = RULES.components()
    assert sorted(o["number"] for o in comps["objectives"]) == list(range(1, 11))
    assert sorted(o["number"] for o in comps["objectives"] if o["first_game"]) == [1, 2, 3]
    assert comps["chips"]["slots"] * len(comps["chips"]["by_players"]["4"]) == 12


def test_TU_S1_board_side_by_player_count():
    assert seeded_game(2, SEED).view()["board_side"] == "back"
    assert seeded_game(3, SEED).view()["board_side"] == "front"
    assert seeded_game(4, SEED).view()["board_side"] == "front"


def test_TU_S2_market_is_the_top_three_cards():
    game = recorded_game(3, ("c10", "c20", "c30"))
    view = game.view()
    assert view["market"] == ["c10", "c20", "c30"]
    assert view["deck_count"] == 41 and view["discard"] == []


def test_TU_S2_seeded_deck_is_the_documented_shuffle():
    order = Rng(SEED, "deck").shuffle(range(44))
    game = seeded_game(2, SEED)
    assert game.view()["market"] == [CARD_IDS[i] for i in order[:3]]
    # replaying with the same seed gives the same game
    assert seeded_game(2, SEED).view() == game.view()


def test_TU_S3_start_floor_colours_are_the_market_bottoms():
    game = recorded_game(2, ("c02", "c07", "c14"))  # bottoms: brown, grey, white
    assert game.view()["start_floors"]["pending"] == ["brown", "grey", "white"]
    assert game.to_move() == 1  # the last seat places them
    expect_illegal(game, {"type": "place_start", "placements": [{"site": "A1", "color": "black"}]},
                   "place_start/wrong_color", "TU-S3")
    play(game, {"type": "place_start", "placements": [
        {"site": "A1", "color": "brown"}, {"site": "C5", "color": "grey"}, {"site": "E6", "color": "white"}]})
    view = game.view()
    assert {s: (b["color"], b["height"]) for s, b in view["buildings"].items()} == {
        "A1": ("brown", 1), "C5": ("grey", 1), "E6": ("white", 1)}
    assert view["box"] == {"black": 28, "grey": 27, "white": 27, "brown": 27}
    check_invariants(game)


def test_TU_S3_same_colour_never_adjacent_and_sites_distinct():
    game = recorded_game(2, ("c01", "c06", "c14"))  # black, black, white
    expect_illegal(game, {"type": "place_start", "placements": [
        {"site": "A1", "color": "black"}, {"site": "A2", "color": "black"}]},
        "place_start/same_color_adjacent", "TU-S3")
    expect_illegal(game, {"type": "place_start", "placements": [
        {"site": "A1", "color": "black"}, {"site": "A1", "color": "white"}]}, "place_start/site_taken", "TU-S3")
    play(game, {"type": "place_start", "placements": [{"site": "A1", "color": "black"}]})
    # placed one at a time: the second black may still not go next to the first
    expect_illegal(game, {"type": "place_start", "placements": [{"site": "A4", "color": "black"}]},
                   "place_start/same_color_adjacent", "TU-S3")
    # different colours may be adjacent
    play(game, {"type": "place_start", "placements": [{"site": "A2", "color": "white"}]})
    play(game, {"type": "place_start", "placements": [{"site": "A5", "color": "black"}]})
    assert game.view()["phase"] == "play" and game.to_move() == 0


def test_TU_S3_wildcard_bottom_lets_the_placer_choose():
    game = recorded_game(2, ("c03", "c04", "c36"))  # all three bottoms are wildcards
    assert game.view()["start_floors"]["pending"] == ["wild", "wild", "wild"]
    play(game, {"type": "place_start", "placements": [
        {"site": "A1", "color": "grey"}, {"site": "B3", "color": "grey"}, {"site": "E6", "color": "brown"}]})
    assert game.view()["buildings"]["B3"]["color"] == "grey"


def test_TU_S4_extra_start_floors_limits():
    assert len(seeded_game(2, SEED, {"extra_start_floors": 4}).view()["start_floors"]["pending"]) == 7
    assert len(seeded_game(3, SEED, {"extra_start_floors": 4}).view()["start_floors"]["pending"]) == 7
    assert len(seeded_game(4, SEED, {"extra_start_floors": 2}).view()["start_floors"]["pending"]) == 5
    for players, extra in ((2, 5), (3, 5), (4, 3)):
        with pytest.raises(ValueError, match="extra_start_floors"):
            seeded_game(players, SEED, {"extra_start_floors": extra})


def test_TU_S4_extra_cards_name_colours_then_go_back_into_the_deck():
    top = ("c01", "c02", "c05", "c07", "c11")  # market bottoms black, brown, white; extra: grey, white
    game = RULES.new_game(3, options={"extra_start_floors": 2}, deck=deck(*top), seed=SEED)
    view = game.view()
    assert view["market"] == ["c01", "c02", "c05"]
    assert view["start_floors"]["pending"] == ["black", "brown", "white", "grey", "white"]
    assert view["deck_count"] == 41 and view["discard"] == []
    # the deck after setup is the shuffle of the rest and the extra cards (label "start-cards")
    expected = Rng(SEED, "start-cards").shuffle([*deck(*top)[5:], "c07", "c11"])
    play(game, {"type": "place_start", "placements": [
        {"site": "A1", "color": "black"}, {"site": "A3", "color": "brown"}, {"site": "E9", "color": "white"},
        {"site": "D4", "color": "grey"}, {"site": "B3", "color": "white"}]})
    play(game, take(1))
    assert game.view()["market"][1] == expected[0]


def test_TU_S4_recorded_game_needs_a_seed_for_the_extra_cards():
    with pytest.raises(ValueError, match="extra_start_floors"):
        RULES.new_game(2, options={"extra_start_floors": 1}, deck=deck())


def test_TU_S5_locomotives_start_left_roofs_and_cone_at_hand():
    for seat in seeded_game(4, SEED).view()["seats"]:
        assert seat["locomotives"] == {"black": 0, "grey": 0, "white": 0, "brown": 0}
        assert seat["roofs_left"] == 10 and seat["cone"] is None and seat["stars_reached"] == 0


def test_TU_S6_first_game_objectives_by_default_random_from_the_seed():
    assert [o["number"] for o in seeded_game(2, SEED).view()["objectives"]] == [1, 2, 3]
    game = seeded_game(2, SEED, {"objectives": "random"})
    expected = Rng(SEED, "objectives").shuffle(list(range(1, 11)))[:3]
    assert [o["number"] for o in game.view()["objectives"]] == expected
    assert [o["number"] for o in seeded_game(2, SEED, {"objectives": [10, 4, 7]}).view()["objectives"]] == [10, 4, 7]
    for bad in ([1, 2], [1, 1, 2], [0, 1, 2], [1, 2, 11], "some", [1, 2, True]):
        with pytest.raises(ValueError, match="objectives"):
            seeded_game(2, SEED, {"objectives": bad})


def test_TU_S7_chips_per_player_count():
    expected = {2: [7, 3], 3: [7, 5, 3], 4: [7, 5, 3, 3]}
    for players, chips in expected.items():
        view = seeded_game(players, SEED).view()
        assert [o["chips_left"] for o in view["objectives"]] == [chips] * 3


def test_TU_S8_starting_supply_one_of_each_colour():
    game = recorded_game(4, ("c01", "c02", "c05"), starts=[("A1", "black"), ("E9", "brown"), ("D4", "white")])
    view = game.view()
    for seat in view["seats"]:
        assert seat["supply"] == {"black": 1, "grey": 1, "white": 1, "brown": 1}
    assert view["box"] == {"black": 25, "grey": 26, "white": 25, "brown": 25}


def test_TU_G2_seat_0_starts_and_play_goes_clockwise():
    game = recorded_game(3, ("c01", "c02", "c05", "c06", "c07", "c08", "c09"),
                         starts=[("A1", "black"), ("E9", "brown"), ("D4", "white")])
    order = []
    for _ in range(4):
        order.append(game.to_move())
        play(game, take(0))
    assert order == [0, 1, 2, 0]


def test_TU_G3_last_seat_places_start_floors_as_first_move():
    game = recorded_game(4, ("c01", "c02", "c05"))
    assert game.to_move() == 3 and game.view()["phase"] == "setup"
    expect_illegal(game, {"type": "place_start", "placements": [{"site": "A1", "color": "black"}]},
                   "move/not_your_turn", None, seat=0)
    expect_illegal(game, take(0), "move/setup_pending", "TU-G3")
    expect_illegal(game, {"type": "build", "site": "A1", "color": "black", "roof": "A1"}, "move/setup_pending", "TU-G3")
    assert all(m["type"] == "place_start" for m in game.legal_moves())
    play(game, {"type": "place_start", "placements": [
        {"site": "A1", "color": "black"}, {"site": "E9", "color": "brown"}, {"site": "D4", "color": "white"}]})
    assert game.to_move() == 0
    expect_illegal(game, {"type": "place_start", "placements": [{"site": "B3", "color": "black"}]},
                   "place_start/not_setup", "TU-G3")


def test_TU_G3_random_start_floors_from_the_seed():
    game = seeded_game(4, SEED, {"start_floors": "random", "extra_start_floors": 2})
    view = game.view()
    assert view["phase"] == "play" and game.to_move() == 0
    assert len(view["buildings"]) == 5 and all(b["height"] == 1 for b in view["buildings"].values())
    assert seeded_game(4, SEED, {"start_floors": "random", "extra_start_floors": 2}).view() == view
    check_invariants(game)
    with pytest.raises(ValueError, match="start_floors"):
        RULES.new_game(4, options={"start_floors": "random"}, deck=deck())
    with pytest.raises(ValueError, match="start_floors"):
        seeded_game(4, SEED, {"start_floors": "anywhere"})


def test_new_game_argument_errors_name_the_problem():
    with pytest.raises(ValueError, match="players"):
        RULES.new_game(5, seed=SEED)
    with pytest.raises(ValueError, match="players"):
        RULES.new_game(True, seed=SEED)
    with pytest.raises(ValueError, match="seed"):
        RULES.new_game(2)
    with pytest.raises(ValueError, match="seed"):
        RULES.new_game(2, seed=b"short")
    with pytest.raises(ValueError, match="deck"):
        RULES.new_game(2, deck=CARD_IDS[:43])
    with pytest.raises(ValueError, match="deck"):
        RULES.new_game(2, deck=[*CARD_IDS[:43], "c01"])
    with pytest.raises(ValueError, match="unknown card"):
        RULES.new_game(2, deck=[*CARD_IDS[:43], "zz"])
    with pytest.raises(ValueError, match="unknown option"):
        RULES.new_game(2, seed=SEED, options={"colour_blind": True})
    with pytest.raises(ValueError, match="reshuffles"):
        RULES.new_game(2, seed=SEED, options={"reshuffles": []})
    with pytest.raises(ValueError, match="reshuffles"):
        RULES.new_game(2, deck=deck(), options={"reshuffles": [["c01", "c01"]]})


def test_options_schema_is_json_safe_with_defaults():
    import json

    schema = RULES.options_schema()
    assert json.loads(json.dumps(schema)) == schema
    props = schema["properties"]
    assert props["objectives"]["default"] == [1, 2, 3]
    assert props["start_floors"]["default"] == "last_player"
    assert props["extra_start_floors"]["default"] == 0


def test_illegal_place_start_rejected_whole():
    game = recorded_game(2, ("c01", "c02", "c05"))
    with pytest.raises(IllegalMove):
        game.play(1, {"type": "place_start", "placements": [
            {"site": "A1", "color": "black"}, {"site": "A9", "color": "brown"}]})
    assert game.view()["buildings"] == {}
