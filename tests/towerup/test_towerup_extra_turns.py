"""Extra turns: TU-X1, TU-X2, TU-X3, TU-G5; the end of a track (TU-C4)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from towerup_helpers import (
    GOLDEN_GAMES,
    RULES,
    build,
    check_invariants,
    construct_building,
    construct_locomotives,
    construct_supply,
    golden_path,
    play,
    recorded_game,
    seat_view,
    take,
)

from referee.games import IllegalMove
from referee.games.data import load_json

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


# ------------------------------------------------------------------ TU-X1: the extra turn may be declined

DECLINE = {"type": "decline_extra"}


def _extra_turn_game(options=None):
    """Seat 0 has just earned an extra turn (as in the first TU-X1 test)."""
    game = recorded_game(2, TOP, starts=STARTS, options=options)
    construct_locomotives(game, 0, {"black": 3, "grey": 4, "white": 5, "brown": 2})
    play(game, take(0))
    assert game.to_move() == 0 and game.view()["extra_turn"] is True
    return game


def test_TU_X1_the_extra_turn_may_be_declined():
    game = _extra_turn_game()
    legal = game.legal_moves()
    assert legal[-1] == DECLINE and legal.count(DECLINE) == 1
    assert any(m["type"] == "take" for m in legal)  # taking the extra turn is still offered
    actions = game.view()["actions"]
    play(game, DECLINE)
    view = game.view()
    assert game.to_move() == 1 and view["extra_turn"] is False and view["actions"] == actions + 1
    assert view["seats"][0]["stars_reached"] == 1  # the star column is used up all the same (TU-G5)
    assert DECLINE not in game.legal_moves()
    check_invariants(game)


def test_TU_X1_decline_is_only_for_an_extra_turn_and_changes_nothing_otherwise():
    game = recorded_game(2, TOP, starts=STARTS)
    assert DECLINE not in game.legal_moves()
    before = game.view()
    with pytest.raises(IllegalMove) as err:
        game.play(0, DECLINE)
    assert (err.value.code, err.value.rule) == ("decline_extra/no_extra_turn", "TU-X1")
    assert game.view() == before
    with pytest.raises(IllegalMove) as err:
        _extra_turn_game().play(0, {"type": "decline_extra", "now": True})
    assert err.value.code == "move/malformed"


def test_TU_X1_option_mandatory_makes_the_extra_turn_compulsory():
    game = _extra_turn_game({"extra_turn": "mandatory"})
    assert game.view()["options"]["extra_turn"] == "mandatory"
    legal = game.legal_moves()
    assert legal and DECLINE not in legal and {m["type"] for m in legal} <= {"take", "build"}
    before = game.view()
    with pytest.raises(IllegalMove) as err:
        game.play(0, DECLINE)
    assert (err.value.code, err.value.rule) == ("decline_extra/mandatory", "TU-X1")
    assert game.view() == before
    play(game, take(2))
    assert game.to_move() == 1


def test_TU_X1_option_values_and_default():
    assert RULES.options_schema()["properties"]["extra_turn"]["enum"] == ["optional", "mandatory"]
    assert RULES.options_schema()["properties"]["extra_turn"]["default"] == "optional"
    # a game whose options omit it (every game created before the option existed) may decline, and its
    # view's options stay as they were
    game = _extra_turn_game()
    assert "extra_turn" not in game.view()["options"] and DECLINE in game.legal_moves()
    explicit = _extra_turn_game({"extra_turn": "optional"})
    assert explicit.view()["options"]["extra_turn"] == "optional" and DECLINE in explicit.legal_moves()
    for bad in ("forced", True, None, 1):
        with pytest.raises(ValueError, match="extra_turn must be one of optional, mandatory"):
            RULES.new_game(2, {"extra_turn": bad}, seed=bytes(32))


def test_TU_X1_golden_games_recorded_before_the_option_replay_alike_under_both_modes():
    """The golden games were recorded when extra turns were forced: every extra turn in them is a take or a
    build, which stays legal whether extra turns are optional (the default) or mandatory, so old logs
    replay to the same result either way."""
    extra_turns = 0
    for players in sorted(GOLDEN_GAMES):
        golden = load_json(golden_path(players))
        assert "extra_turn" not in golden["options"]
        results = []
        for mode in (None, "optional", "mandatory"):
            options = dict(golden["options"]) if mode is None else {**golden["options"], "extra_turn": mode}
            game = RULES.new_game(players, options=options, seed=bytes.fromhex(golden["seed"]))
            for step in golden["moves"]:
                if game.view()["extra_turn"]:
                    extra_turns += 1
                    assert step["move"]["type"] in ("take", "build")
                    assert (DECLINE in game.legal_moves()) == (mode != "mandatory")
                game.play(step["seat"], step["move"])
            assert game.is_over()
            results.append(game.result())
        assert results[0] == results[1] == results[2] == golden["expected"]["result"]
    assert extra_turns > 0  # the golden games do contain extra turns


def test_TU_X1_the_rules_page_rules_on_every_may_of_the_german_rulebook():
    """docs/rules-towerup.md has a row for every line of the German rulebook that says darf/darfst/dürfen,
    kann/kannst/können or beliebig, and the extra turn's row says it may be declined."""
    repo = Path(__file__).resolve().parents[2]
    rulebook = repo.parent / "shared" / "seeds" / "towerup-rulebook-de.txt"
    if not rulebook.exists():
        pytest.skip(f"the rulebook is not at {rulebook}")
    may = re.compile(r"\b(darf|darfst|dürfen|kann|kannst|können|beliebig\w*)\b", re.IGNORECASE)
    lines = [n for n, line in enumerate(rulebook.read_text(encoding="utf-8").splitlines(), start=1) if may.search(line)]
    doc = (repo / "docs" / "rules-towerup.md").read_text(encoding="utf-8")
    table = doc[doc.index("## Every *may* of the German rulebook"):doc.index("## Error codes")]
    rows = {int(m) for m in re.findall(r"^\| (\d+) \|", table, flags=re.M)}
    assert rows == set(lines)
    extra = next(line for line in table.splitlines() if line.startswith("| 339 |"))
    assert "decline_extra" in extra and "TU-X1" in extra and "mandatory" in extra
