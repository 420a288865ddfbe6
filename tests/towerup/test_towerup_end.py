"""End of the game: TU-E1 to TU-E5, TU-G6, TU-G7. Positions come from seeded playouts (real play)."""

from __future__ import annotations

import pytest
from towerup_helpers import (
    COLORS,
    RULES,
    check_invariants,
    check_result,
    construct_box,
    construct_building,
    construct_locomotives,
    construct_supply,
    expect_illegal,
    play,
    playout,
    seeded_game,
)

from referee.games import IllegalMove
from referee.games.randomness import Rng


def seed(n: int) -> bytes:
    return n.to_bytes(32, "big")


def last_roof_build(game):
    """A legal build that places the last roof of the seat to move, or None."""
    if game.view()["end"]["trigger"] is not None or game.view()["phase"] != "play":
        return None
    if game.view()["seats"][game.to_move()]["roofs_left"] != 1:
        return None
    return next((m for m in game.legal_moves() if m["type"] == "build"), None)


def shortage_take(game):
    """A legal take of a card showing a colour the box cannot supply (TU-T2), or None."""
    if game.view()["end"]["trigger"] is not None or game.view()["phase"] != "play":
        return None
    box = game.view()["box"]
    for move in game.legal_moves():
        if move["type"] != "take":
            continue
        card = RULES.data.cards[RULES.data.card_index[game.view()["market"][move["slot"]]]]
        if any(card.fixed[c] > box[COLORS[c]] for c in range(4)):
            return move
    return None


def position_before(players, finder, take_bias=0, first_seed=1):
    """The first seeded playout position where ``finder`` returns a move; returns (game, move, seed)."""
    for n in range(first_seed, first_seed + 200):
        game = seeded_game(players, seed(n), {"start_floors": "random"})
        playout(game, seed(n), take_bias=take_bias, until=lambda g: finder(g) is not None)
        if not game.is_over():
            return game, finder(game), seed(n)
    raise AssertionError("no such position in 200 playouts")


def play_turns(game, rng_seed, take_bias=0):
    """Play to the end; returns [(seat, cone after the turn, visible roofs after the turn)] per turn."""
    rng = Rng(rng_seed, "end-test")
    turns = []
    while not game.is_over():
        seat = game.to_move()
        moves = game.legal_moves()
        takes = [m for m in moves if m["type"] == "take"]
        move = rng.choice(takes if takes and rng.below(100) < take_bias else moves)
        assert game.view()["seats"][seat]["cone"] is None  # nobody plays after counting
        game.play(seat, move)
        check_invariants(game)
        view = game.view()
        if not view["extra_turn"] or view["is_over"]:
            turns.append((seat, view["seats"][seat]["cone"], game.visible_roofs(seat)))
    return turns


def test_TU_E1_last_roof_then_one_last_turn_for_every_other_player():
    game, move, s = position_before(3, last_roof_build)
    trigger = game.to_move()
    game.play(trigger, move)
    while game.view()["extra_turn"]:
        game.play(trigger, game.legal_moves()[0])
    view = game.view()
    assert view["end"]["trigger"] == {"kind": "last_roof", "seat": trigger, "rule": "TU-E1"}
    # the trigger player counts right after the turn
    assert view["seats"][trigger]["cone"] == {"visible_roofs": game.visible_roofs(trigger),
                                              "position": min(game.visible_roofs(trigger), 7)}
    assert game.to_move() == (trigger + 1) % 3
    assert view["end"]["last_turns_to_come"] == [(trigger + 2) % 3]
    turns = play_turns(game, s)
    assert [t[0] for t in turns] == [(trigger + 1) % 3, (trigger + 2) % 3]
    for _seat, cone, visible in turns:
        assert cone == {"visible_roofs": visible, "position": min(visible, 7)}  # counted right after the turn
    check_result(game)


def test_TU_E2_scarcity_then_one_more_turn_for_everyone_including_the_trigger():
    game, move, s = position_before(4, shortage_take, take_bias=90)
    trigger = game.to_move()
    game.play(trigger, move)
    while game.view()["extra_turn"]:
        game.play(trigger, game.legal_moves()[0])
    view = game.view()
    assert view["end"]["trigger"] == {"kind": "scarcity", "seat": trigger, "rule": "TU-E2"}
    assert view["seats"][trigger]["cone"] is None  # the trigger player's last turn is still to come
    turns = play_turns(game, s, take_bias=50)
    assert [t[0] for t in turns] == [(trigger + k) % 4 for k in (1, 2, 3, 4)]
    for _seat, cone, visible in turns:
        assert cone == {"visible_roofs": visible, "position": min(visible, 7)}
    check_result(game)


