"""RQ job functions (referenced by dotted path, so the JSON serializer only carries a game id).

A job needs both Redis servers: the log (``REDIS_URL``) and the work server holding projections (RQ's
own connection, ``REFEREE_WORK_REDIS_URL``). ``referee worker`` passes them with :func:`configure`; under
the stock ``rq worker`` command they come from the environment (``referee.config``).
"""

from __future__ import annotations

from typing import Any

from rq import get_current_job

from referee.config import load_config
from referee.store import RedisStore

from .projector import Projector

_URLS: dict[str, str] = {}
#: One projector per process: a worker that runs jobs in-process (SimpleWorker) keeps its folds.
_PROJECTORS: dict[tuple[str, str], Projector] = {}
#: One tournament service per store and queue (``tournaments``)
_TOURNAMENTS: dict[tuple[int, str], Any] = {}


def configure(log_url: str, work_url: str | None = None) -> None:
    """The Redis URLs of this worker process (``referee worker`` calls it before working)."""
    _URLS.update(log=log_url, work=work_url or log_url)


def projector() -> Projector:
    if not _URLS:
        config = load_config()
        configure(config["REDIS_URL"], config["REFEREE_WORK_REDIS_URL"])
    key = (_URLS["log"], _URLS["work"])
    found = _PROJECTORS.get(key)
    if found is None:
        found = _PROJECTORS[key] = Projector(RedisStore.from_url(_URLS["log"], work_url=_URLS["work"]))
    return found


def tournaments(store: RedisStore, queue_name: str) -> Any:
    """The worker's tournament service: its games' replay jobs go to ``queue_name`` (the job's own queue)."""
    from referee.games_service import GameService  # noqa: PLC0415
    from referee.tournaments.service import TournamentService  # noqa: PLC0415

    from .queue import RQDispatch, replay_queue  # noqa: PLC0415

    key = (id(store), queue_name)
    found = _TOURNAMENTS.get(key)
    if found is None:
        config = load_config()
        games = GameService(store, RQDispatch(replay_queue(store.queue_redis, queue_name)),
                            config["REFEREE_ORGANISER_KEYS"])
        found = _TOURNAMENTS[key] = TournamentService(store, games, config["REFEREE_ORGANISER_KEYS"])
    return found


def replay_game(game_id: str) -> dict[str, Any]:
    """Bring ``game_id``'s projection up to the end of its log; a tournament's game that has finished then
    advances its tournament (``TournamentService.game_over``: its result, the next round)."""
    job = get_current_job()
    if job is None:
        raise RuntimeError("replay_game runs inside an RQ worker")
    found = projector()
    found.on_finished = lambda game, tournament: tournaments(found.store, job.origin).game_over(game, tournament)
    return found.catch_up(game_id)
