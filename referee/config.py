"""Settings of the service, read from the environment (12-factor), overridable by ``create_app(config)``.

Every setting has the same name in the environment and in ``app.config``:

=========================== =========================== ==========================================
name                        default                     meaning
=========================== =========================== ==========================================
``REDIS_URL``               ``redis://127.0.0.1:6379/0`` the Redis holding the logs (run it with
                                                        ``appendonly yes``, ``appendfsync always``);
                                                        ``redis+cluster://…``: a Redis Cluster holding
                                                        the logs and projections (``docs/scale.md``)
``REFEREE_WORK_REDIS_URL``  (``REDIS_URL``)             the Redis holding derived data: the RQ queue
                                                        and the projections (may be non-durable); with
                                                        a cluster: a plain Redis, the RQ queue only
``REFEREE_STORE``           ``redis``                   ``redis``, or ``memory`` (one process only,
                                                        projections built inline; for tools/tests)
``REFEREE_VAR``             ``var``                     folder for runtime files
``REFEREE_KEY_FILE``        ``var/referee-key``         the referee's Ed25519 private key (created
                                                        on first start, mode 0600)
``REFEREE_ORGANISER_KEYS``  (empty)                     comma-separated base64url public keys that
                                                        may create games; empty: anyone may
``REFEREE_MAX_BODY``        ``65536``                   largest request body in bytes (else 413)
``REFEREE_MAX_BUNDLE``      ``1048576``                 largest bundle ``POST /verify`` takes (else 413):
                                                        ~10x the longest golden game's bundle
``REFEREE_RATE_VERIFY``     ``10 per minute``           ``POST /verify`` per client address (else 429);
                                                        Flask-Limiter notation, counted in the work Redis
``REFEREE_MIN_REPLICAS``    ``0``                       replicas that must have each log write the
                                                        service acknowledges (``WAIT``; ``WAITAOF`` on
                                                        Redis >= 7.2) before its 2xx; too few in time:
                                                        503 ``log/unavailable`` (``docs/scale.md``)
``REFEREE_REPLICA_TIMEOUT_MS`` ``1000``                 milliseconds a write waits for those replicas
``REFEREE_REDIS_MAXMEMORY`` ``1gb``                     memory limit of each Redis ``referee serve``
                                                        embeds (``noeviction``: a full log Redis
                                                        refuses writes, 503, and loses nothing)
``REFEREE_ACCEPT_WITHIN``   ``604800`` (7 days)         seconds a new seeded game waits for every
                                                        seat's acceptance; then the referee logs
                                                        ``expired`` and it leaves the lobby (0: never)
``REFEREE_MAX_OPEN_GAMES``  ``10``                      open games (a seat open to anyone, waiting)
                                                        one key may have created at a time; one more
                                                        is 409 ``creator/too_many_open`` (0: no limit)
``REFEREE_RATE_CREATE``     ``30 per minute;``          ``POST /games`` per client address: a burst of
                            ``120 per hour``            30, 120 an hour (no person or club meets it)
``REFEREE_RATE_CONTACTS``   ``30 per minute;``          ``/contacts`` writes per client address
                            ``120 per hour``
``REFEREE_RATE_CREATE_PER_KEY`` ``30 per minute;``      the same per signing key: the organiser's key
                            ``120 per hour``            of a creation its signature proves (else: per
                                                        address)
``REFEREE_RATE_CONTACTS_PER_KEY`` ``30 per minute;``    contact registrations per key, once their
                            ``120 per hour``            signature checks (else per address)
``REFEREE_RATE_TOURNAMENTS`` ``10 per minute;``         ``POST /tournaments`` per client address
                            ``60 per hour``
``REFEREE_RATE_TOURNAMENTS_PER_KEY`` ``10 per minute;`` the same per organiser key (signed creations)
                            ``60 per hour``
``REFEREE_RATE_MESSAGES``   ``20 per minute;``          messages and mute requests per seat key (the
                            ``300 per hour``            key of the envelope's seat, once the signature
                                                        checks under it; else per address)
``REFEREE_QUEUE``           ``referee``                 name of the RQ queue of replay jobs
``REFEREE_DISPATCH``        ``rq`` (redis), ``inline``   how appends reach the projector: ``rq`` jobs,
                            (memory)                    ``inline`` in the request, or ``none``
``REFEREE_MAX_WAIT``        ``30``                      cap in seconds on ``?wait=`` of POST /moves
``REFEREE_STALE_AFTER``     ``10``                      seconds after which the reconciler re-queues
                                                        a game whose projection lags its log
``REFEREE_RECONCILE_EVERY`` ``5``                       seconds between reconciler passes
``REFEREE_DEADLINES_EVERY`` ``0.25``                    seconds between the deadline scheduler's
                                                        passes in each ``referee worker`` (0: off)
``REFEREE_BENCH_NOOP``      ``0``                       ``1`` adds the hidden ``POST /_bench/noop``
``REFEREE_HOUSE_BOT_KEY``   (empty)                     the house bot's public key, answered by
                                                        ``GET /house-bot`` (``referee serve --house-bot``
                                                        sets it for its web server)
``REFEREE_PUBLIC_URL``      ``http://127.0.0.1:8000``   the public base URL: absolute links (mails,
                                                        webhooks) and the
                                                        pages' path prefix (never the ``Host`` header)
``REFEREE_TRUSTED_PROXIES`` (empty)                     comma-separated proxy addresses/networks whose
                                                        ``X-Forwarded-For``/``-Proto`` are trusted
``REFEREE_REDIS_PASSWORD_FILE`` (none)                  a file holding the Redis password, for Redis
                                                        URLs that carry none (``referee serve``'s
                                                        embedded servers: ``var/redis-password``)
``REFEREE_SMTP_URL``        (empty: Maildir)            ``smtp://user:pass@host:587`` (STARTTLS at
                                                        587), ``smtps://…`` (TLS); empty: mail goes
                                                        into ``<REFEREE_VAR>/mail`` (Maildir)
``REFEREE_MAIL_FROM``       ``referee@localhost``       sender of the referee's mail
``REFEREE_WEBHOOK_RETRIES`` ``10,60,300,1800,3600,``    seconds between a failed webhook delivery's
                            ``7200,21600,43200``        retries (about a day in all)
``REFEREE_WEBHOOK_TIMEOUT`` ``5``                       seconds a webhook endpoint has to answer
``REFEREE_WEBHOOK_DISABLE_AFTER`` ``20``                failed attempts in a row that disable a webhook
``REFEREE_WEBHOOK_PRIVATE`` ``1``                       ``0`` (the ``Procfile``) refuses webhooks on
                                                        private, loopback, link-local addresses …,
                                                        at registration and at every delivery (to
                                                        the address checked; no DNS rebinding)
``REFEREE_BODY_TIMEOUT``    ``20``                      seconds a request body has to arrive (else 408;
                                                        a client trickling its body is cut off)
``REFEREE_SSE_HEARTBEAT``   ``15``                      seconds between heartbeat comments of an
                                                        event stream (``GET /games/{id}/events``)
``REFEREE_SSE_LIFETIME``    ``300``                     seconds an event stream stays open (at most); the
                                                        client then reconnects with Last-Event-ID
``REFEREE_LOG_FORMAT``      ``text``                    ``json``: every process writes one JSON object a
                                                        line to stderr (``referee/host/logs.py``)
``REFEREE_METRICS``         ``1``                       ``0``: no counting, no ``GET /metrics``
``REFEREE_METRICS_ALLOW``   ``127.0.0.1/8,::1``         client addresses/networks ``GET /metrics`` answers
                                                        (404 to any other; ``referee/host/metrics.py``)
``REFEREE_RATE_MESSAGES_PER_ADDRESS`` ``60 per minute;`` messages and mute requests per client address,
                            ``600 per hour``            whatever keys sign them (issue 37, item 4)
``REFEREE_RATE_OFFERS``     ``30 per minute;``          offers and answers to offers per client address
                            ``300 per hour``
``REFEREE_MAX_MESSAGE_BYTES`` ``524288``                bytes of stored messages one game holds; a
                                                        message over it is 409 ``messages/full`` (0: no
                                                        cap); half ``REFEREE_MAX_BUNDLE``
``REFEREE_MAX_STREAMS_PER_CLIENT`` ``8``                event streams one client address holds open at
                                                        once, over every web process; one more is 429
                                                        (0: no cap)
``REFEREE_DEVICE_LINK_SECONDS`` ``600``                 how long a device link's sealed box waits to be taken
                                                        (section 15; ``/keys/links``)
``REFEREE_RATE_DEVICE_LINKS`` ``20 per minute;``        device links made per client address
                            ``100 per hour``
``REFEREE_ARCHIVE_DIR``     ``<REFEREE_VAR>/archive``   where finished games go when they leave Redis
                                                        (one fsync'd file per game; back it up)
``REFEREE_ARCHIVE_AFTER``   ``604800`` (7 days)         seconds after a game's ``revealed`` entry (a
                                                        recorded game: its last) before ``referee
                                                        archive`` and the replay workers move it
                                                        out of Redis
``REFEREE_ARCHIVE_EVERY``   ``3600``                    seconds between the replay workers' archiving
                                                        passes (one worker at a time; 0: never)
``REFEREE_MIN_FREE_DISK``   1024 × ``REFEREE_MAX_BODY`` bytes kept free under the log Redis's data: below
                            (64 MiB)                    it writes are 503 ``log/disk_full`` and reads go
                                                        on (``referee/host/diskspace.py``; 0: no floor)
``REFEREE_LOG_DISK``        the log Redis's ``dir``     the folder whose disk the floor watches (unset:
                                                        asked of the log Redis when it runs here)
``REFEREE_RECOVERY_WAIT``   ``259200`` (72 hours)       seconds a recovery of a lost key waits at least
                                                        before it may complete (CONTRACT section 15)
=========================== =========================== ==========================================
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

DEFAULTS: dict[str, Any] = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "REFEREE_WORK_REDIS_URL": None,  # None: REDIS_URL
    "REFEREE_STORE": "redis",
    "REFEREE_VAR": "var",
    "REFEREE_KEY_FILE": None,  # None: <REFEREE_VAR>/referee-key
    "REFEREE_ORGANISER_KEYS": "",
    "REFEREE_MAX_BODY": 64 * 1024,
    "REFEREE_MAX_BUNDLE": 1024 * 1024,  # the longest golden game's bundle is ~106 KB (docs/service.md)
    # Rate limits: every REFEREE_RATE_* setting is a Flask-Limiter rate string (referee.api.limits).
    "REFEREE_RATE_VERIFY": "10 per minute",
    "REFEREE_RATE_CREATE": "30 per minute;120 per hour",
    "REFEREE_REDIS_MAXMEMORY": "1gb",
    "REFEREE_MIN_REPLICAS": 0,
    "REFEREE_REPLICA_TIMEOUT_MS": 1000,
    "REFEREE_ACCEPT_WITHIN": 604800.0,
    "REFEREE_MAX_OPEN_GAMES": 10,
    "REFEREE_RATE_CONTACTS": "30 per minute;120 per hour",
    "REFEREE_RATE_CREATE_PER_KEY": "30 per minute;120 per hour",
    "REFEREE_RATE_CONTACTS_PER_KEY": "30 per minute;120 per hour",
    "REFEREE_RATE_TOURNAMENTS": "10 per minute;60 per hour",
    "REFEREE_RATE_TOURNAMENTS_PER_KEY": "10 per minute;60 per hour",
    "REFEREE_RATE_MESSAGES": "20 per minute;300 per hour",
    "REFEREE_QUEUE": "referee",
    "REFEREE_DISPATCH": None,  # None: "rq" with the Redis store, "inline" with the memory store
    "REFEREE_MAX_WAIT": 30.0,
    "REFEREE_STALE_AFTER": 10.0,
    "REFEREE_RECONCILE_EVERY": 5.0,
    "REFEREE_DEADLINES_EVERY": 0.25,
    "REFEREE_BENCH_NOOP": False,
    "REFEREE_SMTP_URL": "",
    "REFEREE_MAIL_FROM": "referee@localhost",
    "REFEREE_WEBHOOK_RETRIES": "10,60,300,1800,3600,7200,21600,43200",
    "REFEREE_WEBHOOK_PRIVATE": True,
    "REFEREE_WEBHOOK_TIMEOUT": 5.0,
    "REFEREE_WEBHOOK_DISABLE_AFTER": 20,
    "REFEREE_SSE_HEARTBEAT": 15.0,
    "REFEREE_BODY_TIMEOUT": 20.0,
    "REFEREE_SSE_LIFETIME": 300.0,
    "REFEREE_ARCHIVE_DIR": None,  # None: <REFEREE_VAR>/archive
    "REFEREE_ARCHIVE_AFTER": 604800.0,
    "REFEREE_ARCHIVE_EVERY": 3600.0,
}

# -- facing the open internet (issue 17): public URL, trusted proxies, the Redis password -------------
DEFAULTS.update({
    "REFEREE_PUBLIC_URL": "http://127.0.0.1:8000",
    "REFEREE_HOUSE_BOT_KEY": "",
    "REFEREE_TRUSTED_PROXIES": "",
    "REFEREE_REDIS_PASSWORD_FILE": None,
})
# ------------------------------------------------------------------------------------------------------
# -- operating it (issue 23): logs and metrics ----------------------------------------------------------
DEFAULTS.update({
    "REFEREE_LOG_FORMAT": "text",
    "REFEREE_METRICS": True,
    "REFEREE_METRICS_ALLOW": "127.0.0.1/8,::1",
})

# -- volume (issue 37, items 4 and 9): messages, offers and event streams per client address ------------------
DEFAULTS.update({
    "REFEREE_RATE_MESSAGES_PER_ADDRESS": "60 per minute;600 per hour",
    "REFEREE_RATE_OFFERS": "30 per minute;300 per hour",
    "REFEREE_MAX_MESSAGE_BYTES": 512 * 1024,
    "REFEREE_MAX_STREAMS_PER_CLIENT": 8,
})

# -- a full disk (issue 50; CONTRACT section 13, "A full disk") -------------------------------------------------
DEFAULTS.update({
    "REFEREE_MIN_FREE_DISK": None,  # None: 1024 × REFEREE_MAX_BODY (64 MiB); 0: no floor (referee/host/diskspace.py)
    "REFEREE_LOG_DISK": None,  # None: the log Redis's own `dir`, when it runs on this machine
})

# -- one player, every device (section 15): device links ----------------------------------------------------
DEFAULTS.update({
    "REFEREE_DEVICE_LINK_SECONDS": 600,
    "REFEREE_RATE_DEVICE_LINKS": "20 per minute;100 per hour",
})

# -- a seat's new key (issue 48, CONTRACT section 15) ----------------------------------------------------------
DEFAULTS.update({
    "REFEREE_RECOVERY_WAIT": 72 * 3600,  # seconds a recovery of a lost key waits at least (int)
})

_INTS = {"REFEREE_MAX_BODY", "REFEREE_MAX_BUNDLE", "REFEREE_WEBHOOK_DISABLE_AFTER", "REFEREE_MIN_REPLICAS",
         "REFEREE_REPLICA_TIMEOUT_MS", "REFEREE_MAX_OPEN_GAMES", "REFEREE_MAX_MESSAGE_BYTES",
         "REFEREE_MAX_STREAMS_PER_CLIENT", "REFEREE_MIN_FREE_DISK"}
_FLOATS = {"REFEREE_ACCEPT_WITHIN", "REFEREE_ARCHIVE_AFTER", "REFEREE_ARCHIVE_EVERY",
           "REFEREE_MAX_WAIT", "REFEREE_STALE_AFTER", "REFEREE_RECONCILE_EVERY", "REFEREE_DEADLINES_EVERY",
           "REFEREE_WEBHOOK_TIMEOUT", "REFEREE_SSE_HEARTBEAT", "REFEREE_SSE_LIFETIME",
           "REFEREE_BODY_TIMEOUT", "REFEREE_DEVICE_LINK_SECONDS"}
_BOOLS = {"REFEREE_BENCH_NOOP", "REFEREE_WEBHOOK_PRIVATE", "REFEREE_METRICS"}


class ConfigError(ValueError):
    """A setting has a value the service cannot use; the message names it."""


def _coerce(name: str, value: Any) -> Any:
    if value is None:
        return None
    try:
        if name in _INTS:
            return int(value)
        if name in _FLOATS:
            return float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{name}={value!r} is not a number") from exc
    if name in _BOOLS:
        if isinstance(value, bool):
            return value
        return str(value).strip().lower() in {"1", "true", "yes", "on"}
    return value


def organiser_keys(value: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """The organiser key list from its comma-separated form (or a list), without blanks."""
    if not value:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    return [item.strip() for item in items if item.strip()]


def load_config(overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Defaults, then the environment, then ``overrides``; values coerced and derived defaults filled in."""
    env = os.environ if environ is None else environ
    config: dict[str, Any] = dict(DEFAULTS)
    for name in DEFAULTS:
        if name in env and env[name] != "":
            config[name] = env[name]
    if overrides:
        config.update(overrides)
    for name in list(config):
        if name in DEFAULTS:
            config[name] = _coerce(name, config[name])
    if not config["REFEREE_WORK_REDIS_URL"]:
        config["REFEREE_WORK_REDIS_URL"] = config["REDIS_URL"]
    if not config["REFEREE_ARCHIVE_DIR"]:
        config["REFEREE_ARCHIVE_DIR"] = os.path.join(config["REFEREE_VAR"], "archive")
    if not config["REFEREE_KEY_FILE"]:
        config["REFEREE_KEY_FILE"] = os.path.join(config["REFEREE_VAR"], "referee-key")
    if config["REFEREE_STORE"] not in {"redis", "memory"}:
        raise ConfigError(f"REFEREE_STORE must be 'redis' or 'memory', not {config['REFEREE_STORE']!r}")
    if not config["REFEREE_DISPATCH"]:
        config["REFEREE_DISPATCH"] = "rq" if config["REFEREE_STORE"] == "redis" else "inline"
    if config["REFEREE_DISPATCH"] not in {"rq", "inline", "none"}:
        raise ConfigError(f"REFEREE_DISPATCH must be 'rq', 'inline' or 'none', not {config['REFEREE_DISPATCH']!r}")
    if config["REFEREE_DISPATCH"] == "rq" and config["REFEREE_STORE"] != "redis":
        raise ConfigError("REFEREE_DISPATCH=rq needs REFEREE_STORE=redis")
    config["REFEREE_ORGANISER_KEYS"] = organiser_keys(config["REFEREE_ORGANISER_KEYS"])
    try:
        retries = config["REFEREE_WEBHOOK_RETRIES"]
        config["REFEREE_WEBHOOK_RETRIES"] = [int(x) for x in str(retries).split(",") if x.strip()] if isinstance(
            retries, str) else [int(x) for x in retries]
    except ValueError as exc:
        raise ConfigError(f"REFEREE_WEBHOOK_RETRIES must be seconds separated by commas: {exc}") from exc
    for name in ("REFEREE_MAX_BODY", "REFEREE_MAX_BUNDLE", "REFEREE_REPLICA_TIMEOUT_MS", "REFEREE_DEVICE_LINK_SECONDS"):
        if config[name] <= 0:
            raise ConfigError(f"{name} must be positive")
    if config["REFEREE_MIN_FREE_DISK"] is None:
        config["REFEREE_MIN_FREE_DISK"] = 1024 * config["REFEREE_MAX_BODY"]
    for name in ("REFEREE_MIN_REPLICAS", "REFEREE_MAX_MESSAGE_BYTES", "REFEREE_MAX_STREAMS_PER_CLIENT",
                 "REFEREE_MIN_FREE_DISK"):
        if config[name] < 0:
            raise ConfigError(f"{name} must be 0 or more")
    _check_defences(config)
    _check_observability(config)
    for name in DEFAULTS:
        if name.startswith("REFEREE_RATE_"):
            config[name] = rate(name, config[name])
    return config


