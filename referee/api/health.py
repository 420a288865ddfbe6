"""``GET /health``: whether the store answers, and how durable its writes are."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from schemas.common import ErrorSchema, HealthSchema, HouseBotSchema

from ..errors import ServiceError
from .parsing import ApiBlueprint

blp = ApiBlueprint("health", __name__, description="Liveness of the service and its store")


@blp.route("/health")
class Health(MethodView):
    @blp.response(200, HealthSchema)
    @blp.alt_response(503, schema=HealthSchema)
    def get(self) -> tuple[dict[str, Any], int]:
        """200 when the store answers, else 503. ``disk``: ``ok``, ``full`` (below ``REFEREE_MIN_FREE_DISK``:
        writes are refused, reads go on) or ``unknown``; ``writes``: whether a write would be taken now."""
        store = current_app.extensions["referee.store"]
        ok = store.ping()
        durability = store.durability() if hasattr(store, "durability") and ok else {}
        disk = current_app.extensions.get("referee.log_disk")
        state = disk.state() if disk is not None else "unknown"
        return {"ok": ok, "store": current_app.config["REFEREE_STORE"], "durability": durability, "disk": state,
                "writes": ok and state != "full"}, 200 if ok else 503


@blp.route("/house-bot")
class HouseBot(MethodView):
    @blp.response(200, HouseBotSchema)
    @blp.alt_response(404, schema=ErrorSchema, description="no house bot runs here")
    def get(self) -> dict[str, Any]:
        """The public key of the house bot (``referee serve --house-bot``: an ordinary ``referee bot`` with a
        key of its own, no privilege); 404 when this referee runs none."""
        key = current_app.config.get("REFEREE_HOUSE_BOT_KEY")
        if not key:
            raise ServiceError(404, "house_bot/none", "no house bot runs here (referee serve --house-bot)")
        return {"key": key}
