"""RQ job functions (referenced by dotted path, so the JSON serializer only carries a game id).

A job needs both Redis servers: the log (``REDIS_URL``) and the work server holding projections (RQ's
own connection, ``REFEREE_WORK_REDIS_URL``). ``referee worker`` passes them with :func:`configure`; under
the stock ``rq worker`` command they come from the environment (``referee.config``).
"""

from __future__ import annotations

from typing import Any, cast

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
        found = _PROJECTORS[key] = Projector(RedisStore.from_url(_URLS["log"], work_url=_URLS["work"]).replicas_from(
            load_config()))
    return found


def tournaments(store: RedisStore, queue_name: str) -> Any:
    """The worker's tournament service: its games' replay jobs go to ``queue_name`` (the job's own queue)."""
    from referee.games_service import GameService  # noqa: PLC0415
    from referee.tournaments.service import TournamentService  # noqa: PLC0415

    from .queue import ReplayDispatch, replay_queue  # noqa: PLC0415

    key = (id(store), queue_name)
    found = _TOURNAMENTS.get(key)
    if found is None:
        config = load_config()
        games = GameService(store, ReplayDispatch(replay_queue(store.queue_redis, queue_name), store),
                            config["REFEREE_ORGANISER_KEYS"])
        found = _TOURNAMENTS[key] = TournamentService(store, games, config["REFEREE_ORGANISER_KEYS"])
    return found


def replay_loop(queue: Any, with_projector: Projector | None = None) -> Any:
    """A :class:`~workers.replayloop.ReplayLoop` on ``queue``'s ready list, with ``with_projector`` (default:
    this process's, :func:`projector`), whose finished tournament games advance their tournament."""
    from .replayloop import ReplayLoop  # noqa: PLC0415

    found = with_projector or projector()
    # a worker's store is a RedisStore: its tournaments queue their games' jobs on its Redis
    return ReplayLoop(queue, found, on_finished=lambda game, tournament: tournaments(
        cast(RedisStore, found.store), queue.name).game_over(game, tournament))


def work_burst(queues: list[Any], *, logging_level: str = "WARNING") -> bool:
    """Everything waiting for ``queues``, in this process, then return: their ready lists (this process's
    projector), RQ's jobs (an allow-listing ``SimpleWorker``, burst), the ready lists again (what the jobs
    appended). Tests and ``referee worker --burst``-like callers; returns whether anything ran."""
    from rq.serializers import JSONSerializer  # noqa: PLC0415

    from .allowlist import RefereeSimpleWorker  # noqa: PLC0415

    loops = [replay_loop(queue) for queue in queues]
    replayed = sum(loop.drain() for loop in loops)
    worked = RefereeSimpleWorker(queues, connection=queues[0].connection, serializer=JSONSerializer).work(
        burst=True, logging_level=logging_level)
    replayed += sum(loop.drain() for loop in loops)
    return bool(worked or replayed)


def replay_game(game_id: str) -> dict[str, Any]:
    """(RQ's retry of a failed catch-up of the replay loop, ``workers/replayloop.py``.) Bring ``game_id``'s
    projection up to the end of its log; a tournament's game that has finished then
    advances its tournament (``TournamentService.game_over``: its result, the next round)."""
    job = get_current_job()
    if job is None:
        raise RuntimeError("replay_game runs inside an RQ worker")
    found = projector()
    found.on_finished = lambda game, tournament: tournaments(  # projector() is on a RedisStore
        cast(RedisStore, found.store), job.origin).game_over(game, tournament)
    return found.catch_up(game_id)
