"""A seat's new key (CONTRACT section 15): a holder's rekey and a recovery of a lost key, and their receipts.

Every schema rejects unknown fields, so an envelope carries exactly what is documented and signed.
"""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from referee.protocol.signing import RECOVER_CTX, REKEY_CTX

from .common import GAME_ID, HEX64, key_field, sig_field, signer_time, strict_int
from .submissions import ReceiptSchema


class _KeyEnvelope(Schema):
    """What every seat-signed envelope holds (as ``schemas.submissions``): v, game, seat, seq, prev, at."""

    v = strict_int(required=True, validate=validate.Equal(1, error="must be 1"))
    game = fields.String(required=True, validate=GAME_ID)
    seat = strict_int(required=True, validate=validate.Range(min=0, max=63))
    seq = strict_int(required=True, validate=validate.Range(min=0, max=2**53 - 1),
                     metadata={"description": "length of the log the signer saw"})
    prev = fields.String(required=True, validate=HEX64, metadata={"description": "hash of the last log entry"})
    at = fields.String(validate=[validate.Length(max=64), signer_time], metadata={
        "description": "signer's clock: RFC 3339 UTC, not later than the server's clock plus 5 minutes",
        "format": "date-time"})


class RekeyEnvelopeSchema(_KeyEnvelope):
    ctx = fields.String(required=True, validate=validate.Equal(REKEY_CTX, error=f"must be {REKEY_CTX!r}"))
    key = key_field(required=True, metadata={"description": "the seat's new key (Ed25519, base64url): it signs "
                                                           "new_sig, and every later submission of the seat"})


class RekeySubmissionSchema(Schema):
    envelope = fields.Nested(RekeyEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "the seat's key's signature over the RFC 8785 bytes of "
                                                            "envelope"})
    new_sig = sig_field(required=True, metadata={"description": "the new key's signature over the same bytes"})


class RecoverEnvelopeSchema(_KeyEnvelope):
    ctx = fields.String(required=True, validate=validate.Equal(RECOVER_CTX, error=f"must be {RECOVER_CTX!r}"))
    key = key_field(required=True, metadata={"description": "the key that asks to take the seat over (Ed25519, "
                                                           "base64url); it signs sig"})


class RecoverSubmissionSchema(Schema):
    envelope = fields.Nested(RecoverEnvelopeSchema, required=True)
    sig = sig_field(required=True, metadata={"description": "the new key's signature over the RFC 8785 bytes of "
                                                            "envelope"})


class RecoveryReceiptSchema(ReceiptSchema):
    recovery = fields.Dict(allow_none=True, metadata={
        "description": "the pending recovery: {recovery (its position, its id), seat, key, not_before, accepted}"})
