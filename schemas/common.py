"""Field types and helpers shared by the request and response schemas."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from referee import clock
from referee.protocol.signing import b64url_decode, load_public_key

from .text import MESSAGE_MAX, message_text_problem

HEX64 = validate.Regexp(r"^[0-9a-f]{64}$", error="must be 64 lowercase hex characters (a SHA-256)")
GAME_ID = validate.Regexp(r"^[A-Za-z0-9_-]{1,64}$", error="must be a game id (letters, digits, '_' or '-')")


def strict_int(**kwargs: Any) -> fields.Integer:
    """An integer that refuses strings, booleans and floats."""
    return fields.Integer(strict=True, **kwargs)


class StrictBoolean(fields.Boolean):
    """true or false, nothing that merely looks like one (``1``, ``"yes"``, ``"true"``)."""

    default_error_messages = {"invalid": "must be true or false"}  # noqa: RUF012 (marshmallow's own pattern)

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


def _b64url_of(length: int, what: str) -> Callable[[str], None]:
    """A validator: canonical base64url (``referee.protocol.signing.b64url_decode``: no padding, no unused bit set) of
    exactly ``length`` bytes; the error names ``what``, and the field's path names the field."""

    def check(value: str) -> None:
        try:
            raw = b64url_decode(value)
        except ValueError as exc:
            raise ValidationError(f"must be {what}: canonical base64url of {length} bytes (no padding, "
                                  f"unused bits of the last character zero)") from exc
        if len(raw) != length:
            raise ValidationError(f"must be {what}: base64url of {length} bytes")

    return check


signature = _b64url_of(64, "an Ed25519 signature")
entropy = _b64url_of(32, "entropy")
_key_bytes = _b64url_of(32, "an Ed25519 public key")


def public_key(value: str) -> None:
    _key_bytes(value)
    try:
        load_public_key(value)
    except ValueError as exc:
        raise ValidationError("must be an Ed25519 public key: base64url of 32 bytes") from exc


#: How far a signer's clock (``envelope.at``) may be ahead of the server's: 5 minutes. An earlier ``at``
#: is fine whatever its age (a move mailed hours ago is good when its ``seq`` and ``prev`` are).
AT_MAX_SKEW = timedelta(minutes=5)
_RFC3339_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|\+00:00)$")


def signer_time(value: str) -> None:
    """An RFC 3339 time in UTC (``2026-11-21T10:00:00Z``, fractions allowed) not later than the server's
    clock plus :data:`AT_MAX_SKEW`."""
    if not _RFC3339_UTC.match(value):
        raise ValidationError("must be an RFC 3339 time in UTC, like 2026-11-21T10:00:00Z")
    whole, _, rest = value.upper().partition(".")
    try:
        when = datetime.strptime(whole.removesuffix("Z").removesuffix("+00:00"), "%Y-%m-%dT%H:%M:%S")
    except ValueError as exc:
        raise ValidationError(f"must be an RFC 3339 time in UTC: {exc}") from exc
    fraction = rest.removesuffix("Z").removesuffix("+00:00")
    when = when.replace(tzinfo=UTC) + timedelta(seconds=float(f"0.{fraction or 0}"))
    now = clock.now()
    server = datetime.fromisoformat(now.replace("Z", "+00:00"))
    if when > server + AT_MAX_SKEW:
        ahead = (when - server).total_seconds()
        raise ValidationError(f"is {ahead:.0f} s ahead of the server's clock ({now}); "
                              f"at most {AT_MAX_SKEW.total_seconds():.0f} s are allowed")


def key_field(**kwargs: Any) -> fields.String:
    kwargs.setdefault("metadata", {"description": "Ed25519 public key, base64url of its 32 raw bytes"})
    return fields.String(validate=[validate.Length(max=64), public_key], **kwargs)


def sig_field(**kwargs: Any) -> fields.String:
    kwargs.setdefault("metadata", {"description": "Ed25519 signature over the RFC 8785 bytes, base64url"})
    return fields.String(validate=[validate.Length(max=100), signature], **kwargs)


def problems_from_messages(messages: Any, path: str = "$") -> list[dict[str, str]]:
    """marshmallow's nested error messages as a flat list ``[{"path": "$.envelope.seat", "problem": …}]``."""
    out: list[dict[str, str]] = []
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key == "_schema":
                out += problems_from_messages(value, path)
            elif isinstance(key, int):
                out += problems_from_messages(value, f"{path}[{key}]")
            else:
                out += problems_from_messages(value, f"{path}.{key}")
    elif isinstance(messages, list):
        for item in messages:
            if isinstance(item, str):
                out.append({"path": path, "problem": item})
            else:
                out += problems_from_messages(item, path)
    else:
        out.append({"path": path, "problem": str(messages)})
    return out


