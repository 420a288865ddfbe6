"""Tournaments (CONTRACT section 10): create, join, withdraw, the organiser's decisions, the state with
the standings, the log, the certificate; and ratings per ruleset."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app
from flask.views import MethodView

from referee.tournaments.service import TournamentService
from referee.tournaments.spec import TOURNAMENT_CTX
from schemas.common import ErrorSchema
from schemas.games import PageQuerySchema
from schemas.tournaments import (
    CreateTournamentSchema,
    DecisionAnswerSchema,
    DecisionSchema,
    JoinSchema,
    RatingsQuerySchema,
    RatingsSchema,
    StartSchema,
    TournamentCreatedSchema,
    TournamentListQuerySchema,
    TournamentListSchema,
    TournamentLogPageSchema,
    TournamentReceiptSchema,
    TournamentRekeySchema,
    TournamentSchema,
    WithdrawSchema,
)

from .limits import organiser_key, rate_limited
from .parsing import ApiBlueprint

blp = ApiBlueprint("tournaments", __name__, url_prefix="/tournaments",
                   description="Tournaments: a signed, hash-chained log each; pairings, standings, the certificate")
ratings_blp = ApiBlueprint("ratings", __name__, url_prefix="/ratings",
                           description="OpenSkill ratings from the games of finished tournament rounds")

_ERRORS = (400, 401, 403, 404, 409, 413, 415, 503)


def service() -> TournamentService:
    return current_app.extensions["referee.tournaments"]


def _document_errors(func: Any, codes: tuple[int, ...] = _ERRORS) -> Any:
    for code in codes:
        func = blp.alt_response(code, schema=ErrorSchema)(func)
    return func


@blp.route("")
class Tournaments(MethodView):
    @blp.arguments(TournamentListQuerySchema(), location="query")
    @blp.response(200, TournamentListSchema)
    @blp.alt_response(400, schema=ErrorSchema)
    def get(self, query: dict[str, Any]) -> dict[str, Any]:
        """Tournaments, newest first: status, ruleset, format, players (joined, withdrawn), rounds paired."""
        found = service().list_tournaments(query["offset"], query["limit"])
        following = query["offset"] + len(found) if len(found) == query["limit"] else None
        return {"tournaments": found, "offset": query["offset"], "next": following}

    @rate_limited("REFEREE_RATE_TOURNAMENTS")
    @rate_limited("REFEREE_RATE_TOURNAMENTS_PER_KEY", key=organiser_key(TOURNAMENT_CTX))
    @blp.arguments(CreateTournamentSchema())
    @blp.response(201, TournamentCreatedSchema)
    @blp.alt_response(429, schema=ErrorSchema, description="over REFEREE_RATE_TOURNAMENTS; see Retry-After")
    @_document_errors
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a tournament; the players then join with signed envelopes (``referee/join``).

        When organiser keys are configured, the body carries ``organiser: {key, sig}``, ``sig`` over the RFC
        8785 bytes of ``{"v": 1, "ctx": "referee/tournament", ...}`` (the body without ``organiser``)."""
        organiser = body.pop("organiser", None)
        return service().create(body, organiser)


@blp.route("/<tournament_id>")
class Tournament(MethodView):
    @blp.response(200, TournamentSchema)
    @blp.alt_response(404, schema=ErrorSchema)
    def get(self, tournament_id: str) -> dict[str, Any]:
        """Status, seq, head, format, points, tie-breaks, the rounds with their tables (and results) and byes,
        and the standings with every tie-break value."""
        return service().state(tournament_id)


@blp.route("/<tournament_id>/join")
class Join(MethodView):
    @blp.arguments(JoinSchema())
    @blp.response(202, TournamentReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], tournament_id: str) -> dict[str, Any]:
        """A player's signed join with 32 bytes of entropy; after the last one round 1 is paired. With an open
        registration a key not listed joins too (the envelope's ``name``; ``invite_sig`` by the invitation key when
        registration is by invitation); ``max_players`` joins close it and pair round 1."""
        return service().join(tournament_id, submission)


