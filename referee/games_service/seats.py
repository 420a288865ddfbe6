"""Open seats and invitations (CONTRACT section 14): taking a seat, leaving it, and the creator's cancel, each a
signed submission taken through the one submission path (:meth:`Submissions._submit`) or, for the cancel that
names no seat, through the same append (:meth:`Submissions._append_submission`).

Who may take a seat is decided by the log, never by the server's word alone: the fold
(``referee.replay.lifecycle``) re-checks every ``seated``, ``left`` and ``cancelled`` entry, for the workers and
the offline verifier alike. The checks here answer early, in the order of CONTRACT section 6: the envelope's
binding and the joining key's signature (401), the invitation's signature (403 ``seat/bad_invite``), the game's
and the seat's state (409), staleness (409).

Exactly one submission takes a seat, whichever process answers it: the append is a compare-and-set on the log's
position, so of two takes signed for the same position one is appended and the other refused as stale. A
refusal as stale is judged again against the log as it is now: a seat someone else took meanwhile answers 409
``seat/taken`` (or ``seat/same_key``, ``game/not_waiting``, ``game/cancelled``), not ``submission/stale``; only
a take whose seat is still free is told that the log moved on (sign again for the new position).
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import ServiceError
from ..protocol.signing import verify
from ..replay import CANCELLED, EXPIRED, WAITING, LogReplayer, seat_kind
from ..replay.lifecycle import name_clash
from ..store.base import Tip
from ..timecontrol import parse_ms
from .entries import make_entry
from .submissions import StateCheck, Submissions

log = logging.getLogger(__name__)


def _waiting(replayer: LogReplayer) -> ServiceError | None:
    """409 unless the game waits for its seats: ``game/cancelled``, ``game/expired``, ``game/not_waiting``."""
    status = replayer.status
    if status == CANCELLED:
        return ServiceError(409, "game/cancelled", "the game was cancelled by its creator",
                            details={"status": status})
    if status == EXPIRED:
        accept_by = (replayer.created or {}).get("accept_by")
        return ServiceError(409, "game/expired", f"the game had to be accepted by {accept_by}",
                            details={"status": status, "accept_by": accept_by})
    if status != WAITING or (replayer.created or {}).get("mode") != "seeded":
        return ServiceError(409, "game/not_waiting", f"the game is {status}, not waiting for its seats",
                            details={"status": status})
    return None


def _seat_state(envelope: dict[str, Any]) -> StateCheck:
    """The game's and the seat's state for a take of ``envelope``'s seat by ``envelope``'s key."""

    def check(replayer: LogReplayer, seat: int) -> ServiceError | None:
        refused = _waiting(replayer)
        if refused is not None:
            return refused
        key, name = envelope["key"], envelope["name"]
        held = [other for other, holder in enumerate(replayer.holders) if holder is not None and holder[0] == key]
        if held:
            return ServiceError(409, "seat/same_key", f"this key holds seat {held[0]} of this game already",
                                details={"seat": held[0]})
        spec = (replayer.created or {}).get("seats", [])[seat]
        if seat_kind(spec) == "key":
            return ServiceError(409, "seat/taken", f"seat {seat} was given to a key at creation; it is not open",
                                details={"seat": seat})
        if replayer.holders[seat] is not None:
            return ServiceError(409, "seat/taken", f"seat {seat} is taken already", details={"seat": seat})
        clash = next((other for other, holder in enumerate(replayer.holders)
                      if holder is not None and holder[1] and name_clash(holder[1], name)), None)
        if clash is not None:
            return ServiceError(409, "seat/name_taken", f"another seat of this game is called {name}",
                                details={"seat": clash})
        return None

    return check


def _leave_state(replayer: LogReplayer, seat: int) -> ServiceError | None:
    refused = _waiting(replayer)
    if refused is not None:
        return refused
    if seat_kind((replayer.created or {}).get("seats", [])[seat]) == "key":
        return ServiceError(409, "seat/not_open", f"seat {seat} was given to a key at creation; it cannot be left "
                            "(the creator may cancel the game)")
    return None


def seat_taker(game_id: str, replayer: LogReplayer, submission: dict[str, Any]) -> int:
    """The seat a signed take names, when its binding and signatures hold (CONTRACT section 6's order).

    :raises ServiceError: 403 ``submission/wrong_game``, 403 ``submission/wrong_seat``, 401
        ``submission/bad_signature`` (``sig`` is not the joining key's), 403 ``seat/bad_invite`` (an ``invite``
        seat without the invitation key's ``invite_sig`` over the same envelope).
    """
    envelope, sig = submission["envelope"], submission["sig"]
    if envelope["game"] != game_id:
        raise ServiceError(403, "submission/wrong_game",
                           f"the envelope is bound to game {envelope['game']!r}, not {game_id!r}")
    seats = (replayer.created or {}).get("seats", [])
    seat = envelope["seat"]
    if not 0 <= seat < len(seats):
        raise ServiceError(403, "submission/wrong_seat", f"this game has no seat {seat} ({len(seats)} seats)")
    if not verify(envelope["key"], envelope, sig):
        raise ServiceError(401, "submission/bad_signature", "the signature is not the joining key's over this envelope")
    if seat_kind(seats[seat]) == "invite":
        invite_sig = submission.get("invite_sig")
        if not isinstance(invite_sig, str) or not verify(seats[seat]["invite"], envelope, invite_sig):
            raise ServiceError(403, "seat/bad_invite", f"seat {seat} is taken with its invitation: invite_sig is not "
                               "the invitation key's signature over this envelope")
    return seat


class OpenSeats(Submissions):
    """Takes open seats, lets their holders leave and the creator cancel, before the game starts."""

    def take_seat(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """``POST /games/{id}/seat``: a signed take of an open seat (``ctx`` ``referee/seat``); the ``seated``
        entry is also the seat's acceptance (its ``entropy`` counts for the seed); after the last seat is taken
        and accepted the referee starts the game in the same step.

        :raises ServiceError: the first that applies of
            404 ``game/not_found``, 500 ``log/corrupt``;
            403 ``submission/wrong_game``, 403 ``submission/wrong_seat``, 401 ``submission/bad_signature``,
            403 ``seat/bad_invite`` (:func:`seat_taker`);
            409 ``game/cancelled``, ``game/expired``, ``game/not_waiting`` (started, over);
            409 ``seat/same_key`` (the key holds a seat of this game), ``seat/taken`` (taken, or given to a key
            at creation), ``seat/name_taken`` — 409 ``submission/duplicate`` instead when this very take is in
            the log;
            409 ``submission/stale`` (``seq``/``prev`` are not the log's and the seat is still free);
            the fold's verdict: 409 ``game/expired`` (past ``accept_by``);
            503 ``log/unavailable`` when the store could not take it.
        """
        envelope = submission["envelope"]
        state = _seat_state(envelope)
        try:
            receipt, _advanced, _appended = self._submit(game_id, submission, "seated", state, clocked=False,
                                                         authenticate=seat_taker)
        except ServiceError as error:
            if error.code != "submission/stale":
                raise
            # The log moved on since the envelope was signed (or since this process's fold): judge the take again
            # against the log as it is now, so that the loser of a race for the seat hears that it is taken.
            self.cache.forget(game_id)
            current = self.fold(game_id)
            refused = state(current, envelope["seat"])
            if refused is None:
                raise
            raise self._conflict(game_id, Tip(current.seq, current.head), submission["sig"], refused) from error
        self._index_holder(game_id, envelope["key"])
        return receipt

    def leave_seat(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """``POST /games/{id}/leave``: the holder of an open seat gives it up before the start (``ctx``
        ``referee/leave``, signed by the key that took it): the seat is open again, its acceptance gone.

        :raises ServiceError: as :meth:`~referee.games_service.lifecycle.Lifecycle.accept` up to the signature
            (401 ``submission/bad_signature`` also for a seat nobody holds); 409 ``game/cancelled``,
            ``game/expired``, ``game/not_waiting``, ``seat/not_open`` (a seat given to a key at creation); 409
            ``submission/stale`` or ``submission/duplicate``; 503 ``log/unavailable``.
        """
        holder = self.fold_for(game_id, submission["envelope"]).holders
        seat = submission["envelope"]["seat"]
        receipt, _advanced, _appended = self._submit(game_id, submission, "left", _leave_state, clocked=False)
        if 0 <= seat < len(holder) and holder[seat] is not None:
            self._unindex_holder(game_id, holder[seat][0])
        return receipt

    def cancel_game(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """``POST /games/{id}/cancel``: the creator's signed cancel (``ctx`` ``referee/cancel``) of a game that has
        not started; its status is ``cancelled`` and the referee reveals its seed in the same step.

        :raises ServiceError: the first that applies of 404 ``game/not_found``; 403 ``submission/wrong_game``;
            403 ``cancel/no_creator`` (a game created without a signed request); 401 ``submission/bad_signature``
            (not the creator's); 409 ``game/cancelled``, ``game/expired``, ``game/not_waiting``; 409
            ``submission/stale`` or ``submission/duplicate``; 503 ``log/unavailable``.
        """
        replayer = self.fold_for(game_id, submission["envelope"])
        envelope, sig = submission["envelope"], submission["sig"]
        if envelope["game"] != game_id:
            raise ServiceError(403, "submission/wrong_game",
                               f"the envelope is bound to game {envelope['game']!r}, not {game_id!r}")
        creator = replayer.creator_key()
        if creator is None:
            raise ServiceError(403, "cancel/no_creator",
                               "this game was created without a signed request: it has no creator to cancel it")
        if not verify(creator, envelope, sig):
            raise ServiceError(401, "submission/bad_signature",
                               "a game is cancelled by its creator: the signature is not the creator's")
        if (replayer.seq, replayer.head) != (envelope["seq"], envelope["prev"]) and self._behind(game_id, replayer):
            replayer = self.fold(game_id)  # judge the game's state from the log as it is now
        tip = Tip(replayer.seq, replayer.head)
        refused = _waiting(replayer)
        if refused is not None:
            raise self._conflict(game_id, tip, sig, refused)
        if envelope["seq"] != tip.seq or envelope["prev"] != tip.head:
            raise self._stale(game_id, tip, sig, envelope)
        entry = make_entry("cancelled", tip.seq, tip.head, submission=submission)
        advanced, appended = self._append_submission(game_id, replayer, entry, submission)
        return self._receipt(game_id, appended[0], advanced, entry)

    def _unindex_holder(self, game_id: str, key: str) -> None:
        """Take the game off the list of the key that left its seat; best effort (a key's list is read through the
        fold's holders anyway: ``PlayerGames.player_games``)."""
        try:
            self.store.unindex_player_games([(key, game_id)])
        except Exception:
            log.exception("could not take game %s off the list of the key that left its seat", game_id)

    def _index_holder(self, game_id: str, key: str) -> None:
        """List the game under the key that took a seat (``GET /players/{key}/games``); best effort, as at creation."""
        try:
            created = self.created_entry(game_id)
            self.store.index_player_games([(key, game_id, parse_ms(created["at"]))])
        except Exception:
            log.exception("could not list game %s under the key that took a seat", game_id)
