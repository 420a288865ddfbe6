"""One test (or more) per rule id of docs/rules-fivetowers.md, each built through real play on a recorded deck.

Seats in the rulebook examples: Hedda 0, Peter 1, Anni 2, Lina 3.
"""

from __future__ import annotations

import pytest
from ft_helpers import (
    RULES,
    SEED,
    bid,
    build,
    check_result,
    deck_with,
    finish,
    new,
    others_pass,
    pass_,
    r7,
    rejected,
    start_takes,
    take,
)
from json_values import assert_plain_json

from referee.games import GameOver, IllegalMove
from referee.games.randomness import Rng


def towers(game, seat: int) -> dict:
    return game.view()["seats"][seat]["towers"]


def seat_result(game, seat: int) -> dict:
    return check_result(game)["seats"][seat]


# ---------------------------------------------------------------- components (FT-C)


def test_FT_C1_five_suits_values_0_to_15_and_the_second_copies():
    comp = RULES.components()
    assert_plain_json(comp)
    assert [suit["id"] for suit in comp["suits"]] == ["sand", "ice", "moss", "lava", "stone"]
    sand = comp["suits"][0]
    assert (sand["colour"], sand["named_by"], sand["name_de"]) == ("yellow", "rulebook", "Sandturm")
    assert all(suit["named_by"] == "project" for suit in comp["suits"][1:])
    cards = comp["cards"]
    assert len(cards) == 110 and len({card["id"] for card in cards}) == 110
    for suit in comp["suits"]:
        values = sorted(card["value"] for card in cards if card["suit"] == suit["id"])
        assert values == sorted([*range(16), 0, 2, 5, 7, 10, 12])
    by_id = {card["id"]: card for card in cards}
    assert by_id["sand-7"] == {"id": "sand-7", "suit": "sand", "value": 7, "copy": 1, "min_players": 2, "spire": False}
    assert by_id["sand-7-2"] == {"id": "sand-7-2", "suit": "sand", "value": 7, "copy": 2, "min_players": 4,
                                 "spire": False}
    assert comp["deck_sizes"] == {"2": 80, "3": 80, "4": 110, "5": 110}
    assert [len(RULES.cards_in_play(n)) for n in (2, 3, 4, 5)] == [80, 80, 110, 110]


def test_FT_C2_a_zero_is_a_spire():
    assert all(card["spire"] == (card["value"] == 0) for card in RULES.components()["cards"])
    game = new(2, ["sand-3", "sand-0", "ice-1", "ice-2", "moss-3"])
    start_takes(game, ["sand-3", "sand-0"])
    finish(game)
    assert seat_result(game, 0)["towers"] == [
        {"suit": "sand", "cards": ["sand-3", "sand-0"], "size": 2, "spire": True, "points": 4}]


# ---------------------------------------------------------------- building rules (FT-B)


def test_FT_B1_one_tower_per_suit():
    game = new(2, ["sand-9", "sand-4", "ice-3", "moss-1", "moss-2", "sand-2"])
    start_takes(game, ["sand-9", "sand-4", "ice-3"])
    assert game.view()["display"][0] == "sand-2"
    assert take(game, ["sand-2"]) == 0
    assert towers(game, 0) == {"sand": ["sand-9", "sand-4", "sand-2"], "ice": ["ice-3"]}


def test_FT_B2_a_tower_holds_only_its_own_suit():
    game = new(2, ["ice-5", "sand-9", "ice-2", "moss-7", "lava-1"])
    start_takes(game, ["ice-5", "sand-9", "ice-2", "moss-7"])
    assert towers(game, 0) == {"sand": ["sand-9"], "ice": ["ice-5", "ice-2"], "moss": ["moss-7"]}
    assert list(towers(game, 0)) == ["sand", "ice", "moss"]  # suit order of the data file


def test_FT_B3_a_card_goes_on_top_of_its_tower_or_starts_it():
    game = new(2, ["sand-12", "moss-1", "moss-2", "moss-3", "moss-4", "sand-6", "ice-9"])
    start_takes(game, ["sand-12"])
    assert towers(game, 0) == {"sand": ["sand-12"]}
    take(game, ["sand-6", "ice-9"])
    assert towers(game, 0) == {"sand": ["sand-12", "sand-6"], "ice": ["ice-9"]}


