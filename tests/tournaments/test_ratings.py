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


def test_the_fold_continued_from_its_json_is_rate_games_exactly():
    from referee.tournaments.ratings import RatingsFold

    fold = RatingsFold()
    for i, game in enumerate(GAMES * 5):
        fold = RatingsFold.from_json(fold.to_json())  # stored and read back between any two games
        fold.add({**game, "game": f"g{i}", "order": [i, "t_x", i]})
    assert fold.rows() == rate_games(GAMES * 5)
    with pytest.raises(ValueError):  # a game ordered before the last one rated: only a rebuild adds it
        fold.add({**GAMES[0], "game": "late", "order": [0, "t_x", 99]})


def test_who_counts_and_what_the_answer_says():
    from referee.tournaments.ratings import RatingsFold, basis_of, counts

    assert counts({"organiser": None}, []) and counts({"organiser": "k1"}, None)
    assert counts({"organiser": "k1"}, ["k1", "k2"])
    assert not counts({"organiser": None}, ["k1"]) and not counts({"organiser": "k3"}, ["k1"])
    assert basis_of([]) is None and basis_of(["k2", "k1", "k2"]) == ["k1", "k2"]
    unvetted, vetted = RatingsFold().answer("fivetowers"), RatingsFold(basis=["k1"]).answer("fivetowers")
    assert unvetted["vetted"] is False and unvetted["basis"].startswith("Unvetted")
    assert "anyone can create a tournament" in unvetted["basis"]
    assert vetted["vetted"] is True and "1 organiser key " in vetted["basis"]


def test_bot_games_are_kept_apart_and_the_continued_fold_is_the_rebuilt_one():
    from referee.tournaments.ratings import RatingsFold

    mixed = [*GAMES, {"players": ["a", "BOT"], "ranks": [2, 1], "bots": ["BOT"]},
             {"players": ["c", "BOT", "d"], "ranks": [1, 2, 3], "bots": ["BOT"]}, *GAMES]
    continued, rebuilt = RatingsFold(), RatingsFold()
    for i, game in enumerate(mixed):
        continued = RatingsFold.from_json(continued.to_json())
        continued.add({**game, "game": f"g{i}", "order": [i, "t_x", i]})
    for i, game in enumerate(mixed):
        rebuilt.add({**game, "game": f"g{i}", "order": [i, "t_x", i]})
    assert continued == rebuilt
    assert continued.rows() == rate_games(GAMES * 2)  # the humans' list: as if the bot games never were
    bots = {row["key"]: row for row in continued.answer("towerup", bots=True)["ratings"]}
    assert set(bots) == {"a", "c", "d", "BOT"} and bots["BOT"]["games"] == 2 and bots["BOT"]["bot"] is True
    assert "bot" not in bots["a"] and "BOT" not in {row["key"] for row in continued.rows()}
    plain = RatingsFold()
    plain.add({**GAMES[0], "game": "g", "order": [0, "t", 0]})
    assert "bots" not in plain.to_json() and "bots" not in plain.answer("towerup")  # stored and answered as before
