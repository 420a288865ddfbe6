"""The services' error: an HTTP status, a stable code clients switch on, a message for people.

One type for every service (games, tournaments, contacts and mail, the API's own checks), below all of
them, so that none imports another's package for it (the layers of ``docs/service.md``).

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
