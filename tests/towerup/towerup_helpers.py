"""Helpers for the Tower Up tests: recorded games, seeded playouts, invariant checks, and (clearly named)
constructors for positions that real play reaches only after many moves.

Run as a script to (re)write the golden games::

    python tests/towerup/towerup_helpers.py write-golden
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from json_values import assert_plain_json

from referee.games import IllegalMove, ruleset
from referee.games.randomness import Rng
from referee.games.towerup.data import COLOR_INDEX, COLORS, FLOORS_PER_COLOR, ROOFS_PER_PLAYER, SUPPLY_LIMIT
from referee.games.towerup.game import TowerUpGame

RULES = ruleset("towerup")
CARD_IDS = [card.id for card in RULES.data.cards]
#: the board sides' components, read once: ``components()`` is a deep copy (about 1 ms), and the invariants are
#: checked after every move of every playout
BOARD_SIDES = RULES.components()["board_sides"]
# the rulebook's worked example on the 2-player side: market bottoms white, brown, black
EXAMPLE_TOP = ("c05", "c02", "c01")
EXAMPLE_STARTS = [("B2", "white"), ("B6", "brown"), ("A1", "black")]
GOLDEN_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "golden"
GOLDEN_GAMES = {  # players -> (seed hex, options, policy take bias in percent)
    2: ("746f77657275702d676f6c64656e2d32702d3030303030303030303030303031", {"objectives": [1, 5, 9]}, 30),
    3: ("746f77657275702d676f6c64656e2d33702d3030303030303030303030303032",
        {"objectives": [2, 4, 6], "extra_start_floors": 2}, 60),
    4: ("746f77657275702d676f6c64656e2d34702d3030303030303030303030303033",
        {"objectives": [3, 7, 10], "start_floors": "random"}, 85),
}


def deck(*top: str) -> list[str]:
    """A full recorded deck: the given cards on top, in order, then every other card in data order."""
    return list(top) + [c for c in CARD_IDS if c not in top]


def recorded_game(players: int, top: tuple[str, ...] | list[str] = (), starts: list[tuple[str, str]] | None = None,
                  options: dict[str, Any] | None = None, seed: bytes | None = None) -> TowerUpGame:
    """A recorded-deck game; with ``starts`` [(site, colour), ...] the last seat places them (TU-G3)."""
    game = RULES.new_game(players, options=options, deck=deck(*top), seed=seed)
    if starts is not None:
        game.play(players - 1, {"type": "place_start",
                                "placements": [{"site": s, "color": c} for s, c in starts]})
    return game


def play(game: TowerUpGame, move: dict[str, Any]) -> TowerUpGame:
    """Play ``move`` for the seat to move (raises IllegalMove when illegal)."""
    game.play(game.to_move(), move)  # type: ignore[arg-type]
    return game


def build(site: str, color: str, roof: str) -> dict[str, Any]:
    return {"type": "build", "site": site, "color": color, "roof": roof}


def take(slot: int, choose: list[str] | None = None, discard: dict[str, int] | None = None) -> dict[str, Any]:
    move: dict[str, Any] = {"type": "take", "slot": slot}
    if choose is not None:
        move["choose"] = choose
    if discard is not None:
        move["discard"] = discard
    return move


def snapshot(game: TowerUpGame) -> str:
    return json.dumps(game.view(), sort_keys=True)


TO_MOVE: Any = object()


def expect_illegal(game: TowerUpGame, move: Any, code: str, rule: str | None = "*", seat: Any = TO_MOVE) -> IllegalMove:
    """Assert ``move`` by ``seat`` (default: the seat to move) raises IllegalMove with ``code`` (and ``rule``)
    and leaves the game unchanged."""
    before = snapshot(game)
    try:
        game.play(game.to_move() if seat is TO_MOVE else seat, move)
    except IllegalMove as exc:
        assert exc.code == code, (exc.code, exc.message)
        if rule != "*":
            assert exc.rule == rule, (exc.rule, exc.message)
        assert snapshot(game) == before
        return exc
    raise AssertionError(f"{move} was accepted; expected {code}")


def seat_view(game: TowerUpGame, seat: int) -> dict[str, Any]:
    return game.view()["seats"][seat]


# ---------------------------------------------------------------- seeded playouts


def policy_choice(game: TowerUpGame, rng: Rng, take_bias: int = 0) -> dict[str, Any]:
    """A move drawn from the game's legal moves; ``take_bias`` percent of the time a take if there is one."""
    moves = game.legal_moves()
    if take_bias:
        takes = [m for m in moves if m["type"] == "take"]
        if takes and rng.below(100) < take_bias:
            moves = takes
    return rng.choice(moves)


