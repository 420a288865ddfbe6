"""Moves and clocks (CONTRACT section 8; docs/timecontrol.md): a seat's signed move, the referee's moves
for a seat (a ``timeout``'s default move, a forfeited seat's ``auto_move``), a seat's vacation, and the
clock kept from the entries' ``at``: a seat's entry after its deadline is late, and each applied move ends
one decision and starts the next."""

from __future__ import annotations

from typing import Any

from ..games import IllegalMove
from ..protocol.signing import MOVE_CTX, VACATION_CTX
from ..timecontrol import parse_ms
from .state import FoldState, Handler, seat_submission
from .verdicts import ACTIVE, FINISHED, Verdict, entry_time, reject


def on_move(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    assert fold.created is not None
    seat = entry.get("seat")
    if fold.status != ACTIVE:
        return reject(entry, "game/not_active", f"the game is {fold.status}")
    if not isinstance(seat, int):
        return reject(entry, "submission/wrong_seat", "a move entry names its seat")
    refused = seat_submission(fold, entry, MOVE_CTX, seat)
    if refused:
        return refused
    if fold.game is None:  # blocked: seeded game replayed without its seed
        return Verdict(entry["seq"], "move", "unknown", seat)
    too_late = late(fold, entry, seat)
    if too_late:
        return too_late
    move = entry["submission"]["envelope"].get("move")
    try:
        fold.game.play(seat, move)
    except IllegalMove as exc:
        return reject(entry, exc.code, exc.message, exc.rule)
    clocks = fold.clocks
    assert clocks is not None
    undo = clocks.undo_point(seat, _at_ms(fold, entry))  # what an agreed take-back of this move gives back
    clocks.timeouts_in_row[seat] = 0
    record_applied(fold, seat, move, entry, undo)
    lapse_offer(fold, entry)
    next_decision(fold, entry, seat)
    return Verdict(entry["seq"], "move", "applied", seat)


def record_applied(fold: FoldState, seat: int, move: Any, entry: dict[str, Any],
                   undo: tuple[int, int | None] | None = None) -> None:
    """Remember a move the game applied (for a take-back, DC-T1); O(1), nothing copied. ``undo`` is what the
    seat's clock gets back when a take-back voids the move (``Clocks.undo_point``; a seat's own moves only)."""
    fold.applied = (fold.applied, seat, move, entry["seq"], entry.get("type"), undo)
    if seat not in fold.moved:
        fold.moved = fold.moved | {seat}


def moved_seats(applied: tuple[Any, ...] | None) -> frozenset[int]:
    """The seats that have had a move applied, from the chain of applied moves (recomputed after an agreed
    take-back: the voided move no longer counts, so an abort may be offered again, DC-A1)."""
    seats: set[int] = set()
    node = applied
    while node is not None:
        seats.add(node[1])
        node = node[0]
    return frozenset(seats)


def lapse_offer(fold: FoldState, entry: dict[str, Any]) -> None:
    """DC-O2: a pending offer lapses at any entry that changes the position or who is in the game (a move, a
    timeout, a forfeited or resigned seat's default move, a withdrawal; a resignation lapses it in
    :meth:`~referee.rulings.decisions.Decisions.resigned`): what was offered was offered for a position that is gone."""
    decisions = fold.decisions
    if decisions is not None and decisions.pending is not None:
        fold.decisions = decisions.lapsed("lapsed", entry["seq"])


def _at_ms(fold: FoldState, entry: dict[str, Any]) -> int:
    try:
        return parse_ms(entry.get("at"))
    except ValueError:  # only without a clock (a clock game rejects bad times first): nothing is charged
        clocks = fold.clocks
        return clocks.since if clocks is not None and clocks.since is not None else 0


def late(fold: FoldState, entry: dict[str, Any], seat: int) -> Verdict | None:
    """The rejection of a seat's signed entry that comes too late or from a forfeited seat, or None."""
    clocks = fold.clocks
    assert clocks is not None
    if clocks.forfeited(seat):
        if fold.decisions is not None and fold.decisions.has_left(seat):
            return reject(entry, "decision/resigned", f"seat {seat} has resigned; the referee moves for it", "DC-R2")
        return reject(entry, "time/forfeited", f"seat {seat} has forfeited; the referee moves for it", "TC-F1")
    if not clocks.running:
        return None
    try:
        at = parse_ms(entry.get("at"))
    except ValueError as exc:
        return reject(entry, "log/bad_time", str(exc))
    deadline = clocks.deadline() if clocks.seat == seat else None
    if deadline is not None and at > deadline:
        return reject(entry, "time/expired", f"seat {seat}'s time ran out at {entry_time(deadline)}", "TC-T1")
    return None


def next_decision(fold: FoldState, entry: dict[str, Any], decided: int | None, timed_out: bool = False) -> None:
    """After an entry that changed the game: the decision in progress ends at its ``at`` and the next
    seat's starts; the game finishes when the engine says so or when fewer than two seats stand."""
    clocks = fold.clocks
    assert clocks is not None and fold.game is not None
    try:
        at = parse_ms(entry.get("at"))
    except ValueError:
        at = clocks.since or 0  # only reachable without a clock (a clock game rejects bad times first)
    if decided is not None:
        clocks.finish(at, timed_out)
    if fold.game.is_over() or (len(fold.keys) > 1 and len(clocks.standing()) < 2):
        fold.status = FINISHED
        clocks.begin(None, at, entry["seq"])
    else:
        clocks.begin(fold.game.to_move(), at, entry["seq"])


def on_timeout(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    expected = fold.expected_timeout()
    seat = entry.get("seat")
    if expected is None:
        return reject(entry, "time/no_clock", "no clock is running: nothing can time out", "TC-T1")
    if seat != expected["seat"]:
        return reject(entry, "time/wrong_seat", f"seat {expected['seat']} is to move, not seat {seat!r}", "TC-T1")
    try:
        at = parse_ms(entry.get("at"))
    except ValueError as exc:
        return reject(entry, "log/bad_time", str(exc))
    for name in ("deadline", "action", "move"):
        if entry.get(name) != expected[name]:
            return reject(entry, f"time/wrong_{name}",
                          f"the timeout's {name} is {entry.get(name)!r}, the fold says {expected[name]!r}",
                          "TC-M1" if name == "move" else "TC-T1")
    if at < parse_ms(expected["deadline"]):
        return reject(entry, "time/early", f"the timeout is logged at {entry.get('at')}, before seat {seat}'s "
                      f"deadline {expected['deadline']}", "TC-T1")
    clocks, game = fold.clocks, fold.game
    assert clocks is not None and game is not None
    clocks.timeouts_in_row[seat] += 1
    if expected["action"] == "forfeit":
        clocks.forfeited_at[seat] = entry["seq"]
        clocks.unconfirmed[seat] = entry["seq"]
    if expected["move"] is not None:
        game.play(seat, expected["move"])
        record_applied(fold, seat, expected["move"], entry)
    lapse_offer(fold, entry)  # DC-O2: the timeout's default move (or the forfeit that ends the game)
    next_decision(fold, entry, seat, timed_out=True)
    return Verdict(entry["seq"], "timeout", "applied", seat)


def on_auto_move(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    clocks, game = fold.clocks, fold.game
    seat = entry.get("seat")
    if fold.status != ACTIVE or clocks is None or game is None:
        return reject(entry, "game/not_active", f"the game is {fold.status}")
    if seat != game.to_move() or not isinstance(seat, int) or not clocks.forfeited(seat):
        return reject(entry, "time/not_forfeited", f"seat {seat!r} is not a forfeited seat to move", "TC-F1")
    move = game.default_move()
    if entry.get("move") != move:
        return reject(entry, "time/wrong_move", f"the default move is {move!r}", "TC-M1")
    game.play(seat, move)
    record_applied(fold, seat, move, entry)
    lapse_offer(fold, entry)
    next_decision(fold, entry, seat)
    return Verdict(entry["seq"], "auto_move", "applied", seat)


def on_vacation(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    assert fold.created is not None
    clocks = fold.clocks
    seat = entry.get("seat")
    if fold.status != ACTIVE or clocks is None:
        return reject(entry, "game/not_active", f"the game is {fold.status}")
    if not clocks.running:
        return reject(entry, "time/no_clock", "this game has no clock: there is no vacation to take", "TC-V1")
    if not isinstance(seat, int):
        return reject(entry, "submission/wrong_seat", "a vacation entry names its seat")
    refused = seat_submission(fold, entry, VACATION_CTX, seat)
    if refused:
        return refused
    too_late = late(fold, entry, seat)
    if too_late:
        return too_late
    seconds = entry["submission"]["envelope"].get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds <= 0:
        return reject(entry, "vacation/bad_seconds", "a vacation is a positive whole number of seconds", "TC-V1")
    if seconds * 1000 > clocks.vacation_left[seat]:
        return reject(entry, "vacation/exceeded", f"seat {seat} has {clocks.vacation_left[seat] // 1000} s of "
                      f"vacation left, not {seconds}", "TC-V1")
    clocks.grant_vacation(seat, parse_ms(entry["at"]), seconds)
    return Verdict(entry["seq"], "vacation", "ok", seat)


HANDLERS: dict[str, Handler] = {
    "move": on_move, "timeout": on_timeout, "auto_move": on_auto_move, "vacation": on_vacation,
}