def test_FT_B4_value_must_decrease_7_cannot_go_on_5_in_the_sand_tower():
    game = new(2, ["sand-5", "moss-1", "moss-2", "moss-3", "moss-4", "sand-7", "ice-3"])
    start_takes(game, ["sand-5"])
    bid(game, 0)
    bid(game, 1)  # seat 0: buildable with ice-3
    err = rejected(game, 0, {"type": "build", "cards": ["sand-7"], "demolish": None})
    assert (err.code, err.rule, err.message) == ("build/order", "FT-B4", "7 cannot go on 5 in the sand tower")
    assert err.details == {"card": "sand-7", "on": 5, "suit": "sand"}
    legal = game.legal_moves()
    assert {"type": "build", "cards": ["sand-7"], "demolish": None} not in legal
    assert {"type": "build", "cards": ["sand-7"], "demolish": "sand"} in legal
    build(game, ["ice-3"])
    assert towers(game, 0) == {"sand": ["sand-5"], "ice": ["ice-3"]}


def test_FT_B4_equal_values_do_not_stack():
    game = new(4, ["sand-7", "sand-7-2", "ice-3", "moss-1", "moss-2"])
    bid(game, 2)
    others_pass(game)
    err = rejected(game, 0, {"type": "build", "cards": ["sand-7", "sand-7-2"]})
    assert (err.code, err.rule, err.message) == ("build/order", "FT-B4", "7 cannot go on 7 in the sand tower")
    build(game, ["sand-7", "ice-3"])


def test_FT_B4_any_value_may_go_on_an_8():
    game = new(2, ["sand-8", "sand-15", "ice-8", "ice-9", "moss-1"])
    start_takes(game, ["sand-8", "sand-15", "ice-8", "ice-9"])
    assert towers(game, 0) == {"sand": ["sand-8", "sand-15"], "ice": ["ice-8", "ice-9"]}


def test_FT_B4_a_9_may_go_on_anything_but_a_spire():
    game = new(2, ["sand-3", "sand-9", "ice-0", "ice-9", "moss-1"])
    bid(game, 4)
    pass_(game)
    err = rejected(game, 0, {"type": "build", "cards": ["sand-3", "sand-9", "ice-0", "ice-9"], "demolish": None})
    assert (err.code, err.rule) == ("build/on_spire", "FT-B4")
    assert "spire" in err.message and "ice" in err.message
    build(game, ["sand-3", "sand-9", "ice-9", "ice-0"])
    assert towers(game, 0) == {"sand": ["sand-3", "sand-9"], "ice": ["ice-9", "ice-0"]}


def test_FT_B5_the_built_order_never_changes():
    game = new(2, ["sand-12", "sand-10", "moss-1", "moss-2", "moss-3",
                   "sand-11", "moss-4", "moss-5", "moss-6", "moss-7",
                   "ice-4"])
    start_takes(game, ["sand-12", "sand-10"])
    take(game, ["sand-11"], demolish="sand")  # only the top card can go (FT-R3), the rest stays in order
    assert towers(game, 0) == {"sand": ["sand-12", "sand-11"]}
    take(game, ["ice-4"])
    assert towers(game, 0) == {"sand": ["sand-12", "sand-11"], "ice": ["ice-4"]}
    assert game.view()["seats"][0]["demolished"] == ["sand-10"]


# ---------------------------------------------------------------- setup (FT-S)


def test_FT_S1_80_cards_for_2_or_3_players_110_for_4_or_5():
    for players, size in ((2, 80), (3, 80), (4, 110), (5, 110)):
        view = RULES.new_game(players, seed=SEED).view()
        assert view["deck_count"] + len(view["display"]) == size
    assert not any(card.count("-") == 2 for card in RULES.cards_in_play(3))
    with pytest.raises(ValueError, match="only used with 4 or 5 players"):
        RULES.new_game(3, deck=RULES.cards_in_play(5), seed=SEED)
    with pytest.raises(ValueError, match="exactly once"):
        RULES.new_game(4, deck=RULES.cards_in_play(3), seed=SEED)


def test_FT_S2_the_seeded_deck_and_the_display_of_5():
    order = Rng(SEED, "deck").shuffle(RULES.cards_in_play(3))
    view = RULES.new_game(3, seed=SEED).view()
    assert view["display"] == order[:5]
    assert (view["deck_count"], view["discard"]) == (75, [])
    recorded = deck_with(3, ["stone-4"])
    view = RULES.new_game(3, deck=recorded, seed=SEED).view()
    assert view["display"] == recorded[:5] and view["deck_count"] == 75


def test_FT_S3_seat_0_is_the_first_start_player():
    for players in (2, 3, 4, 5):
        game = RULES.new_game(players, seed=SEED)
        view = game.view()
        assert (view["start_player"], view["to_move"], view["round"], view["phase"]) == (0, 0, 1, "bidding")
        assert game.to_move() == 0


# ---------------------------------------------------------------- a round (FT-R)


