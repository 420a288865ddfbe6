"""Rate limits (CONTRACT section 11): Flask-Limiter, one ``Limiter`` per app, counting in the work Redis.

To limit a route, name a setting:

1. add the setting to ``referee.config.DEFAULTS`` with a name starting ``REFEREE_RATE_`` and a default in
   Flask-Limiter's notation (``"10 per minute"``, ``"3/second;100/hour"``); ``load_config`` refuses a value
   it cannot parse, and ``docs/service.md`` lists it;
2. decorate the view (a function, or a ``MethodView`` method such as ``post``) with
   ``@rate_limited("REFEREE_RATE_…")`` — outermost, so that the limit is checked before the body is
   parsed. ``key=`` picks what is counted (default: the client's address; e.g. a public key for the
   per-key limits).

:func:`init_app` (called once by ``referee.app.create_app``) builds the app's ``Limiter`` on
``REFEREE_WORK_REDIS_URL`` (``memory://`` with ``REFEREE_STORE=memory``), applies every marked limit to
the app's view functions, and answers a breach with **429**, ``Retry-After`` (seconds) and
``{"error": {"code": "rate/limited", "message", "details": {"limit", "retry_after"}}}``.

The client address is the socket's peer (``request.remote_addr``), normalised (:func:`client_address`):
forwarded headers are trusted only from ``REFEREE_TRUSTED_PROXIES`` (``referee/web/defences.py``).
When the work Redis cannot be reached the limits are not enforced (logged), rather than refusing
requests that do not need Redis: ``POST /verify`` works without it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from flask import Flask, current_app
from flask.typing import RouteCallable
from flask_limiter import Limiter, RateLimitExceeded
from limits import RateLimitItemPerDay
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from ..addresses import normalised_text
from ..messages.limits import KEY_PREFIX, proven, proven_seat_key, storage_uri

log = logging.getLogger(__name__)

_MARK = "_referee_rate_limits"


def rate_limited(setting: str, key: Callable[[], str] | None = None, *, shared: bool = False) -> Callable[[Any], Any]:
    """Mark a view as limited by the rate in ``app.config[setting]``, counted per ``key()`` (default: the
    client's address): per route, or with ``shared`` one budget over every route marked with ``setting``
    (counted under the scope ``setting``, as :func:`referee.messages.limits.spend` counts). The limit is
    applied by :func:`init_app`."""
    if not setting.startswith("REFEREE_RATE_"):
        raise ValueError(f"a rate setting's name starts with REFEREE_RATE_, not {setting!r}")

    def mark(view: Any) -> Any:
        setattr(view, _MARK, [*getattr(view, _MARK, []), (setting, key, shared)])
        return view

    return mark


Marked = tuple[str | None, str, Callable[[], str] | None, bool]


def _marked(view_func: Any) -> list[Marked]:
    """``(method or None for all, setting, key, shared)`` of every limit marked on a view function or its class."""
    found: list[Marked] = [(None, setting, key, shared) for setting, key, shared in getattr(view_func, _MARK, [])]
    view_class = getattr(view_func, "view_class", None)
    for method in sorted(getattr(view_class, "methods", None) or []):
        handler = getattr(view_class, method.lower(), None)
        found += [(method, setting, key, shared) for setting, key, shared in getattr(handler, _MARK, [])]
    return found


def _body() -> Any:
    """The request's JSON body, or None. It is read whole already and is at most ``REFEREE_MAX_BODY`` bytes
    (``referee/api/body.py``); one that does not parse counts per address and is refused by the schemas."""
    from flask import request  # noqa: PLC0415

    return request.get_json(silent=True, force=True, cache=True)


def _by_key_or_address(key: Any, value: Any, sig: Any) -> str:
    return "key:" + key if proven(key, value, sig) else "addr:" + client_address()


def signing_key() -> str:
    """The limit key of a request signed by the key its envelope names (``envelope.key``: contacts): that key
    once its signature over the envelope checks, else the client's address."""
    body = _body()
    envelope = body.get("envelope") if isinstance(body, dict) else None
    if not isinstance(envelope, dict):
        return "addr:" + client_address()
    return _by_key_or_address(envelope.get("key"), envelope, body.get("sig"))


def organiser_key(ctx: str) -> Callable[[], str]:
    """The limit key of a creation an organiser or a creator signs (``organiser: {key, sig}`` or ``creator: {key,
    sig}`` over ``{"v": 1, "ctx": ctx, ...the body without it}``): that key once its signature checks, else the
    client's address."""

    def key() -> str:
        body = _body()
        if not isinstance(body, dict):
            return "addr:" + client_address()
        for field in ("organiser", "creator"):  # a game with open seats is signed by its creator (section 14)
            holder = body.get(field)
            if isinstance(holder, dict):
                request = {"v": 1, "ctx": ctx, **{name: value for name, value in body.items() if name != field}}
                return _by_key_or_address(holder.get("key"), request, holder.get("sig"))
        return "addr:" + client_address()

    return key


def seat_key() -> str:
    """The limit key of a seat's signed request that names no key (a message, a mute): the public key of
    ``envelope.seat`` in ``envelope.game``'s ``created`` entry (the game service caches it), once the
    request's signature checks under it, so that one key counts once whatever game it writes in; else the
    client's address (an unknown game or seat, a bad signature: refused after, by the view)."""
    return proven_seat_key(current_app.extensions["referee.service"].created_entry, _body()) or (
        "addr:" + client_address())


def client_address() -> str:
    """The client's address as the limits count it: the socket's peer (or what a trusted proxy forwarded),
    normalised (``referee.addresses``: ``::ffff:192.0.2.7`` is ``192.0.2.7``)."""
    from flask import request  # noqa: PLC0415

    return normalised_text(request.remote_addr)


def _rate(setting: str) -> Callable[[], str]:
    return lambda: current_app.config[setting]


def _setting_name(setting: str) -> Callable[[], str]:
    """A limit's error message: the name of its setting (what ``rate_limited_error`` reports)."""
    return lambda: setting


def confirmation_budget(config: Mapping[str, Any], per_day: int) -> Callable[[str], bool]:
    """``allow(mailbox)`` for ``referee.notify.contacts.ContactService``: whether one more confirmation mail to
    ``mailbox`` is within ``per_day`` in the last 24 hours (a moving window, in the limits' storage), counting
    it when it is. When the storage cannot be reached the answer is no: the promise is "at most"."""
    window = MovingWindowRateLimiter(storage_from_string(storage_uri(config)))
    limit = RateLimitItemPerDay(per_day)

    def allow(mailbox: str) -> bool:
        try:
            return window.hit(limit, KEY_PREFIX, "confirmation-mails", mailbox)
        except Exception:
            log.exception("could not count a confirmation mail; none is sent")
            return False

    return allow


def init_app(app: Flask) -> Limiter:
    """The app's ``Limiter`` (``app.extensions["referee.limiter"]``), with every marked limit applied."""
    config = app.config
    limiter = Limiter(client_address, app=app, storage_uri=storage_uri(config), key_prefix=KEY_PREFIX,
                      strategy="fixed-window", swallow_errors=True, headers_enabled=False)
    for endpoint, view_func in list(app.view_functions.items()):
        marks = _marked(view_func)
        wrapped = view_func
        for method, setting, key, shared in marks:
            # the limiter's wrapper is called as the view it wraps
            methods = [method] if method else None
            if shared:  # one budget over the routes marked with this setting: scope = the setting
                limit = limiter.shared_limit(_rate(setting), setting, key_func=key, methods=methods,
                                             error_message=_setting_name(setting))
            else:  # one budget per route: Flask-Limiter's scope is "<endpoint>:<setting>"
                limit = limiter.limit(_rate(setting), key_func=key, methods=methods, scope=setting,
                                      error_message=_setting_name(setting))
            wrapped = cast(RouteCallable, limit(wrapped))
        if marks:
            app.view_functions[endpoint] = wrapped
    # Every limit here is a decorated view's, checked by its own wrapper; the Limiter's before-request hook checks
    # only default, application and blueprint limits, which this app never sets. It cost every request, a move
    # included, a walk through the Limiter's resolution (issue 28: ~5 % of an accepted move's web CPU).
    app.before_request_funcs.setdefault(None, []).remove(limiter._check_request_limit)
    app.extensions["referee.limiter"] = limiter

    @app.errorhandler(RateLimitExceeded)
    def rate_limited_error(error: RateLimitExceeded) -> tuple[dict[str, Any], int, dict[str, str]]:
        current = limiter.current_limit
        reset_at = current.reset_at if current is not None else time.time() + 1
        retry_after = max(1, math.ceil(reset_at - time.time()))
        limit = str(error.limit.limit)
        from . import localized  # noqa: PLC0415 - the package imports this module

        return (localized({"error": {"code": "rate/limited",
                                     "message": f"too many requests: at most {limit} from one client; retry in "
                                                f"{retry_after} s",
                                     "details": {"limit": limit, "setting": error.description,
                                                 "retry_after": retry_after}}}),
                429, {"Retry-After": str(retry_after)})

    return limiter
