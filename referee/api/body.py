"""Request bodies at the edge: their size (one WSGI layer in front of Flask) and their media type.

:class:`BodyLimit` wraps the app's ``wsgi_app`` (``referee.app.create_app``). It is the one place where body
sizes are enforced, whatever the framing:

* a ``Content-Length`` over the route's limit is answered **413** at once; the app never runs;
* a chunked body (no ``Content-Length``) is read up to the limit plus one byte; one byte too many and it is
  **413**, else the app gets it as an ordinary body of known length (so nothing downstream can see a body
  silently cut at the limit, which parsed as "Unterminated string" before);
* every other body is read off the connection before the app runs, so whatever the app answers (415, 429,
  401, …) the connection is at the next request and may be kept alive.

A 413 leaves the rest of the body unread on the connection, so it closes the connection and says so
(``Connection: close``): under gunicorn, which drops hop-by-hop headers an application sets, by calling
``force_close()`` on the gunicorn response whose ``start_response`` the app got; Werkzeug's server honours
the header itself. A keep-alive client's next request then goes on a new connection instead of failing.

A body that does not arrive within ``REFEREE_BODY_TIMEOUT`` seconds (a client trickling it byte by byte)
is answered **408** and the connection closed. Under gevent (the deployment's worker model) the read is
interrupted by a ``gevent.Timeout``; elsewhere the deadline is checked between reads (the server's own
socket timeout bounds a single read).

Limits: ``REFEREE_MAX_BODY`` for every route, except the routes named in ``limits`` (``POST /verify`` takes
``REFEREE_MAX_BUNDLE``).

:func:`json_body` is how routes get a JSON body: ``Content-Type: application/json`` (charset, if given,
``utf-8``), else **415**; the bytes must be UTF-8 without a byte-order mark, else **400**.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from flask import request
from werkzeug.wsgi import get_content_length

from ..errors import ServiceError, invalid
from ..i18n import Text

_READ = 64 * 1024


class BodyTimeout(Exception):
    """The body did not arrive in time."""


def _gevent_timeout() -> Any:
    """``gevent.Timeout`` when this process runs under gevent's patched sockets, else None."""
    try:
        from gevent import Timeout, monkey  # noqa: PLC0415 - only under gevent
    except ImportError:
        return None
    return Timeout if monkey.is_module_patched("socket") else None


def _read(stream: Any, size: int, timeout: float | None = None) -> bytes:
    """Up to ``size`` bytes of ``stream`` (fewer only at its end); ``BodyTimeout`` after ``timeout`` s."""
    out = bytearray()
    deadline = time.monotonic() + timeout if timeout else None
    gevent_timeout = _gevent_timeout() if timeout else None
    guard = gevent_timeout(timeout, BodyTimeout) if gevent_timeout is not None else None
    if guard is not None:
        guard.start()
    try:
        while len(out) < size:
            if deadline is not None and time.monotonic() > deadline:
                raise BodyTimeout
            chunk = stream.read(min(_READ, size - len(out)))
            if not chunk:
                break
            out += chunk
    finally:
        if guard is not None:
            guard.cancel()
    return bytes(out)


def _close_connection(start_response: Callable[..., Any]) -> None:
    """Make the server close the connection after this response and say ``Connection: close``."""
    force_close = getattr(getattr(start_response, "__self__", None), "force_close", None)
    if callable(force_close):  # gunicorn: its Response's start_response; it ignores the header we set
        force_close()


class BodyLimit:
    """WSGI middleware: every request body within its route's limit, read whole before the app runs."""

    def __init__(self, app: Callable[..., Iterable[bytes]], limit: int, limits: Mapping[str, int] | None = None,
                 timeout: float | None = None):
        self.app, self.limit, self.limits, self.timeout = app, limit, dict(limits or {}), timeout

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        limit = self.limits.get(environ.get("PATH_INFO") or "/", self.limit)
        length = get_content_length(environ)
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if length is not None and length > limit:
            return self._too_large(limit, start_response)
        try:
            if chunked and length is None:
                data = _read(environ["wsgi.input"], limit + 1, self.timeout)
                if len(data) > limit:
                    return self._too_large(limit, start_response)
                environ.pop("HTTP_TRANSFER_ENCODING", None)
                environ.pop("wsgi.input_terminated", None)
            elif length:
                data = _read(environ["wsgi.input"], length, self.timeout)
            else:
                return self.app(environ, start_response)
        except BodyTimeout:
            return self._refuse(408, "request/timeout", f"the body did not arrive within {self.timeout:g} s",
                                {"timeout": self.timeout}, start_response)
        environ["wsgi.input"] = io.BytesIO(data)
        environ["CONTENT_LENGTH"] = str(len(data))
        return self.app(environ, start_response)

    @classmethod
    def _too_large(cls, limit: int, start_response: Callable[..., Any]) -> list[bytes]:
        return cls._refuse(413, "request/too_large", f"the body is larger than the limit of {limit} bytes",
                           {"limit": limit}, start_response)

    @staticmethod
    def _refuse(status: int, code: str, message: str, details: dict[str, Any],
                start_response: Callable[..., Any]) -> list[bytes]:
        """An error before the app runs; the rest of the body is unread, so the connection is closed."""
        body = json.dumps({"error": {"code": code, "message": message, "details": details}}).encode()
        _close_connection(start_response)
        reason = {413: "Content Too Large", 408: "Request Timeout"}[status]
        start_response(f"{status} {reason}", [("Content-Type", "application/json"),
                                              ("Content-Length", str(len(body))), ("Connection", "close")])
        return [body]


def json_body() -> str:
    """The request's body as text, when it is declared as JSON in UTF-8 and is UTF-8 (no BOM); else 415/400."""
    mimetype = request.mimetype
    charset = request.mimetype_params.get("charset", "utf-8").lower()
    if mimetype != "application/json" or charset not in {"utf-8", "utf8"}:
        declared = request.headers.get("Content-Type")
        message = Text("send the body as Content-Type: application/json (UTF-8), not %(declared)s",
                       declared=repr(declared)) if declared else Text(
            "send the body as Content-Type: application/json (UTF-8), not without a Content-Type")
        raise ServiceError(415, "request/unsupported_media_type", message, details={"content_type": declared})
    data = request.get_data(cache=True)
    if data.startswith(b"\xef\xbb\xbf"):
        raise invalid([{"path": "$", "problem": "the body starts with a byte-order mark; send UTF-8 without one"}])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid([{"path": "$", "problem": f"the body is not UTF-8: {exc.reason} at byte {exc.start}"}]) from exc
