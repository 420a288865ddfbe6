"""Where the ratings folds are kept (``referee.tournaments.service.ratings``): one per ruleset, a projection of
the tournament logs like the games' projections — on the work Redis for a :class:`RedisStore`
(``ratings:{<ruleset>}`` and ``…:changes``, written by compare-and-set on a generation: ``SAVE_RATINGS``), in
the process for a :class:`MemoryStore`."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from . import scripts
from .base import LogStore
from .keys import RATINGS, RATINGS_CHANGES
from .redis_store import RedisStore


class RatingsStore(Protocol):
    def load(self, name: str) -> tuple[int, str | bytes | None]:
        """The stored fold of ruleset ``name`` (its JSON, or ``None``) and its generation (0: none)."""

    def change(self, name: str, game: str) -> str | bytes | None:
        """The JSON of ``game``'s rating changes in ruleset ``name``'s fold, or ``None``."""

    def save(self, name: str, gen: int, state: str, changes: dict[str, str], replace: bool) -> bool:
        """Store the fold if the stored generation is still ``gen`` (``replace``: these changes replace all);
        ``False``: another process wrote first, nothing written."""


class RedisRatings:
    """The folds on the work Redis (the store's ``work`` client: a projection, like the games')."""

    def __init__(self, client: Any):
        self.client = client
        self._save = client.register_script(scripts.SAVE_RATINGS)

    def load(self, name: str) -> tuple[int, str | bytes | None]:
        state, gen = self.client.hmget(RATINGS.format(ruleset=name), "state", "gen")
        return int(gen or 0), state

    def change(self, name: str, game: str) -> str | bytes | None:
        return self.client.hget(RATINGS_CHANGES.format(ruleset=name), game)  # type: ignore[no-any-return]

    def save(self, name: str, gen: int, state: str, changes: dict[str, str], replace: bool) -> bool:
        args: list[Any] = [gen, state, "1" if replace else "0"]
        for game, change in changes.items():
            args += [game, change]
        keys = [RATINGS.format(ruleset=name), RATINGS_CHANGES.format(ruleset=name)]
        return int(self._save(keys=keys, args=args)) >= 0


class MemoryRatings:
    """The folds in this process (``REFEREE_STORE=memory``: the logs are in this process too)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folds: dict[str, tuple[int, str, dict[str, str]]] = {}

    def load(self, name: str) -> tuple[int, str | bytes | None]:
        with self._lock:
            gen, state, _changes = self._folds.get(name, (0, None, {}))
        return gen, state

    def change(self, name: str, game: str) -> str | bytes | None:
        with self._lock:
            return self._folds.get(name, (0, None, {}))[2].get(game)

    def save(self, name: str, gen: int, state: str, changes: dict[str, str], replace: bool) -> bool:
        with self._lock:
            current, _state, stored = self._folds.get(name, (0, None, {}))
            if current != gen:
                return False
            stored = dict(changes) if replace else {**stored, **changes}
            self._folds[name] = (gen + 1, state, stored)
            return True


def ratings_of(store: LogStore) -> RatingsStore:
    """The ratings folds beside a log store: on its work Redis, or in this process."""
    if isinstance(store, RedisStore):
        return RedisRatings(store.work)
    return MemoryRatings()
