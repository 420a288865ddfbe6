"""Contacts (CONTRACT sections 9 and 11): signed requests of a key about its own notification channels."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from .common import key_field, sig_field, strict_int

LANGUAGES = ("en", "de", "fr")  # referee.i18n.SUPPORTED (schemas import no service)
EVENT_NAMES = ("turn", "reminder", "timeout", "started", "finished", "tournament_round", "offer", "offer_answered",
               "resigned", "message", "seated", "left", "cancelled", "rematch",
               "recovery")  # referee.notify.contacts.EVENTS
CONTACT_ID = validate.Regexp(r"^c_[a-z2-7]{16}$", error="not a contact id")


class _Signed(Schema):
    v = strict_int(required=True, validate=validate.Equal(1, error="must be 1"))
    ctx = fields.String(required=True, validate=validate.Length(max=64))
    key = key_field(required=True)
    at = fields.String(required=True, validate=validate.Length(max=64),
                       metadata={"description": "the signer's time, RFC 3339 UTC; within 10 minutes of the server's"})


class ContactEnvelopeSchema(_Signed):
    contact = fields.String(validate=CONTACT_ID, metadata={"description": "PUT only: the contact changed"})
    webhook = fields.String(allow_none=True, validate=validate.Length(max=2000))
    email = fields.Email(allow_none=True, validate=validate.Length(max=254))
    events = fields.List(fields.String(validate=validate.OneOf(EVENT_NAMES)),
                         validate=validate.Length(max=len(EVENT_NAMES)),
                         metadata={"description": "default: turn, reminder, timeout, finished"})
    language = fields.String(validate=validate.OneOf(LANGUAGES),
                             metadata={"description": "the language of this contact's mails and of the mail gateway's "
                                                      "replies to its address: en, de or fr (default en; a change "
                                                      "without it keeps the contact's)"})


class ContactRequestSchema(Schema):
    envelope = fields.Nested(ContactEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class ContactRefEnvelopeSchema(_Signed):
    contact = fields.String(required=True, validate=CONTACT_ID)
    code = fields.String(validate=validate.Regexp(r"^[A-Za-z0-9_-]{8,64}$"))
    event = fields.String(validate=validate.Length(max=200))


class ContactRefRequestSchema(Schema):
    envelope = fields.Nested(ContactRefEnvelopeSchema, required=True)
    sig = sig_field(required=True)


class ConfirmRequestSchema(Schema):
    envelope = fields.Nested(ContactRefEnvelopeSchema)
    sig = sig_field()
    code = fields.String(validate=validate.Regexp(r"^[A-Za-z0-9_-]{8,64}$"),
                         metadata={"description": "the code alone (the confirmation page's button)"})


class SignedQuerySchema(Schema):
    key = key_field(required=True)
    at = fields.String(required=True, validate=validate.Length(max=64))
    sig = sig_field(required=True, metadata={"description": "signature over {v: 1, ctx, key, (contact,) at}"})


class ContactSchema(Schema):
    id = fields.String(required=True)
    key = fields.String(required=True)
    webhook = fields.String(allow_none=True)
    email = fields.String(allow_none=True)
    events = fields.List(fields.String(), required=True)
    email_status = fields.String(allow_none=True, metadata={"description": "pending or confirmed"})
    language = fields.String(metadata={"description": "en, de or fr: the language of its mails"})
    disabled = fields.Boolean(allow_none=True)
    failures = fields.Integer(allow_none=True)
    created_at = fields.String(allow_none=True)
    updated_at = fields.String(allow_none=True)
    secret = fields.String(metadata={"description": "the webhook's whsec_ secret: shown once, when it is set"})


class ContactDoneSchema(Schema):
    id = fields.String(required=True)
    removed = fields.Boolean()
    queued = fields.Boolean()
    event = fields.String()


class ContactListSchema(Schema):
    contacts = fields.List(fields.Nested(ContactSchema), required=True)


class DeliveryListSchema(Schema):
    contact = fields.String(required=True)
    deliveries = fields.List(fields.Dict(), required=True)
