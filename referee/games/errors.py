"""Errors raised by the rules engines.

Like python-chess's ``IllegalMoveError``, :class:`IllegalMove` is a ``ValueError`` so that callers
who only care that a move was refused can catch ``ValueError``.
"""

from __future__ import annotations

from typing import Any


class IllegalMove(ValueError):
    """A move that the rules do not allow.

    ``code`` is a stable machine-readable string (``"build/not_adjacent"``) that clients switch on;
    ``rule`` is the id of the rule broken (``"TU-B2"``), or ``None`` for a move dict that is not even
    well formed; ``message`` is for people. Raising it never changes the game.
    """

    def __init__(self, code: str, rule: str | None, message: str, details: dict[str, Any] | None = None):
        super().__init__(f"{code} [{rule}] {message}" if rule else f"{code}: {message}")
        self.code = code
        self.rule = rule
        self.message = message
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.rule:
            out["rule"] = self.rule
        if self.details:
            out["details"] = self.details
        return out


class DataError(ValueError):
    """A data file of a ruleset is broken; the message names the file and the problem."""


class GameOver(IllegalMove):
    """A move was submitted to a game that has ended."""

    def __init__(self) -> None:
        super().__init__("game/over", None, "the game is over; no more moves are accepted")
