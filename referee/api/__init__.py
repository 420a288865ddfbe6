"""The HTTP API (CONTRACT section 6): flask-smorest blueprints per resource, the OpenAPI document at
``/openapi.json``, an offline docs page at ``/docs``, and the error format
``{"error": {"code", "message", "rule"?, "details"?}}``.

``referee.api.verification`` (export and verify, issue 5) is registered when it is installed.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, request
from flask_smorest import Api
from redis.exceptions import RedisError
from werkzeug.exceptions import HTTPException

from schemas.common import ErrorSchema

from ..error_texts import translate_error
from ..errors import ServiceError
from ..i18n import DEFAULT, Text, negotiate

log = logging.getLogger(__name__)

_HTTP_CODES = {400: "request/invalid", 404: "http/not_found", 405: "http/method_not_allowed",
               413: "request/too_large", 415: "request/unsupported_media_type", 500: "server/error"}


def request_language() -> str:
    """The language of the request's reader: its ``Accept-Language`` (en, de, fr), else English."""
    return negotiate(request.headers.get("Accept-Language"))


def localized(body: dict[str, Any], message: Any = None) -> dict[str, Any]:
    """An error body ``{"error": {...}}`` with its human ``message`` in the request's language (issue 24);
    its code, rule, details and field paths as they are."""
    language = request_language()
    if language == DEFAULT or "error" not in body:
        return body
    return {**body, "error": translate_error(body["error"], language, message)}


def _error(status: int, code: str, message: Any, details: dict[str, Any] | None = None) -> tuple[dict, int]:
    body: dict[str, Any] = {"code": code, "message": str(message)}
    if details:
        body["details"] = details
    return localized({"error": body}, message), status


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(ServiceError)
    def service_error(error: ServiceError) -> tuple[dict, int]:
        return localized(error.to_dict(), error.message), error.status

    @app.after_request
    def language_of_errors(response: Response) -> Response:
        """An error's message follows ``Accept-Language``: say so to caches, and say which language it is."""
        if response.status_code >= 400 and response.mimetype == "application/json":
            response.vary.add("Accept-Language")
            response.headers.setdefault("Content-Language", request_language())
        return response

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[dict, int]:
        status = error.code or 500
        if status == 413:
            limit = app.config.get("REFEREE_MAX_BODY")  # normally answered before Flask: referee.api.body
            return _error(413, "request/too_large", Text("the body is larger than the limit of %(limit)s bytes",
                                                         limit=limit), {"limit": limit})
        original = getattr(error, "original_exception", None)
        if status == 500 and original is not None:
            log.error("unhandled error", exc_info=original)
        return _error(status, _HTTP_CODES.get(status, f"http/{status}"), error.description or error.name)

    @app.errorhandler(RedisError)
    def store_error(error: RedisError) -> tuple[dict, int]:
        return _error(503, "store/unavailable", Text("the log store is unavailable: %(error)s", error=str(error)))


def _optional_blueprint(module: str, attribute: str) -> Any:
    try:
        return getattr(importlib.import_module(module), attribute)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            return None
        raise


