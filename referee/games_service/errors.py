"""The service's error: an HTTP status, a stable code clients switch on, a message for people.

Codes are stable strings in the style of boardgame.io (``submission/stale``, ``move/not_your_turn``);
illegal moves carry the engine's own code and the rule id (``TU-B2``) in ``rule``.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """Rendered as ``{"error": {"code", "message", "rule"?, "details"?}}`` with ``status``."""

    def __init__(self, status: int, code: str, message: str, rule: str | None = None,
                 details: dict[str, Any] | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.rule = rule
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.rule:
            error["rule"] = self.rule
        if self.details:
            error["details"] = self.details
        return {"error": error}


def invalid(problems: list[dict[str, str]], message: str | None = None) -> ServiceError:
    """400 listing every problem as ``{"path": "$.envelope.seat", "problem": "..."}``."""
    text = message or "the request is malformed: " + "; ".join(f"{p['path']}: {p['problem']}" for p in problems)
    return ServiceError(400, "request/invalid", text, details={"problems": problems})


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
}


def from_verdict_error(error: dict[str, Any], details: dict[str, Any] | None = None) -> ServiceError:
    """The :class:`ServiceError` for a rejected verdict's ``error`` (``{code, message, rule?}``)."""
    code = error.get("code", "move/illegal")
    status = STATUS_BY_CODE.get(code, 422)
    return ServiceError(status, code, error.get("message", code), error.get("rule"), details)
