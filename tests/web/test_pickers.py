"""The move pickers of the game page, in the browser, against the real engines: following every choice
the page offers reaches exactly the engine's legal moves — nothing illegal can be chosen and every legal
move can. Positions come from seeded playouts of the real rulesets; the tie-break chain renders with the
values the engine compared."""

from __future__ import annotations

import json
import random

import pytest

from referee.games import ruleset

pytestmark = pytest.mark.web

# Walks every path of choices with fresh pickers (a picker takes a forced choice by itself, so a path
# is replayed from the start); a demolition is chosen at most once per path, as a player would.
EXPLORE = """async ([module, legal, seat]) => {
  const m = await import(`./static/games/${module}.js`);
  const found = new Map();
  let nodes = 0;
  const fresh = (path) => {
    const picker = m.makePicker({ legal, seat, components: {}, onchange: () => {} });
    for (const o of path) picker.choose(o.name, o.value);
    return picker;
  };
  const walk = (path) => {
    nodes += 1;
    const picker = fresh(path);
    const move = picker.move();
    if (move) { found.set(JSON.stringify(move), move); return; }
    const options = picker.options().filter((o) => o.name !== "demolish" || !path.some((p) => p.name === "demolish"));
    if (!options.length) throw new Error(`dead end after ${JSON.stringify(path)}`);
    for (const o of options) walk([...path, o]);
  };
  walk([]);
  return { moves: [...found.values()], nodes };
}"""


def canonical(move: dict) -> str:
    move = dict(move)
    if move.get("type") == "build" and "demolish" in move and move["demolish"] is None:
        move["demolish"] = None
    return json.dumps(move, sort_keys=True)


def positions(name: str, players: int, want: set[str], count: int):
    """Up to ``count`` positions (legal moves, seat) of seeded random playouts whose legal moves include
    a move of a type in ``want`` (several per type, over several games)."""
    rules = ruleset(name)
    rng = random.Random(f"pickers-{name}")
    found = []
    for game_no in range(20):
        game = rules.new_game(players, {}, seed=bytes([game_no]) * 32)
        while not game.is_over() and len(found) < count:
            moves = game.legal_moves()
            if {m["type"] for m in moves} & want and rng.random() < 0.3:
                found.append((moves, game.to_move()))
            game.play(game.to_move(), rng.choice(moves))
        if len(found) >= count:
            break
    return found


@pytest.mark.parametrize(("module", "want"), [
    ("towerup", {"place_start", "build", "take"}),
    ("towerup", {"decline_extra"}),  # TU-X1: positions in an extra turn
    ("fivetowers", {"bid", "build"}),
])
def test_the_picker_offers_exactly_the_legal_moves(static_page, module, want):
    cases = positions(module, 2, want, 8)
    assert cases
    seen_types = set()
    for legal, seat in cases:
        result = static_page.evaluate(EXPLORE, [module, legal, seat])
        got = sorted(canonical(m) for m in result["moves"])
        assert got == sorted(canonical(m) for m in legal)
        assert result["nodes"] >= len(legal)
        seen_types |= {m["type"] for m in legal}
    assert want <= seen_types


def test_tiebreak_chain_lists_the_values_compared(static_page):
    result = {"seats": [], "winners": [1], "tiebreak": [
        {"rule": "TU-E5", "total": 21, "seats": [0, 1], "criterion": "floors in own supply",
         "values": [{"seat": 0, "value": 3}, {"seat": 1, "value": 5}], "order": [[1], [0]], "decided": True}]}
    text = static_page.evaluate("""async (result) => {
        const score = await import('./static/games/score.js');
        const seats = [{ name: 'Ann' }, { name: 'Bea' }];
        const chain = score.tiebreakChain(result, seats, 'none').textContent;
        return chain + ' | ' + score.winnersLine(result, seats).textContent;
      }""", result)
    assert "[TU-E5]" in text
    assert "Ann, Bea tied at 21 points; compared floors in own supply: Ann 3, Bea 5 → Bea > Ann (decided)" in text
    assert "Winner: Bea" in text


def test_towerup_picker_offers_the_decline_of_an_extra_turn(static_page):
    """TU-X1: in an extra turn the page offers a button that declines it, with the rule named."""
    legal = [{"type": "take", "slot": 0}, {"type": "decline_extra"}]
    out = static_page.evaluate("""async (legal) => {
        const m = await import('./static/games/towerup.js');
        const picker = m.makePicker({ legal, seat: 0, components: {}, onchange: () => {} });
        const prompt = picker.prompt();
        const buttons = [...picker.controls().querySelectorAll('button.choice')].map((b) => b.textContent.trim());
        picker.choose('decline_extra', 'decline_extra');
        return { prompt, buttons, move: picker.move(), said: m.describeMove(picker.move(), {}) };
      }""", legal)
    assert out["prompt"] == "Extra turn (TU-X1): build or take a market card, or decline the extra turn."
    assert out["buttons"] == ["Take market card 1", "Decline the extra turn (TU-X1)"]
    assert out["move"] == {"type": "decline_extra"} and out["said"] == "declines the extra turn (TU-X1)"