class ErrorBodySchema(Schema):
    code = fields.String(required=True, metadata={"description": "stable machine-readable code"})
    message = fields.String(required=True)
    rule = fields.String(metadata={"description": "id of the rule an illegal move breaks (e.g. TU-B2)"})
    details = fields.Dict(metadata={"description": "problems (400), current seq/head (409), …"})


class ErrorSchema(Schema):
    error = fields.Nested(ErrorBodySchema, required=True)


class VerdictSchema(Schema):
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "ok, applied, rejected or unknown"})
    seat = fields.Integer()
    error = fields.Dict(metadata={"description": "{code, message, rule?} of a rejected entry"})


class HouseBotSchema(Schema):
    key = fields.String(required=True, metadata={"description": "the house bot's Ed25519 public key (base64url): "
                                                                "seat it with \"bot\": true to play the computer"})


class HealthSchema(Schema):
    ok = fields.Boolean(required=True)
    store = fields.String(required=True)
    durability = fields.Dict(metadata={"description": "Redis appendonly/appendfsync settings"})
    disk = fields.String(metadata={"description": "the log Redis's disk: ok, full (below REFEREE_MIN_FREE_DISK: "
                                                  "writes are refused, reads go on) or unknown"})
    writes = fields.Boolean(metadata={"description": "whether a write would be taken now"})


# -- seat and player names (CONTRACT section 11) ----------------------------------------------------------
NAME_MAX = 64


class PlayerName(fields.String):
    """A seat or player name: NFC-normalised on the way in, then 1–64 characters with no control or
    format character (Unicode Cc, Cf: NUL, U+202E right-to-left override, zero-width joiners, …), so that
    a name cannot hide or reorder text on a page. Uniqueness within a game: :func:`clashing_names`."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("metadata", {"description": "NFC-normalised, 1–64 characters, no control or format "
                                                      "characters; unique within a game ignoring case"})
        super().__init__(validate=validate.Length(min=1, max=NAME_MAX,
                                                  error="must have 1 to 64 characters (after NFC normalisation)"),
                         **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = unicodedata.normalize("NFC", super()._deserialize(value, attr, data, **kwargs))
        for char in text:
            if unicodedata.category(char) in {"Cc", "Cf"}:
                raise ValidationError(f"must not contain control or format characters (found U+{ord(char):04X})")
        return text


def name_key(name: str) -> str:
    """What two names must not share within a game: the name ignoring case.

    >>> name_key("ALICE") == name_key("alice") == name_key("Alice")
    True
    >>> name_key("Straße") == name_key("STRASSE")
    True
    """
    return unicodedata.normalize("NFC", name).casefold()


def clashing_names(names: Iterable[str]) -> dict[int, str]:
    """``{index: problem}`` for every name equal, ignoring case, to an earlier one.

    >>> clashing_names(["Alice", "Bob", "alice"])
    {2: "the same name as seat 0 ('Alice'), ignoring case; names must differ"}
    """
    first: dict[str, int] = {}
    names = list(names)
    clashes = {}
    for i, name in enumerate(names):
        key = name_key(name)
        if key in first:
            clashes[i] = f"the same name as seat {first[key]} ({names[first[key]]!r}), ignoring case; names must differ"
        else:
            first[key] = i
    return clashes


# -- message texts (CONTRACT section 12): the name rules plus line feeds, up to 2,000 characters ----------
# (the rule itself is in schemas.text, without marshmallow: the verifier imports it, in the browser too)


class MessageText(fields.String):
    """A message's text, checked by :func:`message_text_problem` and kept exactly as signed."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("metadata", {"description": f"1–{MESSAGE_MAX} characters, NFC-normalised, no control or "
                                                      "format characters but line feeds (\\n)"})
        super().__init__(**kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        problem = message_text_problem(text)
        if problem:
            raise ValidationError(problem)
        return text


class SignedName(fields.String):
    """A name inside a signed envelope (taking a seat): the rules of :class:`PlayerName`, but never normalised on
    the way in, since the signature is over the bytes as sent: a name that is not NFC already is refused."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("metadata", {"description": "the player's name: NFC, 1–64 characters, no control or format "
                                                      "characters; unique within the game ignoring case"})
        super().__init__(validate=validate.Length(min=1, max=NAME_MAX, error="must have 1 to 64 characters"), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if unicodedata.normalize("NFC", text) != text:
            raise ValidationError("must be NFC-normalised (it is signed as sent)")
        for char in text:
            if unicodedata.category(char) in {"Cc", "Cf"}:
                raise ValidationError(f"must not contain control or format characters (found U+{ord(char):04X})")
        return text
