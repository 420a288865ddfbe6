"""Settings of the service, read from the environment (12-factor), overridable by ``create_app(config)``.

Every setting has the same name in the environment and in ``app.config``:

=========================== =========================== ==========================================
name                        default                     meaning
=========================== =========================== ==========================================
``REDIS_URL``               ``redis://127.0.0.1:6379/0`` the Redis holding the logs (run it with
                                                        ``appendonly yes``, ``appendfsync always``)
``REFEREE_WORK_REDIS_URL``  (``REDIS_URL``)             the Redis holding derived data: the RQ queue
                                                        and the projections (may be non-durable)
``REFEREE_STORE``           ``redis``                   ``redis``, or ``memory`` (one process only,
                                                        projections built inline; for tools/tests)
``REFEREE_VAR``             ``var``                     folder for runtime files
``REFEREE_KEY_FILE``        ``var/referee-key``         the referee's Ed25519 private key (created
                                                        on first start, mode 0600)
``REFEREE_ORGANISER_KEYS``  (empty)                     comma-separated base64url public keys that
                                                        may create games; empty: anyone may
``REFEREE_MAX_BODY``        ``65536``                   largest request body in bytes (else 413)
``REFEREE_MAX_BUNDLE``      ``4194304``                 largest bundle ``POST /verify`` takes (else 413)
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
``REFEREE_SSE_HEARTBEAT``   ``15``                      seconds between heartbeat comments of an
                                                        event stream (``GET /games/{id}/events``)
``REFEREE_SSE_LIFETIME``    ``300``                     seconds an event stream stays open (at most); the
                                                        client then reconnects with Last-Event-ID
=========================== =========================== ==========================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

DEFAULTS: dict[str, Any] = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "REFEREE_WORK_REDIS_URL": None,  # None: REDIS_URL
    "REFEREE_STORE": "redis",
    "REFEREE_VAR": "var",
    "REFEREE_KEY_FILE": None,  # None: <REFEREE_VAR>/referee-key
    "REFEREE_ORGANISER_KEYS": "",
    "REFEREE_MAX_BODY": 64 * 1024,
    "REFEREE_MAX_BUNDLE": 4 * 1024 * 1024,
    "REFEREE_QUEUE": "referee",
    "REFEREE_DISPATCH": None,  # None: "rq" with the Redis store, "inline" with the memory store
    "REFEREE_MAX_WAIT": 30.0,
    "REFEREE_STALE_AFTER": 10.0,
    "REFEREE_RECONCILE_EVERY": 5.0,
    "REFEREE_DEADLINES_EVERY": 0.25,
    "REFEREE_BENCH_NOOP": False,
    "REFEREE_SSE_HEARTBEAT": 15.0,
    "REFEREE_SSE_LIFETIME": 300.0,
}

_INTS = {"REFEREE_MAX_BODY", "REFEREE_MAX_BUNDLE"}
_FLOATS = {"REFEREE_MAX_WAIT", "REFEREE_STALE_AFTER", "REFEREE_RECONCILE_EVERY", "REFEREE_DEADLINES_EVERY",
           "REFEREE_SSE_HEARTBEAT", "REFEREE_SSE_LIFETIME"}
_BOOLS = {"REFEREE_BENCH_NOOP"}


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
    for name in ("REFEREE_MAX_BODY", "REFEREE_MAX_BUNDLE"):
        if config[name] <= 0:
            raise ConfigError(f"{name} must be positive")
    return config
