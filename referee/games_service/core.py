"""What every part of :class:`~referee.games_service.GameService` stands on (CONTRACT sections 3–6).

The store, the per-process cache of folds and the reads of it (:meth:`ServiceCore.fold`,
:meth:`ServiceCore.fold_for`), caching a fold after the referee's own entries (``_settle``), telling the
workers of an append (the dispatchers) and the deadline scheduler of the next alarm (``_set_timer``),
and the ids of new games. The writes are in ``submissions`` (a seat's signed submissions) and
``lifecycle`` (creation, acceptance, abort, adjudication, withdrawal), the reads in ``reads``.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from collections.abc import Callable
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..clock import now_ms
from ..errors import ServiceError
from ..notify.events import next_alarm
from ..replay import LogError, LogReplayer
from ..store import GameNotFound, StoreUnavailable
from ..store.base import Appended, LogStore
from ..store.keys import valid_game_id
from .entries import due_system_entry
from .folds import ReplayerCache

log = logging.getLogger(__name__)

#: ``REFEREE_MAX_OPEN_GAMES``' default
DEFAULT_MAX_OPEN_GAMES = 10


class Dispatcher(Protocol):
    """Gets the game's replay going after an append that raised the game's pending flag."""

    def notify(self, game_id: str, position: int) -> None: ...


def notify_appended(dispatcher: Dispatcher, game_id: str, appended: list[Appended]) -> None:
    """Tell ``dispatcher`` of the first of ``appended`` that raised the game's pending flag, unless the
    append script told the workers already (``Appended.notified``). A failure is logged, not raised: the
    entries are durably logged and the reconciler pushes the game once its flag is stale."""
    for item in appended:
        if item.pending_set:
            if not item.notified:
                try:
                    dispatcher.notify(game_id, item.position)
                except Exception:
                    log.exception("could not notify the replay of %s after position %s", game_id, item.position)
            return


class NoDispatch:
    """Queue nothing (projections are then built by ``referee rebuild`` or a reconciler only)."""

    def notify(self, game_id: str, position: int) -> None:
        return None


class InlineDispatch:
    """Build the projection in the request itself (single-process use with the in-memory store)."""

    def __init__(self, catch_up: Callable[[str], Any]):
        self.catch_up = catch_up

    def notify(self, game_id: str, position: int) -> None:
        self.catch_up(game_id)


def new_game_id() -> str:
    """``g_`` and 16 random base32 characters (80 bits)."""
    return "g_" + base64.b32encode(os.urandom(10)).decode("ascii").lower()


def signed_game_id(signature: str) -> str:
    """Id of an organiser-signed game, derived from its signature: posting it twice cannot make two games."""
    digest = hashlib.sha256(signature.encode("ascii")).digest()
    return "g_" + base64.b32encode(digest[:10]).decode("ascii").lower()


def not_found(game_id: str) -> ServiceError:
    """404 ``game/not_found``."""
    return ServiceError(404, "game/not_found", f"no game {game_id!r}")


def unavailable(exc: Exception) -> ServiceError:
    """503 ``log/unavailable``: the store could not take the write."""
    return ServiceError(503, "log/unavailable", f"the log could not be written durably: {exc}")


def clock_view_of(replayer: LogReplayer) -> list[dict[str, Any]] | None:
    """The seats' clocks of a fold, as ``GET /games/{id}`` shows them, at the current server time."""
    if replayer.clocks is None or not replayer.clocks.running:
        return None
    return replayer.clocks.view(now_ms())