def test_FT_R1_the_start_player_must_bid_and_may_bid_0():
    game = new(3)
    err = rejected(game, 0, {"type": "pass"})
    assert (err.code, err.rule) == ("bid/start_must_bid", "FT-R1")
    assert {"type": "pass"} not in game.legal_moves()
    assert {"type": "bid", "amount": 0} in game.legal_moves()
    bid(game, 0)
    assert game.to_move() == 1


def test_FT_R1_clockwise_each_player_once():
    game = new(4)
    bid(game, 1)
    assert game.to_move() == 1
    pass_(game)
    assert game.to_move() == 2
    bid(game, 2)
    assert game.to_move() == 3
    pass_(game)
    view = game.view()
    assert (view["phase"], view["to_move"], view["high_bid"], view["high_bidder"]) == ("building", 2, 2, 2)
    assert (view["has_bid"], view["passed"]) == ([0, 2], [1, 3])
    assert view["bidding"] == [{"seat": 0, "type": "bid", "amount": 1}, {"seat": 1, "type": "pass"},
                               {"seat": 2, "type": "bid", "amount": 2}, {"seat": 3, "type": "pass"}]
    err = rejected(game, 0, {"type": "bid", "amount": 3})
    assert err.code == "move/not_your_turn"
    err = rejected(game, 2, {"type": "bid", "amount": 3})
    assert (err.code, err.rule) == ("move/wrong_phase", "FT-R4")


def test_FT_R1_a_bid_must_be_higher():
    game = new(3)
    bid(game, 2)
    for amount in (2, 1):
        err = rejected(game, 1, {"type": "bid", "amount": amount})
        assert (err.code, err.rule) == ("bid/not_higher", "FT-R1")
        assert err.details == {"high_bid": 2}
    assert game.legal_moves() == [{"type": "bid", "amount": 3}, {"type": "bid", "amount": 4},
                                  {"type": "bid", "amount": 5}, {"type": "pass"}]


def test_FT_R1_a_bid_of_5_ends_the_bidding_at_once():
    game = new(3)
    bid(game, 1)
    bid(game, 5)
    view = game.view()
    assert (view["phase"], view["to_move"], view["passed"], view["awaiting"]) == ("building", 1, [], [])
    game = new(3)
    bid(game, 5)  # the start player may bid 5 too
    assert (game.view()["phase"], game.to_move()) == ("building", 0)


def test_FT_R1_bids_are_0_to_5_and_only_on_your_turn():
    game = new(2)
    for amount in (6, -1):
        err = rejected(game, 0, {"type": "bid", "amount": amount})
        assert (err.code, err.rule, err.details) == ("bid/out_of_range", "FT-R1", {"max": 5})
    err = rejected(game, 1, {"type": "bid", "amount": 1})
    assert (err.code, err.rule, err.details) == ("move/not_your_turn", "FT-R1", {"to_move": 0})


def test_FT_R2_the_highest_bidder_takes_exactly_that_many_cards():
    game = new(2, ["sand-9", "ice-5", "moss-3", "lava-2", "stone-1"])
    bid(game, 1)
    bid(game, 2)
    assert (game.view()["phase"], game.to_move()) == ("building", 1)
    for cards, code in ((["sand-9"], "build/wrong_count"),
                        (["sand-9", "ice-5", "moss-3"], "build/wrong_count"),
                        (["sand-9", "sand-8"], "build/not_in_display"),
                        (["sand-9", "sand-7-2"], "build/not_in_display"),
                        (["sand-9", "sand-9"], "build/duplicate_card")):
        err = rejected(game, 1, {"type": "build", "cards": cards, "demolish": None})
        assert (err.code, err.rule) == (code, "FT-R2")
    err = rejected(game, 0, {"type": "build", "cards": ["sand-9", "ice-5"], "demolish": None})
    assert (err.code, err.rule) == ("move/not_your_turn", "FT-R2")
    build(game, ["sand-9", "ice-5"])
    view = game.view()
    assert view["seats"][1]["towers"] == {"sand": ["sand-9"], "ice": ["ice-5"]}
    assert view["discard"] == ["moss-3", "lava-2", "stone-1"]


def test_FT_R2_the_start_player_builds_when_everyone_else_passed():
    game = new(3, ["sand-9", "ice-5", "moss-3", "lava-2", "stone-1"])
    bid(game, 2)
    pass_(game)
    pass_(game)
    assert (game.view()["phase"], game.to_move(), game.view()["high_bidder"]) == ("building", 0, 0)
    build(game, ["moss-3", "stone-1"])
    assert game.view()["start_player"] == 1


