"""Players: the games of one public key (a player's home, "My games")."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from referee.games_service import GameService
from referee.tournaments.service import TournamentService
from schemas.common import ErrorSchema
from schemas.players import (
    PlayerGamesQuerySchema,
    PlayerGamesSchema,
    PlayerTournamentsQuerySchema,
    PlayerTournamentsSchema,
)

from .parsing import ApiBlueprint

blp = ApiBlueprint("players", __name__, url_prefix="/players",
                   description="A player's games and tournaments, by public key")


def service() -> GameService:
    return current_app.extensions["referee.service"]


@blp.route("/<key>/games")
class PlayerGames(MethodView):
    @blp.arguments(PlayerGamesQuerySchema(), location="query")
    @blp.response(200, PlayerGamesSchema)
    @blp.alt_response(400, schema=ErrorSchema, description="not a public key, or bad paging")
    def get(self, query: dict[str, Any], key: str) -> dict[str, Any]:
        """Every game the key is seated in, paged: the games where it is the key's turn first, then by deadline
        (soonest first), then newest; with status, the key's seats, whose turn, deadline, last move time and
        pending offer."""
        return service().player_games(key, query["offset"], query["limit"], query.get("status"))


@blp.route("/<key>/tournaments")
class PlayerTournaments(MethodView):
    @blp.arguments(PlayerTournamentsQuerySchema(), location="query")
    @blp.response(200, PlayerTournamentsSchema)
    @blp.alt_response(400, schema=ErrorSchema, description="not a public key, or bad paging")
    def get(self, query: dict[str, Any], key: str) -> dict[str, Any]:
        """Every tournament the key is a player of, newest first, paged (the summaries of ``GET /tournaments``)."""
        tournaments: TournamentService = current_app.extensions["referee.tournaments"]
        return tournaments.player_tournaments(key, query["offset"], query["limit"])