class ServiceCore:
    """The store, the cache of folds and what the writes and reads of a game service share."""

    def __init__(self, store: LogStore, dispatcher: Dispatcher | None = None, organiser_keys: list[str] | None = None,
                 max_wait: float = 30.0, referee_key: Ed25519PrivateKey | None = None, *,
                 accept_within: float | None = None, max_open_games: int | None = DEFAULT_MAX_OPEN_GAMES):
        self.store = store
        #: how many open games (a seat open to anyone, waiting) one key may have created at a time (None: any)
        self.max_open_games = max_open_games
        #: seconds a seeded game may wait for its acceptances before it expires (None: never)
        self.accept_within = accept_within
        #: signs receipts (CONTRACT section 8); a fresh key when none is given (tools and tests)
        self.referee_key = referee_key or Ed25519PrivateKey.generate()
        self.dispatcher: Dispatcher = dispatcher or NoDispatch()
        self.organiser_keys = list(organiser_keys or [])
        self.max_wait = max_wait
        self.cache = ReplayerCache(store)
        self._created: dict[str, dict[str, Any]] = {}

    def _check_id(self, game_id: str) -> None:
        if not valid_game_id(game_id):
            raise not_found(game_id)

    def fold(self, game_id: str) -> LogReplayer:
        """The current fold of ``game_id`` (shared; do not mutate). 404 for an unknown game."""
        self._check_id(game_id)
        try:
            return self.cache.current(game_id)
        except GameNotFound as exc:
            raise not_found(game_id) from exc
        except LogError as exc:
            raise ServiceError(500, "log/corrupt", str(exc)) from exc

    def fold_for(self, game_id: str, envelope: dict[str, Any]) -> LogReplayer:
        """The fold to check a submission against: the cached one, without asking the store, when it is at
        exactly the position the envelope names; else the current fold.

        Trusting a cache that may be behind is safe: the append script writes only at exactly that
        position, so if the log has moved on, the append is refused as stale and nothing is written."""
        self._check_id(game_id)
        cached = self.cache.peek(game_id)
        if cached is not None and cached.seq == envelope.get("seq") and cached.head == envelope.get("prev"):
            return cached
        return self.fold(game_id)

    def _settle(self, game_id: str, replayer: LogReplayer) -> LogReplayer:
        """Cache ``replayer`` after the referee's own entries were appended, and return it; but if it still
        owes one (``started``, ``revealed``, …), someone else (a replay worker) appended it first and this
        fold is behind the log: then forget it and return the current fold. A fold that is behind must not
        answer the next submission (it would call the game "waiting" when it has started)."""
        if due_system_entry(replayer, replayer.server_seed) is not None:
            self.cache.forget(game_id)
            try:
                return self.fold(game_id)
            except Exception:  # the store is unreachable: answer from this fold (what was appended stands)
                log.warning("could not refold %s after the referee's entries; answering from the request's fold",
                            game_id, exc_info=True)
                return replayer
        self.cache.put(game_id, replayer)
        return replayer

    def created_entry(self, game_id: str) -> dict[str, Any]:
        """The game's ``created`` entry (immutable, so cached for good). 404 for an unknown game."""
        created = self._created.get(game_id)
        if created is None:
            self._check_id(game_id)
            try:
                created = self.store.read_log(game_id, 0, 1)[0]
            except GameNotFound as exc:
                raise not_found(game_id) from exc
            if len(self._created) > 4096:
                self._created.clear()
            self._created[game_id] = created
        return created

    def _set_timer(self, game_id: str, replayer: LogReplayer) -> None:
        """Tell the deadline scheduler when to look at this game next (best effort: the replay worker sets
        it again from its own fold, so a failure here loses nothing)."""
        try:
            self.store.set_timer(game_id, next_alarm(replayer, now_ms()))
        except StoreUnavailable:
            log.warning("could not set the timer of %s; the replay worker will", game_id)
        except Exception:
            log.exception("could not set the timer of %s; the replay worker will", game_id)

    def _notify(self, game_id: str, appended: list[Appended]) -> None:
        notify_appended(self.dispatcher, game_id, appended)

    def wait_for_verdict(self, game_id: str, position: int, timeout: float) -> dict[str, Any] | None:
        """The worker's verdict on ``position`` once its projection covers it, or ``None`` after ``timeout``."""
        return self.store.wait_for_verdict(game_id, position, max(0.0, timeout))