def test_FT_R3_one_optional_demolition_of_a_top_card():
    game = new(2, ["sand-12", "sand-10", "moss-1", "moss-2", "moss-3", "ice-4"])
    start_takes(game, ["sand-12", "sand-10"])
    bid(game, 0)
    bid(game, 1)
    legal = game.legal_moves()
    assert [move["demolish"] for move in legal if move["cards"] == ["ice-4"]] == [None, "sand"]
    build(game, ["ice-4"], demolish="sand")
    view = game.view()
    assert view["seats"][0]["towers"] == {"sand": ["sand-12"], "ice": ["ice-4"]}
    assert view["seats"][0]["demolished"] == ["sand-10"]
    assert view["last_round"]["demolished"] == "sand-10"


def test_FT_R3_a_spire_may_never_be_demolished():
    game = new(2, ["sand-3", "sand-0", "moss-1", "moss-2", "moss-3", "ice-4"])
    start_takes(game, ["sand-3", "sand-0"])
    bid(game, 0)
    bid(game, 1)
    err = rejected(game, 0, {"type": "build", "cards": ["ice-4"], "demolish": "sand"})
    assert (err.code, err.rule) == ("build/demolish_spire", "FT-R3")
    err = rejected(game, 0, {"type": "build", "cards": ["ice-4"], "demolish": "moss"})
    assert (err.code, err.rule) == ("build/demolish_no_tower", "FT-R3")
    err = rejected(game, 0, {"type": "build", "cards": ["ice-4"], "demolish": "gold"})
    assert (err.code, err.rule) == ("move/malformed", None)
    assert all(move["demolish"] is None for move in game.legal_moves())


def test_FT_R3_after_a_spire_no_card_of_that_suit_can_be_taken():
    game = new(2, ["sand-3", "sand-0", "moss-1", "moss-2", "moss-3",
                   "sand-15", "sand-9", "sand-8", "sand-1", "sand-2"])
    start_takes(game, ["sand-3", "sand-0"])
    bid(game, 0)  # seat 1, start player
    err = rejected(game, 0, {"type": "bid", "amount": 1})
    assert (err.code, err.rule, err.details) == ("bid/unbuildable", "FT-G1", {"max_buildable": 0})
    assert game.legal_moves() == [{"type": "pass"}]


def test_FT_R4_all_taken_cards_are_built_in_any_order():
    game = new(2, ["sand-9", "ice-5", "moss-3", "lava-2", "stone-1"])
    bid(game, 3)
    pass_(game)
    orders = [move["cards"] for move in game.legal_moves()
              if move["demolish"] is None and set(move["cards"]) == {"sand-9", "ice-5", "moss-3"}]
    assert len(orders) == 6
    err = rejected(game, 0, {"type": "build", "cards": ["sand-9", "ice-5"], "demolish": None})
    assert err.code == "build/wrong_count"
    build(game, ["moss-3", "ice-5", "sand-9"])
    assert towers(game, 0) == {"sand": ["sand-9"], "ice": ["ice-5"], "moss": ["moss-3"]}


def _hedda_peter_anni_lina(anni_tower: list[str]):
    """Rounds 1 and 2 give Anni (seat 2) ``anni_tower`` and Lina (seat 3) ice-14; round 3 starts with Hedda
    (seat 0) and the rulebook's display: sand-7 and four cards of other suits."""
    round1 = [*anni_tower, "moss-1", "lava-1", "stone-1", "moss-4"][:5]
    round2 = ["ice-14", "moss-2", "lava-2", "stone-2", "sand-1"]
    round3 = ["sand-7", "ice-11", "moss-12", "lava-13", "stone-14"]
    game = new(4, round1 + round2 + round3)
    bid(game, 0)
    pass_(game)
    bid(game, len(anni_tower))  # Anni
    pass_(game)
    build(game, anni_tower)
    assert game.view()["start_player"] == 3
    bid(game, 1)  # Lina
    others_pass(game)
    build(game, ["ice-14"])
    assert (game.view()["start_player"], game.view()["display"]) == (0, round3)
    return game


def test_FT_R5_an_unbuildable_bid_is_corrected_and_bidding_goes_on():
    """The rulebook's second example: with 6 and 4 in her sand tower Anni may not bid 5 (the 7 cannot be
    built even after demolishing the 4); she bids 4 instead, and Lina then gets her turn and bids 5."""
    game = _hedda_peter_anni_lina(["sand-6", "sand-4"])
    bid(game, 3)  # Hedda
    pass_(game)  # Peter
    err = rejected(game, 2, {"type": "bid", "amount": 5})
    assert (err.code, err.rule, err.details) == ("bid/unbuildable", "FT-G1", {"max_buildable": 4})
    assert game.to_move() == 2
    bid(game, 4)  # Anni corrects her bid
    assert game.to_move() == 3
    bid(game, 5)  # Lina
    assert (game.view()["phase"], game.to_move()) == ("building", 3)
    build(game, ["sand-7", "ice-11", "moss-12", "lava-13", "stone-14"])
    assert towers(game, 3) == {"sand": ["sand-7"], "ice": ["ice-14", "ice-11"], "moss": ["moss-12"],
                               "lava": ["lava-13"], "stone": ["stone-14"]}


