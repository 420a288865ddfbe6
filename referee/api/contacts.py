"""Contacts: a key's webhooks and e-mail addresses for notifications (CONTRACT sections 9 and 11).

Every request is signed by the key it concerns; reads sign a small envelope passed in the query
(``?key=…&at=…&sig=…``, the signature over ``{"v": 1, "ctx": "referee/contacts", "key", "at"}``, with
``"contact": id`` added for one contact's deliveries).
"""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from referee.errors import ServiceError
from referee.notify.contacts import CTX_DELIVERIES, CTX_LIST, ContactService
from schemas.common import ErrorSchema
from schemas.contacts import (
    ConfirmRequestSchema,
    ContactDoneSchema,
    ContactListSchema,
    ContactRefRequestSchema,
    ContactRequestSchema,
    ContactSchema,
    DeliveryListSchema,
    SignedQuerySchema,
)

from .limits import rate_limited, signing_key
from .parsing import ApiBlueprint

blp = ApiBlueprint("contacts", __name__, url_prefix="/contacts",
                   description="A key's notification channels: webhooks (Standard Webhooks) and confirmed e-mail")


def contacts() -> ContactService:
    found = current_app.extensions.get("referee.contacts")
    if found is None:
        raise ServiceError(503, "contacts/unavailable", "contacts need the Redis store (REFEREE_STORE=redis)")
    return found


def _query_submission(query: dict[str, Any], ctx: str, **extra: Any) -> dict[str, Any]:
    return {"envelope": {"v": 1, "ctx": ctx, "key": query["key"], **extra, "at": query["at"]}, "sig": query["sig"]}


def _errors(func: Any, codes: tuple[int, ...] = (400, 401, 403, 404, 409, 413, 503)) -> Any:
    for code in codes:
        func = blp.alt_response(code, schema=ErrorSchema)(func)
    return func


@blp.route("")
class Contacts(MethodView):
    @blp.arguments(SignedQuerySchema(), location="query")
    @blp.response(200, ContactListSchema)
    @_errors
    def get(self, query: dict[str, Any]) -> dict[str, Any]:
        """The contacts of a key (signed query: ctx ``referee/contacts``)."""
        return {"contacts": contacts().list(_query_submission(query, CTX_LIST))}

    @rate_limited("REFEREE_RATE_CONTACTS")
    @rate_limited("REFEREE_RATE_CONTACTS_PER_KEY", key=signing_key)
    @blp.arguments(ContactRequestSchema())
    @blp.response(201, ContactSchema)
    @_errors
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """Register a webhook and/or an e-mail address for a key's events; the answer shows the webhook's
        secret once. An address is confirmed before it gets anything but its confirmation mail."""
        return contacts().add(body)


@blp.route("/<contact_id>")
class Contact(MethodView):
    @rate_limited("REFEREE_RATE_CONTACTS")
    @blp.arguments(ContactRequestSchema())
    @blp.response(200, ContactSchema)
    @_errors
    def put(self, body: dict[str, Any], contact_id: str) -> dict[str, Any]:
        """Change a contact (the envelope names it: ``contact``); a new webhook URL gets a new secret."""
        return contacts().add(body, contact_id)

    @blp.arguments(ContactRefRequestSchema())
    @blp.response(200, ContactDoneSchema)
    @_errors
    def delete(self, body: dict[str, Any], contact_id: str) -> dict[str, Any]:
        """Remove a contact (signed: ctx ``referee/contact-delete``)."""
        _check_ref(body, contact_id)
        return contacts().remove(contact_id, body)


@blp.route("/<contact_id>/confirm")
class Confirm(MethodView):
    @rate_limited("REFEREE_RATE_CONTACTS")  # also keeps anyone from guessing codes
    @blp.arguments(ConfirmRequestSchema())
    @blp.response(200, ContactSchema)
    @_errors
    def post(self, body: dict[str, Any], contact_id: str) -> dict[str, Any]:
        """Confirm an e-mail address with the code of its confirmation mail: signed (ctx
        ``referee/contact-confirm``), or the code alone (the confirmation page's button)."""
        if "envelope" in body:
            _check_ref(body, contact_id)
        elif "code" not in body:
            raise ServiceError(400, "request/invalid", "send the signed envelope, or the code")
        return contacts().confirm(contact_id, body)


@blp.route("/<contact_id>/deliveries")
class Deliveries(MethodView):
    @blp.arguments(SignedQuerySchema(), location="query")
    @blp.response(200, DeliveryListSchema)
    @_errors
    def get(self, query: dict[str, Any], contact_id: str) -> dict[str, Any]:
        """The latest deliveries to a contact, newest first (signed query: ctx
        ``referee/contact-deliveries`` with ``contact``)."""
        rows = contacts().deliveries(contact_id, _query_submission(query, CTX_DELIVERIES, contact=contact_id))
        return {"contact": contact_id, "deliveries": rows}


@blp.route("/<contact_id>/resend")
class Resend(MethodView):
    @rate_limited("REFEREE_RATE_CONTACTS")
    @blp.arguments(ContactRefRequestSchema())
    @blp.response(202, ContactDoneSchema)
    @_errors
    def post(self, body: dict[str, Any], contact_id: str) -> dict[str, Any]:
        """Deliver an event once more (signed: ctx ``referee/contact-resend``, ``event``: its id); re-enables a
        disabled webhook."""
        _check_ref(body, contact_id)
        return contacts().resend(contact_id, body)


def _check_ref(body: dict[str, Any], contact_id: str) -> None:
    if body["envelope"]["contact"] != contact_id:
        raise ServiceError(400, "request/invalid", f"the envelope names contact {body['envelope']['contact']!r}, "
                           f"not {contact_id!r}", details={"problems": [{"path": "$.envelope.contact",
                                                                          "problem": f"must be {contact_id!r}"}]})
