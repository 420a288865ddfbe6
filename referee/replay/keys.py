"""A seat's new key (CONTRACT section 15): moved by its holder (``rekeyed``, reason ``holder``), or recovered when
lost (``recovery``, the other seats' answers, then ``rekeyed`` reason ``recovered`` or ``recovery_declined``).

Rules (their ids are named in verdicts; ``docs/keys.md`` "A seat's new key"):

* RK-H1 — a holder's ``rekeyed`` carries the submission ``{envelope, sig, new_sig}`` (``ctx`` ``referee/rekey``,
  bound to the game, the seat and the log position like a move): ``sig`` by the seat's key as it stands, and
  ``new_sig`` by the envelope's ``key`` over the same bytes. Taken while the game waits or runs, whoever is to
  move; the new key holds no seat of the game. From that position on the seat's key is the new one.
* RK-R1 — a ``recovery`` carries ``{envelope, sig}`` (``ctx`` ``referee/recover``, same binding), ``sig`` by the
  envelope's ``key`` (the new key, which holds no seat of the game), and ``not_before`` = its ``at`` (or, for a
  seat on vacation then, the vacation's end) + ``wait`` seconds. At most one recovery per seat is pending.
* RK-R2 — the other seats still in the game answer it with an ``answered`` entry whose ``offer`` is the
  recovery's position, signed by their keys as they stand; the recovered seat's own key answers only
  ``accept: false``. A tournament game's organiser (``created.adjudicator``) may answer for all of them: an
  ``answered`` entry with ``by: "organiser"`` naming the recovered seat, signed by the organiser's key.
* RK-R3 — the recovery ends (the referee owes ``recovery_declined``, naming the entry ``by`` which it ended) at
  any entry signed by the seat's current key that the fold takes (a move, an acceptance, a vacation, any
  decision, a holder's rekey, its own answer) and at any other seat's decline; and at a message of the seat's
  current key in the game's message stream (``recovery_declined`` with ``message``: its ``{position, hash,
  log_seq}``, taken after the recovery).
* RK-R4 — the referee's ``rekeyed`` with reason ``recovered`` names the pending recovery (``recovery``) and
  its ``key``; it holds only once every other seat still in the game accepted, nothing ended it (RK-R3),
  and its ``at`` is not before ``not_before``.

Pure like the rest of the fold: the wait is the referee's setting, written into each ``recovery`` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..protocol.signing import ANSWER_CTX, RECOVER_CTX, REKEY_CTX, b64url_decode
from ..timecontrol import parse_ms
from .state import FoldState, Handler
from .verdicts import ACTIVE, WAITING, Verdict, check_submission, entry_time, envelope_problem, reject

#: the seat-signed entries that show the seat's current key at work (RK-R3); ``rekeyed`` only with reason
#: ``holder``, ``answered`` only to something other than the seat's own recovery (that one is handled there)
KEY_USES = frozenset({"accepted", "move", "vacation", "resigned", "offer", "answered", "left", "rekeyed"})


@dataclass(frozen=True)
class Recovery:
    """A pending recovery of ``seat`` by ``key``: its log position (its id), ``not_before`` (ms), who accepted,
    and the position of the entry that ended it (RK-R3) while the referee's ``recovery_declined`` is owed."""

    position: int
    seat: int
    key: str
    not_before: int
    accepted: frozenset[int] = frozenset()
    ended_by: int | None = None
    #: a tournament game's organiser accepted it for every other seat (RK-R2)
    organiser: bool = False

    def to_dict(self, needed: list[int] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"recovery": self.position, "seat": self.seat, "key": self.key,
                               "not_before": entry_time(self.not_before), "accepted": sorted(self.accepted)}
        if needed is not None:
            out["needed"] = needed
        if self.ended_by is not None:
            out["ended_by"] = self.ended_by
        if self.organiser:
            out["organiser"] = True
        return out


def public_key_ok(key: Any) -> bool:
    """Whether ``key`` is base64url of 32 bytes (an Ed25519 public key as the referee writes them)."""
    if not isinstance(key, str) or len(key) != 43:
        return False
    try:
        return len(b64url_decode(key)) == 32
    except ValueError:
        return False


