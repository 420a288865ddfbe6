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

Limits: ``REFEREE_MAX_BODY`` for every route, except the routes named in ``limits`` (``POST /verify`` takes
``REFEREE_MAX_BUNDLE``).

:func:`json_body` is how routes get a JSON body: ``Content-Type: application/json`` (charset, if given,
``utf-8``), else **415**; the bytes must be UTF-8 without a byte-order mark, else **400**.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from flask import request
from werkzeug.wsgi import get_content_length

from ..games_service.errors import ServiceError, invalid

_READ = 64 * 1024


def _read(stream: Any, size: int) -> bytes:
    """Up to ``size`` bytes of ``stream`` (fewer only at its end)."""
    out = bytearray()
    while len(out) < size:
        chunk = stream.read(min(_READ, size - len(out)))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def _close_connection(start_response: Callable[..., Any]) -> None:
    """Make the server close the connection after this response and say ``Connection: close``."""
    force_close = getattr(getattr(start_response, "__self__", None), "force_close", None)
    if callable(force_close):  # gunicorn: its Response's start_response; it ignores the header we set
        force_close()


class BodyLimit:
    """WSGI middleware: every request body within its route's limit, read whole before the app runs."""

    def __init__(self, app: Callable[..., Iterable[bytes]], limit: int, limits: Mapping[str, int] | None = None):
        self.app, self.limit, self.limits = app, limit, dict(limits or {})

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        limit = self.limits.get(environ.get("PATH_INFO") or "/", self.limit)
        length = get_content_length(environ)
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if length is not None and length > limit:
            return self._too_large(limit, start_response)
        if chunked and length is None:
            data = _read(environ["wsgi.input"], limit + 1)
            if len(data) > limit:
                return self._too_large(limit, start_response)
            environ.pop("HTTP_TRANSFER_ENCODING", None)
            environ.pop("wsgi.input_terminated", None)
        elif length:
            data = _read(environ["wsgi.input"], length)
        else:
            return self.app(environ, start_response)
        environ["wsgi.input"] = io.BytesIO(data)
        environ["CONTENT_LENGTH"] = str(len(data))
        return self.app(environ, start_response)

    @staticmethod
    def _too_large(limit: int, start_response: Callable[..., Any]) -> list[bytes]:
        body = json.dumps({"error": {"code": "request/too_large",
                                     "message": f"the body is larger than the limit of {limit} bytes",
                                     "details": {"limit": limit}}}).encode()
        _close_connection(start_response)
        start_response("413 Content Too Large", [("Content-Type", "application/json"),
                                                 ("Content-Length", str(len(body))), ("Connection", "close")])
        return [body]


def json_body() -> str:
    """The request's body as text, when it is declared as JSON in UTF-8 and is UTF-8 (no BOM); else 415/400."""
    mimetype = request.mimetype
    charset = request.mimetype_params.get("charset", "utf-8").lower()
    if mimetype != "application/json" or charset not in {"utf-8", "utf8"}:
        declared = request.headers.get("Content-Type")
        raise ServiceError(415, "request/unsupported_media_type",
                           "send the body as Content-Type: application/json (UTF-8), not "
                           + (repr(declared) if declared else "without a Content-Type"),
                           details={"content_type": declared})
    data = request.get_data(cache=True)
    if data.startswith(b"\xef\xbb\xbf"):
        raise invalid([{"path": "$", "problem": "the body starts with a byte-order mark; send UTF-8 without one"}])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid([{"path": "$", "problem": f"the body is not UTF-8: {exc.reason} at byte {exc.start}"}]) from exc
