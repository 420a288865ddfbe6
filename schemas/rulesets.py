"""Rulesets as served by ``GET /rulesets`` and ``GET /rulesets/{name}``."""

from __future__ import annotations

from marshmallow import Schema, fields


class RulesetSchema(Schema):
    name = fields.String(required=True)
    version = fields.String(allow_none=True, metadata={"description": "pinned per game in its created entry"})
    available = fields.Boolean(required=True, metadata={"description": "whether the engine is installed"})
    min_players = fields.Integer(allow_none=True)
    max_players = fields.Integer(allow_none=True)
    options = fields.Dict(allow_none=True, metadata={"description": "the options new games take (JSON Schema)"})


class RulesetDetailSchema(RulesetSchema):
    components = fields.Dict(required=True, metadata={"description": "board, cards, suits, tracks, …"})


class RulesetListSchema(Schema):
    rulesets = fields.List(fields.Nested(RulesetSchema), required=True)
