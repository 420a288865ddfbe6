"""What every concern of the fold shares: the game's statuses, the verdict, the malformed-log error and the
check of a signed submission's binding and signature. Imports nothing of the fold itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..protocol.signing import SEAT_CTX, verify
from ..timecontrol import format_ms

WAITING, ACTIVE, FINISHED, ABORTED = "waiting", "active", "finished", "aborted"
EXPIRED = "expired"  # never accepted by every seat in time (``created.accept_by``)
CANCELLED = "cancelled"  # cancelled by its creator before it started (CONTRACT section 14)

#: Entries the referee writes on its own (no seat signs them): a verifier fails a log where one is rejected.
REFEREE_ENTRIES = frozenset({"started", "revealed", "timeout", "forfeited", "auto_move", "adjudicated", "expired",
                             "agreed"})
#: The seats' own decisions (CONTRACT section 12): the service checks each one before it appends it, so a
#: verifier fails a log where one is rejected, as it does for the referee's own entries.
DECISION_ENTRIES = frozenset({"resigned", "offer", "answered"})
#: The entries that fill a seat, give it up or cancel the game before it starts (CONTRACT section 14): the service
#: checks each one before it appends it, so a verifier fails a log where one is rejected.
SEAT_ENTRIES = frozenset({"seated", "left", "cancelled"})
#: A seat's new key (CONTRACT section 15): a holder's rekey, a recovery asked, the referee's completion or end of
#: it; the service checks each one before it appends it, so a verifier fails a log where one is rejected.
KEY_ENTRIES = frozenset({"rekeyed", "recovery", "recovery_declined"})

entry_time = format_ms  # a time (ms) in the log's ``at`` format


class LogError(ValueError):
    """The log itself is malformed (not a verdict on a move): e.g. no ``created`` entry first."""

    def __init__(self, position: int, message: str):
        super().__init__(f"log entry {position}: {message}")
        self.position = position
        self.message = message


@dataclass
class Verdict:
    seq: int
    type: str
    status: str
    seat: int | None = None
    error: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "type": self.type, "status": self.status}
        if self.seat is not None:
            out["seat"] = self.seat
        if self.error is not None:
            out["error"] = self.error
        return out


def reject(entry: dict[str, Any], code: str, message: str, rule: str | None = None) -> Verdict:
    """The verdict on an entry that changes nothing: ``error`` ``{code, rule?, message}``."""
    error: dict[str, Any] = {"code": code, "message": message}
    if rule:
        error["rule"] = rule
    seat = entry.get("seat") if isinstance(entry.get("seat"), int) else None
    return Verdict(entry.get("seq", -1), str(entry.get("type")), "rejected", seat, error)


def envelope_problem(submission: Any, ctx: str) -> tuple[str, str] | None:
    """``(code, message)`` if ``submission`` is not ``{envelope, sig}`` with an envelope of version 1 and
    context ``ctx``; else None. The start of every signed submission's check (games and tournaments)."""
    if not isinstance(submission, dict) or not isinstance(submission.get("envelope"), dict):
        return "submission/malformed", "a submission is {envelope, sig}"
    envelope = submission["envelope"]
    if envelope.get("v") != 1:
        return "submission/version", "envelope v must be 1"
    if envelope.get("ctx") != ctx:
        return "submission/wrong_context", f"envelope ctx must be {ctx!r}"
    return None


def check_submission(
    submission: Any, *, ctx: str, game_id: str, seat: int, seq: int, prev: str, keys: list[str],
    verifier: Callable[[str, Any, str], bool] = verify,
) -> tuple[str, str] | None:
    """``(code, message)`` of the first thing wrong with a signed submission for this log position, or None.

    Checks the shape, the binding (ctx, game, seat, seq, prev) and the seat's Ed25519 signature over the
    RFC 8785 bytes of the envelope. ``verifier(key, envelope, sig)`` is the signature check
    (:func:`referee.protocol.signing.verify`; the offline verifier passes a memoising one).
    """
    problem = envelope_problem(submission, ctx)
    if problem:
        return problem
    envelope, sig = submission["envelope"], submission.get("sig")
    if envelope.get("game") != game_id:
        return "submission/wrong_game", "the envelope is for another game"
    if envelope.get("seat") != seat or not (0 <= seat < len(keys)):
        return "submission/wrong_seat", f"the envelope is for seat {envelope.get('seat')!r}, not seat {seat}"
    if envelope.get("seq") != seq or envelope.get("prev") != prev:
        return "submission/stale", f"the envelope is bound to seq {envelope.get('seq')!r}, not {seq}"
    if not isinstance(sig, str) or not verifier(keys[seat], envelope, sig):
        return "submission/bad_signature", f"the signature is not seat {seat}'s over this envelope"
    return None


def seat_kind(spec: Any) -> str:
    """What a seat of ``created.seats`` is (CONTRACT section 14): ``"key"`` (given to a key at creation),
    ``"invite"`` (open to a holder of the invitation key ``spec["invite"]``) or ``"open"`` (open to anyone)."""
    if isinstance(spec, dict) and isinstance(spec.get("invite"), str):
        return "invite"
    if isinstance(spec, dict) and spec.get("open") is True and "key" not in spec:
        return "open"
    return "key"


def seated_problem(submission: Any, *, created: dict[str, Any], seat: Any, seq: int, prev: str,
                   verifier: Callable[[str, Any, str], bool] = verify) -> tuple[str, str] | None:
    """``(code, message)`` of the first thing wrong with the signatures and binding of a ``seated`` entry's
    submission (``{envelope, sig, invite_sig?}``, ``ctx`` ``referee/seat``), or None: its shape, its binding
    (game, seat, seq, prev), that the seat was declared open at creation, ``sig`` by the envelope's ``key`` and,
    for an ``invite`` seat, ``invite_sig`` by the invitation key over the same envelope. Whether the seat was
    still free at that position is the fold's to say (``referee.replay.lifecycle``)."""
    problem = envelope_problem(submission, SEAT_CTX)
    if problem:
        return problem
    envelope, sig = submission["envelope"], submission.get("sig")
    seats = created.get("seats") or []
    if envelope.get("game") != created.get("game"):
        return "submission/wrong_game", "the envelope is for another game"
    if (not isinstance(seat, int) or isinstance(seat, bool) or envelope.get("seat") != seat
            or not 0 <= seat < len(seats)):
        return "submission/wrong_seat", f"the envelope is for seat {envelope.get('seat')!r}, not seat {seat!r}"
    if envelope.get("seq") != seq or envelope.get("prev") != prev:
        return "submission/stale", f"the envelope is bound to seq {envelope.get('seq')!r}, not {seq}"
    kind = seat_kind(seats[seat])
    if kind == "key":
        return "seat/taken", f"seat {seat} was given to a key at creation; it is not open"
    key = envelope.get("key")
    if not isinstance(key, str) or not isinstance(sig, str) or not verifier(key, envelope, sig):
        return "submission/bad_signature", "the signature is not the joining key's over this envelope"
    invite_sig = submission.get("invite_sig")
    if kind == "invite" and (not isinstance(invite_sig, str)
                             or not verifier(seats[seat]["invite"], envelope, invite_sig)):
        return "seat/bad_invite", f"seat {seat} is taken with its invitation: invite_sig is not the invitation " \
                                  "key's signature over this envelope"
    return None
