"""Browser defences and forwarded headers, set up once where the app is made (CONTRACT section 11).

* :func:`security_headers` — an ``after_request`` hook: every answer of the app (pages, JSON, static
  files, errors) carries the Content-Security-Policy, ``X-Content-Type-Options: nosniff``,
  ``Referrer-Policy`` and ``X-Frame-Options``. The CSP allows scripts, styles, images and fetches from
  the referee's own origin only, no plugins, no ``<base>``, no framing (a framed game page was one click
  away from signing a victim's acceptance) and no form posts elsewhere. Pages therefore keep no inline
  ``<script>`` or ``style=`` attributes; JavaScript styles elements through the CSSOM (``el.style``),
  which a CSP allows.
* :class:`ForwardedHeaders` — WSGI middleware: ``SCRIPT_NAME`` (the prefix of every link the pages
  build) is the path of ``REFEREE_PUBLIC_URL``, whatever the request or the server said, and
  ``X-Forwarded-For``/``-Proto`` are applied (werkzeug's ``ProxyFix``) only for a peer listed in
  ``REFEREE_TRUSTED_PROXIES`` (none by default). ``X-Forwarded-Host``/``-Prefix`` are never used: absolute
  links come from :func:`public_url`, never from ``Host``.
* :func:`relative_redirects` — an ``after_request`` hook: every redirect's ``Location`` (and the link in
  its body) is a relative reference, never built from the request's ``Host`` (werkzeug builds the
  trailing-slash redirect of a route as ``http://<Host>/path/``; a shared cache keyed without ``Host``
  would serve such a poisoned redirect to everyone).

Blueprints hold no security code; ``tests/service/test_defences.py`` walks ``app.url_map`` so that a new
route cannot miss a header.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from flask import Flask, Response, current_app
from werkzeug.middleware.proxy_fix import ProxyFix

from ..addresses import networks, within

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
])

#: the one exception (issue 38): the browser verifier's page and its worker (``referee.web.verify_page``) compile
#: Pyodide's WebAssembly, which needs ``'wasm-unsafe-eval'`` (still no ``'unsafe-eval'``, no inline script). A view
#: opts in by setting exactly this header; :func:`security_headers` keeps it and replaces any other.
WASM_CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.replace("script-src 'self'",
                                                               "script-src 'self' 'wasm-unsafe-eval'")

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate it
    "Cross-Origin-Opener-Policy": "same-origin",
}


#: the other exception (issue 49): a page's import map is an inline script, allowed by the SHA-256 of its text and by
#: nothing else (:func:`with_script_hash`): no other inline script runs, and the page's own map cannot be changed
_SCRIPT_SOURCES = r"script-src 'self'(?: 'sha256-[A-Za-z0-9+/]{43}=')?(?: 'wasm-unsafe-eval')?"
_KEPT_POLICY = re.compile(
    "^" + re.escape(CONTENT_SECURITY_POLICY).replace(re.escape("script-src 'self'"), _SCRIPT_SOURCES) + "$")


def with_script_hash(policy: str, sha256_b64: str) -> str:
    """``policy`` (:data:`CONTENT_SECURITY_POLICY` or the verifier's) allowing the one inline script whose SHA-256 is
    ``sha256_b64`` (base64): a page's import map."""
    return policy.replace("script-src 'self'", f"script-src 'self' 'sha256-{sha256_b64}'", 1)


def security_headers(response: Response) -> Response:
    """The ``after_request`` hook: the headers of section 11 on every answer (the verifier's page keeps its
    :data:`WASM_CONTENT_SECURITY_POLICY`, a page its import map's hash: :func:`with_script_hash`)."""
    set_by_view = response.headers.get("Content-Security-Policy")
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    if set_by_view and _KEPT_POLICY.fullmatch(set_by_view):
        response.headers["Content-Security-Policy"] = set_by_view
    return response


def relative_redirects(response: Response) -> Response:
    """The ``after_request`` hook: a redirect's absolute ``Location`` becomes the path (with its query and
    fragment) on this origin, and so does the link in the body werkzeug writes beside it."""
    location = response.headers.get("Location")
    if not 300 <= response.status_code < 400 or not location:
        return response
    parts = urlsplit(location)
    if not (parts.scheme or parts.netloc):
        return response
    relative = urlunsplit(("", "", parts.path or "/", parts.query, parts.fragment))
    response.headers["Location"] = relative
    if not response.direct_passthrough and response.mimetype == "text/html":
        body = response.get_data(as_text=True)
        for before, after in ((location, relative), (html.escape(location), html.escape(relative))):
            body = body.replace(before, after)
        response.set_data(body)
    return response


class ForwardedHeaders:
    """Sets ``SCRIPT_NAME`` from the public URL and trusts ``X-Forwarded-For``/``-Proto`` only from the
    proxies named in the settings (one hop: the trusted proxy's own view of its client)."""

    def __init__(self, app: Any, prefix: str, trusted: Iterable[str]):
        self.app = app
        self.prefix = prefix
        self.trusted = networks(trusted)
        self.proxy_fix = ProxyFix(app, x_for=1, x_proto=1, x_host=0, x_port=0, x_prefix=0)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        environ["SCRIPT_NAME"] = self.prefix
        if within(environ.get("REMOTE_ADDR"), self.trusted):  # ::ffff:10.1.2.3 is 10.1.2.3 (referee.addresses)
            return self.proxy_fix(environ, start_response)
        return self.app(environ, start_response)


def public_prefix(public_url: str) -> str:
    """The path part of ``REFEREE_PUBLIC_URL`` without its trailing slash ('' at the root)."""
    return urlsplit(public_url).path.rstrip("/")


def public_url(path: str = "/") -> str:
    """An absolute link for mails, webhooks and the like: ``REFEREE_PUBLIC_URL`` + ``path`` (never ``Host``)."""
    return current_app.config["REFEREE_PUBLIC_URL"].rstrip("/") + "/" + path.lstrip("/")


def init_app(app: Flask) -> None:
    """Register the headers and redirect hooks and wrap the WSGI app in :class:`ForwardedHeaders`."""
    app.after_request(security_headers)
    app.after_request(relative_redirects)
    app.wsgi_app = ForwardedHeaders(app.wsgi_app, public_prefix(app.config["REFEREE_PUBLIC_URL"]),  # type: ignore[method-assign]
                                    app.config["REFEREE_TRUSTED_PROXIES"])
