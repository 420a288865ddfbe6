"""What the verifier reports: a :class:`Check` per check, the :class:`Report` they add up to, the statuses
and the exit status of ``referee verify`` for each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"

#: Report statuses and the exit status of ``referee verify`` for each.
VERIFIED, FAILED_STATUS, VERSION_MISMATCH, INCOMPLETE = "verified", "failed", "version_mismatch", "incomplete"
EXIT_CODES = {VERIFIED: 0, FAILED_STATUS: 1, INCOMPLETE: 3, VERSION_MISMATCH: 4}

CHECK_ORDER = ("format", "referee_signature", "hash_chain", "organiser_signature", "seat_signatures",
               "seed_commitment", "ruleset_version", "replay", "result", "messages")

#: ``progress(stage, done, total)``: called while the long checks run (seat signatures, replay).
Progress = Callable[[str, int, int], None]

MAX_LISTED = 20  # failures listed in a check's details; the first one is always the one reported


@dataclass
class Check:
    """The outcome of one check: ``position`` is the log index of its first failure (None: the bundle).

    ``applicable`` is False for a check skipped because it does not apply to this game (no organiser):
    such a skip leaves the bundle ``verified``, unlike the skips of an interim bundle."""

    name: str
    status: str
    reason: str | None = None
    position: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    applicable: bool = True

    @property
    def ok(self) -> bool | None:
        return None if self.status == SKIPPED else self.status == PASSED

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": self.status, "ok": self.ok,
                               "position": self.position, "reason": self.reason}
        if not self.applicable:
            out["applicable"] = False
        if self.details:
            out["details"] = self.details
        return out


@dataclass
class Report:
    """Every check, in order, and what they add up to."""

    checks: list[Check]
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def first_failure(self) -> Check | None:
        return next((c for c in self.checks if c.status == FAILED), None)

    @property
    def status(self) -> str:
        """``verified`` (every check passed), ``failed``, ``version_mismatch`` (only the engine version
        differs) or ``incomplete`` (nothing failed but something was skipped: an interim bundle)."""
        failed = [c.name for c in self.checks if c.status == FAILED]
        if failed:
            return VERSION_MISMATCH if failed == ["ruleset_version"] else FAILED_STATUS
        if any(c.status == SKIPPED and c.applicable for c in self.checks):
            return INCOMPLETE
        return VERIFIED

    @property
    def ok(self) -> bool:
        """True only when every check passed."""
        return self.status == VERIFIED

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failure
        return {
            "ok": self.ok,
            "status": self.status,
            **self.summary,
            "first_failure": None if first is None else {"check": first.name, "position": first.position,
                                                          "reason": first.reason},
            "checks": [c.to_dict() for c in self.checks],
        }


def unreadable_report(reason: str, problems: list[dict[str, str]] | None = None) -> Report:
    """The report for input that is not even a JSON bundle (e.g. a file that is not strict JSON)."""
    details: dict[str, Any] = {"unusable": True}
    if problems:
        details["problems"] = problems
    checks = [Check("format", FAILED, reason, details=details)]
    checks += [Check(name, SKIPPED, "the bundle could not be read") for name in CHECK_ORDER[1:]]
    return Report(checks, {"format": None, "game": None, "ruleset": None, "interim": False, "entries": 0,
                           "referee_key": None, "organiser": None})