# -- facing the open internet (issue 17) -----------------------------------------------------------------
def with_password(url: str, password: str | None) -> str:
    """``url`` with ``password`` put in, unless it carries one already (or there is none).

    >>> with_password("redis://127.0.0.1:6379/0", "s3cret")
    'redis://:s3cret@127.0.0.1:6379/0'
    >>> with_password("rediss://:other@example.org:6380/0", "s3cret")
    'rediss://:other@example.org:6380/0'
    >>> with_password("unix:///run/redis.sock?db=0", "s3cret")
    'unix:///run/redis.sock?db=0&password=s3cret'
    """
    parts = urlsplit(url)
    if not password or parts.password or parts.scheme not in {"redis", "rediss", "unix"}:
        return url
    if parts.scheme == "unix":
        if "password=" in parts.query:
            return url
        return url + ("&" if parts.query else "?") + "password=" + quote(password, safe="")
    user = quote(parts.username or "", safe="")
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}{port}"))


def read_password_file(path: str) -> str:
    try:
        password = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"REFEREE_REDIS_PASSWORD_FILE={path!r}: {exc.strerror}") from exc
    if not password:
        raise ConfigError(f"REFEREE_REDIS_PASSWORD_FILE={path!r} is empty")
    return password


def _network_list(config: dict[str, Any], name: str) -> None:
    """``config[name]``, a comma-separated string or a list of IP addresses/networks, as a checked list."""
    value = config[name]
    items = value.split(",") if isinstance(value, str) else list(value or [])
    config[name] = [item.strip() for item in items if item.strip()]
    for item in config[name]:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError as exc:
            raise ConfigError(f"{name}: {item!r} is no IP address or network") from exc


