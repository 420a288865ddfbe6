"""Tournaments (CONTRACT section 10): the creation request, the signed join, withdrawal and organiser
decision, and the documents the API answers with. Every request schema rejects unknown fields: an
envelope carries exactly what is signed."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from .common import (
    GAME_ID,
    HEX64,
    PlayerName,
    StrictBoolean,
    clashing_names,
    entropy,
    key_field,
    sig_field,
    signer_time,
    strict_int,
)
from .games import LogPageSchema, OrganiserSchema, page_limit, position_field

TOURNAMENT_ID = GAME_ID
#: most players one ``POST /tournaments`` seats (the pure core allows more; the body limit applies anyway)
MAX_PLAYERS = 1024


class PlayerSpecSchema(Schema):
    name = PlayerName(required=True)
    key = key_field(required=True)
    bot = StrictBoolean(metadata={"description": "the player is a program (default false): written into created "
                                                 "when true, its games' seats are declared bots and its rated "
                                                 "games go to the bot list (docs/bots.md)"})


class FormatSchema(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(["round_robin", "swiss", "series"]))
    rounds = strict_int(validate=validate.Range(min=1, max=1000))
    table_sizes = fields.List(strict_int(validate=validate.Range(min=2, max=16)),
                              validate=validate.Length(min=1, max=8))
    pairing = strict_int(validate=validate.OneOf([1, 2]), metadata={
        "description": "Swiss at tables of 2 only: the rule of the 2-seat matching (docs/tournaments.md) — 2 (the "
                       "default): of the least-cost pairings, the first in the standings' order; 1: the one networkx "
                       "returns (the tournaments made before rule 2). Written into created, except rule 1 (no "
                       "field)"})


class RegistrationSchema(Schema):
    open = StrictBoolean(validate=validate.Equal(True, error="must be true"),
                         metadata={"description": "anyone may join"})
    invite = key_field(metadata={"description": "the invitation's public key: a join carries invite_sig by it"})

    @validates_schema
    def _one_kind(self, data: dict[str, Any], **_kwargs: Any) -> None:
        if len(data) != 1:
            raise ValidationError('registration is {"open": true} or {"invite": <invitation public key>}')


class CreateTournamentSchema(Schema):
    ruleset = fields.String(required=True, validate=validate.Length(min=1, max=32))
    options = fields.Dict(metadata={"description": "the games' options, time_control included (CONTRACT 8)"})
    players = fields.List(fields.Nested(PlayerSpecSchema), validate=validate.Length(max=MAX_PLAYERS), metadata={
        "description": "the players named now: 2 or more, or (with registration) any number, who join as others"})
    registration = fields.Nested(RegistrationSchema, metadata={
        "description": "open registration (CONTRACT 14): keys not listed join while it is open; needs organiser"})
    closes = fields.String(validate=[validate.Length(max=64), validate.Regexp(
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?Z$",
        error="must be an RFC 3339 time in UTC, like 2026-11-21T10:00:00Z")], metadata={
        "description": "with registration: RFC 3339 UTC time when it closes and round 1 is paired"})
    max_players = strict_int(validate=validate.Range(min=2, max=MAX_PLAYERS), metadata={
        "description": "with registration: round 1 is paired when this many have joined"})
    format = fields.Nested(FormatSchema, required=True)
    points = fields.Dict(keys=fields.String(validate=validate.Regexp(r"^[0-9]{1,2}$")),
                         values=fields.List(strict_int(validate=validate.Range(min=-1000, max=1000)),
                                            validate=validate.Length(max=16)),
                         metadata={"description": '{"<table size>": [points for rank 1, 2, ...]}'})
    bye_points = strict_int(validate=validate.Range(min=-1000, max=1000))
    tie_breaks = fields.List(fields.String(validate=validate.Length(max=32)), validate=validate.Length(max=8))
    round_deadline = strict_int(validate=validate.Range(min=1, max=365 * 86400),
                                metadata={"description": "seconds from a round's pairing to its deadline"})
    adjudication = fields.String(validate=validate.OneOf(["provisional", "organiser"]))
    withdrawal = fields.String(validate=validate.OneOf(["default_moves", "adjudicate"]), metadata={
        "description": "what a withdrawal does to the player's running games: default moves (the seat is "
                       "forfeited in the game) or adjudication at once"})
    nonce = fields.String(validate=validate.Length(max=128))
    organiser = fields.Nested(OrganiserSchema, metadata={
        "description": "required when organiser keys are set; sig over {v: 1, ctx: 'referee/tournament', ...the "
                       "body without 'organiser'}"})

    @validates_schema
    def _names_and_keys_differ(self, data: dict[str, Any], **_kwargs: Any) -> None:
        if "players" not in data and "registration" not in data:
            raise ValidationError({"players": ["Missing data for required field."]})
        players = data.get("players", [])
        clashes = clashing_names(p["name"] for p in players)
        problems: dict[int, dict[str, list[str]]] = {i: {"name": [problem]} for i, problem in clashes.items()}
        seen: set[str] = set()
        for i, player in enumerate(players):
            if player["key"] in seen:
                problems.setdefault(i, {})["key"] = ["a key plays once in a tournament"]
            seen.add(player["key"])
        if problems:
            raise ValidationError({"players": problems})


class _TournamentEnvelope(Schema):
    v = strict_int(required=True, validate=validate.Equal(1, error="must be 1"))
    tournament = fields.String(required=True, validate=TOURNAMENT_ID)
    seq = strict_int(required=True, validate=validate.Range(min=0, max=2**53 - 1),
                     metadata={"description": "length of the tournament's log the signer saw"})
    prev = fields.String(required=True, validate=HEX64, metadata={"description": "hash of its last entry"})
    at = fields.String(validate=[validate.Length(max=64), signer_time])


class JoinEnvelopeSchema(_TournamentEnvelope):
    ctx = fields.String(required=True, validate=validate.Equal("referee/join", error="must be 'referee/join'"))
    key = key_field(required=True)
    entropy = fields.String(required=True, validate=[validate.Length(max=64), entropy],
                            metadata={"description": "32 bytes of the player's own randomness, base64url"})
    name = PlayerName(metadata={"description": "the player's name: required to join an open registration as a "
                                               "key not listed (unique ignoring case)"})


class WithdrawEnvelopeSchema(_TournamentEnvelope):
    ctx = fields.String(required=True, validate=validate.Equal("referee/withdraw", error="must be 'referee/withdraw'"))
    key = key_field(required=True, metadata={"description": "the player who withdraws"})


class DecisionEnvelopeSchema(_TournamentEnvelope):
    ctx = fields.String(required=True, validate=validate.Equal("referee/adjudicate",
                                                              error="must be 'referee/adjudicate'"))
    game = fields.String(required=True, validate=GAME_ID)
    ranks = fields.List(strict_int(validate=validate.Range(min=1, max=16)), required=True,
                        validate=validate.Length(min=2, max=16))
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))


class TournamentRekeyEnvelopeSchema(_TournamentEnvelope):
    ctx = fields.String(required=True, validate=validate.Equal("referee/rekey", error="must be 'referee/rekey'"))
    player = key_field(required=True, metadata={"description": "the player's key now"})
    key = key_field(required=True, metadata={"description": "the player's new key (it signs new_sig)"})


class TournamentRekeySchema(Schema):
    envelope = fields.Nested(TournamentRekeyEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "by the tournament's organiser"})
    new_sig = sig_field(required=True, metadata={"description": "by the new key, over the same RFC 8785 bytes"})


class JoinSchema(Schema):
    envelope = fields.Nested(JoinEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "by the envelope's key"})
    invite_sig = sig_field(metadata={"description": "registration by invitation: by the invitation key over the "
                                                    "same envelope"})


class StartEnvelopeSchema(_TournamentEnvelope):
    ctx = fields.String(required=True, validate=validate.Equal("referee/start", error="must be 'referee/start'"))


class StartSchema(Schema):
    envelope = fields.Nested(StartEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "by the tournament's organiser"})


class WithdrawSchema(Schema):
    envelope = fields.Nested(WithdrawEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "by the player or the organiser"})


class DecisionSchema(Schema):
    envelope = fields.Nested(DecisionEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "by the tournament's organiser"})


class TournamentCreatedSchema(Schema):
    tournament = fields.String(required=True)
    seq = fields.Integer(required=True)
    head = fields.String(required=True)
    commitment = fields.String(required=True, metadata={"description": "sha256 of the secret server seed (hex)"})
    status = fields.String(required=True)


class TournamentReceiptSchema(Schema):
    tournament = fields.String(required=True)
    position = fields.Integer(required=True, metadata={"description": "where the submission went in the log"})
    hash = fields.String(required=True)
    seq = fields.Integer(required=True)
    head = fields.String(required=True)
    status = fields.String(required=True)


class DecisionAnswerSchema(Schema):
    tournament = fields.String(required=True)
    game = fields.String(required=True)
    seq = fields.Integer(required=True)
    head = fields.String(required=True)
    status = fields.String(required=True)
    result = fields.Dict(allow_none=True, metadata={"description": "the game's result after the adjudication"})


class TableSchema(Schema):
    game = fields.String(required=True)
    players = fields.List(fields.String(), required=True, metadata={"description": "keys in seat order"})
    result = fields.Dict(allow_none=True, metadata={"description": "ranks, scores, head, method, seq"})


class RoundSchema(Schema):
    round = fields.Integer(required=True)
    tables = fields.List(fields.Nested(TableSchema), required=True)
    byes = fields.List(fields.String(), required=True)
    closed = fields.Boolean(required=True)
    paired_at = fields.String(allow_none=True)
    deadline = fields.String(allow_none=True)


class StandingSchema(Schema):
    rank = fields.Integer(required=True)
    key = fields.String(required=True)
    name = fields.String(required=True)
    points = fields.Raw(required=True, metadata={"description": "an integer, or 'p/q' when not whole"})
    tie_breaks = fields.Dict(required=True, metadata={"description": "every tie-break's value, by id"})


class TournamentPlayerSchema(Schema):
    name = fields.String(required=True)
    key = fields.String(required=True)
    bot = fields.Boolean(metadata={"description": "true when the player was declared a bot (absent otherwise)"})
    joined = fields.Boolean(required=True)
    withdrawn = fields.Boolean(required=True)
    former_keys = fields.List(fields.String(), metadata={
        "description": "the keys the organiser moved this player away from (rekeyed), oldest first; absent when none"})


class TournamentSchema(Schema):
    tournament = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "waiting, active, finished, aborted or cancelled"})
    seq = fields.Integer(required=True)
    head = fields.String(required=True)
    ruleset = fields.Dict(required=True)
    options = fields.Dict()
    registration = fields.Dict(allow_none=True, metadata={"description": "open registration: {open} or {invite}"})
    registration_open = fields.Boolean(metadata={"description": "whether the open registration still takes joins"})
    closes = fields.String(allow_none=True)
    max_players = fields.Integer(allow_none=True)
    format = fields.Dict(required=True)
    points = fields.Dict(required=True)
    bye_points = fields.Integer()
    tie_breaks = fields.List(fields.String(), required=True)
    round_deadline = fields.Integer(allow_none=True)
    adjudication = fields.String()
    withdrawal = fields.String()
    commitment = fields.String()
    organiser = fields.String(allow_none=True)
    created_at = fields.String()
    revealed = fields.Boolean()
    players = fields.List(fields.Nested(TournamentPlayerSchema))
    rounds = fields.List(fields.Nested(RoundSchema), required=True)
    standings = fields.List(fields.Nested(StandingSchema), required=True)


#: Largest page of ``GET /tournaments`` (each tournament is folded for its summary).
TOURNAMENTS_MAX_PAGE = 100


class TournamentListQuerySchema(Schema):
    offset = position_field("tournaments to skip, newest first", load_default=0)
    limit = page_limit(TOURNAMENTS_MAX_PAGE, load_default=TOURNAMENTS_MAX_PAGE)


class TournamentSummarySchema(Schema):
    tournament = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "waiting, active, finished, aborted or cancelled"})
    ruleset = fields.Dict(required=True)
    format = fields.Dict(required=True)
    registration = fields.Dict(allow_none=True, metadata={"description": "open registration: {open} or {invite}"})
    max_players = fields.Integer(allow_none=True)
    players = fields.Integer(required=True, metadata={"description": "how many players the tournament seats"})
    joined = fields.Integer(required=True)
    withdrawn = fields.Integer(required=True)
    round = fields.Integer(required=True, metadata={"description": "rounds paired so far"})
    seq = fields.Integer(required=True)
    head = fields.String(required=True)
    created_at = fields.String(allow_none=True)


class TournamentListSchema(Schema):
    tournaments = fields.List(fields.Nested(TournamentSummarySchema), required=True)
    offset = fields.Integer(required=True)
    next = fields.Integer(allow_none=True)


class TournamentLogPageSchema(LogPageSchema):
    game = fields.String()
    tournament = fields.String(required=True)


class RatingSchema(Schema):
    key = fields.String(required=True)
    mu = fields.Float(required=True)
    sigma = fields.Float(required=True)
    ordinal = fields.Float(required=True)
    games = fields.Integer(required=True)
    bot = fields.Boolean(metadata={"description": "with ?bots=1: true for a key that sat as a declared bot"})


class RatingChangeSchema(Schema):
    key = fields.String(required=True)
    mu = fields.List(fields.Float(), required=True, metadata={"description": "[before, after] the game"})
    ordinal = fields.List(fields.Float(), required=True, metadata={"description": "[before, after] the game"})


class RatingsSchema(Schema):
    ruleset = fields.String(required=True)
    ratings = fields.List(fields.Nested(RatingSchema), required=True)
    vetted = fields.Boolean(required=True, metadata={
        "description": "true: only tournaments created with a signature of one of the referee's organiser keys "
                       "count; false: no organiser keys are configured, every tournament counts (anyone can create "
                       "a tournament of keys of their own)"})
    basis = fields.String(required=True, metadata={"description": "one sentence: which tournaments count"})
    tournaments = fields.List(fields.String(), required=True,
                              metadata={"description": "the tournaments whose games are rated"})
    game = fields.String(metadata={"description": "with ?game: the game whose change is given"})
    change = fields.List(fields.Nested(RatingChangeSchema), metadata={"description": "with ?game: per seat"})
    bots = fields.Boolean(metadata={"description": "with ?bots=1: true; the ratings are those of the games with "
                                                   "a bot seat, kept apart from the humans' list"})


class RatingsQuerySchema(Schema):
    game = fields.String(validate=validate.Length(min=1, max=80),
                         metadata={"description": "a game: also its rating change per seat"})
    bots = fields.Boolean(metadata={"description": "1: the list of the games with a seat declared a bot (a "
                                                   "human's rating counts only games against humans)"})
