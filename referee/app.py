"""The Flask app factory (like the Flask tutorial's ``create_app``).

``create_app(config=None)`` reads settings from the environment (``referee.config``), overridden by the
``config`` dict, and wires:

* ``app.extensions["referee.store"]`` — the log store (``RedisStore`` on ``REDIS_URL``, or ``MemoryStore``):
  ``read_log(game) -> list[dict]`` (raises ``referee.store.GameNotFound``), ``list_games()``,
  ``read_projection(game) -> dict | None``, …
* ``app.extensions["referee.key"]`` — the referee's own Ed25519 private key, from ``REFEREE_KEY_FILE``
  (created on first start);
* ``app.extensions["referee.service"]`` — the :class:`~referee.games_service.GameService`;
* ``app.extensions["referee.messages"]`` — the :class:`~referee.messages.MessageService` (a game's messages,
  beside its log);
* ``app.extensions["referee.tournaments"]`` — the :class:`~referee.tournaments.service.TournamentService`;
* ``app.extensions["referee.queue"]`` — the RQ queue of replay jobs (with ``REFEREE_DISPATCH=rq``), on the
  work Redis (``REFEREE_WORK_REDIS_URL``, default ``REDIS_URL``);
* the API blueprints (``referee.api``), behind the body-size layer (``referee.api.body.BodyLimit``);
* ``app.extensions["referee.limiter"]`` — the rate limits (``referee.api.limits``, Flask-Limiter on the
  work Redis), each named by a ``REFEREE_RATE_*`` setting.
* the browser defences and forwarded-header policy (``referee.web.defences``: headers on every answer).
* the compression of every answer made per request (:func:`init_compression`: brotli or gzip); the static files
  are compressed once, ahead (``referee.web.compression``), and event streams never;
* the logs (``referee.host.logs.configure_logging``: JSON lines with ``REFEREE_LOG_FORMAT=json``) and the metrics
  (``referee.observability``: request ids, counts of every answer, ``GET /metrics``).

Gunicorn: ``gunicorn 'referee.app:create_app()'``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, cast

from flask import Flask
from flask.json.provider import DefaultJSONProvider
from werkzeug.routing import Rule

from .config import load_config
from .protocol.signing import read_or_create_key_file

log = logging.getLogger(__name__)


def init_store(app: Flask) -> None:
    from .games_service import GameService, InlineDispatch, NoDispatch  # noqa: PLC0415
    from .messages import MessageService, standing_of  # noqa: PLC0415
    from .store import MemoryStore, RedisStore  # noqa: PLC0415
    from .store.archive import DirectoryArchive  # noqa: PLC0415
    from .store.messages import messages_of  # noqa: PLC0415
    from .tournaments.service import TournamentService  # noqa: PLC0415

    config = app.config
    if config["REFEREE_STORE"] == "memory":
        store: Any = MemoryStore()
    else:
        store = RedisStore.from_url(config["REDIS_URL"], work_url=config["REFEREE_WORK_REDIS_URL"])
        store.use_archive(DirectoryArchive(config["REFEREE_ARCHIVE_DIR"]))  # archived games' reads
        store.require_replicas(config["REFEREE_MIN_REPLICAS"], config["REFEREE_REPLICA_TIMEOUT_MS"])
        durability = store.durability()  # best effort: {} when Redis is down or CONFIG is not allowed
        if durability and durability != {"appendonly": "yes", "appendfsync": "always"}:
            log.warning("the log's Redis runs with %s: a 2xx would not mean 'on disk'; "
                        "use appendonly yes, appendfsync always", durability)
    app.extensions["referee.store"] = store
    app.extensions["referee.device_links"] = device_links(config, store)
    dispatch = config["REFEREE_DISPATCH"]
    if dispatch == "rq":
        from workers.queue import ReplayDispatch, replay_queue  # noqa: PLC0415 - RQ only when used

        queue = replay_queue(store.queue_redis, config["REFEREE_QUEUE"])
        app.extensions["referee.queue"] = queue
        dispatcher: Any = ReplayDispatch(queue, store)
    elif dispatch == "inline":
        from workers.projector import Projector  # noqa: PLC0415

        projector = Projector(store)
        dispatcher = InlineDispatch(projector.catch_up)
    else:
        dispatcher = NoDispatch()
    if config["REFEREE_STORE"] == "redis":
        from referee.api.limits import confirmation_budget  # noqa: PLC0415
        from referee.notify.contacts import CONFIRMATIONS_PER_DAY, ContactService  # noqa: PLC0415
        from workers.deliveries import enqueue_jobs  # noqa: PLC0415

        app.extensions["referee.contacts"] = ContactService(
            store.redis, enqueue_jobs(store.queue_redis, config["REFEREE_QUEUE"], config["REFEREE_WEBHOOK_RETRIES"]),
            allow_private=config["REFEREE_WEBHOOK_PRIVATE"],
            confirmation_budget=confirmation_budget(config, CONFIRMATIONS_PER_DAY))
    games = GameService(store, dispatcher, config["REFEREE_ORGANISER_KEYS"], config["REFEREE_MAX_WAIT"],
                        app.extensions.get("referee.key"), accept_within=config["REFEREE_ACCEPT_WITHIN"] or None,
                        max_open_games=config["REFEREE_MAX_OPEN_GAMES"] or None)
    app.extensions["referee.service"] = games
    app.extensions["referee.messages"] = MessageService(messages_of(store), games.created_entry, games.referee_key,
                                                          emit=store.emit_events,
                                                          holders=lambda game_id: games.fold(game_id).keys,
                                                          standing=standing_of(games.fold),
                                                          max_bytes=config["REFEREE_MAX_MESSAGE_BYTES"])
    tournaments = TournamentService(store, games, config["REFEREE_ORGANISER_KEYS"])
    app.extensions["referee.tournaments"] = tournaments
    if dispatch == "inline":
        projector.on_finished = tournaments.game_over  # a tournament game's end advances its tournament


def device_links(config: Mapping[str, Any], store: Any) -> Any:
    """Where device links wait (section 15): the work Redis, or this process's memory with the memory store."""
    from .store.device_links import MemoryDeviceLinks, RedisDeviceLinks  # noqa: PLC0415

    seconds = config["REFEREE_DEVICE_LINK_SECONDS"]
    if config["REFEREE_STORE"] == "memory":
        return MemoryDeviceLinks(seconds)
    return RedisDeviceLinks(store.work, seconds)


