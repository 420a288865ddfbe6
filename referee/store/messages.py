"""A game's messages (CONTRACT section 12): their own hash-chained stream beside the game's log, never in it,
so that talking never makes a move stale.

Each stored message is a sealed record (``referee.protocol.logchain``: ``hash = sha256(prev ‖ RFC 8785 of the record
without hash)``, the first chained from 64 zeros) that also names its ``prev`` explicitly, so that a bundle
can carry the public messages and only the hashes of the private ones and the chain still checks::

    {"v": 1, "type": "message", "seq": <position in the stream>, "prev": <hash of the previous message>,
     "at": <the referee's arrival time>, "log_seq": <the game's log length then>,
     "submission": {"envelope", "sig"} (as received), "hash"}

The store keeps records as given and never interprets them (the service builds and seals them); it appends
atomically at exactly the expected position, stream head and log length, refuses a signature it holds
already and a message that would take the game's stored messages over a cap of bytes (issue 37: each stream
entry carries ``b``, the bytes of the messages up to it), and keeps per seat whom it muted. Two
implementations behind :class:`MessageStore`, one contract (``tests/service/test_store_contract.py``):
:class:`RedisMessageStore` (keys ``game:{<id>}:messages…`` of ``referee.store.keys``, script ``APPEND_MESSAGE``
of ``referee.store.scripts``) and :class:`MemoryMessageStore`.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

from ..protocol.canonical import canonical_bytes
from ..protocol.logchain import GENESIS
from . import codec, keys, scripts
from .base import LogStore
from .errors import DuplicateSubmission, GameArchived, GameNotFound, StaleAppend
from .memory import MemoryStore
from .redis_store import FOLLOW_BLOCK_MAX, RedisStore, confirmed_write, stored_json, streams_of


class MessagesFull(Exception):
    """The game's stored messages hold ``stored`` bytes: one more of this size would take them over the cap."""

    def __init__(self, stored: int, cap: int):
        super().__init__(f"the game's messages hold {stored} bytes; the cap is {cap}")
        self.stored = stored
        self.cap = cap


class MessageTip(NamedTuple):
    """Where a game's message stream is: its ``length`` (the next message's position), its ``head`` (hash of
    the last message, 64 zeros when none) and the game's log length (``log_seq`` of the next message)."""

    length: int
    head: str
    log_seq: int


