"""What the log's and the work Redis answer, as the store's parts read it: the shapes of the stream replies, and
the stored rows of a log or of the outbox decoded (``referee.store.codec``).

redis-py types its replies for RESP2 and RESP3 (and for str and bytes) at once; the store's clients speak RESP2
with ``decode_responses`` off, whose replies are the shapes below (``rows_of`` and ``streams_of`` say so to mypy).
"""

from __future__ import annotations

import json
from typing import Any, TypeAlias, cast

from . import codec

#: The fields of a stream entry (the store keeps one, ``e``: the entry's stored JSON).
Fields: TypeAlias = dict[bytes | str, bytes | str]
#: ``XRANGE``'s reply: ``(stream id, fields)`` of each entry.
Rows: TypeAlias = list[tuple[bytes, Fields]]
#: ``XREAD``'s reply: ``(stream key, rows)`` of each stream with new entries; ``None`` (or empty) when none had.
Streams: TypeAlias = list[tuple[bytes, Rows]] | None


def rows_of(reply: object) -> Rows:
    """``reply`` of ``XRANGE``/``XREVRANGE`` as what it is (no conversion)."""
    return cast(Rows, reply)


def streams_of(reply: object) -> Streams:
    """``reply`` of ``XREAD``/``XREADGROUP`` as what it is (no conversion)."""
    return cast(Streams, reply)


def text_of(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _field(fields: Fields) -> bytes:
    raw = fields.get(b"e", fields.get("e"))  # every entry has "e" (APPEND_ENTRY, CREATE_GAME, EMIT_EVENT write it)
    return raw if isinstance(raw, bytes) else str(raw).encode()


def event_of(fields: Fields) -> dict[str, Any]:
    """An outbox event (JSON as it is)."""
    return json.loads(_field(fields))  # type: ignore[no-any-return]


def entry_of(fields: Fields, log_id: str) -> dict[str, Any]:
    """A log entry of ``log_id`` (packed or JSON: ``referee.store.codec``)."""
    return codec.unpack(_field(fields), log_id)


def raw_entry_of(fields: Fields, log_id: str) -> bytes:
    """The stored JSON of a log entry of ``log_id``, byte for byte as written (``codec.unpack_json``)."""
    return codec.unpack_json(_field(fields), log_id)