def init_key(app: Flask) -> None:
    app.extensions["referee.key"] = read_or_create_key_file(app.config["REFEREE_KEY_FILE"])


def init_limits(app: Flask) -> None:
    """The rate limits (Flask-Limiter, counting in the work Redis): one ``Limiter`` per app, applied to every
    view marked ``@rate_limited("REFEREE_RATE_…")`` (``referee.api.limits``); call after the blueprints."""
    from .api import limits  # noqa: PLC0415

    limits.init_app(app)


def init_body_limit(app: Flask) -> None:
    """Body sizes, enforced in one WSGI layer in front of Flask (``referee.api.body.BodyLimit``):
    ``REFEREE_MAX_BODY``, and ``REFEREE_MAX_BUNDLE`` for ``POST /verify``."""
    from .api.body import BodyLimit  # noqa: PLC0415

    config = app.config
    app.wsgi_app = BodyLimit(app.wsgi_app, config["REFEREE_MAX_BODY"],  # type: ignore[method-assign]
                             {"/verify": config["REFEREE_MAX_BUNDLE"]}, timeout=config["REFEREE_BODY_TIMEOUT"] or None)


def init_compression(app: Flask) -> None:
    """Every answer made per request compressed, brotli or gzip, as ``Accept-Encoding`` prefers
    (``referee.web.compression.compress_answer``: pages, JSON; never a streamed answer, so never an event stream);
    the static files are compressed once, ahead, by the pages' blueprint. Its CPU per answer:
    ``tests/bench/bench_compression.py``."""
    from .web.compression import compress_answer  # noqa: PLC0415

    app.after_request(compress_answer)


class LazyBuildRule(Rule):
    """werkzeug's ``Rule``, its URL builders compiled at the first ``url_for`` of the rule instead of when the
    rule is added. werkzeug compiles two builders a rule (Python source, parsed and compiled): with ~70 rules,
    two thirds of the routes' share of ``create_app`` — in every web process and every app a test makes,
    though most rules are never built into a URL. Matching is unchanged (its regular expression is compiled
    as before)."""

    def _compile_builder(self, append_unknown: bool = True) -> Any:
        compile_now = super()._compile_builder
        attribute = "_build_unknown" if append_unknown else "_build"

        def build(rule: Rule, *args: Any, **kwargs: Any) -> Any:
            built = compile_now(append_unknown).__get__(rule, None)
            setattr(rule, attribute, built)
            return built(*args, **kwargs)

        return build


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The referee's Flask app; ``config`` overrides the environment (tests pass a dict)."""
    from . import api, observability  # noqa: PLC0415 - keep the import of `referee.app` light
    from .host import logs  # noqa: PLC0415 - keep the import of `referee.app` light
    from .web import defences  # noqa: PLC0415 - keep the import of `referee.app` light

    app = Flask(__name__)
    app.url_rule_class = LazyBuildRule
    settings = load_config(config)
    app.config.update(settings)
    logs.configure_logging(settings, process="web")
    for name, value in (config or {}).items():  # extra Flask settings (TESTING, WEB_POLL_MS, …)
        app.config.setdefault(name, value)
    cast(DefaultJSONProvider, app.json).sort_keys = False  # Flask's own provider (no json_provider_class here)
    init_key(app)
    init_store(app)
    init_compression(app)  # first: Flask runs after_request hooks last-registered first, so it compresses last
    api.init_app(app)
    defences.init_app(app)  # security headers on every answer, forwarded headers (issue 17)
    observability.init_app(app)  # request ids, metrics, GET /metrics (issue 23); before the limits' hooks
    init_limits(app)
    init_body_limit(app)
    return app
