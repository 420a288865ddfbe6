"""Ratings: OpenSkill's Plackett–Luce model over finished games' ranks, in log order.

A pure function: the same games in the same order give the same numbers, so a rebuild (the workers
replaying every finished game of a ruleset in log order) reproduces them exactly. Every key starts at
the model's defaults (μ = 25, σ = 25/3); each game is one ``PlackettLuce().rate`` call with one team
per seat and the seats' ranks (a shared rank is a draw between those seats). ``ordinal`` is
``μ − 3σ``, the conservative estimate leaderboards sort by.

>>> rows = rate_games([{"players": ["a", "b"], "ranks": [1, 2]}])
>>> [(r["key"], r["games"], r["mu"] > 25) for r in rows]
[('a', 1, True), ('b', 1, False)]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from openskill.models import PlackettLuce


def rate_games(games: Iterable[dict[str, Any]], changes: dict[str, list[dict[str, Any]]] | None = None
               ) -> list[dict[str, Any]]:
    """``[{"key", "mu", "sigma", "ordinal", "games"}]``, best ``ordinal`` first (key order on ties).

    ``games``: ``{"players": [key, …] (seat order), "ranks": [rank, …], "game"?: id}`` in log order; a key
    may not sit twice at one game. With ``changes``, each game with an id gets its rating change there:
    ``changes[id] = [{"key", "mu": [before, after], "ordinal": [before, after]}]`` in seat order.

    >>> changes = {}
    >>> _ = rate_games([{"game": "g1", "players": ["a", "b"], "ranks": [2, 1]}], changes)
    >>> [(c["key"], c["ordinal"][1] > c["ordinal"][0]) for c in changes["g1"]]
    [('a', False), ('b', True)]
    """
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    played: dict[str, int] = {}
    for game in games:
        players, ranks = list(game["players"]), list(game["ranks"])
        if len(players) != len(ranks) or len(set(players)) != len(players) or len(players) < 2:
            raise ValueError("a rated game has two or more distinct players and one rank each")
        teams = [[ratings.get(key) or model.rating(name=key)] for key in players]
        rated = model.rate(teams, ranks=ranks)
        if changes is not None and game.get("game") is not None:
            changes[game["game"]] = [{"key": key, "mu": [before[0].mu, after[0].mu],
                                      "ordinal": [before[0].ordinal(), after[0].ordinal()]}
                                     for key, before, after in zip(players, teams, rated, strict=True)]
        for key, team in zip(players, rated, strict=True):
            ratings[key] = team[0]
            played[key] = played.get(key, 0) + 1
    rows = [{"key": key, "mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal(), "games": played[key]}
            for key, r in ratings.items()]
    return sorted(rows, key=lambda row: (-row["ordinal"], row["key"]))
