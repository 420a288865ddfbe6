"""The tournament page's own arithmetic (``static/pages/tournament-model.js``) agrees with the referee's: the points
a seat earns for its rank (a shared rank takes the mean of the places shared, exact, ``"p/q"`` when not
whole) equal ``referee.tournaments.points.seat_points``; the crosstable marks and a player's path."""

from __future__ import annotations

import pytest

from referee.tournaments.points import seat_points, to_json

pytestmark = pytest.mark.web

CASES = [  # (points of the table size, ranks in seat order)
    ([12, 0], [1, 2]), ([12, 0], [1, 1]), ([12, 6, 0], [2, 2, 1]), ([12, 8, 4, 0], [1, 1, 3, 4]),
    ([12, 8, 4, 0], [2, 1, 2, 2]), ([12, 9, 6, 3, 0], [1, 1, 1, 4, 4]), ([7, 3, 1], [1, 1, 1]),
    ([10, -5, 2], [3, 1, 1]),
]


def test_game_points_match_the_referee(static_page):
    got = static_page.evaluate(
        """async (cases) => {
             const { gamePoints } = await import('./static/pages/tournament-model.js');
             return cases.map(([points, ranks]) =>
               ranks.map((_, seat) => gamePoints({ [ranks.length]: points }, ranks, seat)));
           }""", CASES)
    want = [[str(to_json(p)) for p in seat_points(ranks, points)] for points, ranks in CASES]
    assert got == want
    assert got[1] == ["6", "6"] and got[6] == ["11/3", "11/3", "11/3"]


def test_crosstable_and_path(static_page):
    state = {"bye_points": 6, "points": {"2": [12, 0]}, "rounds": [
        {"round": 1, "tables": [{"game": "g1", "players": ["a", "b"], "result": {"ranks": [2, 1]}}], "byes": ["c"]},
        {"round": 2, "tables": [{"game": "g2", "players": ["c", "a"], "result": None}], "byes": ["b"]},
    ]}
    got = static_page.evaluate(
        """async (state) => {
             const m = await import('./static/pages/tournament-model.js');
             return { cross: m.crosstable(state), path: m.playerPath(state, 'a'), bye: m.playerPath(state, 'c') };
           }""", state)
    assert got["cross"]["a"]["b"] == [{"round": 1, "game": "g1", "mark": "−"}]
    assert got["cross"]["b"]["a"] == [{"round": 1, "game": "g1", "mark": "+"}]
    assert got["cross"]["c"]["a"] == [{"round": 2, "game": "g2", "mark": "…"}]
    assert "c" not in got["cross"]["b"]
    assert [(s["round"], s.get("game"), s["points"]) for s in got["path"]] == [(1, "g1", "0"), (2, "g2", None)]
    assert got["bye"][0] == {"round": 1, "bye": True, "points": "6"}
