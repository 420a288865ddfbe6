"""``POST /_bench/noop``: a Flask POST that does nothing, served by the same app and server as the real
API, so the benchmark can compare the submission path with the framework's own floor. Registered
only when ``REFEREE_BENCH_NOOP`` is on; not in the OpenAPI document."""

from __future__ import annotations

from flask import Blueprint, request

bp = Blueprint("bench", __name__)


@bp.post("/_bench/noop")
def noop() -> tuple[dict[str, bool], int]:
    request.get_data()  # read the body like a real endpoint would
    return {"ok": True}, 202