def playout(game: TowerUpGame, seed: bytes, *, take_bias: int = 0, max_moves: int = 5000,
            until: Callable[[TowerUpGame], bool] | None = None,
            check: Callable[[TowerUpGame], None] | None = None) -> list[dict[str, Any]]:
    """Play seeded random moves until the game ends (or ``until`` holds); returns the [{seat, move}] played."""
    rng = Rng(seed, "test-policy")
    played: list[dict[str, Any]] = []
    while not game.is_over() and not (until and until(game)):
        if len(played) >= max_moves:
            raise AssertionError(f"no end after {max_moves} moves")
        move = policy_choice(game, rng, take_bias)
        seat = game.to_move()
        game.play(seat, move)  # type: ignore[arg-type]
        played.append({"seat": seat, "move": move})
        if check:
            check(game)
    return played


def seeded_game(players: int, seed: bytes, options: dict[str, Any] | None = None) -> TowerUpGame:
    return RULES.new_game(players, options=options, seed=seed)


# ---------------------------------------------------------------- invariants


def check_invariants(game: TowerUpGame) -> None:
    """The playout invariants of the issue, read from the public view."""
    view = game.view()
    assert_plain_json(view)
    comps = BOARD_SIDES[view["board_side"]]
    floors = dict(view["box"])
    for seat in view["seats"]:
        assert seat["supply_total"] <= SUPPLY_LIMIT, seat  # TU-T3 at every turn's end (discard is part of take)
        for color, n in seat["supply"].items():
            assert n >= 0
            floors[color] += n
    roofs = [0] * view["players"]
    for site, building in view["buildings"].items():
        items = building["stack"]
        colors_in = {x for x in items if isinstance(x, str)}
        assert colors_in == {building["color"]}, (site, items)  # every building is one colour
        assert sum(1 for x in items if isinstance(x, str)) == building["height"]
        floors[building["color"]] += building["height"]
        for roof in building["roofs"]:
            roofs[roof["owner"]] += 1
    assert floors == {c: FLOORS_PER_COLOR for c in COLORS}, floors  # TU-C2
    for seat in view["seats"]:
        assert seat["roofs_left"] + roofs[seat["seat"]] == ROOFS_PER_PLAYER  # TU-C3
    for a, b in comps["roads"]:
        if a in view["buildings"] and b in view["buildings"]:
            assert view["buildings"][a]["color"] != view["buildings"][b]["color"], (a, b)


def check_result(game: TowerUpGame) -> dict[str, Any]:
    """Totals are the sum of their parts; ranks follow totals, then floors in supply (TU-E4, TU-E5)."""
    result = game.result()
    assert_plain_json(result)
    values = RULES.data.track_values
    seats = result["seats"]
    for s in seats:
        parts = sum(x["points"] for x in s["locomotives"]) + s["cone"]["points"] + sum(c["value"] for c in s["chips"])
        assert s["total"] == parts
        for loco in s["locomotives"]:
            assert loco["points"] == values[loco["position"]]
        assert s["cone"]["position"] == min(s["cone"]["visible_roofs"], RULES.data.cone_max)
        assert s["cone"]["points"] == values[s["cone"]["position"]]
    for a in seats:
        better = sum(1 for b in seats if (b["total"], b["supply_floors"]) > (a["total"], a["supply_floors"]))
        assert a["rank"] == better + 1
    best = max((s["total"], s["supply_floors"]) for s in seats)
    assert result["winners"] == [s["seat"] for s in seats if (s["total"], s["supply_floors"]) == best]
    return result