def _keyed(fold: FoldState, entry: dict[str, Any]) -> Verdict | int:
    """The seat of a key entry of a game that waits or runs, whose seat is held; else the rejection."""
    seat = entry.get("seat")
    if fold.status not in (WAITING, ACTIVE) or fold.created is None:
        return reject(entry, "game/not_active", f"the game is {fold.status}: its seats' keys stay as they are")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(fold.holders):
        return reject(entry, "submission/wrong_seat", f"no seat {seat!r} in this game")
    if fold.holders[seat] is None:
        return reject(entry, "seat/not_taken", f"nobody holds seat {seat}")
    return seat


def _new_key_problem(fold: FoldState, entry: dict[str, Any], key: Any) -> Verdict | None:
    if not public_key_ok(key):
        return reject(entry, "submission/malformed", "the new key is not an Ed25519 public key (base64url of 32 "
                      "bytes)", "RK-H1")
    if entry.get("key") != key:
        return reject(entry, "rekey/mismatch", "the entry's key is not the signed envelope's", "RK-H1")
    if key in fold.keys:
        return reject(entry, "seat/same_key", "this key holds a seat of this game already", "RK-H1")
    return None


def rekey_problem(submission: Any, *, game_id: str, seat: int, seq: int, prev: str, keys: list[str],
                  verifier: Callable[[str, Any, str], bool]) -> tuple[str, str] | None:
    """``(code, message)`` of what is wrong with a holder's signed rekey at this position (RK-H1: the binding,
    ``sig`` by the seat's key, ``new_sig`` by the envelope's key), or None."""
    problem = check_submission(submission, ctx=REKEY_CTX, game_id=game_id, seat=seat, seq=seq, prev=prev,
                               keys=keys, verifier=verifier)
    if problem:
        return problem
    envelope, new_sig = submission["envelope"], submission.get("new_sig")
    key = envelope.get("key")
    if not public_key_ok(key) or not isinstance(new_sig, str) or not verifier(key, envelope, new_sig):
        return "submission/bad_signature", "new_sig is not the new key's signature over this envelope"
    return None


def recover_problem(submission: Any, *, game_id: str, seat: int, seq: int, prev: str,
                    verifier: Callable[[str, Any, str], bool]) -> tuple[str, str] | None:
    """``(code, message)`` of what is wrong with a signed recovery request at this position (RK-R1: the binding,
    ``sig`` by the envelope's new key), or None."""
    problem = envelope_problem(submission, RECOVER_CTX)
    if problem:
        return problem
    envelope, sig = submission["envelope"], submission.get("sig")
    if envelope.get("game") != game_id:
        return "submission/wrong_game", "the envelope is for another game"
    if envelope.get("seat") != seat:
        return "submission/wrong_seat", f"the envelope is for seat {envelope.get('seat')!r}, not seat {seat}"
    if envelope.get("seq") != seq or envelope.get("prev") != prev:
        return "submission/stale", f"the envelope is bound to seq {envelope.get('seq')!r}, not {seq}"
    key = envelope.get("key")
    if not public_key_ok(key) or not isinstance(sig, str) or not verifier(key, envelope, sig):
        return "submission/bad_signature", "the signature is not the new key's over this envelope"
    return None


def _set_key(fold: FoldState, seat: int, key: str, position: int, reason: str) -> None:
    holder = fold.holders[seat]
    assert holder is not None
    fold.key_history = (*fold.key_history, (position, seat, holder[0], key, reason))
    fold.holders = (*fold.holders[:seat], (key, holder[1]), *fold.holders[seat + 1:])


def pending_recovery(fold: FoldState, *, seat: int | None = None, position: Any = None) -> Recovery | None:
    for recovery in fold.recoveries:
        if (seat is None or recovery.seat == seat) and (position is None or recovery.position == position):
            return recovery
    return None


def _replace_recovery(fold: FoldState, old: Recovery, new: Recovery | None) -> None:
    fold.recoveries = tuple(r for r in (new if r is old else r for r in fold.recoveries) if r is not None)


