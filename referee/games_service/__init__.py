"""The game lifecycle between the HTTP API and the log store: creating games, signed acceptances and
moves checked against a fold of the log, the referee's own entries (``started``, ``revealed``), and
the reads. Pure Python over a :class:`referee.store.LogStore`; no Flask, no RQ."""

from __future__ import annotations

from ..errors import ServiceError
from ..replay import ABORT_CTX
from .core import Dispatcher, InlineDispatch, NoDispatch
from .folds import ReplayerCache, clone_replayer, fold, fold_with_states
from .lifecycle import CREATE_CTX
from .projection import projection_of
from .service import GameService

__all__ = ["ABORT_CTX", "CREATE_CTX", "Dispatcher", "GameService", "InlineDispatch", "NoDispatch", "ReplayerCache",
           "ServiceError", "clone_replayer", "fold", "fold_with_states", "projection_of"]