# ---------------------------------------------------------------- constructed positions (test-only)
# These reach into the game's state to set up a position that real play would need dozens of moves for.
# They keep the counts of TU-C2 (floors come from / go to the box) and TU-C3 (roofs come from the hand),
# so check_invariants still holds afterwards. Never assert on what they just set; assert on what the next
# real move does.


def construct_building(game: TowerUpGame, site: str, color: str, height: int,
                       roofs: list[tuple[int, int]] = ()) -> None:  # type: ignore[assignment]
    """Put a ``height``-floor ``color`` building at empty ``site`` (floors from the box), with roofs
    (level, owner) taken from the owners' hands; the owners' presence follows."""
    side = game.cfg.side
    i = side.site_index[site]
    c = COLOR_INDEX[color]
    assert game.color[i] < 0 and game.box[c] >= height
    game.color[i] = c
    game.height[i] = height
    game.box[c] -= height
    stack = tuple(sorted(roofs))
    game.roofs[i] = stack
    for level, owner in stack:
        assert 1 <= level <= height and game.roofs_left[owner] > 0
        game.roofs_left[owner] -= 1
        game.presence[owner] += ((i, level),)


def construct_supply(game: TowerUpGame, seat: int, supply: dict[str, int]) -> None:
    """Set ``seat``'s supply exactly, exchanging floors with the box."""
    for color in COLORS:
        c = COLOR_INDEX[color]
        want = supply.get(color, 0)
        have = game.supply[4 * seat + c]
        assert game.box[c] >= want - have
        game.box[c] -= want - have
        game.supply[4 * seat + c] = want


def construct_box(game: TowerUpGame, color: str, left: int, dump_site: str) -> None:
    """Leave only ``left`` ``color`` floors in the box by piling the rest on a new building at ``dump_site``."""
    c = COLOR_INDEX[color]
    construct_building(game, dump_site, color, game.box[c] - left)


def construct_locomotives(game: TowerUpGame, seat: int, positions: dict[str, int]) -> None:
    """Put ``seat``'s locomotives on the given columns; star columns already passed by all four count as used."""
    for color, pos in positions.items():
        game.loco[4 * seat + COLOR_INDEX[color]] = pos
    game.star_mark[seat] = game.cfg.star_count_at[min(game.loco[4 * seat:4 * seat + 4])]


def construct_market(game: TowerUpGame, cards: list[str | None], deck_top_first: list[str] | None = None,
                     discard: list[str] | None = None) -> None:
    """Replace market, deck and discards (cards left out are simply out of the game for the test)."""
    index = RULES.data.card_index
    game.market = [-1 if c is None else index[c] for c in cards]
    if deck_top_first is not None:
        game.deck = [index[c] for c in reversed(deck_top_first)]
    if discard is not None:
        game.discard = [index[c] for c in discard]


# ---------------------------------------------------------------- golden games


def golden_path(players: int) -> Path:
    return GOLDEN_DIR / f"towerup-{players}p.json"


def make_golden(players: int) -> dict[str, Any]:
    """A complete seeded game from a deterministic policy, with its expected result."""
    seed_hex, options, take_bias = GOLDEN_GAMES[players]
    seed = bytes.fromhex(seed_hex)
    game = seeded_game(players, seed, options)
    moves = playout(game, seed, take_bias=take_bias)
    view = game.view()
    return {
        "ruleset": "towerup",
        "note": "Generated by tests/towerup/towerup_helpers.py (seeded random policy) from the stand-in data; "
                "replayed by tests/towerup/test_towerup_golden.py.",
        "players": players,
        "seed": seed_hex,
        "options": options,
        "moves": moves,
        "expected": {
            "actions": view["actions"],
            "end": view["end"]["trigger"],
            "reshuffles": view["reshuffles"],
            "result": game.result(),
        },
    }


def write_golden() -> None:
    for players in GOLDEN_GAMES:
        golden_path(players).write_text(json.dumps(make_golden(players), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["write-golden"]:
        write_golden()
    else:
        print(__doc__)