def fully_accepted(fold: FoldState, recovery: Recovery) -> bool:
    """Whether every seat a recovery needs accepted it, or a tournament game's organiser for them (RK-R2)."""
    return recovery.organiser or set(needed_answers(fold, recovery)) <= recovery.accepted


def organiser_of(fold: FoldState) -> str | None:
    """Who may answer a recovery for the other seats: a tournament game's organiser (``created.adjudicator``, written
    by the referee when the tournament made the game); None for any other game."""
    created = fold.created or {}
    adjudicator = created.get("adjudicator")
    return adjudicator if created.get("tournament") and isinstance(adjudicator, str) else None


def needed_answers(fold: FoldState, recovery: Recovery) -> list[int]:
    """The seats whose acceptance a recovery needs (RK-R2): every other seat still in the game."""
    standing = fold.clocks.standing() if fold.clocks is not None and fold.status == ACTIVE else \
        list(range(len(fold.holders)))
    return [seat for seat in standing if seat != recovery.seat and fold.holders[seat] is not None]


def recovery_not_before(fold: FoldState, seat: int, at: int, wait: int) -> int:
    """When a recovery of ``seat`` asked at ``at`` (ms) may complete: ``wait`` seconds after it, or after the
    seat's vacation under way then (RK-R1)."""
    start = at
    if fold.clocks is not None:
        until = fold.clocks.vacation_until(seat, at)
        if until is not None:
            start = max(start, until)
    return start + wait * 1000


