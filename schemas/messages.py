"""Messages (CONTRACT section 12): a seat's signed message, its mute request, the signed read of the
messages, and what the referee answers."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates

from referee.protocol.signing import MESSAGE_CTX, MESSAGE_RECEIPT_CTX, MESSAGES_READ_CTX, MUTE_CTX

from .common import GAME_ID, MessageText, key_field, sig_field, signer_time, strict_int

_SEAT = validate.Range(min=0, max=63)


def _distinct(seats: list[int] | None, what: str) -> None:
    if seats is not None and len(set(seats)) != len(seats):
        raise ValidationError(f"names a seat twice; list each seat of {what} once")


class MessageEnvelopeSchema(Schema):
    v = strict_int(required=True, validate=validate.Equal(1, error="must be 1"))
    ctx = fields.String(required=True, validate=validate.Equal(MESSAGE_CTX, error=f"must be {MESSAGE_CTX!r}"))
    game = fields.String(required=True, validate=GAME_ID)
    seat = strict_int(required=True, validate=_SEAT, metadata={"description": "the sender's seat"})
    text = MessageText(required=True)
    to = fields.List(strict_int(validate=_SEAT), allow_none=True,
                     validate=validate.Length(min=1, max=64, error="give at least one seat, or null for everyone"),
                     metadata={"description": "the seats it is for (a private message), or null (or absent) for "
                                              "everyone; the sender always sees it"})
    at = fields.String(required=True, validate=[validate.Length(max=64), signer_time], metadata={
        "description": "signer's clock: RFC 3339 UTC, not later than the server's clock plus 5 minutes; it makes "
                       "two messages of the same text two signatures", "format": "date-time"})

    @validates("to")
    def _to_once(self, value: list[int] | None, **_kwargs: Any) -> None:
        _distinct(value, "to")


class MessageSubmissionSchema(Schema):
    envelope = fields.Nested(MessageEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "the seat's signature (its key in the created entry)"})


class MuteEnvelopeSchema(Schema):
    v = strict_int(required=True, validate=validate.Equal(1, error="must be 1"))
    ctx = fields.String(required=True, validate=validate.Equal(MUTE_CTX, error=f"must be {MUTE_CTX!r}"))
    game = fields.String(required=True, validate=GAME_ID)
    seat = strict_int(required=True, validate=_SEAT, metadata={"description": "the seat that mutes"})
    mute = fields.List(strict_int(validate=_SEAT), required=True, validate=validate.Length(max=64),
                       metadata={"description": "every seat muted for this seat from now on (replaces the list "
                                                "before; [] mutes nobody)"})
    at = fields.String(required=True, validate=validate.Length(max=64), metadata={
        "description": "signer's time, RFC 3339 UTC: within 10 minutes of the server's, and later than the "
                      "seat's previous mute request", "format": "date-time"})

    @validates("mute")
    def _mute_once(self, value: list[int], **_kwargs: Any) -> None:
        _distinct(value, "mute")


class MuteSubmissionSchema(Schema):
    envelope = fields.Nested(MuteEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class MessagesQuerySchema(Schema):
    start = fields.Integer(data_key="from", validate=validate.Range(min=0, max=2**53 - 1),
                           metadata={"description": "messages from this position of the stream on (as GET "
                                                    "/games/{id}/log pages; 'since' is its older name)"})
    since = fields.Integer(load_default=0, validate=validate.Range(min=0, max=2**53 - 1),
                           metadata={"description": "the older name of 'from'"})
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000),
                           metadata={"description": "at most this many positions of the stream (private messages "
                                                    "a reader does not see count too)"})
    key = key_field(metadata={"description": "a seat's signed read: the seat's public key (with at and sig)"})
    at = fields.String(validate=validate.Length(max=64),
                       metadata={"description": "the signer's time, RFC 3339 UTC; within 10 minutes of the server's"})
    sig = sig_field(metadata={"description": f"signature over {{v: 1, ctx: {MESSAGES_READ_CTX!r}, game, key, at}}"})


class MessageSchema(Schema):
    position = fields.Integer(required=True, metadata={"description": "position in the game's message stream"})
    at = fields.String(required=True, metadata={"description": "when the referee received it"})
    log_seq = fields.Integer(required=True, metadata={"description": "the game's log length then"})
    seat = fields.Integer(required=True)
    to = fields.List(fields.Integer(), allow_none=True, required=True,
                     metadata={"description": "null: public; else the seats it is for"})
    text = fields.String(required=True)
    prev = fields.String(required=True, metadata={"description": "hash of the previous message (64 zeros: none)"})
    hash = fields.String(required=True, metadata={"description": "the stored message's hash (chained from prev)"})
    submission = fields.Dict(required=True, metadata={"description": "the signed envelope and sig, as received"})


class MessageListSchema(Schema):
    game = fields.String(required=True)
    messages = fields.List(fields.Nested(MessageSchema), required=True)
    start = fields.Integer(data_key="from", required=True, metadata={"description": "the page's first position"})
    total = fields.Integer(required=True, metadata={"description": "messages in the stream, private ones included"})
    next = fields.Integer(allow_none=True, metadata={"description": "'from' of the next page, if any"})
    length = fields.Integer(required=True, metadata={
        "description": "where a reader goes on from: 'next' when there is a next page, else 'total'"})
    reader = fields.List(fields.Integer(), allow_none=True,
                         metadata={"description": "with a signed read: the reader's seats; else null"})
    muted = fields.List(fields.Integer(), metadata={"description": "with a signed read: the seats the reader "
                                                                   "muted (their messages are left out)"})


class MessageReceiptBodySchema(Schema):
    ctx = fields.String(required=True, metadata={"description": MESSAGE_RECEIPT_CTX})
    game = fields.String(required=True)
    position = fields.Integer(required=True, metadata={"description": "position in the message stream"})
    hash = fields.String(required=True, metadata={"description": "the stored message's hash"})
    at = fields.String(required=True, metadata={"description": "the referee's arrival time"})
    log_seq = fields.Integer(required=True, metadata={"description": "the game's log length then"})


class MessageReceiptSchema(Schema):
    game = fields.String(required=True)
    position = fields.Integer(required=True)
    hash = fields.String(required=True)
    at = fields.String(required=True)
    log_seq = fields.Integer(required=True)
    receipt = fields.Nested(MessageReceiptBodySchema, required=True,
                            metadata={"description": "what receipt_sig signs"})
    receipt_sig = fields.String(required=True, metadata={
        "description": "the referee's Ed25519 signature over the RFC 8785 bytes of receipt (key: GET /referee-key)"})


class MuteDoneSchema(Schema):
    game = fields.String(required=True)
    seat = fields.Integer(required=True)
    muted = fields.List(fields.Integer(), required=True)
