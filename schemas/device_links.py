"""Device links (``/keys/links``, CONTRACT section 15): the sealed box going in, the link and its status coming out."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields

from referee.protocol.signing import b64url_decode

#: the largest box, decoded: a key's name, its seed and the AES-GCM nonce and tag fit many times over
BOX_MAX_BYTES = 2048
#: the smallest: a 12-byte nonce and a 16-byte tag around at least one byte
BOX_MIN_BYTES = 12 + 16 + 1


def _box(value: str) -> None:
    try:
        raw = b64url_decode(value)
    except ValueError as exc:
        raise ValidationError("must be canonical base64url (no padding): the sealed box") from exc
    if len(raw) < BOX_MIN_BYTES:
        raise ValidationError(f"is too short for a sealed box: at least {BOX_MIN_BYTES} bytes (nonce, ciphertext, tag)")


class DeviceLinkRequestSchema(Schema):
    box = fields.String(required=True, validate=_box, metadata={
        "description": f"base64url of the sealed box: a 12-byte nonce, then the AES-256-GCM ciphertext and tag of "
                       f"the key (at most {BOX_MAX_BYTES} bytes decoded; larger is 413 link/too_large)"})


class DeviceLinkSchema(Schema):
    link = fields.String(required=True, metadata={"description": "the link's id: /play/link/<link>#<secret>"})
    expires = fields.String(required=True, metadata={"description": "when the link is gone (UTC, RFC 3339)"})


class DeviceLinkBoxSchema(Schema):
    box = fields.String(required=True, metadata={"description": "the sealed box, given out once"})


class DeviceLinkStatusSchema(Schema):
    taken = fields.Boolean(required=True, metadata={"description": "whether the box has been fetched"})
    expires = fields.String(required=True)