def on_rekeyed(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    seat = _keyed(fold, entry)
    if isinstance(seat, Verdict):
        return seat
    assert fold.created is not None
    reason = entry.get("reason")
    if reason == "holder":
        problem = rekey_problem(entry.get("submission"), game_id=fold.created["game"], seat=seat, seq=entry["seq"],
                                prev=fold.head, keys=fold.keys, verifier=fold.verifier)
        if problem:
            return reject(entry, *problem, "RK-H1")
        key = entry["submission"]["envelope"]["key"]
        refused = _new_key_problem(fold, entry, key)
        if refused:
            return refused
        _set_key(fold, seat, key, entry["seq"], "holder")
        return Verdict(entry["seq"], "rekeyed", "ok", seat)
    if reason == "recovered":
        recovery = pending_recovery(fold, seat=seat)
        if recovery is None or entry.get("recovery") != recovery.position:
            return reject(entry, "recovery/none_pending", f"no recovery of seat {seat} at position "
                          f"{entry.get('recovery')!r} is pending", "RK-R4")
        if recovery.ended_by is not None:
            return reject(entry, "recovery/declined", f"the recovery ended at position {recovery.ended_by}: the "
                          "seat's key was used, or a seat declined", "RK-R3")
        if entry.get("key") != recovery.key:
            return reject(entry, "rekey/mismatch", "the entry's key is not the recovery's", "RK-R4")
        missing = [] if recovery.organiser else sorted(set(needed_answers(fold, recovery)) - recovery.accepted)
        if missing:
            return reject(entry, "recovery/not_accepted", f"seats {missing} have not accepted the recovery at "
                          f"position {recovery.position}", "RK-R4")
        try:
            at = parse_ms(entry.get("at"))
        except ValueError:
            return reject(entry, "log/bad_time", "the entry has no valid time")
        if at < recovery.not_before:
            return reject(entry, "recovery/early", f"the recovery may complete from {entry_time(recovery.not_before)}"
                          f", not at {entry.get('at')}", "RK-R4")
        if recovery.key in fold.keys:
            return reject(entry, "seat/same_key", "this key holds a seat of this game already", "RK-R4")
        _replace_recovery(fold, recovery, None)
        _set_key(fold, seat, recovery.key, entry["seq"], "recovered")
        return Verdict(entry["seq"], "rekeyed", "ok", seat)
    return reject(entry, "rekey/bad_reason", f"a rekeyed entry's reason is holder or recovered, not {reason!r}")


def on_recovery(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    seat = _keyed(fold, entry)
    if isinstance(seat, Verdict):
        return seat
    assert fold.created is not None
    problem = recover_problem(entry.get("submission"), game_id=fold.created["game"], seat=seat, seq=entry["seq"],
                              prev=fold.head, verifier=fold.verifier)
    if problem:
        return reject(entry, *problem, "RK-R1")
    key = entry["submission"]["envelope"]["key"]
    refused = _new_key_problem(fold, entry, key)
    if refused:
        return refused
    if pending_recovery(fold, seat=seat) is not None:
        return reject(entry, "recovery/pending", f"a recovery of seat {seat} is pending already", "RK-R1")
    wait, not_before = entry.get("wait"), entry.get("not_before")
    try:
        at, due = parse_ms(entry.get("at")), parse_ms(not_before)
    except ValueError:
        return reject(entry, "log/bad_time", "the entry's at and not_before are times")
    if not isinstance(wait, int) or isinstance(wait, bool) or wait < 0 or due != recovery_not_before(fold, seat, at,
                                                                                                      wait):
        return reject(entry, "recovery/bad_not_before", f"not_before must be the time of the request (or the end of "
                      f"the seat's vacation) + wait ({wait!r} s)", "RK-R1")
    fold.recoveries = (*fold.recoveries, Recovery(entry["seq"], seat, key, due))
    return Verdict(entry["seq"], "recovery", "ok", seat)


def on_recovery_answer(fold: FoldState, entry: dict[str, Any], recovery: Recovery) -> Verdict:
    """An ``answered`` entry whose ``offer`` is a pending recovery's position (RK-R2)."""
    seat = entry.get("seat")
    if fold.status not in (WAITING, ACTIVE) or fold.created is None:
        return reject(entry, "game/not_active", f"the game is {fold.status}")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(fold.keys):
        return reject(entry, "submission/wrong_seat", "an answered entry names its seat")
    by_organiser = entry.get("by") == "organiser"
    organiser = organiser_of(fold)
    if by_organiser and (organiser is None or seat != recovery.seat):
        return reject(entry, "answer/not_organiser", "only a tournament game's organiser answers for the seats, "
                      "naming the recovered seat", "RK-R2")
    keys = [organiser if by_organiser and i == seat else key for i, key in enumerate(fold.keys)]
    problem = check_submission(entry.get("submission"), ctx=ANSWER_CTX, game_id=fold.created["game"],
                               seat=seat, seq=entry["seq"], prev=fold.head, keys=keys,  # type: ignore[arg-type]
                               verifier=fold.verifier)
    if problem:
        return reject(entry, *problem, "RK-R2")
    envelope = entry["submission"]["envelope"]
    accept = envelope.get("accept")
    if entry.get("offer") != envelope.get("offer") or entry.get("accept") is not accept or not isinstance(accept,
                                                                                                         bool):
        return reject(entry, "answer/mismatch", "the entry's offer and accept are not the signed envelope's", "RK-R2")
    if recovery.ended_by is not None:
        return reject(entry, "recovery/declined", f"the recovery ended at position {recovery.ended_by}", "RK-R3")
    if by_organiser:
        if accept:
            _replace_recovery(fold, recovery, replace(recovery, organiser=True))
        else:
            _replace_recovery(fold, recovery, replace(recovery, ended_by=entry["seq"]))
        return Verdict(entry["seq"], "answered", "ok", seat)
    if seat == recovery.seat:
        if accept:
            return reject(entry, "answer/own_recovery", "the seat's own key keeps the seat by declining (accept: "
                          "false); it does not accept", "RK-R2")
    elif seat not in needed_answers(fold, recovery):
        return reject(entry, "decision/left", f"seat {seat} is no longer in the game", "RK-R2")
    elif accept and seat in recovery.accepted:
        return reject(entry, "answer/duplicate", f"seat {seat} has accepted this recovery already", "RK-R2")
    if accept:
        _replace_recovery(fold, recovery, replace(recovery, accepted=recovery.accepted | {seat}))
    else:
        _replace_recovery(fold, recovery, replace(recovery, ended_by=entry["seq"]))
    return Verdict(entry["seq"], "answered", "ok", seat)


def on_recovery_declined(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """The referee's record that a recovery ended (RK-R3) at the entry ``by``."""
    recovery = pending_recovery(fold, position=entry.get("recovery"))
    if recovery is None:
        return reject(entry, "recovery/none_pending", f"no recovery at position {entry.get('recovery')!r} is "
                      "pending", "RK-R3")
    message = entry.get("message")
    if message is not None and recovery.ended_by is None:
        # a message of the seat's current key (the game's message stream, which the log does not hold): it must
        # have come after the recovery; the verifier's messages check holds it to the stream
        if not (isinstance(message, dict) and _count(message.get("position")) and _count(message.get("log_seq"))
                and isinstance(message.get("hash"), str) and message["log_seq"] > recovery.position
                and entry.get("seat") == recovery.seat):
            return reject(entry, "recovery/bad_message", "a recovery ended by a message names the message "
                          "{position, hash, log_seq} of the recovered seat, taken after the recovery", "RK-R3")
        _replace_recovery(fold, recovery, None)
        return Verdict(entry["seq"], "recovery_declined", "ok", recovery.seat)
    if recovery.ended_by is None or entry.get("by") != recovery.ended_by:
        return reject(entry, "recovery/not_declined", f"nothing ended the recovery at position {recovery.position}"
                      + (f" (it ended at {recovery.ended_by})" if recovery.ended_by is not None else ""), "RK-R3")
    _replace_recovery(fold, recovery, None)
    return Verdict(entry["seq"], "recovery_declined", "ok", recovery.seat)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def key_used(fold: FoldState, entry: dict[str, Any], verdict: Verdict) -> None:
    """RK-R3: an entry signed by a seat's current key, taken by the fold, ends that seat's pending recovery."""
    if verdict.status == "rejected" or entry.get("type") not in KEY_USES or not fold.recoveries:
        return
    seat = verdict.seat
    recovery = pending_recovery(fold, seat=seat) if isinstance(seat, int) else None
    if recovery is None or recovery.ended_by is not None or recovery.position == entry.get("offer"):
        return
    if (entry.get("type") == "rekeyed" and entry.get("reason") != "holder") or entry.get("by") == "organiser":
        return
    _replace_recovery(fold, recovery, replace(recovery, ended_by=entry["seq"]))


def recovery_due(fold: FoldState, now: int | None) -> dict[str, Any] | None:
    """The referee's entry a pending recovery calls for: ``recovery_declined`` once something ended it, the
    ``rekeyed`` (reason ``recovered``) once accepted by every seat needed and ``now`` (ms) is past ``not_before``."""
    for recovery in fold.recoveries:
        if recovery.ended_by is not None:
            return {"type": "recovery_declined", "seat": recovery.seat, "recovery": recovery.position,
                    "by": recovery.ended_by}
    if fold.status not in (WAITING, ACTIVE):
        return None
    for recovery in fold.recoveries:
        if now is not None and now >= recovery.not_before and fully_accepted(fold, recovery):
            return {"type": "rekeyed", "seat": recovery.seat, "key": recovery.key, "reason": "recovered",
                    "recovery": recovery.position}
    return None


def recovery_alarm(fold: FoldState) -> int | None:
    """When the deadline scheduler must look at the game for a recovery: the earliest ``not_before`` of a
    recovery every seat needed has accepted; None when none is."""
    if fold.status not in (WAITING, ACTIVE):
        return None
    times = [r.not_before for r in fold.recoveries if r.ended_by is None and fully_accepted(fold, r)]
    return min(times) if times else None


def keys_in_turn(fold: FoldState) -> list[list[dict[str, Any]]]:
    """Per seat, the keys that held it in turn: ``{key, from, reason}``, ``from`` the log position of the
    ``rekeyed`` entry (None for the key it had first), ``reason`` ``holder`` or ``recovered`` (None for the first)."""
    first = list(fold.keys)
    for _position, seat, old, _new, _reason in reversed(fold.key_history):
        first[seat] = old
    out: list[list[dict[str, Any]]] = [[{"key": key, "from": None, "reason": None}] for key in first]
    for position, seat, _old, new, reason in fold.key_history:
        out[seat].append({"key": new, "from": position, "reason": reason})
    return out


HANDLERS: dict[str, Handler] = {
    "rekeyed": on_rekeyed, "recovery": on_recovery, "recovery_declined": on_recovery_declined,
}