class MessageStore(ABC):
    """The interface of a game's message stream and its seats' mutes."""

    @abstractmethod
    def tip(self, game_id: str) -> MessageTip:
        """The stream's count and head and the game's log length, read together. Raises ``GameNotFound``."""

    @abstractmethod
    def append(self, game_id: str, message: dict[str, Any], signature: str, max_bytes: int = 0) -> int:
        """Append the sealed ``message`` at position ``message["seq"]`` after ``message["prev"]``, written
        while the game's log is ``message["log_seq"]`` long; returns its position.

        Raises ``GameNotFound``; ``StaleAppend(count, head)`` if the stream or the log is elsewhere (nothing
        written); ``DuplicateSubmission(position, count, head)`` if ``signature`` is in the stream already
        (nothing written); ``MessagesFull`` if the game's stored messages would then hold more than
        ``max_bytes`` bytes (0: no cap; nothing written); ``StoreUnavailable`` if the write could not be
        confirmed."""

    @abstractmethod
    def read(self, game_id: str, start: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        """The stored messages from position ``start``, in order, at most ``count`` of them (None: all; none for
        a game without messages)."""

    @abstractmethod
    def follow(self, game_id: str, after: int, message_from: int, timeout: float, limit: int = 100
               ) -> tuple[list[tuple[int, bytes]], list[dict[str, Any]]]:
        """What ``GET /games/{id}/events`` streams: the log's entries after position ``after`` (``(position,
        stored JSON)``, as ``LogStore.follow_log`` gives them) and the stored messages from position
        ``message_from``, waiting up to ``timeout`` seconds for the first of either (one blocking read of both
        streams; no polling). Both lists empty when nothing came in time."""

    @abstractmethod
    def set_mute(self, game_id: str, seat: int, mute: list[int], signed_ms: int) -> bool:
        """Record that ``seat`` mutes ``mute`` (replacing what it muted before), unless a request signed at
        ``signed_ms`` or later is stored already (then False, nothing written)."""

    @abstractmethod
    def mutes(self, game_id: str) -> dict[int, list[int]]:
        """Whom each seat muted (seats that muted nobody may be absent)."""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisMessageStore(MessageStore):
    """Messages on the log's Redis (durable, like the log): a stream per game under the game's hash tag."""

    def __init__(self, store: RedisStore):
        self.logs = store
        self.redis = store.redis
        #: answers an archived game's messages from its archived document (``RedisStore.archived``)
        self.log_store = store
        self._append = self.redis.register_script(scripts.APPEND_MESSAGE)
        self._set_mute = self.redis.register_script(scripts.SET_MUTE)

    def tip(self, game_id: str) -> MessageTip:
        k = keys.message_keys(game_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.xlen(k.stream)
        pipe.get(k.head)
        pipe.xlen(k.log)
        count, head, log_seq = pipe.execute()
        if not log_seq:
            document = self.log_store.archived(game_id)
            if document is None:
                raise GameNotFound(game_id)
            stored = document.get("messages") or []
            return MessageTip(len(stored), stored[-1]["hash"] if stored else GENESIS, len(document["bundle"]["log"]))
        return MessageTip(int(count), _text(head) if head else GENESIS, int(log_seq))

    def append(self, game_id: str, message: dict[str, Any], signature: str, max_bytes: int = 0) -> int:
        k = keys.message_keys(game_id)
        prev = "" if message["prev"] == GENESIS else message["prev"]
        with confirmed_write():
            result = self._append(keys=[k.stream, k.head, k.sigs, k.log],
                                  args=[message["seq"], prev, message["log_seq"], stored_json(message),
                                        message["hash"], signature, max(0, int(max_bytes))])
        status = _text(result[0])
        if status == "ok":
            return int(result[1])
        if status == "full":
            raise MessagesFull(int(result[1]), max_bytes)
        if status == "stale":
            raise StaleAppend(int(result[1]), _text(result[2]) or GENESIS)
        if status == "duplicate":
            tip = self.tip(game_id)
            raise DuplicateSubmission(int(result[1]), tip.length, tip.head)
        if self.log_store.archive is not None and self.log_store.archive.has(game_id):
            raise GameArchived(game_id)
        raise GameNotFound(game_id)

    def read(self, game_id: str, start: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        rows: Any = self.redis.xrange(keys.message_keys(game_id).stream, min=keys.stream_id(max(start, 0)), max="+",
                                      count=count)
        if not rows:
            document = self.log_store.archived(game_id)
            if document is not None:
                stored = list(document.get("messages") or [])[max(start, 0):]
                return stored if count is None else stored[:count]
        return [json.loads(fields.get(b"e", fields.get("e"))) for _id, fields in rows]

    def follow(self, game_id: str, after: int, message_from: int, timeout: float, limit: int = 100
               ) -> tuple[list[tuple[int, bytes]], list[dict[str, Any]]]:
        k = keys.message_keys(game_id)  # the log and the messages share the game's hash tag: one XREAD
        block_ms = max(1, int(min(timeout, FOLLOW_BLOCK_MAX) * 1000))
        streams: dict[Any, Any] = {k.log: keys.stream_id(after),
                                   k.stream: keys.stream_id(max(message_from, 0) - 1)}
        reply = streams_of(self.logs.follower().xread(streams, count=limit, block=block_ms))
        entries: list[tuple[int, bytes]] = []
        messages: list[dict[str, Any]] = []
        for stream, rows in reply or []:
            for stream_id_, fields in rows:
                raw = fields.get(b"e", fields.get("e"))
                data = raw if isinstance(raw, bytes) else str(raw).encode()
                if _text(stream) == k.log:  # a log entry: its stored JSON (it may be kept packed: referee.store.codec)
                    entries.append((keys.position_of(stream_id_), codec.unpack_json(data, game_id)))
                else:
                    messages.append(json.loads(data))
        return entries, messages

    def set_mute(self, game_id: str, seat: int, mute: list[int], signed_ms: int) -> bool:
        value = json.dumps({"mute": list(mute), "ms": signed_ms}, separators=(",", ":"))
        k = keys.message_keys(game_id)
        stored = int(self._set_mute(keys=[k.mutes, k.log], args=[seat, value, signed_ms]))
        if stored < 0:
            if self.log_store.archive is not None and self.log_store.archive.has(game_id):
                raise GameArchived(game_id)
            raise GameNotFound(game_id)
        return bool(stored)

    def mutes(self, game_id: str) -> dict[int, list[int]]:
        raw: Any = self.redis.hgetall(keys.message_keys(game_id).mutes)
        if not raw:
            document = self.log_store.archived(game_id)
            raw = (document.get("mutes") or {}) if document is not None else {}
        return {int(_text(seat)): list(json.loads(value)["mute"]) for seat, value in raw.items()}


class _Stream:
    def __init__(self) -> None:
        self.messages: list[bytes] = []
        self.head = GENESIS
        self.sigs: dict[str, int] = {}
        self.mutes: dict[int, tuple[list[int], int]] = {}


class MemoryMessageStore(MessageStore):
    """Messages in process memory, beside a :class:`MemoryStore`'s logs (whose lock makes an append atomic
    with the log length it records, as the script does in Redis)."""

    def __init__(self, store: MemoryStore):
        self.logs = store
        self._lock: threading.RLock = getattr(store, "_lock", threading.RLock())
        self._appended: threading.Condition = getattr(store, "_appended", threading.Condition(self._lock))
        self._streams: dict[str, _Stream] = {}

    def _stream(self, game_id: str) -> _Stream:
        keys.message_keys(game_id)  # the same id rules as the Redis store
        return self._streams.setdefault(game_id, _Stream())

    def tip(self, game_id: str) -> MessageTip:
        with self._lock:
            log_seq = self.logs.tip(game_id).seq
            stream = self._stream(game_id)
            return MessageTip(len(stream.messages), stream.head, log_seq)

    def append(self, game_id: str, message: dict[str, Any], signature: str, max_bytes: int = 0) -> int:
        with self._lock:
            log_seq = self.logs.tip(game_id).seq
            stream = self._stream(game_id)
            count = len(stream.messages)
            if signature in stream.sigs:
                raise DuplicateSubmission(stream.sigs[signature], count, stream.head)
            if message["seq"] != count or message["prev"] != stream.head or message["log_seq"] != log_seq:
                raise StaleAppend(count, stream.head)
            stored, row = sum(len(row) for row in stream.messages), canonical_bytes(message)
            if max_bytes > 0 and stored + len(row) > max_bytes:
                raise MessagesFull(stored, max_bytes)
            stream.messages.append(row)
            stream.head = message["hash"]
            stream.sigs[signature] = count
            self._appended.notify_all()  # wakes the followers of the game (its log's and its messages')
            return count

    def follow(self, game_id: str, after: int, message_from: int, timeout: float, limit: int = 100
               ) -> tuple[list[tuple[int, bytes]], list[dict[str, Any]]]:
        def rows() -> tuple[list[tuple[int, bytes]], list[dict[str, Any]]] | None:
            entries = [(position, raw) for _game, position, raw in self.logs.follow_logs({game_id: after}, 0, limit)]
            messages = self.read(game_id, message_from)[:limit]
            return (entries, messages) if entries or messages else None

        with self._appended:
            return self._appended.wait_for(rows, timeout=max(0.0, timeout)) or ([], [])

    def read(self, game_id: str, start: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        with self._lock:
            rows = list(self._stream(game_id).messages[max(start, 0):])
        rows = rows if count is None else rows[:count]
        return [json.loads(row) for row in rows]

    def set_mute(self, game_id: str, seat: int, mute: list[int], signed_ms: int) -> bool:
        with self._lock:
            stream = self._stream(game_id)
            stored = stream.mutes.get(seat)
            if stored is not None and stored[1] >= signed_ms:
                return False
            stream.mutes[seat] = (list(mute), signed_ms)
            return True

    def mutes(self, game_id: str) -> dict[int, list[int]]:
        with self._lock:
            return {seat: list(mute) for seat, (mute, _ms) in self._stream(game_id).mutes.items()}


def messages_of(store: LogStore) -> MessageStore:
    """The message store beside a log store: on the same Redis (or cluster), or in the same memory."""
    if isinstance(store, RedisStore):
        return RedisMessageStore(store)
    if isinstance(store, MemoryStore):
        return MemoryMessageStore(store)
    raise TypeError(f"no message store for a {type(store).__name__}")
