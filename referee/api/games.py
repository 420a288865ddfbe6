"""Games: create, list, and read (state, legal moves, log, replay, result)."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from referee.games_service import CREATE_CTX, GameService
from schemas.common import ErrorSchema
from schemas.games import (
    CreatedSchema,
    CreateGameSchema,
    GameListSchema,
    GameSchema,
    LegalMovesSchema,
    ListQuerySchema,
    LogPageSchema,
    PageQuerySchema,
    ReplayPageSchema,
    ReplayQuerySchema,
    ResultSchema,
)

from .limits import organiser_key, rate_limited
from .parsing import ApiBlueprint

blp = ApiBlueprint("games", __name__, url_prefix="/games", description="Games and their logs, replays and results")


def service() -> GameService:
    return current_app.extensions["referee.service"]


@blp.route("")
class Games(MethodView):
    @blp.arguments(ListQuerySchema(), location="query")
    @blp.response(200, GameListSchema)
    def get(self, query: dict[str, Any]) -> dict[str, Any]:
        """Games, newest first (for a lobby): ruleset, status, seat to move, seats. With ``open=true`` the waiting
        games with a seat open to anyone, oldest first: options, time control, seats taken and open, creator."""
        if query["open"]:
            return service().open_games(query["offset"], query["limit"])
        games = service().list_games(query["offset"], query["limit"])
        following = query["offset"] + len(games) if len(games) == query["limit"] else None
        return {"games": games, "offset": query["offset"], "next": following}

    @rate_limited("REFEREE_RATE_CREATE")
    @rate_limited("REFEREE_RATE_CREATE_PER_KEY", key=organiser_key(CREATE_CTX))
    @blp.arguments(CreateGameSchema())
    @blp.response(201, CreatedSchema)
    @blp.alt_response(429, schema=ErrorSchema, description="over REFEREE_RATE_CREATE; see Retry-After")
    @blp.alt_response(400, schema=ErrorSchema)
    @blp.alt_response(401, schema=ErrorSchema)
    @blp.alt_response(403, schema=ErrorSchema)
    @blp.alt_response(409, schema=ErrorSchema)
    @blp.alt_response(413, schema=ErrorSchema)
    @blp.alt_response(415, schema=ErrorSchema)
    @blp.alt_response(503, schema=ErrorSchema)
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a game: seeded (commit-reveal; seats then accept) or recorded (with a deck; starts at once).

        When organiser keys are configured, the body carries ``organiser: {key, sig}``, ``sig`` being the
        organiser's signature over the RFC 8785 bytes of ``{"v": 1, "ctx": "referee/create", ...}`` (the
        body without ``organiser``).

        A seat may be open: ``{"name"?, "invite": <invitation key>}`` or ``{"open": true}`` (CONTRACT section
        14); such a game is created by a signed request, ``creator: {key, sig}`` with ``sig`` over the same bytes
        (the body without ``creator``), unless ``organiser`` signs it."""
        organiser = body.pop("organiser", None)
        creator = body.pop("creator", None)
        return service().create_game(body, organiser, creator=creator)


@blp.route("/<game_id>")
class Game(MethodView):
    @blp.response(200, GameSchema)
    @blp.alt_response(404, schema=ErrorSchema)
    def get(self, game_id: str) -> dict[str, Any]:
        """Status (waiting, active, finished, aborted), seat to move, seq, head, public state, last verdict."""
        return service().game_state(game_id)


@blp.route("/<game_id>/legal-moves")
class LegalMoves(MethodView):
    @blp.response(200, LegalMovesSchema)
    @blp.alt_response(404, schema=ErrorSchema)
    def get(self, game_id: str) -> dict[str, Any]:
        """Every legal move of the seat to move (empty when the game is not active)."""
        return service().legal_moves(game_id)


@blp.route("/<game_id>/log")
class Log(MethodView):
    @blp.arguments(PageQuerySchema(), location="query")
    @blp.response(200, LogPageSchema)
    @blp.alt_response(404, schema=ErrorSchema)
    def get(self, query: dict[str, Any], game_id: str) -> dict[str, Any]:
        """The raw log entries, paged with ``from`` and ``limit``."""
        return service().log_page(game_id, query["start"], query["limit"])


@blp.route("/<game_id>/replay")
class Replay(MethodView):
    @blp.arguments(ReplayQuerySchema(), location="query")
    @blp.response(200, ReplayPageSchema)
    @blp.alt_response(404, schema=ErrorSchema)
    def get(self, query: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Every entry with its verdict and the public state after it; ``at`` for one step, ``from``/``limit``
        to page."""
        return service().replay(game_id, query["start"], query.get("limit"), query.get("at"))


@blp.route("/<game_id>/result")
class Result(MethodView):
    @blp.response(200, ResultSchema)
    @blp.alt_response(404, schema=ErrorSchema)
    @blp.alt_response(409, schema=ErrorSchema)
    def get(self, game_id: str) -> dict[str, Any]:
        """The final score breakdown per seat, ranks and tie-break chain (409 while the game runs)."""
        return service().result(game_id)
