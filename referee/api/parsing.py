"""Request bodies: ``Content-Type: application/json`` in UTF-8 (else 415/400, ``referee.api.body.json_body``),
strict JSON (``referee.protocol.canonical.parse_strict``), marshmallow validation, and every problem listed in one
400. Bodies over ``REFEREE_MAX_BODY`` never get here: ``referee.api.body.BodyLimit`` answers 413."""

from __future__ import annotations

from typing import Any, NoReturn

import flask
import marshmallow as ma
from flask_smorest import Blueprint
from webargs.flaskparser import FlaskParser

from schemas.common import problems_from_messages

from ..errors import ServiceError, invalid
from ..protocol.canonical import StrictJSONError, parse_strict
from .body import json_body

_LOCATION_PREFIX = {"json": "$", "query": "query", "querystring": "query", "view_args": "path", "path": "path"}


class StrictParser(FlaskParser):
    """webargs parser whose JSON is strict (no floats, duplicate keys or huge integers) whatever the
    content type, and whose validation errors are the service's 400."""

    DEFAULT_VALIDATION_STATUS = 400

    def _raw_load_json(self, req: flask.Request) -> Any:
        data = json_body()
        if not data.strip():
            raise invalid([{"path": "$", "problem": "the body is empty; send a JSON object"}])
        try:
            return parse_strict(data)
        except StrictJSONError as exc:
            raise invalid(exc.problems) from exc

    def handle_error(self, error: ma.ValidationError, req: flask.Request, schema: ma.Schema, *,
                     error_status_code: int | None, error_headers: Any) -> NoReturn:
        messages = error.messages
        problems: list[dict[str, str]] = []
        if isinstance(messages, dict) and messages and set(messages) <= set(_LOCATION_PREFIX):
            for location, inner in messages.items():
                problems += problems_from_messages(inner, _LOCATION_PREFIX[location])
        else:
            problems = problems_from_messages(messages)
        raise invalid(problems)


class ApiBlueprint(Blueprint):
    """flask-smorest blueprint using :class:`StrictParser`, whose :meth:`alt_response` documents without
    wrapping."""

    ARGUMENTS_PARSER = StrictParser()

    def alt_response(self, status_code: Any, *args: Any, **kwargs: Any) -> Any:
        """flask-smorest's ``alt_response``, documenting the response in the OpenAPI document exactly as it
        does, without the wrapper it puts around the view for each one: that wrapper only calls the view
        (through ``current_app.ensure_sync``), and a route documenting ten alternative responses paid ten of
        them on every request (issue 28: ~4 % of an accepted move's web CPU)."""
        document = super().alt_response(status_code, *args, **kwargs)

        def decorator(func: Any) -> Any:
            documented = document(func)  # a wrapper holding the doc; the view itself goes on unwrapped
            func._apidoc = documented._apidoc
            return func

        return decorator


def service_error_response(error: ServiceError) -> tuple[dict[str, Any], int]:
    return error.to_dict(), error.status
