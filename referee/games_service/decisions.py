"""The players' own decisions (CONTRACT section 12): resignations, offers and answers, each a seat's
signed submission taken through the one submission path (:meth:`Submissions._submit`).

What may be decided at a position is the pure core's (:mod:`referee.rulings.decisions`), applied by the fold
(:mod:`referee.replay`): the checks here only answer early, before the staleness check, what the game's
state already refuses (CONTRACT section 6: a 409 for a game not in a state for this). The referee's
``agreed`` after the last acceptance is one of its own entries (``entries.due_system_entry``), appended in
the same step as the answer, like ``started`` after the last acceptance of a game.
"""

from __future__ import annotations

from typing import Any

from ..errors import ServiceError, invalid
from ..replay import ACTIVE, LogReplayer
from ..rulings.decisions import lapsed_offer, not_pending, offer_problem
from .keys import SeatKeys
from .submissions import StateCheck


def _running(replayer: LogReplayer, what: str) -> ServiceError | None:
    if replayer.status != ACTIVE or replayer.decisions is None:
        return ServiceError(409, "game/not_active", f"the game is {replayer.status}; {what}",
                            details={"status": replayer.status})
    return None


def _resign_state(replayer: LogReplayer, seat: int) -> ServiceError | None:
    return _running(replayer, "there is nothing to resign (an unstarted game is aborted, not resigned)")


def _offer_state(kind: str) -> StateCheck:
    def check(replayer: LogReplayer, seat: int) -> ServiceError | None:
        refused = _running(replayer, "it takes no offers")
        if refused is not None or replayer.decisions is None:
            return refused
        applied = replayer.applied
        last = (applied[1], applied[4], applied[3]) if applied is not None else None
        # every seat counts as standing here: a seat that left is refused by the fold, after staleness
        problem = offer_problem(replayer.decisions, kind, seat, standing=list(range(len(replayer.keys))),
                                tournament=bool((replayer.created or {}).get("tournament")),
                                all_moved=len(replayer.moved) >= len(replayer.keys), last_move=last)
        if problem is None:
            return None
        code, message, rule = problem
        details = {"pending": replayer.decisions.pending.to_dict()} if code == "offer/pending" and \
            replayer.decisions.pending is not None else None
        return ServiceError(409, code, message, rule, details=details)
    return check


def _answer_state(offer: int) -> StateCheck:
    def check(replayer: LogReplayer, seat: int) -> ServiceError | None:
        refused = _running(replayer, "no offer is pending")
        if refused is not None or replayer.decisions is None:
            return refused
        pending = replayer.decisions.pending
        if pending is None or pending.position != offer:
            code, message, rule = not_pending(replayer.decisions, offer)
            details: dict[str, Any] = {"pending": pending.to_dict() if pending is not None else None}
            lapsed = lapsed_offer(replayer.decisions, offer)
            if lapsed is not None:  # DC-O2: it lapsed at an entry that changed the position
                details["lapsed"] = lapsed
            return ServiceError(409, code, message, rule, details=details)
        return None
    return check


class PlayerDecisions(SeatKeys):
    """Takes the seats' signed resignations, offers and answers (an answer to a recovery of a seat's key goes to
    :meth:`SeatKeys.answer_recovery`)."""

    def resign(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A seat's signed resignation (``ctx`` ``referee/resign``), whoever is to move (DC-R1).

        :raises ServiceError: as :meth:`submit_move` does up to the deadline (409 ``game/not_active`` for a
            game not started or over); the fold's verdict: 403 ``decision/resigned`` (resigned already),
            403 ``time/forfeited``.
        """
        receipt, _advanced, _appended = self._submit(game_id, submission, "resigned", _resign_state)
        return receipt

    def offer(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A seat's signed offer (``ctx`` ``referee/offer``, ``offer``: draw, end, abort or takeback); the
        entry's position is the offer's id.

        :raises ServiceError: as :meth:`resign` does, and before the staleness check 409 ``offer/pending``
            (another offer is pending; ``details.pending``), 409 ``offer/not_allowed`` (an abort in a
            tournament game or after every seat has moved, a take-back of a move not the offerer's last);
            the fold's verdict: 409 ``offer/not_allowed`` (a take-back of a move that revealed something,
            DC-T2), 403 ``decision/resigned``.
        """
        kind = submission["envelope"]["offer"]
        receipt, _advanced, _appended = self._submit(game_id, submission, "offer", _offer_state(kind),
                                                     payload={"offer": kind})
        return receipt

    def answer(self, game_id: str, position: int, submission: dict[str, Any]) -> dict[str, Any]:
        """A seat's signed answer (``ctx`` ``referee/answer``, ``offer``: the offer's position, ``accept``) to
        the pending offer at ``position``. When it is the last acceptance needed, the referee's ``agreed``
        follows in the same step and the receipt shows the game after it (``status``, ``to_move``).

        :raises ServiceError: 400 ``request/invalid`` when the envelope's ``offer`` is not ``position``; as
            :meth:`resign` does, and before the staleness check 409 ``offer/none_pending`` (``details.lapsed``
            ``{offer, position}`` when the offer lapsed at an entry that changed the position, DC-O2); the fold's
            verdict: 409 ``answer/own_offer`` (an offerer's ``accept: true``), 409 ``answer/duplicate``.
        """
        envelope = submission["envelope"]
        if envelope["offer"] != position:
            raise invalid([{"path": "$.envelope.offer",
                            "problem": f"the envelope answers offer {envelope['offer']}, the URL offer {position}"}])
        if self.is_recovery(game_id, position):  # a recovery of a seat's key (CONTRACT section 15)
            return self.answer_recovery(game_id, position, submission)
        receipt, _advanced, _appended = self._submit(
            game_id, submission, "answered", _answer_state(position),
            payload={"offer": position, "accept": envelope["accept"]})
        return receipt