def test_TU_E1_cone_is_capped_at_seven():
    from towerup_helpers import build, recorded_game

    game = recorded_game(2, ("c01", "c02", "c05"), starts=[("A1", "black"), ("E6", "brown"), ("C5", "white")])
    # nine visible roofs of seat 0, one per building (constructed, roofs from seat 0's hand)
    for site, color in (("A3", "grey"), ("A5", "grey"), ("B2", "grey"), ("B4", "white"), ("C1", "white"),
                        ("C3", "grey"), ("D1", "black"), ("D4", "grey"), ("E3", "white")):
        construct_building(game, site, color, 1, roofs=[(1, 0)])
    assert game.view()["seats"][0]["roofs_left"] == 1
    play(game, build("A2", "brown", "A2"))  # the last roof; paying A5 covers one: 9 visible roofs
    cone = game.view()["seats"][0]["cone"]
    assert cone == {"visible_roofs": 9, "position": 7}
    while not game.is_over():
        play(game, game.legal_moves()[0])
    assert check_result(game)["seats"][0]["cone"] == {
        "visible_roofs": 9, "position": 7, "points": RULES.data.track_values[7]}


def test_TU_E3_last_turn_must_take_even_a_useless_card():
    game, move, _s = position_before(2, last_roof_build)
    trigger = game.to_move()
    game.play(trigger, move)
    while game.view()["extra_turn"]:
        game.play(trigger, game.legal_moves()[0])
    other = game.to_move()
    construct_supply(game, other, {})  # nothing to build with
    moves = game.legal_moves()
    assert moves and all(m["type"] == "take" for m in moves)
    expect_illegal(game, {"type": "pass"}, "pass/not_allowed", "TU-G8")
    play(game, moves[0])
    assert game.is_over() or game.view()["extra_turn"]


def test_TU_E4_score_is_columns_of_locomotives_and_cone_plus_chips():
    game = seeded_game(3, seed(7))
    playout(game, seed(7))
    result = check_result(game)
    values = RULES.data.track_values
    view = game.view()
    for s in result["seats"]:
        seat = view["seats"][s["seat"]]
        expected = sum(values[pos] for pos in seat["locomotives"].values())
        expected += values[seat["cone"]["position"]] + sum(c["value"] for c in seat["chips"])
        assert s["total"] == expected
        assert s["supply_floors"] == seat["supply_total"]


def finished(players, n):
    game = seeded_game(players, seed(n))
    playout(game, seed(n))
    return check_result(game)


# seeds found by searching seeded playouts (default options, policy: uniform over legal moves)
def test_TU_E5_tie_on_total_decided_by_floors_in_own_supply():
    result = finished(2, 28)
    a, b = result["seats"]
    assert a["total"] == b["total"] and b["supply_floors"] > a["supply_floors"]
    assert result["winners"] == [1]
    assert (a["rank"], b["rank"]) == (2, 1)
    assert result["tiebreak"] == [{
        "rule": "TU-E5", "total": a["total"], "seats": [0, 1], "criterion": "floors in own supply",
        "values": [{"seat": 0, "value": a["supply_floors"]}, {"seat": 1, "value": b["supply_floors"]}],
        "order": [[1], [0]], "decided": True}]


def test_TU_E5_still_tied_means_a_shared_victory():
    result = finished(2, 435)
    a, b = result["seats"]
    assert (a["total"], a["supply_floors"]) == (b["total"], b["supply_floors"])
    assert result["winners"] == [0, 1] and a["rank"] == b["rank"] == 1
    assert [t["criterion"] for t in result["tiebreak"]] == ["floors in own supply", "shared victory"]
    assert result["tiebreak"][0]["decided"] is False


def test_TU_E5_seats_still_tied_share_their_rank():
    result = finished(3, 231)
    ranks = [s["rank"] for s in result["seats"]]
    assert result["winners"] == [0]
    assert ranks == [1, 2, 2]  # competition ranking: 1, 2, 2
    assert result["tiebreak"][0]["seats"] == [1, 2] and result["tiebreak"][0]["decided"] is False
    assert len(result["tiebreak"]) == 1  # no shared victory: the tie is not for first place


def test_TU_G6_only_the_first_trigger_counts():
    game, move, _s = position_before(3, last_roof_build)
    trigger = game.to_move()
    game.play(trigger, move)
    while game.view()["extra_turn"]:
        game.play(trigger, game.legal_moves()[0])
    queue = game.view()["end"]["last_turns_to_come"]
    # the next player now takes a card the box cannot supply: no second trigger
    for color in COLORS:
        site = next(x for x in game.cfg.side.site_ids if _fits(game, x, color))
        construct_box(game, color, 0, dump_site=site)
    take = next((m for m in game.legal_moves() if m["type"] == "take"
                 and any(RULES.data.cards[game.market[m["slot"]]].fixed)), None)
    if take is None:
        pytest.skip("no coloured card in the market")
    play(game, take)
    view = game.view()
    assert view["end"]["trigger"]["kind"] == "last_roof"
    assert view["end"]["last_turns_to_come"] in (queue, queue[1:])


