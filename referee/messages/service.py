"""The message service: takes a seat's signed message into the game's message stream, answers the reads
(everyone: the public messages; a seat's signed read: also the private ones to it or from it, without the
seats it muted) and a seat's signed mute request.

A message is bound to its game and seat and signed by the seat's key from the game's ``created`` entry, but
to no log position: it never makes a move stale, and a move never makes it stale. The referee stamps it with
its arrival time ``at`` and the game's log length then (``log_seq``), chains it in the stream, and signs a
receipt (ctx ``referee/message-receipt``: a position of the message stream, never of the log).

Each message taken is also an outgoing ``message`` event (CONTRACT section 12; :func:`referee.notify.events.
message_event`): the service puts it into the same outbox as the log's events (``emit``, the store's
``emit_events``) right after the append, with an id of the message's position, so that contacts get it like
``turn`` — a private one only its addressees', never a muting seat's. Should that write fail after the message
is stored, the message stands (its receipt is answered) and the same signed message posted again, answered 409
``message/duplicate``, puts the event out then (the outbox takes an id once).

Volume (issue 37, item 4): before a game has started only a seat that has accepted (or taken its seat) may
talk in it (409 ``message/not_started``): a game anyone creates with keys of their own cannot be a free
mailbox; a game's stored messages hold at most ``max_bytes`` bytes (``REFEREE_MAX_MESSAGE_BYTES``; one more
is 409 ``messages/full``); reads are paged (``from``/``limit``, ``next``) like ``GET /games/{id}/log``. The
per-address and per-key rates are the API's (``referee.api.limits``), applied to mail as well
(``workers.mailjobs``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..clock import now
from ..errors import ServiceError, invalid
from ..games_service.submissions import authenticated_seat
from ..i18n import Text
from ..notify.contacts import signed_time_ms
from ..notify.events import message_event
from ..protocol.logchain import seal
from ..protocol.signing import MESSAGE_RECEIPT_CTX, MESSAGES_READ_CTX, sign, verify
from ..replay.verdicts import CANCELLED, EXPIRED, WAITING
from ..store import DuplicateSubmission, GameArchived, GameNotFound, StaleAppend, StoreUnavailable
from ..store.messages import MessagesFull, MessageStore
from ..timecontrol import format_ms

#: how often a message is built again when the stream or the log moved while it was being appended
APPEND_ATTEMPTS = 50

CreatedEntry = Callable[[str], dict[str, Any]]
#: ``standing(game) -> (started, accepted)``: whether the game has started (is no longer waiting, expired or
#: cancelled), and the seats that have accepted it (or taken their seat) so far
Standing = Callable[[str], tuple[bool, set[int]]]
#: the most messages one read gives (``limit``'s default is 100)
READ_MAX_PAGE = 1000
#: ``emit(events)``: put outgoing events into the outbox (``LogStore.emit_events``; idempotent by id)
Emit = Callable[[list[dict[str, Any]]], Any]

log = logging.getLogger(__name__)


def visible_to(message: dict[str, Any], readers: set[int], muted: set[int]) -> bool:
    """Whether a stored message is shown to a reader holding the seats ``readers`` (none: anyone) who muted
    the seats ``muted``: public ones and, for a seat, those to it or from it; never a muted seat's.

    >>> m = {"submission": {"envelope": {"seat": 1, "to": [2]}}}
    >>> visible_to(m, set(), set()), visible_to(m, {2}, set()), visible_to(m, {0}, set()), visible_to(m, {2}, {1})
    (False, True, False, False)
    """
    envelope = message["submission"]["envelope"]
    sender, to = envelope["seat"], envelope.get("to")
    if sender in readers:
        return True
    if sender in muted:
        return False
    return to is None or bool(readers.intersection(to))


def standing_of(fold: Callable[[str], Any]) -> Standing:
    """The :data:`Standing` of games read from their current fold (``GameService.fold``): started once the game
    is no longer waiting (nor expired or cancelled, which never started); accepted, the seats with an entropy
    (an acceptance, or a seat taken)."""

    def standing(game_id: str) -> tuple[bool, set[int]]:
        state = fold(game_id)
        return state.status not in (WAITING, EXPIRED, CANCELLED), set(state.entropies)

    return standing


def message_view(message: dict[str, Any]) -> dict[str, Any]:
    """A stored message as ``GET /games/{id}/messages`` shows it."""
    envelope = message["submission"]["envelope"]
    return {"position": message["seq"], "at": message["at"], "log_seq": message["log_seq"], "seat": envelope["seat"],
            "to": envelope.get("to"), "text": envelope["text"], "prev": message["prev"], "hash": message["hash"],
            "submission": message["submission"]}


class MessageService:
    """Messages of games: ``created_entry(game)`` gives a game's ``created`` entry (404 ``ServiceError`` for an
    unknown game): the seats and their keys."""

    def __init__(self, store: MessageStore, created_entry: CreatedEntry, referee_key: Ed25519PrivateKey, *,
                 emit: Emit | None = None, holders: Callable[[str], list[str]] | None = None,
                 standing: Standing | None = None, max_bytes: int = 0):
        self.store = store
        #: whether a game has started, and who accepted it (None: no check, every game counts as started)
        self.standing = standing
        #: the most bytes of stored messages one game holds (0: no cap)
        self.max_bytes = max_bytes
        self.created_entry = created_entry
        #: the keys that hold a game's seats now (CONTRACT section 14: an open seat's is the key that took it, ``""``
        #: while nobody holds it; section 15: a seat's new key)
        self.holders = holders
        self.referee_key = referee_key
        self.emit = emit

    def _emit(self, game_id: str, message: dict[str, Any], keys: list[str]) -> None:
        """Put the ``message`` event of a stored message into the outbox (see the module's docstring)."""
        if self.emit is None:
            return
        try:
            self.emit([message_event(game_id, message, keys, self.store.mutes(game_id))])
        except Exception:  # the message is stored: posting it again puts the event out (409 message/duplicate)
            log.exception("could not emit the message event of %s:%s", game_id, message.get("seq"))

    # -- the checks a seat's signed request goes through --------------------------------------------
    def _seat_keys(self, game_id: str) -> list[str]:
        seats = self.created_entry(game_id)["seats"]
        if self.holders is not None:  # an open seat's holder, a seat's new key (CONTRACT sections 14, 15): the fold's
            try:
                return self.holders(game_id)
            except ServiceError:
                if any("key" not in seat for seat in seats):
                    raise
        return [seat.get("key") or "" for seat in seats]

    @staticmethod
    def _seats_exist(seats: list[int] | None, count: int, path: str) -> None:
        problems = [{"path": f"{path}[{i}]", "problem": f"this game has no seat {seat} ({count} seats)"}
                    for i, seat in enumerate(seats or []) if seat >= count]
        if problems:
            raise invalid(problems)

    @staticmethod
    def _authenticate(game_id: str, keys: list[str], submission: dict[str, Any]) -> int:
        """The seat of a signed request bound to this game whose signature is its seat's, as for moves
        (``games_service.submissions.authenticated_seat``)."""
        return authenticated_seat(game_id, keys, submission)

    def _may_talk(self, game_id: str, seat: int) -> None:
        """409 ``message/not_started`` for a seat that has not accepted a game that has not started."""
        if self.standing is None:
            return
        started, accepted = self.standing(game_id)
        if not started and seat not in accepted:
            raise ServiceError(409, "message/not_started", Text(
                "the game has not started and seat %(seat)s has not accepted it: a seat talks before the start "
                "only once it has accepted", seat=seat), details={"seat": seat})

    @staticmethod
    def _fresh(at: Any, path: str) -> int:
        """The signer's time of a request bound to no position, in ms: within ``FRESH`` s of the server's."""
        return signed_time_ms(at, path, "messages/stale_request")

    # -- requests -----------------------------------------------------------------------------------
    def post(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """``POST /games/{id}/messages``: a seat's signed message into the game's message stream; returns the
        receipt. Refused, first that applies: 404 ``game/not_found``; 400 ``request/invalid`` (a ``to`` seat
        the game lacks); 403/401 as for moves (binding and signature); 409 ``message/not_started`` (the game
        has not started and the seat has not accepted it); 409 ``message/duplicate`` (this signed message is in
        the stream already, ``details.position``); 409 ``messages/full`` (the game's messages hold
        ``max_bytes`` already); 503 ``log/unavailable``."""
        keys = self._seat_keys(game_id)
        envelope = submission["envelope"]
        self._seats_exist(envelope.get("to"), len(keys), "$.envelope.to")
        seat = self._authenticate(game_id, keys, submission)
        self._may_talk(game_id, seat)
        for _attempt in range(APPEND_ATTEMPTS):
            try:
                tip = self.store.tip(game_id)
                message = seal({"v": 1, "type": "message", "seq": tip.length, "prev": tip.head, "at": now(),
                                "log_seq": tip.log_seq, "submission": submission}, tip.head)
                position = self.store.append(game_id, message, submission["sig"], self.max_bytes)
            except MessagesFull as exc:
                raise ServiceError(409, "messages/full", Text(
                    "this game's messages are full: they hold %(stored)s bytes and take at most %(cap)s; no more "
                    "messages are taken in this game", stored=exc.stored, cap=exc.cap),
                    details={"stored": exc.stored, "max_bytes": exc.cap}) from exc
            except StaleAppend:
                continue  # another message or an entry of the log came first: build it again on top
            except DuplicateSubmission as exc:
                stored = self.store.read(game_id, exc.position)[:1]
                if stored and stored[0]["submission"].get("sig") == submission["sig"]:
                    self._emit(game_id, stored[0], keys)  # an event the first post could not emit goes out now
                raise ServiceError(409, "message/duplicate",
                                   f"this signed message is in the game's messages already at position "
                                   f"{exc.position}; sign a new one (a new at)",
                                   details={"position": exc.position}) from exc
            except GameArchived as exc:
                raise _archived(game_id) from exc
            except GameNotFound as exc:
                raise ServiceError(404, "game/not_found", f"no game {game_id!r}") from exc
            except StoreUnavailable as exc:
                raise ServiceError(503, "log/unavailable", f"the message could not be written durably: {exc}") from exc
            self._emit(game_id, message, keys)
            receipt = {"ctx": MESSAGE_RECEIPT_CTX, "game": game_id, "position": position, "hash": message["hash"],
                       "at": message["at"], "log_seq": message["log_seq"]}
            return {"game": game_id, "position": position, "hash": message["hash"], "at": message["at"],
                    "log_seq": message["log_seq"], "receipt": receipt, "receipt_sig": sign(self.referee_key, receipt)}
        raise ServiceError(503, "log/unavailable", "the game's messages kept moving; try again")

    def read(self, game_id: str, query: dict[str, Any]) -> dict[str, Any]:
        """``GET /games/{id}/messages``: the public messages from ``from`` (or its older name ``since``), at most
        ``limit`` positions of the stream (private ones it does not show count too); ``next`` is the ``from``
        of the next page, null on the last. With a seat's signed read (``key``, ``at``, ``sig``: the signature
        over ``{"v": 1, "ctx": "referee/messages", "game", "key", "at"}``) also the private ones to or from
        that key's seats, without the messages of the seats they muted."""
        keys = self._seat_keys(game_id)
        signed = [name for name in ("key", "at", "sig") if query.get(name)]
        readers: set[int] = set()
        muted: set[int] = set()
        if signed:
            missing = [name for name in ("key", "at", "sig") if name not in signed]
            if missing:
                raise invalid([{"path": f"query.{name}", "problem": "a signed read gives key, at and sig together"}
                               for name in missing])
            self._fresh(query["at"], "query.at")
            envelope = {"v": 1, "ctx": MESSAGES_READ_CTX, "game": game_id, "key": query["key"], "at": query["at"]}
            if not verify(query["key"], envelope, query["sig"]):
                raise ServiceError(401, "submission/bad_signature",
                                   f"sig is not this key's signature over {envelope}")
            readers = {seat for seat, key in enumerate(keys) if key == query["key"]}
            if not readers:
                raise ServiceError(403, "messages/not_a_seat", "this key holds no seat of the game")
            mutes = self.store.mutes(game_id)
            muted = {other for seat in readers for other in mutes.get(seat, [])} - readers
        # The length is taken before the messages are read, and extended over what was read: a message that
        # comes in between is then in this answer or, its position at or after ``length``, in the reader's next
        # one. (Taken after the read, it could count a message the answer lacks, and a reader going on from
        # ``length`` would never see it.)
        length = self.store.tip(game_id).length
        start = query.get("start", query.get("since", 0))
        limit = min(int(query.get("limit") or 100), READ_MAX_PAGE)
        messages = self.store.read(game_id, start, limit + 1)  # one more: is there a next page?
        more = len(messages) > limit
        messages = messages[:limit]
        if messages:
            length = max(length, int(messages[-1]["seq"]) + 1)
        shown = [message_view(m) for m in messages if visible_to(m, readers, muted)]
        following = int(messages[-1]["seq"]) + 1 if more and messages else None
        # ``length`` is where a reader goes on from (older clients read on from it): ``next`` on a page that is
        # not the last, else the stream's length (``total``)
        out: dict[str, Any] = {"game": game_id, "messages": shown, "start": start, "next": following,
                               "total": length, "length": following if following is not None else length,
                               "reader": sorted(readers) if signed else None}
        if signed:
            out["muted"] = sorted(muted)
        return out

    def mute(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """``POST /games/{id}/messages/mute``: the seats a seat mutes for itself (replacing its earlier list).
        Refused: 404; 400 (a seat the game lacks, the seat itself, a request not signed within
        ``FRESH`` s); 403/401 as for moves; 409 ``messages/stale_mute`` when a request of this seat
        signed later is stored already."""
        keys = self._seat_keys(game_id)
        envelope = submission["envelope"]
        self._seats_exist(envelope["mute"], len(keys), "$.envelope.mute")
        if envelope["seat"] in envelope["mute"]:
            raise invalid([{"path": "$.envelope.mute", "problem": "a seat cannot mute itself"}])
        signed_ms = self._fresh(envelope["at"], "$.envelope.at")
        seat = self._authenticate(game_id, keys, submission)
        try:
            stored = self.store.set_mute(game_id, seat, sorted(envelope["mute"]), signed_ms)
        except GameArchived as exc:
            raise _archived(game_id) from exc
        except GameNotFound as exc:
            raise ServiceError(404, "game/not_found", f"no game {game_id!r}") from exc
        if not stored:
            raise ServiceError(409, "messages/stale_mute", "a mute request of this seat signed at this time or later "
                               "is stored already; sign a new one", details={"at": format_ms(signed_ms)})
        return {"game": game_id, "seat": seat, "muted": sorted(envelope["mute"])}


def _archived(game_id: str) -> ServiceError:
    return ServiceError(409, "game/archived", f"game {game_id} is over and archived: it takes no more messages or "
                        "mutes (its messages are still read)")
