"""The ratings of each ruleset as a stored projection (:class:`RatedTournaments`, part of
:class:`~referee.tournaments.service.TournamentService`): a :class:`~referee.tournaments.ratings.RatingsFold`
that every :meth:`~.advance.RefereeEntries.advance` brings up to date with its tournament's new results
(the replay worker's hook after a finished game, the deadline scheduler, an organiser's decision), stored
on the work Redis (``ratings:{<ruleset>}``, compare-and-set by generation) and rebuilt from the logs by
``referee rebuild --ratings`` — or by the first read or advance that finds it missing, of another
version, or computed under other organiser keys (``REFEREE_ORGANISER_KEYS`` changed since)."""

from __future__ import annotations

import json
from typing import Any

from ...errors import ServiceError
from ...games import names as ruleset_names
from ...games import ruleset
from ...store import GameNotFound
from ...store.ratings import RatingsStore, ratings_of
from ..ratings import RatingsFold, basis_of, counts, rated_results, rebuild_fold
from .base import TournamentLogs, log


def _dump(change: list[dict[str, Any]]) -> str:
    return json.dumps(change, separators=(",", ":"))


class RatedTournaments(TournamentLogs):
    """Keeps each ruleset's :class:`RatingsFold`: advanced by :meth:`rate_tournament`, rebuilt by
    :meth:`rebuild_ratings`, read by :meth:`ratings`."""

    _ratings_store: RatingsStore | None = None

    @property
    def _rating_folds(self) -> RatingsStore:
        if self._ratings_store is None:
            self._ratings_store = ratings_of(self.store)
        return self._ratings_store

    def _load_fold(self, name: str) -> tuple[int, RatingsFold | None]:
        gen, state = self._rating_folds.load(name)
        fold = RatingsFold.from_json(state) if state is not None else None
        if fold is not None and fold.basis != basis_of(self.organiser_keys):
            fold = None  # computed under other organiser keys: it is rebuilt
        return gen, fold

    # -- rebuild -------------------------------------------------------------------------------------------
    def _fold_from_logs(self, name: str) -> tuple[RatingsFold, dict[str, list[dict[str, Any]]]]:
        """The ruleset's fold from every tournament's log (one fold of each)."""
        tournaments = []
        for tournament_id in self.store.list_tournaments():
            try:
                replayer = self.fold(tournament_id)
                if ((replayer.created or {}).get("ruleset") or {}).get("name") != name or \
                        not counts(replayer.created, self.organiser_keys):
                    continue
                entries = self.store.read_tournament(tournament_id)[0][:replayer.seq]
            except (ServiceError, GameNotFound):
                continue
            tournaments.append((tournament_id, replayer, entries))
        return rebuild_fold(tournaments, self.organiser_keys)

    def _rebuild(self, name: str) -> tuple[RatingsFold, dict[str, list[dict[str, Any]]]]:
        for _attempt in range(16):
            gen, _state = self._rating_folds.load(name)
            fold, changes = self._fold_from_logs(name)
            if self._rating_folds.save(name, gen, fold.to_json(), {g: _dump(c) for g, c in changes.items()},
                                       replace=True):
                return fold, changes
        raise ServiceError(503, "ratings/busy", f"the ratings of {name} changed during every rebuild; try again")

    def rebuild_ratings(self, names: list[str] | None = None) -> dict[str, RatingsFold]:
        """``referee rebuild --ratings``: each ruleset's fold (default: every ruleset's) from the logs,
        from scratch, replacing the stored one."""
        return {name: self._rebuild(name)[0] for name in (names or ruleset_names())}

    # -- incremental ---------------------------------------------------------------------------------------
    def rate_tournament(self, tournament_id: str) -> int:
        """Add the tournament's results not yet rated to its ruleset's fold; returns how many. A result
        ordered before the last one rated (another process rated a later one first), or a fold missing or
        computed under other organiser keys, rebuilds the ruleset's fold from the logs instead.

        :raises ServiceError: from :meth:`fold`.
        """
        replayer = self.fold(tournament_id)
        created = replayer.created
        if not counts(created, self.organiser_keys):
            return 0
        name: str = (created or {})["ruleset"]["name"]
        for _attempt in range(16):
            gen, fold = self._load_fold(name)
            if fold is None:
                return len(self._rebuild(name)[1])
            start = fold.seen.get(tournament_id, 0)
            if replayer.seq <= start:
                return 0
            fresh = [r for rnd in replayer.rounds for r in rnd.results.values() if r["seq"] >= start]
            if not fresh:
                return 0
            entries = self.store.read_tournament(tournament_id, start)[0]
            games = rated_results(tournament_id, replayer, entries, start)
            if not fold.follows(games[0]):
                log.info("ratings of %s: a result of %s comes before the last rated; rebuilding", name, tournament_id)
                return len(self._rebuild(name)[1])
            changes = {game["game"]: _dump(fold.add(game)) for game in games}
            fold.seen[tournament_id] = replayer.seq
            if self._rating_folds.save(name, gen, fold.to_json(), changes, replace=False):
                return len(changes)
        raise ServiceError(503, "ratings/busy", f"the ratings of {name} changed during every attempt")

    # -- read ----------------------------------------------------------------------------------------------
    def ratings(self, ruleset_name: str, game: str | None = None, bots: bool = False) -> dict[str, Any]:
        """``GET /ratings/{ruleset}``: the stored fold (rebuilt from the logs when it is missing or was
        computed under other organiser keys): the ratings, whether they are vetted and on what basis, and the
        tournaments whose games they rate. With ``game``, also that game's rating change per seat. With
        ``bots``, the separate list of the games that had a bot seat (:class:`RatingsFold`).

        :raises ServiceError: 404 ``ruleset/not_found`` or ``ratings/no_such_game`` (a ``game`` not rated).
        """
        try:
            name = ruleset(ruleset_name).name
        except KeyError as exc:
            raise ServiceError(404, "ruleset/not_found", f"no ruleset {ruleset_name!r}") from exc
        _gen, fold = self._load_fold(name)
        rebuilt: dict[str, list[dict[str, Any]]] | None = None
        if fold is None:
            fold, rebuilt = self._rebuild(name)
        out = fold.answer(name, bots)
        if game is not None:
            if rebuilt is not None:
                change: Any = rebuilt.get(game)
            else:
                raw = self._rating_folds.change(name, game)
                change = json.loads(raw) if raw is not None else None
            if change is None:
                raise ServiceError(404, "ratings/no_such_game", f"game {game!r} has no rated result in {name}")
            out["game"], out["change"] = game, change
        return out