def test_FT_R6_leftovers_are_discarded_and_the_next_seat_starts():
    game = new(3, ["sand-9", "ice-5", "moss-3", "lava-2", "stone-1", "sand-8", "ice-6"])
    bid(game, 0)
    pass_(game)
    bid(game, 2)  # seat 2
    build(game, ["ice-5", "lava-2"])
    view = game.view()
    assert view["discard"] == ["sand-9", "moss-3", "stone-1"]  # in display order
    assert (view["start_player"], view["to_move"], view["round"]) == (0, 0, 2)  # left of seat 2 is seat 0
    assert view["last_round"] == {"round": 1, "outcome": "built", "start_player": 0, "builder": 2,
                                  "cards": ["ice-5", "lava-2"], "demolished": None,
                                  "discarded": ["sand-9", "moss-3", "stone-1"]}
    start_takes(game, ["sand-8"])
    assert game.view()["start_player"] == 1


def test_FT_R7_start_bids_0_and_all_pass_the_display_is_discarded_and_the_start_player_stays():
    game = new(3, ["sand-9", "ice-5", "moss-3", "lava-2", "stone-1", "sand-8"])
    bid(game, 0)
    pass_(game)
    assert game.view()["phase"] == "bidding"
    pass_(game)
    view = game.view()
    assert view["discard"] == ["sand-9", "ice-5", "moss-3", "lava-2", "stone-1"]
    assert (view["round"], view["start_player"], view["to_move"], view["display"][0]) == (2, 0, 0, "sand-8")
    assert view["last_round"]["outcome"] == "all_passed" and view["last_round"]["builder"] is None
    assert all(not seat["towers"] for seat in view["seats"])


def test_FT_R8_the_discard_pile_is_reshuffled_at_the_end_of_the_first_exhaustion_round():
    game = RULES.new_game(2, seed=SEED)
    initial = Rng(SEED, "deck").shuffle(RULES.cards_in_play(2))
    for _ in range(15):
        r7(game)
    view = game.view()
    assert (view["round"], view["deck_count"], view["exhaustions"], len(view["discard"])) == (16, 0, 1, 75)
    r7(game)
    # every display went to the discard pile, so the pile was in the deck's own order
    reshuffled = Rng(SEED, "reshuffle/1").shuffle(initial)
    view = game.view()
    assert (view["round"], view["discard"], view["deck_count"], view["reshuffled"]) == (17, [], 75, True)
    assert view["display"] == reshuffled[:5]
    assert view["exhaustions"] == 1


def test_FT_R8_a_recorded_reshuffle():
    order = list(reversed(RULES.cards_in_play(2)))
    game = new(2, reshuffle=order, seed=None)
    for _ in range(16):
        r7(game)
    assert game.view()["display"] == order[:5]


def test_FT_R8_a_recorded_reshuffle_that_is_not_the_discard_pile_is_refused():
    order = RULES.cards_in_play(2)[1:]
    game = new(2, reshuffle=order, seed=None)
    for _ in range(15):
        r7(game)
    bid(game, 0)
    err = rejected(game, 1, {"type": "pass"})
    assert (err.code, err.rule, err.details) == ("reshuffle/mismatch", "FT-R8",
                                                 {"missing": ["sand-0"], "not_in_discard": []})


# ---------------------------------------------------------------- end and scoring (FT-E)


def _short_last_display_game():
    """Seat 0 builds 2 cards in round 1; every other round is FT-R7. The reshuffled deck has 78 cards, so the
    last display (round 32) holds 3."""
    game = new(2, ["sand-15", "sand-14", "ice-1", "ice-2", "ice-3"])
    start_takes(game, ["sand-15", "sand-14"])
    for _ in range(15):
        r7(game)
    assert game.view()["round"] == 17 and game.view()["deck_count"] == 73
    for _ in range(15):
        r7(game)
    return game


