"""What every part of the tournament service shares: tournament and game ids, the errors of the log, and
:class:`TournamentLogs` — the tournaments' logs as the service sees them, folded (a per-process cache of
folds) and appended to only at the position the fold is at, after the fold has checked the entry."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import threading
from typing import Any, cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ...errors import ServiceError
from ...games_service import GameService
from ...games_service.entries import make_entry
from ...replay import LogError
from ...store import GameNotFound, StoreUnavailable
from ...store.base import LogStore
from ...store.keys import valid_game_id
from ..log import TournamentReplayer

#: one logger for the whole service, named as the module was before it became a package
log = logging.getLogger("referee.tournaments.service")

#: HTTP status of the fold's rejection codes (anything else: 400)
STATUS_BY_CODE = {
    "submission/wrong_tournament": 403,
    "submission/bad_signature": 401,
    "join/not_player": 403,
    "withdraw/not_player": 403,
    "submission/stale": 409,
    "join/duplicate": 409,
    "withdraw/duplicate": 409,
    "tournament/not_waiting": 409,
    "tournament/not_active": 409,
    "game/not_open": 409,
    "adjudication/method": 409,
    "registration/bad_invite": 403,
    "registration/full": 409,
    "registration/closed": 409,
    "registration/name_taken": 409,
    "registration/not_open": 409,
    "registration/no_organiser": 403,
    "rekey/no_organiser": 403,
    "rekey/not_player": 404,
    "rekey/withdrawn": 409,
    "rekey/key_taken": 409,
}


def new_tournament_id() -> str:
    """``t_`` and 16 random base32 characters (80 bits)."""
    return "t_" + base64.b32encode(os.urandom(10)).decode("ascii").lower()


def signed_tournament_id(signature: str) -> str:
    """Id of an organiser-signed tournament, derived from its signature (posting it twice makes one)."""
    return "t_" + base64.b32encode(hashlib.sha256(signature.encode("ascii")).digest()[:10]).decode("ascii").lower()


def table_game_id(tournament_id: str, round_no: int, table: int) -> str:
    """The game id of table ``table`` (1-based) of round ``round_no``: ``<tournament>-r<round>-t<table>``."""
    return f"{tournament_id}-r{round_no}-t{table}"


def not_found(tournament_id: str) -> ServiceError:
    return ServiceError(404, "tournament/not_found", f"no tournament {tournament_id!r}")


def unavailable(exc: Exception) -> ServiceError:
    return ServiceError(503, "log/unavailable", f"the log could not be written durably: {exc}")


class TournamentLogs:
    """The store and the games a :class:`~referee.tournaments.service.TournamentService` works with, and the
    fold of each tournament's log: read through :meth:`fold`, written through :meth:`_append`."""

    def __init__(self, store: LogStore, games: GameService, organiser_keys: list[str] | None = None,
                 referee_key: Ed25519PrivateKey | None = None):
        self.store = store
        self.games = games
        self.organiser_keys = list(organiser_keys or [])
        self.referee_key = referee_key or games.referee_key
        self._folds: dict[str, TournamentReplayer] = {}
        self._lock = threading.Lock()

    # -- the fold -------------------------------------------------------------------------------------
    def fold(self, tournament_id: str) -> TournamentReplayer:
        """A private, current fold of the tournament's log (with the server seed).

        :raises ServiceError: 404 ``tournament/not_found`` (no such tournament, or not a valid id); 500
            ``log/corrupt`` (the log breaks the fold's rules: ``LogError``).
        """
        if not valid_game_id(tournament_id):
            raise not_found(tournament_id)
        with self._lock:
            cached = self._folds.get(tournament_id)
        try:
            if cached is None:
                cached = TournamentReplayer(server_seed=self.store.tournament_secret(tournament_id))
            else:
                cached = cast(TournamentReplayer, cached.fork())
            entries, _tip = self.store.read_tournament(tournament_id, cached.seq)
            for entry in entries:
                cached.feed(entry)
        except GameNotFound as exc:
            raise not_found(tournament_id) from exc
        except LogError as exc:
            raise ServiceError(500, "log/corrupt", str(exc)) from exc
        self._keep(tournament_id, cached)  # keeps its own copy: ``cached`` is the caller's
        return cached

    def _keep(self, tournament_id: str, replayer: TournamentReplayer) -> None:
        with self._lock:
            current = self._folds.get(tournament_id)
            if current is None or current.seq <= replayer.seq:
                if len(self._folds) > 1024:
                    self._folds.clear()
                self._folds[tournament_id] = cast(TournamentReplayer, replayer.fork())

    def _append(self, tournament_id: str, replayer: TournamentReplayer, kind: str, *, signature: str | None = None,
                at: str | None = None, **payload: Any) -> dict[str, Any]:
        """Seal, check on ``replayer`` (advanced in place when it is ``ok``) and append; returns the entry.

        :raises ServiceError: the fold's rejection (status by ``STATUS_BY_CODE``, else 400); 503
            ``log/unavailable``; 404 ``tournament/not_found``.
        :raises StaleAppend: the log has moved on since ``replayer`` was folded.
        """
        entry = make_entry(kind, replayer.seq, replayer.head, at=at, **payload)
        prev = replayer.head
        verdict = replayer.feed(entry)
        if verdict.status == "rejected":
            error = verdict.error or {}
            code = error.get("code", "tournament/invalid")
            raise ServiceError(STATUS_BY_CODE.get(code, 400), code, error.get("message", code))
        try:
            self.store.append_tournament(tournament_id, entry, prev, signature=signature)
        except StoreUnavailable as exc:
            raise unavailable(exc) from exc
        except GameNotFound as exc:
            raise not_found(tournament_id) from exc
        self._keep(tournament_id, replayer)
        return entry
