"""Signed submissions (CONTRACT sections 3, 12): moves, acceptances, aborts, vacations, resignations, offers
and answers, and the receipt they get.

Every schema rejects unknown fields, so an envelope carries exactly what is documented and signed.
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from referee.protocol.signing import (
    ACCEPT_CTX,
    ANSWER_CTX,
    CANCEL_CTX,
    LEAVE_CTX,
    MOVE_CTX,
    OFFER_CTX,
    RECEIPT_CTX,
    RESIGN_CTX,
    SEAT_CTX,
    VACATION_CTX,
)
from referee.rulings.decisions import OFFER_KINDS
from referee.rulings.rematch import REMATCH_CTX

from .common import GAME_ID, HEX64, SignedName, VerdictSchema, entropy, key_field, sig_field, signer_time, strict_int

ABORT_CTX = "referee/abort"


class _EnvelopeBase(Schema):
    v = strict_int(required=True, validate=validate.Equal(1, error="must be 1"))
    game = fields.String(required=True, validate=GAME_ID)
    seq = strict_int(required=True, validate=validate.Range(min=0, max=2**53 - 1),
                     metadata={"description": "length of the log the signer saw"})
    prev = fields.String(required=True, validate=HEX64, metadata={"description": "hash of the last log entry"})
    at = fields.String(validate=[validate.Length(max=64), signer_time], metadata={
        "description": "signer's clock: RFC 3339 UTC (e.g. 2026-11-21T10:00:00Z), not later than the server's "
                       "clock plus 5 minutes; any earlier time is fine", "format": "date-time"})


class MoveEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(MOVE_CTX, error=f"must be {MOVE_CTX!r}"))
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))
    move = fields.Dict(required=True, metadata={"description": "the move (CONTRACT section 2)"})


class AcceptEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(ACCEPT_CTX, error=f"must be {ACCEPT_CTX!r}"))
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))
    entropy = fields.String(required=True, validate=[validate.Length(max=64), entropy],
                            metadata={"description": "32 bytes of the seat's own randomness, base64url"})


class SeatEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(SEAT_CTX, error=f"must be {SEAT_CTX!r}"))
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))
    key = key_field(required=True, metadata={"description": "the joining key (Ed25519, base64url): it signs sig, "
                                                           "and every later submission of the seat"})
    name = SignedName(required=True)
    entropy = fields.String(required=True, validate=[validate.Length(max=64), entropy],
                            metadata={"description": "32 bytes of the seat's own randomness, base64url: taking the "
                                                     "seat is also accepting the game"})


class LeaveEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(LEAVE_CTX, error=f"must be {LEAVE_CTX!r}"))
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))


class CancelEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(CANCEL_CTX, error=f"must be {CANCEL_CTX!r}"))


class AbortEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(ABORT_CTX, error=f"must be {ABORT_CTX!r}"))
    reason = fields.String(validate=validate.Length(max=200))


class VacationEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(VACATION_CTX, error=f"must be {VACATION_CTX!r}"))
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))
    seconds = strict_int(required=True, validate=validate.Range(min=1, max=365 * 86400),
                         metadata={"description": "vacation from now, in seconds (pages and the CLI say days)"})


class _StrictBoolean(fields.Boolean):
    """true or false, nothing else (no 1, "yes" or "true")."""

    def _deserialize(self, value, attr, data, **kwargs):  # type: ignore[no-untyped-def]
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class ResignEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(RESIGN_CTX, error=f"must be {RESIGN_CTX!r}"))
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))


class OfferEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(OFFER_CTX, error=f"must be {OFFER_CTX!r}"))
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))
    offer = fields.String(required=True, validate=validate.OneOf(OFFER_KINDS), metadata={
        "description": "draw (every seat still in the game shares first place), end (scored as it stands), "
                       "abort (before every seat has moved; no result), takeback (your last move, if it revealed "
                       "nothing)"})


class AnswerEnvelopeSchema(_EnvelopeBase):
    ctx = fields.String(required=True, validate=validate.Equal(ANSWER_CTX, error=f"must be {ANSWER_CTX!r}"))
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))
    offer = strict_int(required=True, validate=validate.Range(min=0, max=2**53 - 1),
                       metadata={"description": "the log position of the offer answered"})
    accept = _StrictBoolean(required=True, metadata={
        "description": "true accepts; false declines (the offerer's own false withdraws the offer)"})


class AdjudicateEnvelopeSchema(Schema):
    v = strict_int(required=True, validate=validate.Equal(1, error="must be 1"))
    ctx = fields.String(required=True, validate=validate.Equal("referee/adjudicate",
                                                              error="must be 'referee/adjudicate'"))
    game = fields.String(required=True, validate=GAME_ID)
    method = fields.String(validate=validate.OneOf(["provisional", "organiser"]),
                           metadata={"description": "organiser (the default) or provisional"})
    ranks = fields.List(strict_int(validate=validate.Range(min=1, max=16)), validate=validate.Length(max=16),
                        metadata={"description": "method organiser: each seat's rank (competition ranks)"})
    reason = fields.String(required=True, validate=validate.Length(min=1, max=500))
    tournament = fields.String(validate=validate.Length(max=80))
    seq = strict_int(validate=validate.Range(min=0, max=2**53 - 1))
    prev = fields.String(validate=HEX64)
    at = fields.String(validate=validate.Length(max=64))


class AdjudicateSchema(Schema):
    envelope = fields.Nested(AdjudicateEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "the game's adjudicator or organiser"})


class VacationSubmissionSchema(Schema):
    envelope = fields.Nested(VacationEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class MoveSubmissionSchema(Schema):
    envelope = fields.Nested(MoveEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class ResignSubmissionSchema(Schema):
    envelope = fields.Nested(ResignEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class OfferSubmissionSchema(Schema):
    envelope = fields.Nested(OfferEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class AnswerSubmissionSchema(Schema):
    envelope = fields.Nested(AnswerEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class AcceptSubmissionSchema(Schema):
    envelope = fields.Nested(AcceptEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class SeatSubmissionSchema(Schema):
    envelope = fields.Nested(SeatEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "the joining key's signature over the RFC 8785 bytes of "
                                                            "envelope"})
    invite_sig = sig_field(metadata={"description": "an invite seat: the invitation key's signature over the same "
                                                    "bytes (the link's fragment holds its private seed)"})


class RematchEnvelopeSchema(Schema):
    v = strict_int(required=True, validate=validate.Equal(1, error="must be 1"))
    ctx = fields.String(required=True, validate=validate.Equal(REMATCH_CTX, error=f"must be {REMATCH_CTX!r}"))
    game = fields.String(required=True, validate=GAME_ID, metadata={"description": "the finished game"})
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))
    at = fields.String(required=True, validate=[validate.Length(max=64), signer_time], metadata={
        "description": "signer's clock: RFC 3339 UTC, not later than the server's clock plus 5 minutes",
        "format": "date-time"})


class RematchSubmissionSchema(Schema):
    envelope = fields.Nested(RematchEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "the seat's signature (the key that held it at the end)"})


class LeaveSubmissionSchema(Schema):
    envelope = fields.Nested(LeaveEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "the seat holder's signature"})


class CancelSubmissionSchema(Schema):
    envelope = fields.Nested(CancelEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "the creator's signature"})


class AbortSubmissionSchema(Schema):
    envelope = fields.Nested(AbortEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class WaitQuerySchema(Schema):
    wait = fields.Float(validate=validate.Range(min=0, max=3600),
                        metadata={"description": "seconds to wait for the worker's verdict (capped by the server)"})
    legal = fields.Boolean(load_default=False, metadata={
        "description": "also answer with the legal moves of the seat now to move (one request per move)"})


class SignedReceiptSchema(Schema):
    ctx = fields.String(required=True, metadata={"description": RECEIPT_CTX})
    game = fields.String(required=True)
    seq = fields.Integer(required=True, metadata={"description": "log position of the entry holding the submission"})
    hash = fields.String(required=True, metadata={"description": "that entry's hash"})
    at = fields.String(required=True, metadata={"description": "that entry's server time"})


class ClockSchema(Schema):
    deadline = fields.String(allow_none=True, metadata={"description": "when the seat's decision times out "
                                                                       "(the seat to move only)"})
    left = fields.Integer(allow_none=True, metadata={"description": "seconds of the decision's allowance left now"})
    bank = fields.Integer(allow_none=True, metadata={"description": "seconds in the seat's bank (kind bank)"})
    vacation_left = fields.Integer(allow_none=True, metadata={"description": "seconds of vacation the seat may "
                                                                             "still take"})
    on_vacation = fields.Boolean()
    vacation_until = fields.String(allow_none=True, metadata={"description": "when the vacation under way ends"})
    forfeited = fields.Boolean()


class ReceiptSchema(Schema):
    game = fields.String(required=True)
    position = fields.Integer(required=True, metadata={"description": "log position of the submission"})
    hash = fields.String(required=True, metadata={"description": "hash of the submission's log entry"})
    seq = fields.Integer(required=True, metadata={"description": "log length now (the next envelope's seq)"})
    head = fields.String(required=True, metadata={"description": "hash of the last entry (the next prev)"})
    status = fields.String(required=True)
    to_move = fields.Integer(allow_none=True)
    verdict = fields.Nested(VerdictSchema, metadata={"description": "the worker's verdict (200 with ?wait only)"})
    receipt = fields.Nested(SignedReceiptSchema, metadata={"description": "what receipt_sig signs (CONTRACT 8)"})
    receipt_sig = fields.String(metadata={"description": "the referee's Ed25519 signature over the RFC 8785 bytes "
                                                         "of receipt (key: GET /referee-key)"})
    clocks = fields.List(fields.Nested(ClockSchema), metadata={"description": "per seat, games with a clock"})
    result = fields.Dict(metadata={"description": "POST /adjudicate: the adjudicated game's result"})
    legal_moves = fields.List(fields.Dict(), metadata={"description": "with ?legal=1: the legal moves of the "
                                                                      "seat now to move (to_move), at seq/head"})