def test_FT_E1_the_game_ends_after_the_round_of_the_second_exhaustion():
    game = _short_last_display_game()
    view = game.view()
    assert (view["round"], len(view["display"]), view["deck_count"], view["exhaustions"]) == (32, 3, 0, 2)
    assert view["max_bid"] == 3 and not game.is_over()
    err = rejected(game, 1, {"type": "bid", "amount": 4})
    assert (err.code, err.rule, err.details) == ("bid/out_of_range", "FT-E1", {"max": 3})
    with pytest.raises(ValueError, match="not over"):
        game.result()
    bid(game, 3)  # seat 1, the start player, takes the whole short display: 3 cannot be beaten now
    assert game.view()["phase"] == "building"
    build(game, list(view["display"]))
    assert game.is_over() and game.to_move() is None and game.legal_moves() == []
    view = game.view()
    assert (view["phase"], view["round"], view["deck_count"], len(view["discard"])) == ("over", 32, 0, 75)
    assert view["seats"][1]["towers"] != {} and view["display"] == []
    with pytest.raises(GameOver) as caught:
        game.play(0, {"type": "bid", "amount": 0})
    assert caught.value.code == "game/over"
    check_result(game)


def test_FT_E2_one_point_per_card_two_with_a_spire():
    game = new(2, ["sand-5", "sand-3", "ice-4", "ice-0", "moss-9"])
    start_takes(game, ["sand-5", "sand-3", "ice-4", "ice-0"])
    finish(game)
    mine = seat_result(game, 0)
    assert [(t["suit"], t["spire"], t["points"]) for t in mine["towers"]] == [("sand", False, 2), ("ice", True, 4)]
    assert mine["total"] == 2 + 4 + 2


def test_FT_E3_the_tower_with_most_cards_is_the_main_tower():
    game = new(2, ["moss-3", "moss-0", "sand-15", "sand-14", "sand-13"])
    start_takes(game, ["moss-3", "moss-0", "sand-15", "sand-14", "sand-13"])
    finish(game)
    mine = seat_result(game, 0)
    assert mine["main_tower"] == {"suit": "sand", "bonus": 3}
    assert mine["total"] == 3 + 4 + 3
    assert seat_result(game, 1)["main_tower"] == {"suit": None, "bonus": 0}


def test_FT_E4_the_demolition_pile_costs_1_plus_2_plus_3():
    game = new(2, ["sand-12", "ice-12", "moss-12", "lava-1", "lava-2",
                   "sand-11", "lava-3", "lava-4", "lava-5", "lava-6",
                   "ice-11", "lava-7", "lava-8", "lava-9", "lava-10",
                   "moss-11"])
    start_takes(game, ["sand-12", "ice-12", "moss-12"])
    take(game, ["sand-11"], demolish="sand")
    take(game, ["ice-11"], demolish="ice")
    take(game, ["moss-11"], demolish="moss")
    finish(game)
    mine = seat_result(game, 0)
    assert mine["demolished"] == ["sand-12", "ice-12", "moss-12"]
    assert mine["demolition_penalty"] == 6
    assert mine["total"] == 3 + 1 - 6


def test_FT_E5_a_tie_is_a_shared_victory():
    game = new(2)
    finish(game)
    result = check_result(game)
    assert [s["rank"] for s in result["seats"]] == [1, 1] and result["winners"] == [0, 1]
    assert result["tiebreak"] == [{"rule": "FT-E5", "rank": 1, "seats": [0, 1], "criterion": "total points",
                                   "values": [{"seat": 0, "value": 0}, {"seat": 1, "value": 0}],
                                   "decided": False, "outcome": "shared victory"}]


def test_FT_E5_tied_seats_share_a_lower_place_too():
    game = new(3, ["sand-1", "ice-1", "moss-1", "lava-1", "stone-1"])
    start_takes(game, ["sand-1"])
    finish(game)
    result = check_result(game)
    assert [(s["total"], s["rank"]) for s in result["seats"]] == [(2, 1), (0, 2), (0, 2)]
    assert result["winners"] == [0]
    assert [(t["rank"], t["seats"], t["decided"]) for t in result["tiebreak"]] == [(2, [1, 2], False)]


def test_FT_E6_the_rulebook_scoring_example_totals_25():
    """4-card tower without spire (4), 3-card tower with spire (6), 6-card tower with spire (12) as the
    main tower (+6), 2 demolished cards (-3): 25."""
    game = new(2, ["sand-15", "sand-14", "sand-13", "sand-12", "sand-11",
                   "moss-5", "moss-4", "moss-3", "moss-2", "stone-9",
                   "ice-3", "moss-1", "moss-0", "stone-8", "stone-7",
                   "ice-2", "ice-1", "ice-0", "stone-6", "stone-5"])
    start_takes(game, ["sand-15", "sand-14", "sand-13", "sand-12", "sand-11"])
    take(game, ["moss-5", "moss-4", "moss-3", "moss-2"], demolish="sand")
    take(game, ["ice-3", "moss-1", "moss-0"])
    take(game, ["ice-2", "ice-1", "ice-0"], demolish="ice")
    finish(game)
    mine = seat_result(game, 0)
    assert mine == {
        "seat": 0,
        "towers": [
            {"suit": "sand", "cards": ["sand-15", "sand-14", "sand-13", "sand-12"], "size": 4, "spire": False,
             "points": 4},
            {"suit": "ice", "cards": ["ice-2", "ice-1", "ice-0"], "size": 3, "spire": True, "points": 6},
            {"suit": "moss", "cards": ["moss-5", "moss-4", "moss-3", "moss-2", "moss-1", "moss-0"], "size": 6,
             "spire": True, "points": 12},
        ],
        "tower_points": 22,
        "main_tower": {"suit": "moss", "bonus": 6},
        "demolished": ["sand-11", "ice-3"],
        "demolition_penalty": 3,
        "total": 25,
        "rank": 1,
    }


