"""Games: the creation request, and the game, log, replay and result documents."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from .common import PlayerName, StrictBoolean, VerdictSchema, clashing_names, key_field, sig_field
from .submissions import ClockSchema


class SeatSpecSchema(Schema):
    """A seat given to a key (``name``, ``key``, ``bot``?), or open (CONTRACT section 14): to a holder of an
    invitation key (``invite``, ``name``?) or to anyone (``open: true``, ``name``?)."""

    name = PlayerName(metadata={"description": "the player's name (required with key; a label of an open seat)"})
    key = key_field(metadata={"description": "the seat's Ed25519 public key (base64url); or invite, or open"})
    invite = key_field(metadata={"description": "an open seat for the holder of this invitation key (its private "
                                                "seed travels in the link's fragment): the take carries invite_sig"})
    open = StrictBoolean(metadata={"description": "true: a seat open to anyone (listed among the open games)"})
    bot = fields.Boolean(metadata={"description": "the seat is played by a program (default false); written into "
                                                  "the created entry as given, so an organiser's signature covers it"})

    @validates_schema
    def _one_kind(self, data: dict[str, Any], **_kwargs: Any) -> None:
        kinds = [kind for kind in ("key", "invite", "open") if kind in data]
        problems: dict[str, list[str]] = {}
        if not kinds or "key" in kinds:  # a seat given to a key, as before open seats: name and key required
            for required in ("name", "key"):
                if required not in data:
                    problems[required] = ["Missing data for required field."]
        if len(kinds) > 1:
            problems["_schema"] = ["a seat has exactly one of key, invite or open: true"]
        if "open" in data and data["open"] is not True:
            problems["open"] = ["must be true (a seat open to anyone)"]
        if "bot" in data and "key" not in data:
            problems["bot"] = ["only a seat given to a key is a bot"]
        if problems:
            raise ValidationError(problems)


class OrganiserSchema(Schema):
    key = key_field(required=True)
    sig = sig_field(required=True, metadata={
        "description": "signature over the RFC 8785 bytes of {v: 1, ctx: 'referee/create', ...the body without "
                       "'organiser'}"})


class CreatorSchema(Schema):
    key = key_field(required=True)
    sig = sig_field(required=True, metadata={
        "description": "signature over the RFC 8785 bytes of {v: 1, ctx: 'referee/create', ...the body without "
                       "'creator'}"})


class CreateGameSchema(Schema):
    ruleset = fields.String(required=True, validate=validate.Length(min=1, max=32))
    seats = fields.List(fields.Nested(SeatSpecSchema), required=True, validate=validate.Length(min=1, max=16))
    options = fields.Dict(metadata={"description": "ruleset options (see GET /rulesets/{name})"})
    deck = fields.List(fields.String(validate=validate.Length(min=1, max=32)), validate=validate.Length(max=500),
                       metadata={"description": "recorded mode: the deck order, top card first (no commit-reveal)"})
    nonce = fields.String(validate=validate.Length(max=128),
                          metadata={"description": "makes two otherwise identical organiser-signed requests differ"})
    organiser = fields.Nested(OrganiserSchema, metadata={"description": "required when organiser keys are set"})
    creator = fields.Nested(CreatorSchema, metadata={
        "description": "required for a game with an open seat (invite or open), unless organiser signs: the creator "
                       "may cancel the game before it starts (POST /games/{id}/cancel)"})

    @validates_schema
    def _names_differ(self, data: dict[str, Any], **_kwargs: Any) -> None:
        named = [(i, seat["name"]) for i, seat in enumerate(data.get("seats", [])) if "name" in seat]
        clashes = clashing_names(name for _i, name in named)
        if clashes:
            raise ValidationError({"seats": {named[i][0]: {"name": [problem]} for i, problem in clashes.items()}})

    @validates_schema
    def _open_seats(self, data: dict[str, Any], **_kwargs: Any) -> None:
        if "creator" in data and "organiser" in data:
            raise ValidationError("sign with organiser or creator, not both", "creator")
        if "deck" in data and any("key" not in seat for seat in data.get("seats", [])):
            raise ValidationError("a recorded game (deck) gives every seat to a key: open seats are for seeded games",
                                  "deck")


class RulesetRefSchema(Schema):
    name = fields.String(required=True)
    version = fields.String(required=True)


class CreatedSchema(Schema):
    game = fields.String(required=True)
    ruleset = fields.Nested(RulesetRefSchema, required=True)
    mode = fields.String(required=True, metadata={"description": "seeded (commit-reveal) or recorded"})
    commitment = fields.String(allow_none=True, metadata={"description": "sha256 of the secret server seed (hex)"})
    seq = fields.Integer(required=True)
    head = fields.String(required=True)
    status = fields.String(required=True)
    to_move = fields.Integer(allow_none=True)


class RematchSchema(CreatedSchema):
    rematch_of = fields.Dict(required=True, metadata={"description": "{game, head}: the finished game"})


class SeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True, allow_none=True, metadata={"description": "null: an open seat without a label "
                                                                                 "that nobody holds"})
    key = fields.String(required=True, allow_none=True, metadata={"description": "the key that holds the seat now; "
                                                                                "null: an open seat nobody holds"})
    accepted = fields.Boolean(required=True)
    open = fields.String(metadata={"description": "a seat declared open at creation: invite (for the holder of its "
                                                  "invitation) or anyone (CONTRACT section 14)"})
    taken = fields.Boolean(metadata={"description": "an open seat: whether someone holds it now"})
    bot = fields.Boolean(metadata={"description": "true when the seat was declared a bot at creation (absent "
                                                  "otherwise)"})
    clock = fields.Nested(ClockSchema, metadata={"description": "games with a clock: deadline, time left, bank, "
                                                                "vacation left (CONTRACT section 8)"})


class GameSummarySchema(Schema):
    game = fields.String(required=True)
    ruleset = fields.Nested(RulesetRefSchema, required=True)
    mode = fields.String(required=True)
    commitment = fields.String(allow_none=True)
    organiser = fields.String(allow_none=True)
    created_at = fields.String(required=True)
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    status = fields.String(required=True, metadata={"description": "waiting, active, finished, aborted, expired (never "
                                                                   "accepted in time) or cancelled (by its creator)"})
    to_move = fields.Integer(allow_none=True)
    seq = fields.Integer(required=True)
    head = fields.String(allow_none=True)
    time_control = fields.Dict(metadata={"description": "the resolved time control of the game (CONTRACT 8)"})


class CreatorViewSchema(Schema):
    key = fields.String(allow_none=True, metadata={"description": "the key that signed the game's creation"})
    name = fields.String(allow_none=True, metadata={"description": "the name of the seat that key holds, if any"})


class OpenGameSummarySchema(GameSummarySchema):
    """A game of ``GET /games``; with ``?open=true`` also the fields below."""

    options = fields.Dict()
    creator = fields.Nested(CreatorViewSchema)
    accept_by = fields.String(allow_none=True, metadata={"description": "the seats must be taken and accepted by then"})
    seats_taken = fields.Integer(metadata={"description": "seats someone holds now"})
    seats_open = fields.Integer(metadata={"description": "seats open to anyone that nobody holds"})


class GameListSchema(Schema):
    games = fields.List(fields.Nested(OpenGameSummarySchema), required=True, metadata={
        "description": "newest first; with ?open=true the open games, oldest first, each with options, creator, "
                       "accept_by, seats_taken and seats_open"})
    offset = fields.Integer(required=True)
    next = fields.Integer(allow_none=True)
    total = fields.Integer(metadata={"description": "with ?open=true: how many games the open games' index lists"})


class PendingOfferSchema(Schema):
    offer = fields.Integer(required=True, metadata={"description": "the offer's id: its log position"})
    seat = fields.Integer(required=True, metadata={"description": "the seat that made it"})
    kind = fields.String(required=True, metadata={"description": "draw, end, abort or takeback"})
    accepted = fields.List(fields.Integer(), required=True, metadata={"description": "seats that accepted so far"})
    move = fields.Integer(metadata={"description": "takeback: the log position of the move it would void"})


class DecisionsSchema(Schema):
    pending = fields.Nested(PendingOfferSchema, allow_none=True, metadata={
        "description": "the pending offer (answer it at POST /games/{id}/offers/{offer}/answer), or null"})
    last = fields.Dict(allow_none=True, metadata={
        "description": "the last offer settled: {offer, kind, outcome: agreed|declined|withdrawn|lapsed, position}"})
    resigned = fields.List(fields.Integer(), metadata={"description": "seats that resigned"})
    voided = fields.List(fields.Integer(), metadata={"description": "log positions of moves voided by take-backs"})
    seat_keys = fields.List(fields.String(), metadata={
        "description": "once a seat's key changed or a recovery was asked (CONTRACT section 15): each seat's key now"})
    rekeys = fields.List(fields.Dict(), metadata={
        "description": "each change of a seat's key, in log order: {position, seat, old, new, reason}"})
    recoveries = fields.List(fields.Dict(), metadata={
        "description": "the pending recoveries of lost keys: {recovery (its position, answered at POST "
                       "/games/{id}/offers/{recovery}/answer), seat, key, not_before, accepted, needed, ended_by?}"})


class GameSchema(GameSummarySchema):
    options = fields.Dict(required=True)
    rematch = fields.String(allow_none=True, metadata={
        "description": "a finished game: the id of its rematch once a seat asked for one (POST /games/{id}/rematch)"})
    rematch_of = fields.Dict(metadata={"description": "a rematch: {game, head} of the finished game it rematches"})
    state = fields.Dict(allow_none=True, metadata={"description": "the engine's public view (nothing hidden)"})
    last_verdict = fields.Nested(VerdictSchema, allow_none=True)
    version_mismatch = fields.Dict(allow_none=True, metadata={"description": "{pinned, installed} engine versions"})
    blocked = fields.String(allow_none=True)
    decisions = fields.Nested(DecisionsSchema, allow_none=True, metadata={
        "description": "the seats' own decisions (CONTRACT section 12): pending offer, resignations"})
    projection = fields.String(required=True, metadata={"description": "'worker' (stored projection) or 'web' "
                                                                        "(folded here because the worker lags)"})


class LegalMovesSchema(Schema):
    game = fields.String(required=True)
    status = fields.String(required=True)
    to_move = fields.Integer(allow_none=True)
    seq = fields.Integer(required=True)
    head = fields.String(required=True)
    moves = fields.List(fields.Dict(), required=True)


#: Largest position or offset a query takes: log positions and seqs are integers up to 2**53 - 1 (CONTRACT
#: section 3), and so is every paging parameter; beyond, 400 (it used to reach Redis and answer 503).
MAX_POSITION = 2**53 - 1
#: Largest page of ``GET /games/{id}/log`` (entries).
LOG_MAX_PAGE = 1000
#: Largest page of ``GET /games`` (each game's summary is read from its projection).
GAMES_MAX_PAGE = 100
#: Largest page of ``GET /games/{id}/replay`` (steps).
REPLAY_MAX_PAGE = 100000


def position_field(description: str, **kwargs) -> fields.Integer:
    return fields.Integer(validate=validate.Range(min=0, max=MAX_POSITION), metadata={"description": description},
                          **kwargs)


def page_limit(maximum: int, **kwargs) -> fields.Integer:
    return fields.Integer(validate=validate.Range(min=1, max=maximum),
                          metadata={"description": f"page size, at most {maximum}"}, **kwargs)


class PageQuerySchema(Schema):
    start = position_field("position of the first entry", data_key="from", load_default=0)
    limit = page_limit(LOG_MAX_PAGE, load_default=100)


class ListQuerySchema(Schema):
    offset = position_field("games to skip, newest first (with open=true: oldest first)", load_default=0)
    limit = page_limit(GAMES_MAX_PAGE, load_default=GAMES_MAX_PAGE)
    open = fields.Boolean(load_default=False, metadata={
        "description": "true: only the waiting games with a seat open to anyone, oldest first (CONTRACT section 14)"})


class ReplayQuerySchema(Schema):
    start = position_field("position of the first step", data_key="from", load_default=0)
    limit = page_limit(REPLAY_MAX_PAGE)
    at = position_field("one step: the entry at this seq")


class LogPageSchema(Schema):
    game = fields.String(required=True)
    start = fields.Integer(data_key="from", required=True)
    total = fields.Integer(required=True, metadata={"description": "log length"})
    head = fields.String(required=True)
    entries = fields.List(fields.Dict(), required=True, metadata={"description": "raw log entries (CONTRACT 5)"})
    next = fields.Integer(allow_none=True, metadata={"description": "'from' of the next page, if any"})


class ReplayStepSchema(Schema):
    seq = fields.Integer(required=True)
    entry = fields.Dict(required=True)
    verdict = fields.Nested(VerdictSchema, required=True)
    status = fields.String(required=True)
    to_move = fields.Integer(allow_none=True)
    state = fields.Dict(allow_none=True, metadata={"description": "public state after this entry"})
    seat_keys = fields.List(fields.String(), metadata={
        "description": "a rekeyed entry (CONTRACT section 15): each seat's key from this step on"})


class ReplayPageSchema(Schema):
    game = fields.String(required=True)
    start = fields.Integer(data_key="from", required=True)
    total = fields.Integer(required=True)
    steps = fields.List(fields.Nested(ReplayStepSchema), required=True)
    next = fields.Integer(allow_none=True)


class ResultSchema(Schema):
    game = fields.String(required=True)
    ruleset = fields.Nested(RulesetRefSchema, required=True)
    status = fields.String(required=True)
    seq = fields.Integer(required=True)
    head = fields.String(required=True)
    version_mismatch = fields.Dict(allow_none=True)
    result = fields.Dict(required=True, metadata={"description": "per seat: score breakdown, total, rank; "
                                                                 "the tie-break chain"})
    seat_keys = fields.List(fields.List(fields.Dict()), metadata={
        "description": "a game where a seat's key changed (CONTRACT section 15): per seat, the keys that held it in "
                       "turn, {key, from (the rekeyed entry's position; null: the first), reason (holder, recovered)}"})

