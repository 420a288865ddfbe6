"""RQ job functions (referenced by dotted path, so the JSON serializer only carries a game id)."""

from __future__ import annotations

from typing import Any

from rq import get_current_job

from referee.store import RedisStore

from .projector import Projector

#: One projector per Redis server per process: a worker that runs jobs in-process keeps its folds.
_PROJECTORS: dict[tuple[object, ...], Projector] = {}


def projector_for(connection: Any) -> Projector:
    kwargs = connection.connection_pool.connection_kwargs
    key = (kwargs.get("host"), kwargs.get("port"), kwargs.get("db"), kwargs.get("path"))
    projector = _PROJECTORS.get(key)
    if projector is None:
        projector = _PROJECTORS[key] = Projector(RedisStore(connection))
    return projector


def replay_game(game_id: str) -> dict[str, Any]:
    """Bring ``game_id``'s projection up to the end of its log."""
    job = get_current_job()
    if job is None:
        raise RuntimeError("replay_game runs inside an RQ worker")
    return projector_for(job.connection).catch_up(game_id)
