"""Ratings: OpenSkill's Plackett–Luce model over finished games' ranks, in rating order.

A pure fold: the same games in the same order give the same numbers, so a rebuild (every result of the
tournaments that count, sorted by :func:`rated_results`' ``order``) reproduces exactly what the workers
advanced one result at a time. Every key starts at the model's defaults (μ = 25, σ = 25/3); each game is
one ``PlackettLuce().rate`` call with one team per seat and the seats' ranks (a shared rank is a draw
between those seats). ``ordinal`` is ``μ − 3σ``, the conservative estimate leaderboards sort by.

Bot games are kept apart: a game with a seat declared a bot (its rating input's ``bots``: the bot keys) is
rated in a second pool, :attr:`RatingsFold.bots`, never in ``players`` — a human's rating counts only games
against humans; the bot list (``GET /ratings/{ruleset}?bots=1``) rates every seat of the bot games. A
tournament declares its bots in ``created`` (a player's ``"bot": true``); :func:`rated_results` names the
bots seated at each table.

>>> rows = rate_games([{"players": ["a", "b"], "ranks": [1, 2]}])
>>> [(r["key"], r["games"], r["mu"] > 25) for r in rows]
[('a', 1, True), ('b', 1, False)]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

from ..timecontrol import parse_ms
from .state import TournamentState

#: the entries of a tournament's log that carry a game's result
RESULT_TYPES = ("game_finished", "adjudicated")
#: the version of :meth:`RatingsFold.to_json` (a stored projection of another version is rebuilt)
FOLD_VERSION = 1

_MODEL = PlackettLuce()


def counts(created: Mapping[str, Any] | None, organiser_keys: Sequence[str] | None) -> bool:
    """Whether a tournament's games are rated: with organiser keys configured, only a tournament whose
    creation one of them signed (``created.organiser``; the fold has checked ``organiser_sig``); without,
    every tournament."""
    if created is None:
        return False
    return not organiser_keys or created.get("organiser") in organiser_keys


def basis_of(organiser_keys: Sequence[str] | None) -> list[str] | None:
    """What a fold was computed under: the sorted organiser keys, or ``None`` (unvetted: every tournament)."""
    return sorted(set(organiser_keys)) if organiser_keys else None


def basis_sentence(basis: list[str] | None) -> str:
    """The one sentence ``GET /ratings`` says about which tournaments count."""
    if basis is None:
        return ("Unvetted: no organiser keys are configured (REFEREE_ORGANISER_KEYS), so every tournament counts, "
                "and anyone can create a tournament of keys of their own and win it.")
    many = "key" if len(basis) == 1 else "keys"
    return (f"Vetted: only tournaments whose creation was signed with one of this referee's {len(basis)} organiser "
            f"{many} (REFEREE_ORGANISER_KEYS) count.")


def _at_ms(entry: Mapping[str, Any] | None) -> int:
    try:
        return parse_ms((entry or {}).get("at"))
    except ValueError:
        return 0


def rated_results(tournament_id: str, state: TournamentState, entries: Iterable[Mapping[str, Any]],
                  start: int = 0) -> list[dict[str, Any]]:
    """The games of ``state`` whose result entry is at position ``start`` or later, as rating inputs
    ``{"order": [at (epoch ms), tournament, position], "game", "players", "ranks"}`` sorted by ``order``.

    ``state`` is the fold of the tournament's log; ``entries`` are its entries from ``start`` on (for the
    results' ``at``: the time the referee wrote the result). The rating order of every result of every
    tournament that counts is ``order``: when its result was written, then the tournament id, then the
    position in that log.
    """
    at = {entry.get("seq"): entry for entry in entries}
    bots = {p["key"] for p in (state.created or {}).get("players", ()) if p.get("bot")}
    now = {state.current_key(key) for key in bots}  # a bot the organiser moved to new keys stays a bot under each
    bots |= now | {key for key, current in state.moved.items() if current in now}
    out = []
    for rnd in state.rounds:
        for table in rnd.tables:
            result = rnd.results.get(table["game"])
            if result is None or result["seq"] < start:
                continue
            game = {"order": [_at_ms(at.get(result["seq"])), tournament_id, result["seq"]],
                    "game": table["game"], "players": list(table["players"]), "ranks": list(result["ranks"])}
            seated = [key for key in table["players"] if key in bots]
            if seated:  # a player declared a bot in created: the game goes to the bot pool
                game["bots"] = seated
            out.append(game)
    return sorted(out, key=lambda game: game["order"])


@dataclass
class RatingsFold:
    """The ratings of one ruleset as a fold over its rated games in ``order`` (:func:`rated_results`).

    ``basis``: the organiser keys it counts tournaments under (``None``: every tournament, unvetted);
    ``last``: the ``order`` of the last game rated (a game ordered before it cannot be added: rebuild);
    ``seen``: per tournament that counts, the log position its results were read to; ``rated``: per
    tournament, the games rated (in the order of each tournament's first); ``players``: per key
    ``[mu, sigma, games]``.
    """

    basis: list[str] | None = None
    last: list[Any] | None = None
    seen: dict[str, int] = field(default_factory=dict)
    rated: dict[str, int] = field(default_factory=dict)
    players: dict[str, list[Any]] = field(default_factory=dict)
    #: the bot pool: per key ``[mu, sigma, games]`` over the games with a bot seat; ``bot_keys``: the bots
    bots: dict[str, list[Any]] = field(default_factory=dict)
    bot_keys: list[str] = field(default_factory=list)

    def follows(self, game: Mapping[str, Any]) -> bool:
        """Whether ``game`` may be added now: it comes after every game rated so far."""
        return self.last is None or list(game["order"]) > list(self.last)

    def rate(self, players: Sequence[str], ranks: Sequence[int], *, bots: bool = False) -> list[dict[str, Any]]:
        """Rate one game (in the bot pool with ``bots``); its change per seat ``{"key", "mu": [before, after],
        "ordinal": [before, after]}``."""
        pool = self.bots if bots else self.players
        players, places = list(players), list[Any](ranks)
        if len(players) != len(places) or len(set(players)) != len(players) or len(players) < 2:
            raise ValueError("a rated game has two or more distinct players and one rank each")
        teams = [[_MODEL.rating(mu=pool[key][0], sigma=pool[key][1]) if key in pool
                  else _MODEL.rating()] for key in players]
        rated = _MODEL.rate(teams, ranks=places)
        change = [{"key": key, "mu": [before[0].mu, after[0].mu], "ordinal": [before[0].ordinal(), after[0].ordinal()]}
                  for key, before, after in zip(players, teams, rated, strict=True)]
        for key, team in zip(players, rated, strict=True):
            games = pool[key][2] if key in pool else 0
            pool[key] = [team[0].mu, team[0].sigma, games + 1]
        return change

    def add(self, game: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Rate a game of :func:`rated_results` that :meth:`follows`; returns its change per seat.

        :raises ValueError: a game ordered before the last one rated (the caller rebuilds), or a bad game.
        """
        if not self.follows(game):
            raise ValueError(f"game {game['game']} is ordered before the last game rated")
        bots = [key for key in game.get("bots") or () if key in game["players"]]
        change = self.rate(game["players"], game["ranks"], bots=bool(bots))
        self.bot_keys += [key for key in bots if key not in self.bot_keys]
        tournament = game["order"][1]
        self.rated[tournament] = self.rated.get(tournament, 0) + 1
        self.last = list(game["order"])
        return change

    def rows(self, bots: bool = False) -> list[dict[str, Any]]:
        """``[{"key", "mu", "sigma", "ordinal", "games"}]``, best ``ordinal`` first (key order on ties); with
        ``bots``, the bot pool's, each bot's row marked ``"bot": true``."""
        pool = self.bots if bots else self.players
        rows = [{"key": key, "mu": mu, "sigma": sigma, "ordinal": _MODEL.rating(mu=mu, sigma=sigma).ordinal(),
                 "games": games, **({"bot": True} if bots and key in self.bot_keys else {})}
                for key, (mu, sigma, games) in pool.items()]
        return sorted(rows, key=lambda row: (-row["ordinal"], row["key"]))

    def answer(self, ruleset: str, bots: bool = False) -> dict[str, Any]:
        """``GET /ratings/{ruleset}``'s body (without ``?game``); with ``bots``, the list of the bot games."""
        out = {"ruleset": ruleset, "ratings": self.rows(bots), "vetted": self.basis is not None,
               "basis": basis_sentence(self.basis), "tournaments": list(self.rated)}
        if bots:
            out["bots"] = True
        return out

    def to_json(self) -> str:
        data: dict[str, Any] = {"v": FOLD_VERSION, "basis": self.basis, "last": self.last, "seen": self.seen,
                                "rated": self.rated, "players": self.players}
        if self.bots:  # only with bot games: a fold without any is stored as before
            data.update(bots=self.bots, bot_keys=self.bot_keys)
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> RatingsFold | None:
        """The fold :meth:`to_json` wrote, or ``None`` for another version (to be rebuilt)."""
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("v") != FOLD_VERSION:
            return None
        return cls(data["basis"], data["last"], data["seen"], data["rated"], data["players"],
                   data.get("bots", {}), data.get("bot_keys", []))


def rebuild_fold(tournaments: Iterable[tuple[str, TournamentState, Sequence[Mapping[str, Any]]]],
                 organiser_keys: Sequence[str] | None) -> tuple[RatingsFold, dict[str, list[dict[str, Any]]]]:
    """The fold of a ruleset from scratch, and every rated game's change: ``tournaments`` are ``(id, fold,
    entries)`` of that ruleset's tournaments (any order); those that :func:`counts` are rated."""
    fold = RatingsFold(basis=basis_of(organiser_keys))
    games: list[dict[str, Any]] = []
    for tournament_id, state, entries in tournaments:
        if counts(state.created, organiser_keys):
            fold.seen[tournament_id] = state.seq
            games += rated_results(tournament_id, state, entries)
    changes = {}
    for game in sorted(games, key=lambda g: g["order"]):
        changes[game["game"]] = fold.add(game)
    return fold, changes


def rate_games(games: Iterable[dict[str, Any]], changes: dict[str, list[dict[str, Any]]] | None = None
               ) -> list[dict[str, Any]]:
    """``[{"key", "mu", "sigma", "ordinal", "games"}]``, best ``ordinal`` first (key order on ties).

    ``games``: ``{"players": [key, …] (seat order), "ranks": [rank, …], "game"?: id}`` in rating order; a
    key may not sit twice at one game. With ``changes``, each game with an id gets its rating change there:
    ``changes[id] = [{"key", "mu": [before, after], "ordinal": [before, after]}]`` in seat order.

    >>> changes = {}
    >>> _ = rate_games([{"game": "g1", "players": ["a", "b"], "ranks": [2, 1]}], changes)
    >>> [(c["key"], c["ordinal"][1] > c["ordinal"][0]) for c in changes["g1"]]
    [('a', False), ('b', True)]
    """
    fold = RatingsFold()
    for game in games:
        change = fold.rate(game["players"], game["ranks"])
        if changes is not None and game.get("game") is not None:
            changes[game["game"]] = change
    return fold.rows()
