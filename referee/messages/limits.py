"""The limits the mail gateway applies to what it submits (issue 37, item 4), in the same counters as the HTTP
API's (``referee.api.limits``, which takes the shared parts from here: this package sits below the workers and
the API alike).

A key's budget is spent only by a request its signature proves (:func:`proven`, :func:`proven_seat_key`);
:func:`spend` counts one request against a ``REFEREE_RATE_*`` setting as a route decorated with
``@rate_limited(setting)`` does (Flask-Limiter's fixed window on ``KEY_PREFIX``/key/setting), so a seat that
writes both by HTTP and by mail has one budget.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from limits import parse_many
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from ..protocol.signing import verify

log = logging.getLogger(__name__)

#: the prefix of every rate counter in the limits' storage (the work Redis)
KEY_PREFIX = "referee:rate"


def storage_uri(config: Mapping[str, Any]) -> str:
    """Where the limits count: the work Redis (``memory://`` with ``REFEREE_STORE=memory``)."""
    return "memory://" if config["REFEREE_STORE"] == "memory" else str(config["REFEREE_WORK_REDIS_URL"])


def proven(key: Any, value: Any, sig: Any) -> bool:
    """Whether ``sig`` is ``key``'s signature over ``value``: only then does a request spend ``key``'s budget,
    so that nobody spends another's by naming its key (issue 37). Anything unreadable is unproven."""
    if not (isinstance(key, str) and len(key) <= 64 and isinstance(sig, str) and len(sig) <= 100):
        return False
    try:
        return verify(key, value, sig)
    except Exception:  # a value with floats or the like: no canonical bytes, no proof
        return False


def proven_seat_key(created_entry: Callable[[str], Mapping[str, Any]], body: Any) -> str | None:
    """``"key:" + the seat's key`` of a seat's signed request (``{"envelope": {game, seat, …}, "sig"}``) whose
    signature checks under the key of its seat in the game's ``created`` entry; else None (count it per address)."""
    envelope = body.get("envelope") if isinstance(body, dict) else None
    if isinstance(envelope, dict) and isinstance(envelope.get("game"), str) and type(envelope.get("seat")) is int:
        try:
            key = created_entry(envelope["game"])["seats"][envelope["seat"]]["key"]
            if proven(key, envelope, body.get("sig")):
                return "key:" + key
        except Exception:  # any failure counts per address; the service answers the request
            pass
    return None


_WINDOWS: dict[str, FixedWindowRateLimiter] = {}


#: the scope of ``REFEREE_RATE_MESSAGES`` on ``POST /games/{id}/messages`` (a limit per route: Flask-Limiter
#: counts it under "<endpoint>:<setting>"); the limits marked ``shared`` are counted under their setting's name
MESSAGES_PER_KEY_SCOPE = "messages.Messages:REFEREE_RATE_MESSAGES"


def spend(config: Mapping[str, Any], setting: str, key: str, scope: str | None = None) -> int | None:
    """Count one request of ``key`` against the rate ``config[setting]`` in the same counters as the HTTP
    limits (Flask-Limiter's fixed window on ``KEY_PREFIX``/key/scope; ``scope``: a route's, default the
    setting's name, as a limit marked ``shared`` counts): what the mail gateway's blocks spend (issue 37). The
    seconds until the request would be taken when it is over the rate, else None; None as well when the
    storage cannot be reached (the HTTP limits are not enforced then either)."""
    scope = scope or setting
    uri = storage_uri(config)
    window = _WINDOWS.get(uri) or _WINDOWS.setdefault(uri, FixedWindowRateLimiter(storage_from_string(uri)))
    try:
        over = None
        for item in parse_many(str(config[setting])):
            if not window.hit(item, KEY_PREFIX, key, scope):
                reset_at = window.get_window_stats(item, KEY_PREFIX, key, scope).reset_time
                over = max(over or 1, math.ceil(reset_at - time.time()))
        return over
    except Exception:
        log.exception("could not count a request against %s; not limited", setting)
        return None


