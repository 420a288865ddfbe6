"""``GET /rulesets`` and ``GET /rulesets/{name}``."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from referee.errors import ServiceError
from referee.games import names, ruleset
from referee.timecontrol.spec import json_schema as time_control_schema
from schemas.common import ErrorSchema
from schemas.rulesets import RulesetDetailSchema, RulesetListSchema

from .parsing import ApiBlueprint

blp = ApiBlueprint("rulesets", __name__, url_prefix="/rulesets", description="The games the referee knows")


def describe(name: str, detail: bool = False) -> dict[str, Any]:
    try:
        rules = ruleset(name)
    except ImportError:
        return {"name": name, "version": None, "available": False, "min_players": None, "max_players": None,
                "options": None}
    options = rules.options_schema()
    # the referee's own option, beside the engine's: the game's clock (CONTRACT section 8)
    options = {**options, "properties": {**options.get("properties", {}), "time_control": time_control_schema()}}
    out = {"name": rules.name, "version": rules.version, "available": True, "min_players": rules.min_players,
           "max_players": rules.max_players, "options": options}
    if detail:
        out["components"] = rules.components()
    return out


@blp.route("")
class Rulesets(MethodView):
    @blp.response(200, RulesetListSchema)
    def get(self) -> dict[str, Any]:
        """Every ruleset: name, pinned version, player counts and options."""
        return {"rulesets": [describe(name) for name in names()]}


@blp.route("/<name>")
class RulesetDetail(MethodView):
    @blp.response(200, RulesetDetailSchema)
    @blp.alt_response(404, schema=ErrorSchema)
    @blp.alt_response(503, schema=ErrorSchema)
    def get(self, name: str) -> dict[str, Any]:
        """One ruleset with its components (board, cards, tracks, …)."""
        if name not in names():
            raise ServiceError(404, "ruleset/not_found", f"no ruleset {name!r}; known: {', '.join(names())}")
        out = describe(name, detail=True)
        if not out["available"]:
            raise ServiceError(503, "ruleset/unavailable", f"the {name} engine is not installed")
        return out