def test_FT_E7_the_rulebook_bidding_example():
    """Hedda (start) bids 3, Peter passes, Anni bids 5; Lina may not bid at all. Anni takes all five, and
    (the building example) demolishes the 6 of her sand tower to build the 7."""
    game = _hedda_peter_anni_lina(["sand-6"])
    bid(game, 3)  # Hedda
    pass_(game)  # Peter
    bid(game, 5)  # Anni
    view = game.view()
    assert (view["phase"], view["to_move"], view["high_bidder"], view["awaiting"]) == ("building", 2, 2, [])
    err = rejected(game, 3, {"type": "bid", "amount": 5})  # Lina
    assert err.code == "move/not_your_turn"
    everything = ["sand-7", "ice-11", "moss-12", "lava-13", "stone-14"]
    err = rejected(game, 2, {"type": "build", "cards": everything, "demolish": None})
    assert (err.code, err.message) == ("build/order", "7 cannot go on 6 in the sand tower")
    build(game, everything, demolish="sand")
    view = game.view()
    assert view["seats"][2]["towers"] == {"sand": ["sand-7"], "ice": ["ice-11"], "moss": ["moss-12"],
                                          "lava": ["lava-13"], "stone": ["stone-14"]}
    assert view["seats"][2]["demolished"] == ["sand-6"]
    assert (view["start_player"], view["discard"][-3:]) == (3, ["lava-2", "stone-2", "sand-1"])


# ---------------------------------------------------------------- the referee's rulings (FT-G)


def test_FT_G1_a_bid_that_cannot_be_built_is_refused_at_once():
    game = new(2, ["sand-5", "sand-4", "moss-1", "moss-2", "moss-3",
                   "sand-7", "sand-6", "ice-1", "ice-2", "lava-3"])
    start_takes(game, ["sand-5", "sand-4"])
    bid(game, 0)
    err = rejected(game, 0, {"type": "bid", "amount": 4})
    assert (err.code, err.rule, err.details) == ("bid/unbuildable", "FT-G1", {"max_buildable": 3})
    assert game.to_move() == 0
    assert [m.get("amount") for m in game.legal_moves()] == [1, 2, 3, None]
    bid(game, 3)
    assert game.view()["phase"] == "building"


def test_FT_G1_a_bid_may_count_on_the_one_demolition():
    game = new(2, ["sand-5", "moss-1", "moss-2", "moss-3", "moss-4",
                   "sand-7", "sand-6", "lava-1", "lava-2", "lava-3"])
    start_takes(game, ["sand-5"])
    bid(game, 0)
    bid(game, 5)  # sand-7 and sand-6 only after demolishing the 5; lava 3, 2, 1 in that order
    err = rejected(game, 0, {"type": "build", "cards": ["sand-7", "sand-6", "lava-3", "lava-2", "lava-1"]})
    assert err.code == "build/order"
    assert {move["demolish"] for move in game.legal_moves()} == {"sand"}
    build(game, ["sand-7", "lava-3", "sand-6", "lava-2", "lava-1"], demolish="sand")
    assert towers(game, 0) == {"sand": ["sand-7", "sand-6"], "lava": ["lava-3", "lava-2", "lava-1"]}


def test_FT_G1_a_9_between_two_equal_cards():
    game = new(4, ["sand-7", "sand-7-2", "sand-9", "moss-1", "moss-2"])
    bid(game, 5)
    sand_orders = {tuple(c for c in m["cards"] if c.startswith("sand")) for m in game.legal_moves()}
    assert sand_orders == {("sand-7", "sand-9", "sand-7-2"), ("sand-7-2", "sand-9", "sand-7")}
    build(game, ["sand-7", "sand-9", "sand-7-2", "moss-2", "moss-1"])
    assert towers(game, 0)["sand"] == ["sand-7", "sand-9", "sand-7-2"]


