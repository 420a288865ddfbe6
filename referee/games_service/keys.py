"""A seat's new key (CONTRACT section 15): a holder's rekey, a recovery of a lost key and its answers, each a
signed submission taken through the one submission path (:meth:`Submissions._submit`).

What holds is the fold's (:mod:`referee.replay.keys`, rules RK-…); the checks here only answer early, before the
staleness check, what the game's state already refuses. The referee's own entries that follow — the
``recovery_declined`` when the seat's key was used or a seat declined, the ``rekeyed`` (reason ``recovered``) that
the deadline scheduler writes once the recovery is accepted and its wait is over — are ``due_system_entry``'s.
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import ServiceError
from ..protocol.signing import verify
from ..replay import ACTIVE, WAITING, LogReplayer, organiser_of, pending_recovery, recovery_not_before
from ..store import StaleAppend
from ..timecontrol import format_ms, parse_ms
from .entries import make_entry
from .folds import clone_replayer
from .submissions import Submissions, authenticated_seat

log = logging.getLogger(__name__)

#: seconds a recovery waits at least before it may complete (``REFEREE_RECOVERY_WAIT``, default 72 hours)
DEFAULT_RECOVERY_WAIT = 72 * 3600


def _keys_state(replayer: LogReplayer, seat: int) -> ServiceError | None:
    if replayer.status not in (WAITING, ACTIVE):
        return ServiceError(409, "game/not_active", f"the game is {replayer.status}: its seats' keys stay as they are",
                            details={"status": replayer.status})
    if replayer.holders[seat] is None:
        return ServiceError(409, "seat/not_taken", f"nobody holds seat {seat}")
    return None


def _new_key_state(key: str, recovery: bool):  # type: ignore[no-untyped-def]
    def check(replayer: LogReplayer, seat: int) -> ServiceError | None:
        refused = _keys_state(replayer, seat)
        if refused is not None:
            return refused
        if key in replayer.keys:
            held = replayer.keys.index(key)
            return ServiceError(409, "seat/same_key", f"this key holds seat {held} of this game already",
                                "RK-H1", details={"seat": held})
        pending = pending_recovery(replayer, seat=seat) if recovery else None
        if pending is not None:
            return ServiceError(409, "recovery/pending", f"a recovery of seat {seat} is pending (log position "
                                f"{pending.position})", "RK-R1", details={"pending": pending.to_dict()})
        return None
    return check


def _recovery_answer_state(position: int):  # type: ignore[no-untyped-def]
    def check(replayer: LogReplayer, seat: int) -> ServiceError | None:
        refused = _keys_state(replayer, seat)
        if refused is not None:
            return refused
        if pending_recovery(replayer, position=position) is None:
            return ServiceError(409, "offer/none_pending", f"no offer or recovery at position {position} is pending")
        return None
    return check


class SeatKeys(Submissions):
    """Takes a holder's rekey, a recovery request, and the answers to a recovery."""

    def rekey(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A holder's signed rekey (``ctx`` ``referee/rekey``): ``sig`` by the seat's key, ``new_sig`` by the
        envelope's ``key`` → entry ``rekeyed`` (reason ``holder``); from then on the seat's key is the new one.

        :raises ServiceError: 404 ``game/not_found``; 403 ``submission/wrong_game``, 401 ``submission/bad_signature``
            (``new_sig`` not the new key's), 403 ``submission/wrong_seat``, 401 ``submission/bad_signature``, 403
            ``submission/wrong_key`` (``sig`` not the seat's key); 409 ``game/not_active`` (over), 409
            ``seat/not_taken``, 409 ``seat/same_key`` (the new key holds a seat of the game); 409
            ``submission/stale`` or ``submission/duplicate``; 409 ``time/expired``; 503 ``log/unavailable``.
        """
        envelope = submission["envelope"]

        def authenticate(game: str, replayer: LogReplayer, sub: dict[str, Any]) -> int:
            if envelope["game"] == game and not verify(envelope["key"], envelope, sub["new_sig"]):
                raise ServiceError(401, "submission/bad_signature",
                                   "new_sig is not the new key's signature over this envelope", "RK-H1")
            return authenticated_seat(game, replayer.keys, sub)

        receipt, advanced, _appended = self._submit(
            game_id, submission, "rekeyed", _new_key_state(envelope["key"], recovery=False),
            payload={"key": envelope["key"], "reason": "holder"}, authenticate=authenticate)
        history = [h for h in advanced.key_history if h[0] == receipt["position"]]
        if history:
            self._reindex(game_id, history[-1][2], envelope["key"])
        return receipt

    def recover(self, game_id: str, submission: dict[str, Any], wait: int = DEFAULT_RECOVERY_WAIT) -> dict[str, Any]:
        """A signed request to take over a seat whose key is lost (``ctx`` ``referee/recover``, ``sig`` by the new
        ``key``) → entry ``recovery`` with ``not_before`` = now (or the end of the seat's vacation) +
        ``wait`` seconds (``REFEREE_RECOVERY_WAIT``); its position is its id, answered like an offer.

        :raises ServiceError: 404 ``game/not_found``; 403 ``submission/wrong_game``, 403 ``submission/wrong_seat``,
            401 ``submission/bad_signature`` (not the new key's); 409 ``game/not_active``, 409 ``seat/not_taken``,
            409 ``seat/same_key``, 409 ``recovery/pending``; 409 ``submission/stale`` or ``submission/duplicate``;
            409 ``time/expired``; 503 ``log/unavailable``.
        """
        envelope = submission["envelope"]

        def authenticate(game: str, replayer: LogReplayer, sub: dict[str, Any]) -> int:
            if envelope["game"] != game:
                raise ServiceError(403, "submission/wrong_game",
                                   f"the envelope is bound to game {envelope['game']!r}, not {game!r}")
            seat = envelope["seat"]
            if not 0 <= seat < len(replayer.keys):
                raise ServiceError(403, "submission/wrong_seat",
                                   f"this game has no seat {seat} ({len(replayer.keys)} seats)")
            if not verify(envelope["key"], envelope, sub["sig"]):
                raise ServiceError(401, "submission/bad_signature",
                                   "the signature is not the new key's over this envelope", "RK-R1")
            return seat

        def payload(replayer: LogReplayer, at: str) -> dict[str, Any]:
            due = recovery_not_before(replayer, envelope["seat"], parse_ms(at), wait)
            return {"key": envelope["key"], "wait": wait, "not_before": format_ms(due)}

        receipt, advanced, _appended = self._submit(
            game_id, submission, "recovery", _new_key_state(envelope["key"], recovery=True),
            payload=payload, authenticate=authenticate)
        recovery = pending_recovery(advanced, seat=envelope["seat"])
        if recovery is not None:
            receipt["recovery"] = recovery.to_dict()
        return receipt

    def answer_recovery(self, game_id: str, position: int, submission: dict[str, Any]) -> dict[str, Any]:
        """A seat's signed answer (``ctx`` ``referee/answer``) to the pending recovery at ``position``: the other
        seats accept or decline; the recovered seat's own key declines (and keeps the seat); a tournament game's
        organiser answers for every other seat (its envelope names the recovered seat; entry ``by: "organiser"``)."""
        envelope = submission["envelope"]
        by: dict[str, Any] = {}

        def authenticate(game: str, replayer: LogReplayer, sub: dict[str, Any]) -> int:
            try:
                return authenticated_seat(game, replayer.keys, sub)
            except ServiceError as error:  # a tournament game's organiser answers for the seats (RK-R2)
                organiser = organiser_of(replayer)
                if error.status not in (401, 403) or organiser is None or envelope["game"] != game \
                        or not verify(organiser, envelope, sub["sig"]):
                    raise
                by["by"] = "organiser"
                return int(envelope["seat"])

        receipt, advanced, _appended = self._submit(
            game_id, submission, "answered", _recovery_answer_state(position), clocked=False,
            payload=lambda _fold, _at: {"offer": position, "accept": envelope["accept"], **by},
            authenticate=authenticate)
        recovery = pending_recovery(advanced, position=position)
        receipt["recovery"] = recovery.to_dict() if recovery is not None else None
        if recovery is not None:
            self._set_timer(game_id, advanced)  # accepted by all: the scheduler completes it after the wait
        return receipt

    def is_recovery(self, game_id: str, position: int) -> bool:
        """Whether a recovery at ``position`` is pending (an answer to it goes to :meth:`answer_recovery`)."""
        replayer = self.fold(game_id)
        return pending_recovery(replayer, position=position) is not None

    def message_posted(self, game_id: str, seat: int, posted: dict[str, Any]) -> None:
        """RK-R3: a message of ``seat``'s current key (``posted``: the message's receipt, ``position``, ``hash``,
        ``log_seq``) ends the seat's pending recovery asked before it: the referee appends ``recovery_declined``
        naming the message. Best effort: the message is stored whatever happens here (logged on failure)."""
        try:
            for _attempt in range(5):
                replayer = self.fold(game_id)
                recovery = pending_recovery(replayer, seat=seat)
                if recovery is None or recovery.ended_by is not None or posted["log_seq"] <= recovery.position:
                    return
                entry = make_entry("recovery_declined", replayer.seq, replayer.head, seat=seat,
                                   recovery=recovery.position, message={key: posted[key] for key in
                                                                        ("position", "hash", "log_seq")})
                trial = clone_replayer(replayer)
                verdict = trial.feed(entry)
                if verdict.status == "rejected":
                    log.warning("%s: a message did not end the recovery at %s: %s", game_id, recovery.position,
                                verdict.error)
                    return
                try:
                    appended = self.store.append(game_id, entry, replayer.head)
                except StaleAppend:
                    self.cache.forget(game_id)
                    continue
                trial = self._settle(game_id, trial)
                self._set_timer(game_id, trial)
                self._notify(game_id, [appended])
                return
        except Exception:
            log.exception("%s: could not end seat %s's recovery after its message", game_id, seat)

    def _reindex(self, game_id: str, old: str | None, new: str) -> None:
        """List the game under the seat's new key and take it off the old one's list; best effort (a key's list is
        read through the fold's holders: ``PlayerGames.player_games``)."""
        try:
            created = self.created_entry(game_id)
            self.store.index_player_games([(new, game_id, parse_ms(created["at"]))])
            if old:
                self.store.unindex_player_games([(old, game_id)])
        except Exception:
            log.exception("could not move game %s to the seat's new key's list", game_id)
