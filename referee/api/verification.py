"""Verification over HTTP (CONTRACT section 7): the referee's key, game bundles, and the verifier.

* ``GET /referee-key`` — ``{"key": "<base64url>", "algorithm": "Ed25519"}``: the key every bundle of this
  referee is signed with (pass it to ``referee verify --referee-key``).
* ``GET /games/{id}/export`` — the signed bundle of a game (``referee.verify.bundle``): final once the seed is
  revealed (or a recorded game is over), otherwise interim (``"interim": true``, no seed, ``result`` null);
  with the game's public messages (``messages``: private ones by hash only) when it has any.
* ``POST /verify`` — the same verifier as ``referee verify`` (``referee.verify.verify_bundle``). The body
  is the bundle, at most ``REFEREE_MAX_BUNDLE`` bytes (default 1 MiB; else 413), as
  ``Content-Type: application/json`` (else 415); at most ``REFEREE_RATE_VERIFY`` per client address
  (default 10 per minute; else 429 with ``Retry-After``). A body that is not a
  strict-JSON object with ``"format": "referee-bundle/1"`` is 400. Anything that is a bundle gets **200**
  with the report, whether it verifies or not: the request succeeded, ``ok``/``status`` carry the
  verdict (``?referee_key=<base64url>`` additionally requires that signer). The report adds
  ``signed_by_this_referee``.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, request
from flask.views import MethodView

from schemas.common import ErrorSchema

from ..errors import ServiceError, invalid
from ..protocol.canonical import StrictJSONError
from ..protocol.signing import public_key_b64
from ..store import GameNotFound
from ..store.keys import valid_game_id
from ..verify import BUNDLE_FORMAT, verify_bundle
from ..verify.bundle import export_bundle, load_bundle
from .body import json_body
from .limits import rate_limited
from .parsing import ApiBlueprint

blp = ApiBlueprint("verification", __name__, description="Verification bundles, the referee's key, and the verifier")

_REPORT_DOC = {
    "description": "The verification report: ok, status (verified, failed, incomplete, version_mismatch), "
                   "first_failure {check, position, reason}, and every check {name, status, ok, position, reason}.",
}


def referee_public_key() -> str:
    return public_key_b64(current_app.extensions["referee.key"])


@blp.route("/referee-key")
class RefereeKey(MethodView):
    @blp.response(200)
    def get(self) -> dict[str, str]:
        """The referee's Ed25519 public key (base64url of its 32 raw bytes) that signs every bundle."""
        return {"key": referee_public_key(), "algorithm": "Ed25519"}


@blp.route("/games/<game_id>/export")
class Export(MethodView):
    @blp.response(200, description="The signed bundle (CONTRACT section 7); interim while the game runs.")
    @blp.alt_response(404, schema=ErrorSchema)
    def get(self, game_id: str) -> Any:
        """The game's verification bundle, signed by the referee; verify it with ``referee verify``."""
        store = current_app.extensions["referee.store"]
        if not valid_game_id(game_id):
            raise ServiceError(404, "game/not_found", f"no game {game_id!r}")
        message_store = current_app.extensions.get("referee.messages")
        # the messages first: each records the log length when it came, which the log read after then holds
        messages = message_store.store.read(game_id) if message_store is not None else []
        try:
            log = store.read_log(game_id)
        except GameNotFound as exc:
            raise ServiceError(404, "game/not_found", f"no game {game_id!r}") from exc
        bundle = export_bundle(log, store.read_projection(game_id), current_app.extensions["referee.key"], messages)
        return current_app.response_class(current_app.json.dumps(bundle), mimetype="application/json")


@blp.route("/verify")
class Verify(MethodView):
    @blp.doc(requestBody={"required": True, "description": f"a bundle ({BUNDLE_FORMAT}), as exported",
                          "content": {"application/json": {"schema": {"type": "object"}}}},
             parameters=[{"in": "query", "name": "referee_key", "required": False, "schema": {"type": "string"},
                          "description": "base64url Ed25519 key the bundle must be signed with"}])
    @blp.response(200, description=_REPORT_DOC["description"])
    @blp.alt_response(400, schema=ErrorSchema, description="not a JSON bundle")
    @blp.alt_response(413, schema=ErrorSchema, description="larger than REFEREE_MAX_BUNDLE")
    @blp.alt_response(415, schema=ErrorSchema, description="not Content-Type: application/json")
    @blp.alt_response(429, schema=ErrorSchema, description="over REFEREE_RATE_VERIFY; see Retry-After")
    @rate_limited("REFEREE_RATE_VERIFY")
    def post(self) -> dict[str, Any]:
        """Verify a bundle: signatures, hash chain, seed commitment, replay with the pinned engine, result.
        200 with the report, ``ok: false`` when a check fails."""
        data = json_body()  # its size is checked before the app runs (referee.api.body.BodyLimit)
        if not data.strip():
            raise invalid([{"path": "$", "problem": "the body is empty; POST a bundle"}])
        try:
            bundle = load_bundle(data)
        except StrictJSONError as exc:
            raise invalid(exc.problems, "the body is not strict JSON: "
                          + "; ".join(f"{p['path']}: {p['problem']}" for p in exc.problems)) from exc
        if not isinstance(bundle, dict) or bundle.get("format") != BUNDLE_FORMAT:
            raise invalid([{"path": "$.format", "problem": f"must be {BUNDLE_FORMAT!r}: this is not a referee bundle"}])
        expected = request.args.get("referee_key") or None
        report = verify_bundle(bundle, referee_key=expected).to_dict()
        report["signed_by_this_referee"] = bundle.get("referee_key") == referee_public_key()
        return report