def test_FT_G2_only_the_start_player_may_bid_0():
    game = new(3)
    bid(game, 0)
    err = rejected(game, 1, {"type": "bid", "amount": 0})
    assert (err.code, err.rule) == ("bid/not_higher", "FT-G2")
    bid(game, 1)
    assert game.view()["high_bidder"] == 1


def test_FT_G3_each_round_reveals_min_5_and_the_emptying_round_is_followed_by_the_reshuffle():
    game = new(2, ["sand-15", "sand-14", "ice-1", "ice-2", "ice-3"])
    start_takes(game, ["sand-15", "sand-14"])
    seen = []
    while not game.is_over():
        view = game.view()
        seen.append((view["round"], len(view["display"]), view["deck_count"], view["exhaustions"]))
        r7(game)
    assert seen[14] == (16, 5, 0, 1)  # the first deck runs out in round 16 ...
    assert seen[15] == (17, 5, 73, 1)  # ... and the 78-card pile is the new deck from round 17
    assert seen[-1] == (32, 3, 0, 2)
    assert all(size == 5 for _, size, _, _ in seen[:-1])


def test_FT_G4_a_recorded_deck_reshuffles_from_its_seed_when_no_order_is_recorded():
    seed = bytes([7]) * 32
    game = new(2, seed=seed)
    for _ in range(16):
        r7(game)
    assert game.view()["display"] == Rng(seed, "reshuffle/1").shuffle(RULES.cards_in_play(2))[:5]
    other = new(2, seed=SEED)
    for _ in range(16):
        r7(other)
    assert other.view()["display"] != game.view()["display"]


def test_FT_G5_cards_of_one_suit_are_placed_in_the_order_given():
    game = new(2, ["sand-4", "sand-7", "moss-1", "moss-2", "moss-3"])
    bid(game, 2)
    pass_(game)
    err = rejected(game, 0, {"type": "build", "cards": ["sand-4", "sand-7"], "demolish": None})
    assert (err.code, err.rule, err.message) == ("build/order", "FT-B4", "7 cannot go on 4 in the sand tower")
    pairs = [m["cards"] for m in game.legal_moves() if set(m["cards"]) == {"sand-4", "sand-7"}]
    assert pairs == [["sand-7", "sand-4"]]
    build(game, ["sand-7", "sand-4"])
    assert towers(game, 0) == {"sand": ["sand-7", "sand-4"]}


# ---------------------------------------------------------------- rulings beyond the digest


def test_ruling_an_empty_discard_pile_at_the_reshuffle_ends_the_game():
    """Every round the start player takes and builds all five cards, so nothing is ever discarded: the
    reshuffle (FT-R8) makes an empty deck, which has run out again at once, and the game ends (FT-E1)."""
    seat0 = [f"sand-{v}" for v in range(15, -1, -1)] + [f"ice-{v}" for v in range(15, -1, -1)] + \
        [f"moss-{v}" for v in range(15, 7, -1)]
    seat1 = [f"moss-{v}" for v in range(7, -1, -1)] + [f"lava-{v}" for v in range(15, -1, -1)] + \
        [f"stone-{v}" for v in range(15, -1, -1)]
    chunks = []
    for i in range(0, 40, 5):
        chunks += [seat0[i:i + 5], seat1[i:i + 5]]
    game = new(2, [card for chunk in chunks for card in chunk])
    for chunk in chunks:
        assert not game.is_over()
        start_takes(game, chunk)
    view = game.view()
    assert game.is_over() and (view["exhaustions"], view["round"], view["discard"]) == (2, 16, [])
    result = check_result(game)
    assert [s["total"] for s in result["seats"]] == [32 + 32 + 8 + 16, 16 + 32 + 32 + 16]


def test_malformed_moves_have_no_rule():
    game = new(2)
    for move in ("bid", None, [], {}, {"type": "bid"}, {"type": "bid", "amount": "3"},
                 {"type": "bid", "amount": True}, {"type": "bid", "amount": 1.0}, {"type": "bid", "amount": 1, "x": 1},
                 {"type": "pass", "amount": 0}, {"type": "take"}, {"type": "build", "cards": "sand-1"},
                 {"type": "build", "cards": [1]}, {"type": "build"}, {"type": "build", "cards": [], "demolish": 3}):
        err = rejected(game, 0, move)
        assert (err.code, err.rule) == ("move/malformed", None), move
    err = rejected(game, "0", {"type": "bid", "amount": 0})
    assert err.code == "move/malformed"
    assert isinstance(err, IllegalMove) and isinstance(err, ValueError)
    err = rejected(game, 0, {"type": "build", "cards": [], "demolish": None})
    assert (err.code, err.rule) == ("move/wrong_phase", "FT-R1")