@blp.route("/<tournament_id>/start")
class Start(MethodView):
    @blp.arguments(StartSchema())
    @blp.response(202, TournamentReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], tournament_id: str) -> dict[str, Any]:
        """The organiser's signed start (``ctx`` ``referee/start``): the open registration closes with whoever has
        joined and round 1 is paired (fewer players than a table: the tournament is cancelled)."""
        return service().start(tournament_id, submission)


@blp.route("/<tournament_id>/withdraw")
class Withdraw(MethodView):
    @blp.arguments(WithdrawSchema())
    @blp.response(202, TournamentReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], tournament_id: str) -> dict[str, Any]:
        """A player's withdrawal, signed by the player or the organiser: the player is paired no more."""
        return service().withdraw(tournament_id, submission)


@blp.route("/<tournament_id>/rekey")
class Rekey(MethodView):
    @blp.arguments(TournamentRekeySchema())
    @blp.response(202, TournamentReceiptSchema)
    @_document_errors
    def post(self, submission: dict[str, Any], tournament_id: str) -> dict[str, Any]:
        """The organiser moves a player to a new key for the rounds to come (``ctx`` ``referee/rekey``): ``sig`` by
        the organiser, ``new_sig`` by the new key. Entry ``rekeyed``; games already paired keep their seats' keys."""
        return service().rekey(tournament_id, submission)


@blp.route("/<tournament_id>/adjudicate")
class Adjudicate(MethodView):
    @blp.arguments(DecisionSchema())
    @blp.response(202, DecisionAnswerSchema)
    @_document_errors
    def post(self, body: dict[str, Any], tournament_id: str) -> dict[str, Any]:
        """The organiser's signed decision (ranks and reason) on a game of the open round, in a tournament that
        adjudicates by the organiser: written into the game's log and the tournament's."""
        return service().adjudicate_signed(tournament_id, body)


@blp.route("/<tournament_id>/standings.csv")
class StandingsCsv(MethodView):
    @blp.alt_response(404, schema=ErrorSchema)
    def get(self, tournament_id: str) -> Response:
        """The standings as CSV (``text/csv``): rank, name, key, points and every tie-break value."""
        return Response(service().standings_csv(tournament_id), mimetype="text/csv",
                        headers={"Content-Disposition": f'attachment; filename="{tournament_id}-standings.csv"'})


@blp.route("/<tournament_id>/log")
class Log(MethodView):
    @blp.arguments(PageQuerySchema(), location="query")
    @blp.response(200, TournamentLogPageSchema)
    @blp.alt_response(404, schema=ErrorSchema)
    def get(self, query: dict[str, Any], tournament_id: str) -> dict[str, Any]:
        """The raw log entries, paged with ``from`` and ``limit``."""
        return service().log_page(tournament_id, query["start"], query["limit"])


@blp.route("/<tournament_id>/export")
class Export(MethodView):
    @blp.response(200)
    @blp.alt_response(404, schema=ErrorSchema)
    @blp.alt_response(409, schema=ErrorSchema, description="not finished and revealed yet")
    def get(self, tournament_id: str) -> dict[str, Any]:
        """The certificate (``referee-tournament/1``), signed by the referee; ``referee verify-tournament``
        checks it offline."""
        return service().export(tournament_id)


@ratings_blp.route("/<ruleset_name>")
class Ratings(MethodView):
    @ratings_blp.arguments(RatingsQuerySchema(), location="query")
    @ratings_blp.response(200, RatingsSchema)
    @ratings_blp.alt_response(404, schema=ErrorSchema)
    def get(self, query: dict[str, Any], ruleset_name: str) -> dict[str, Any]:
        """OpenSkill (Plackett–Luce) ratings from the games of the tournaments that count (``vetted``: only
        organiser-signed ones, with organiser keys set), in the order the results were written; with
        ``?game=<id>``, that game's rating change per seat; with ``?bots=1``, the separate list of the games with
        a seat declared a bot (a human's rating counts only games against humans)."""
        return service().ratings(ruleset_name, query.get("game"), bool(query.get("bots")))