def _check_defences(config: dict[str, Any]) -> None:
    public = urlsplit(str(config["REFEREE_PUBLIC_URL"]))
    if public.scheme not in {"http", "https"} or not public.hostname or public.query or public.fragment:
        raise ConfigError(f"REFEREE_PUBLIC_URL must be an http(s) URL without query or fragment, "
                          f"not {config['REFEREE_PUBLIC_URL']!r}")
    _network_list(config, "REFEREE_TRUSTED_PROXIES")
    if config["REFEREE_REDIS_PASSWORD_FILE"]:
        password = read_password_file(config["REFEREE_REDIS_PASSWORD_FILE"])
        for name in ("REDIS_URL", "REFEREE_WORK_REDIS_URL"):
            config[name] = with_password(config[name], password)


def _check_observability(config: dict[str, Any]) -> None:
    if config["REFEREE_LOG_FORMAT"] not in {"text", "json"}:
        raise ConfigError(f"REFEREE_LOG_FORMAT must be 'text' or 'json', not {config['REFEREE_LOG_FORMAT']!r}")
    _network_list(config, "REFEREE_METRICS_ALLOW")


def rate(name: str, value: Any) -> str:
    """A rate limit setting: a Flask-Limiter rate string such as ``10 per minute`` or ``3/second;100/hour``."""
    from limits import parse_many  # noqa: PLC0415 - only when the settings are loaded

    try:
        if not isinstance(value, str) or not parse_many(value):
            raise ValueError(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a rate like '10 per minute' or '3/second;100/hour'") from exc
    return value
