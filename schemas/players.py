"""A player's games (``GET /players/{key}/games``): the query and the page."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from .games import GAMES_MAX_PAGE, PendingOfferSchema, RulesetRefSchema, page_limit, position_field
from .tournaments import TournamentSummarySchema

#: what ``?status=`` takes: a game's status, or ``open`` (waiting or active)
PLAYER_STATUSES = ("waiting", "active", "finished", "aborted", "expired", "cancelled", "open")


class PlayerGamesQuerySchema(Schema):
    offset = position_field("games to skip, in the page's order (your turn first, then by deadline, then newest)",
                       load_default=0)
    limit = page_limit(GAMES_MAX_PAGE, load_default=GAMES_MAX_PAGE)
    status = fields.String(validate=validate.OneOf(PLAYER_STATUSES), metadata={
        "description": "only the games of this status; 'open': waiting or active"})


class PlayerSeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    key = fields.String(required=True)
    accepted = fields.Boolean(required=True)
    bot = fields.Boolean(metadata={"description": "true when the seat was declared a bot at creation (absent "
                                                  "otherwise)"})


class PlayerGameSchema(Schema):
    game = fields.String(required=True)
    ruleset = fields.Nested(RulesetRefSchema, required=True)
    mode = fields.String(required=True, metadata={"description": "seeded or recorded"})
    tournament = fields.String(allow_none=True, metadata={"description": "the tournament the game belongs to"})
    created_at = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "waiting, active, finished, aborted or expired"})
    seats = fields.List(fields.Nested(PlayerSeatSchema), required=True,
                        metadata={"description": "every seat, with names"})
    my_seats = fields.List(fields.Integer(), required=True, metadata={"description": "the seats of this key"})
    to_move = fields.Integer(allow_none=True, metadata={"description": "the seat to move (active games)"})
    your_turn = fields.Boolean(required=True, metadata={
        "description": "this key's seat is to move, or (waiting games) its acceptance is awaited"})
    awaiting_acceptance = fields.List(fields.Integer(), required=True, metadata={
        "description": "this key's seats whose acceptance a waiting game awaits"})
    deadline = fields.String(allow_none=True, metadata={
        "description": "the seat to move's clock deadline (active games with a clock), or accept_by (waiting games)"})
    last_move_at = fields.String(allow_none=True, metadata={"description": "the time of the log's last entry"})
    pending_offer = fields.Nested(PendingOfferSchema, allow_none=True, metadata={
        "description": "the pending offer (decisions.pending of the game), if any"})
    seq = fields.Integer(allow_none=True, metadata={"description": "the log length the projection is at"})


class PlayerGamesSchema(Schema):
    key = fields.String(required=True)
    games = fields.List(fields.Nested(PlayerGameSchema), required=True)
    offset = fields.Integer(required=True)
    total = fields.Integer(required=True, metadata={"description": "the key's games (of ?status=, if given)"})
    next = fields.Integer(allow_none=True, metadata={"description": "the offset of the next page, or null"})


class PlayerTournamentsQuerySchema(Schema):
    offset = position_field("tournaments to skip, newest first", load_default=0)
    limit = page_limit(GAMES_MAX_PAGE, load_default=GAMES_MAX_PAGE)


class PlayerTournamentsSchema(Schema):
    key = fields.String(required=True)
    tournaments = fields.List(fields.Nested(TournamentSummarySchema), required=True)
    offset = fields.Integer(required=True)
    total = fields.Integer(required=True, metadata={"description": "the key's tournaments"})
    next = fields.Integer(allow_none=True, metadata={"description": "the offset of the next page, or null"})