class RefereeApi(Api):
    """flask-smorest's Api documenting the referee's error body as the default error, and writing the OpenAPI
    document only when something first reads it (``/openapi.json``, ``/docs``, ``api.spec``).

    flask-smorest documents each blueprint as it registers it: a deep copy of every endpoint's docs and each
    schema converted to JSON Schema, about two thirds of ``create_app``'s CPU (0.15 s), in every web process
    and every app a test makes, though most never serve the document. Here ``register_blueprint`` registers the
    routes at once and queues their documentation; the first read of ``spec`` writes all of it, in the order of
    registration, so the document is the same byte for byte (``tests/surface``)."""

    ERROR_SCHEMA = ErrorSchema

    def __init__(self, app: Flask | None = None, **options: Any) -> None:
        self._undocumented: list[Callable[[Any], None]] = []
        self._documenting = threading.Lock()
        self._writer: int | None = None  # the thread writing the queued documentation, while it does
        super().__init__(app, **options)

    @property
    def spec(self) -> Any:
        """The OpenAPI document (apispec's ``APISpec``), with everything registered so far documented. (A writer
        that reads ``spec`` itself, as flask-smorest's own do, gets the document as written so far.)"""
        if self._undocumented and self._writer != threading.get_ident():
            with self._documenting:
                self._writer = threading.get_ident()
                try:
                    while self._undocumented:
                        self._undocumented.pop(0)(self._spec)
                finally:
                    self._writer = None
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        self._spec = value

    def register_blueprint(self, blp: Any, *, parameters: list | None = None, **options: Any) -> None:
        """flask-smorest's ``register_blueprint``, its documentation deferred to the first read of ``spec``."""
        name = options.get("name", blp.name)
        self._app.extensions["flask-smorest"]["blp_name_to_api"][name] = self
        self._app.register_blueprint(blp, **options)

        def document(spec: Any) -> None:
            blp.register_views_in_doc(self, self._app, spec, name=name, parameters=parameters)
            spec.tag({"name": name, "description": blp.description})

        self.document_later(document)

    def _register_responses(self) -> None:
        """flask-smorest's default responses (one per HTTP status, each with the error schema turned into JSON
        Schema: a third of what was left of ``create_app``'s CPU) and, below, its headers: written at the first
        read of ``spec`` too, first, as flask-smorest writes them."""
        self.document_later(lambda spec: Api._register_responses(self))

    def _register_etag_headers(self) -> None:
        self.document_later(lambda spec: Api._register_etag_headers(self))

    def _register_pagination_header(self) -> None:
        self.document_later(lambda spec: Api._register_pagination_header(self))

    def document_later(self, write: Callable[[Any], None]) -> None:
        """``write(spec)`` (which documents something in the OpenAPI document) runs at the first read of ``spec``."""
        self._undocumented.append(write)


def init_app(app: Flask) -> Api:
    """Register the API's blueprints, docs and error handlers on ``app``."""
    from . import (  # noqa: PLC0415
        contacts,
        device_links,
        docs,
        events,
        games,
        health,
        messages,
        rulesets,
        submissions,
        tournaments,
    )
    from .players import blp as players_blp  # noqa: PLC0415

    app.config.setdefault("API_TITLE", "referee")
    app.config.setdefault("API_VERSION", "1")
    app.config.setdefault("OPENAPI_VERSION", "3.0.3")
    app.config.setdefault("OPENAPI_URL_PREFIX", "/")
    app.config.setdefault("OPENAPI_JSON_PATH", "openapi.json")
    api = RefereeApi(app)
    for module in (rulesets, games, submissions, messages, contacts, health):
        api.register_blueprint(module.blp)
    api.register_blueprint(players_blp)
    api.register_blueprint(tournaments.blp)
    api.register_blueprint(tournaments.ratings_blp)
    api.register_blueprint(device_links.blp)
    verification = _optional_blueprint("referee.api.verification", "blp")
    if verification is not None:
        if hasattr(verification, "ARGUMENTS_PARSER"):
            api.register_blueprint(verification)
        else:
            app.register_blueprint(verification)
    web = _optional_blueprint("referee.web", "bp")
    if web is not None:
        app.register_blueprint(web)
    app.register_blueprint(docs.bp)
    app.register_blueprint(events.bp)  # a stream, not JSON: a plain blueprint (documented in docs/service.md)
    api.document_later(lambda spec: events.document(spec, app))  # … described in the OpenAPI document by hand
    if app.config.get("REFEREE_BENCH_NOOP"):
        from . import bench  # noqa: PLC0415 - only for benchmarks

        app.register_blueprint(bench.bp)
    app.extensions["referee.api"] = api
    register_error_handlers(app)
    return api