def test_TU_G6_a_last_roof_during_the_scarcity_round_changes_nothing():
    game, move, _s = position_before(4, shortage_take, take_bias=90)
    trigger = game.to_move()
    game.play(trigger, move)
    while game.view()["extra_turn"]:
        game.play(trigger, game.legal_moves()[0])
    seat = game.to_move()
    queue = game.view()["end"]["last_turns_to_come"]
    construct_supply(game, seat, {c: 2 for c in COLORS if game.box[COLORS.index(c)] >= 2})
    builds = [m for m in game.legal_moves() if m["type"] == "build"]
    if not builds:
        pytest.skip("no build possible in this position")
    build = builds[0]
    # use up all but one of the seat's roofs on fresh buildings (constructed)
    side = game.cfg.side
    near = {build["site"], *(side.site_ids[t] for t in side.adjacency[side.site_index[build["site"]]])}
    for site in side.site_ids:
        if game.roofs_left[seat] == 1:
            break
        if site in near:
            continue
        color = next((c for c in COLORS if _fits(game, site, c) and game.box[COLORS.index(c)] > 0), None)
        if color:
            construct_building(game, site, color, 1, roofs=[(1, seat)])
    if game.roofs_left[seat] != 1 or build not in game.legal_moves():
        pytest.skip("could not set up a last roof")
    play(game, build)
    view = game.view()
    assert view["seats"][seat]["roofs_left"] == 0
    assert view["end"]["trigger"] == {"kind": "scarcity", "seat": trigger, "rule": "TU-E2"}
    if not view["extra_turn"]:
        assert view["end"]["last_turns_to_come"] == queue[1:]


def _fits(game, site, color):
    i = game.cfg.side.site_index[site]
    c = COLORS.index(color)
    return game.color[i] < 0 and all(game.color[t] != c for t in game.cfg.side.adjacency[i])


def test_TU_G7_the_trigger_players_extra_turn_comes_before_the_last_round():
    game, move, _s = position_before(3, last_roof_build)
    trigger = game.to_move()
    roof = game.cfg.side.site_index[move["roof"]]
    color = move["color"] if move["roof"] == move["site"] else COLORS[game.color[roof]]
    construct_locomotives(game, trigger, {c: (5 if c == color else 6) for c in COLORS})
    game.play(trigger, move)
    view = game.view()
    assert view["end"]["trigger"]["kind"] == "last_roof"
    assert game.to_move() == trigger and view["extra_turn"] is True
    assert view["seats"][trigger]["cone"] is None  # counted after the whole turn
    extra = game.legal_moves()
    assert extra[-1] == {"type": "decline_extra"}  # TU-X1: the extra turn may be declined
    extra = extra[:-1]
    assert extra and all(m["type"] == "take" for m in extra)  # no roof left: TU-G4
    play(game, extra[0])
    if game.view()["extra_turn"]:
        play(game, game.legal_moves()[0])
    assert game.view()["seats"][trigger]["cone"] is not None
    assert game.to_move() == (trigger + 1) % 3


def test_TU_X1_and_TU_G7_declining_the_trigger_players_extra_turn_ends_the_turn_and_counts_the_cone():
    game, move, _s = position_before(3, last_roof_build)
    trigger = game.to_move()
    roof = game.cfg.side.site_index[move["roof"]]
    color = move["color"] if move["roof"] == move["site"] else COLORS[game.color[roof]]
    construct_locomotives(game, trigger, {c: (5 if c == color else 6) for c in COLORS})
    game.play(trigger, move)
    assert game.to_move() == trigger and game.view()["extra_turn"] is True
    assert game.view()["seats"][trigger]["cone"] is None
    game.play(trigger, {"type": "decline_extra"})
    view = game.view()
    assert view["seats"][trigger]["cone"] is not None  # TU-E1: counted right after the (declined) turn
    assert view["extra_turn"] is False and view["end"]["last_round"] is True
    assert game.to_move() == (trigger + 1) % 3


def test_TU_G7_a_last_turn_includes_its_extra_turn():
    game, move, _s = position_before(3, last_roof_build)
    trigger = game.to_move()
    game.play(trigger, move)
    while game.view()["extra_turn"]:
        game.play(trigger, game.legal_moves()[0])
    seat = game.to_move()
    builds = [m for m in game.legal_moves() if m["type"] == "build"]
    if not builds:
        construct_supply(game, seat, {c: 2 for c in COLORS})
        builds = [m for m in game.legal_moves() if m["type"] == "build"]
    last = builds[0]
    roof = game.cfg.side.site_index[last["roof"]]
    color = last["color"] if last["roof"] == last["site"] else COLORS[game.color[roof]]
    construct_locomotives(game, seat, {c: (5 if c == color else 6) for c in COLORS})
    play(game, last)
    assert game.to_move() == seat and game.view()["extra_turn"] is True
    assert game.view()["seats"][seat]["cone"] is None
    play(game, game.legal_moves()[0])
    while game.view()["extra_turn"]:
        play(game, game.legal_moves()[0])
    assert game.view()["seats"][seat]["cone"] is not None


def test_result_before_the_end_is_refused():
    game = seeded_game(2, seed(1))
    with pytest.raises(IllegalMove) as info:
        game.result()
    assert info.value.code == "game/not_over"
