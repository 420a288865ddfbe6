"""The games service's verdict codes and their HTTP statuses (the error type itself: ``referee.errors``).

Illegal moves carry the engine's own code and the rule id (``TU-B2``) in ``rule``.
"""

from __future__ import annotations

from typing import Any

from ..errors import ServiceError

#: HTTP status of the verdict codes of ``referee.replay`` and of the service's own checks. Any other
#: code of a rejected move is the engine's (an illegal move): 422.
STATUS_BY_CODE = {
    "submission/malformed": 400,
    "submission/version": 400,
    "submission/wrong_context": 400,
    "accept/bad_entropy": 400,
    "submission/bad_signature": 401,
    "organiser/bad_signature": 401,
    "submission/wrong_game": 403,
    "submission/wrong_seat": 403,
    "submission/wrong_key": 403,
    "move/not_your_turn": 403,
    "organiser/not_allowed": 403,
    "submission/stale": 409,
    "submission/duplicate": 409,
    "game/not_waiting": 409,
    "game/not_active": 409,
    "game/not_accepted": 409,
    "accept/duplicate": 409,
    "time/expired": 409,
    "game/expired": 409,
    "time/forfeited": 403,
    "time/no_clock": 409,
    "vacation/exceeded": 422,
    "vacation/bad_seconds": 400,
    # the players' own decisions (CONTRACT section 12)
    "decision/resigned": 403,
    "decision/left": 403,
    "offer/bad_kind": 400,
    "offer/mismatch": 400,
    "offer/pending": 409,
    "offer/not_allowed": 409,
    "offer/none_pending": 409,
    "answer/bad_accept": 400,
    "answer/mismatch": 400,
    "answer/own_offer": 409,
    "answer/duplicate": 409,
    # open seats (CONTRACT section 14)
    "seat/bad_invite": 403,
    "seat/taken": 409,
    "seat/same_key": 409,
    "seat/name_taken": 409,
    "seat/not_open": 409,
    "seat/not_taken": 409,
    "seat/open": 409,
    "game/cancelled": 409,
    "cancel/no_creator": 403,
    # a seat's new key (CONTRACT section 15)
    "rekey/mismatch": 400,
    "rekey/bad_reason": 400,
    "recovery/pending": 409,
    "recovery/none_pending": 409,
    "recovery/declined": 409,
    "recovery/not_accepted": 409,
    "recovery/early": 409,
    "recovery/bad_not_before": 400,
    "answer/own_recovery": 409,
    "answer/not_organiser": 403,
}


def from_verdict_error(error: dict[str, Any], details: dict[str, Any] | None = None) -> ServiceError:
    """The :class:`ServiceError` for a rejected verdict's ``error`` (``{code, message, rule?}``)."""
    code = error.get("code", "move/illegal")
    status = STATUS_BY_CODE.get(code, 422)
    return ServiceError(status, code, error.get("message", code), error.get("rule"), details)
