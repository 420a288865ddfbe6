"""Ratings: OpenSkill Plackett–Luce over finished games, in log order, reproducible."""

from __future__ import annotations

import pytest

from referee.tournaments.ratings import rate_games

GAMES = [
    {"players": ["a", "b", "c", "d"], "ranks": [1, 2, 3, 4]},
    {"players": ["b", "a", "c"], "ranks": [2, 1, 3]},
    {"players": ["c", "d"], "ranks": [1, 1]},
]


def test_ratings_rows_and_order():
    rows = rate_games(GAMES)
    assert rows[0]["key"] == "a"
    assert {r["key"]: r["games"] for r in rows} == {"a": 2, "b": 2, "c": 3, "d": 2}
    for row in rows:
        assert set(row) == {"key", "mu", "sigma", "ordinal", "games"}
        assert row["ordinal"] == pytest.approx(row["mu"] - 3 * row["sigma"])
        assert row["sigma"] < 25 / 3
    assert [r["ordinal"] for r in rows] == sorted((r["ordinal"] for r in rows), reverse=True)


def test_a_rebuild_gives_the_same_numbers_and_the_order_of_games_matters():
    assert rate_games(GAMES) == rate_games([dict(g) for g in GAMES])
    assert rate_games(GAMES) != rate_games(GAMES[::-1])


def test_a_shared_rank_is_a_draw():
    rows = {r["key"]: r for r in rate_games([{"players": ["x", "y"], "ranks": [1, 1]}])}
    assert rows["x"]["mu"] == pytest.approx(rows["y"]["mu"]) == pytest.approx(25.0)


def test_bad_games_are_refused():
    with pytest.raises(ValueError):
        rate_games([{"players": ["a", "a"], "ranks": [1, 2]}])
    with pytest.raises(ValueError):
        rate_games([{"players": ["a", "b"], "ranks": [1]}])
