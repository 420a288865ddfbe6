"""Game log stores: ``RedisStore`` (streams + Lua, the real one) and ``MemoryStore`` (same interface).

Key names live in :mod:`.keys`, every Lua script in :mod:`.scripts`, the interface in :mod:`.base`.
"""

from __future__ import annotations

from .base import PROJECTION_FIELDS, Appended, LogStore, Tip
from .errors import (
    DuplicateSubmission,
    GameArchived,
    GameExists,
    GameNotFound,
    StaleAppend,
    StoreError,
    StoreUnavailable,
)
from .memory import MemoryStore
from .redis_store import RedisStore

__all__ = [
    "PROJECTION_FIELDS",
    "Appended",
    "DuplicateSubmission",
    "GameArchived",
    "GameExists",
    "GameNotFound",
    "LogStore",
    "MemoryStore",
    "RedisStore",
    "StaleAppend",
    "StoreError",
    "StoreUnavailable",
    "Tip",
]
