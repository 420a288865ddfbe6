"""The seats' clocks, folded from a game's log (CONTRACT section 8). Pure: times are the entries' ``at``.

A *decision* is the span in which one seat is to move: it starts at the ``at`` of the entry that made
the seat the one to move (``started``, or an applied ``move``/``timeout``/``auto_move``, including the
seat's own previous move when it moves again) and ends at the ``at`` of the entry that decides it.

* ``per_move``: each decision has ``per_move`` seconds.
* ``bank``: the first decision of a seat has ``initial``; a decision may use what is in the seat's bank;
  after each decision the bank keeps what was not used plus ``increment``, capped at ``max``. A decision
  that timed out used the whole bank (the seat is left with the increment).

Vacation: a seat's granted vacation of ``s`` seconds is the interval from its ``at`` (or from the end of
the seat's previous vacation, if that is later) lasting ``s`` seconds. Time inside a seat's vacation is
not charged to that seat: its deadline moves out by the overlap. Each seat has ``vacation`` seconds per
game; a grant spends the whole requested amount.

The deadline of the current decision is the earliest time by which the seat has been charged its
allowance. All values are integer milliseconds since the epoch (log times have milliseconds).

>>> from referee.timecontrol.spec import resolve
>>> clocks = Clocks.start(resolve({"kind": "per_move", "per_move": 60}), players=2)
>>> clocks.begin(seat=0, at=1_000, position=2)
>>> clocks.deadline()
61000
>>> clocks.grant_vacation(seat=0, at=31_000, seconds=10)
>>> clocks.deadline()
71000
>>> clocks.view(now=41_000)[0]["left"]
30
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .times import format_ms


@dataclass
class Clocks:
    spec: dict[str, Any]
    players: int
    #: ms left in each seat's bank (kind ``bank``); for other kinds unused
    bank: list[int] = field(default_factory=list)
    #: ms of vacation each seat may still take
    vacation_left: list[int] = field(default_factory=list)
    #: each seat's granted vacations, as [start, end) ms intervals in time order
    vacations: list[list[tuple[int, int]]] = field(default_factory=list)
    #: each seat's timeouts in a row (reset by the seat's own move)
    timeouts_in_row: list[int] = field(default_factory=list)
    #: log position of the timeout at which each seat forfeited, or None
    forfeited_at: list[int | None] = field(default_factory=list)
    #: forfeits not yet confirmed by a ``forfeited`` entry: seat -> position of the timeout
    unconfirmed: dict[int, int] = field(default_factory=dict)
    #: the current decision: seat, start (ms), log position of the entry that started it, allowance (ms)
    seat: int | None = None
    since: int | None = None
    since_position: int | None = None
    allowance: int | None = None

    @classmethod
    def start(cls, spec: dict[str, Any], players: int) -> Clocks:
        initial = spec.get("initial", 0) * 1000
        vacation = spec.get("vacation", 0) * 1000
        return cls(spec=spec, players=players, bank=[initial] * players, vacation_left=[vacation] * players,
                   vacations=[[] for _ in range(players)], timeouts_in_row=[0] * players,
                   forfeited_at=[None] * players)

    @property
    def kind(self) -> str:
        return self.spec.get("kind", "none")

    @property
    def running(self) -> bool:
        """Whether this game has a clock at all."""
        return self.kind != "none"

    def copy(self) -> Clocks:
        """An independent copy (every fold of an accept makes one: field by field, not ``deepcopy``). The
        ``spec`` is shared: it is never changed after :meth:`start`."""
        return Clocks(spec=self.spec, players=self.players, bank=list(self.bank),
                      vacation_left=list(self.vacation_left), vacations=[list(v) for v in self.vacations],
                      timeouts_in_row=list(self.timeouts_in_row), forfeited_at=list(self.forfeited_at),
                      unconfirmed=dict(self.unconfirmed), seat=self.seat, since=self.since,
                      since_position=self.since_position, allowance=self.allowance)

    # -- decisions ----------------------------------------------------------------------------------
    def begin(self, seat: int | None, at: int, position: int) -> None:
        """A decision of ``seat`` starts at ``at`` (``None``: nobody is to move, e.g. the game is over)."""
        self.seat, self.since, self.since_position = seat, at, position
        if seat is None or not self.running:
            self.allowance = None
        elif self.kind == "per_move":
            self.allowance = self.spec["per_move"] * 1000
        else:
            self.allowance = self.bank[seat]

    def finish(self, at: int, timed_out: bool = False) -> None:
        """The current decision ends at ``at``; a bank keeps what was left plus the increment."""
        seat = self.seat
        if seat is not None and self.kind == "bank" and self.since is not None and self.allowance is not None:
            left = 0 if timed_out else max(0, self.allowance - self.charged(seat, self.since, at))
            self.bank[seat] = min(self.spec["max"] * 1000, left + self.spec["increment"] * 1000)
        self.seat = self.since = self.since_position = self.allowance = None

    def undo_point(self, seat: int, at: int) -> tuple[int, int | None]:
        """What an agreed take-back of ``seat``'s move at ``at`` gives back (DC-T1, TC-D3), taken just before the
        move ends the current decision: the seat's timeouts in a row (the move resets them) and, for a bank,
        what was left of it at ``at`` *without* the increment the move earns (None otherwise). The time the
        seat used on the voided move stays used; only what the move itself earned is undone."""
        left = None
        if self.kind == "bank" and self.seat == seat and self.since is not None and self.allowance is not None:
            left = max(0, self.allowance - self.charged(seat, self.since, at))
        return self.timeouts_in_row[seat], left

    def take_back(self, seat: int, point: tuple[int, int | None]) -> None:
        """Undo what ``seat``'s voided move earned (:meth:`undo_point`): its bank is what was left when it moved,
        with no increment, and its timeouts in a row are what they were before it."""
        timeouts, left = point
        self.timeouts_in_row[seat] = timeouts
        if left is not None:
            self.bank[seat] = left

    def charged(self, seat: int, start: int, end: int) -> int:
        """Milliseconds of [start, end) charged to ``seat``: all of it but its vacations."""
        if end <= start:
            return 0
        free = sum(max(0, min(end, b) - max(start, a)) for a, b in self.vacations[seat])
        return end - start - free

    def deadline(self) -> int | None:
        """When the current decision times out (ms), or None (no clock, nobody to move, forfeited seat)."""
        seat, since, allowance = self.seat, self.since, self.allowance
        if seat is None or since is None or allowance is None or self.forfeited_at[seat] is not None:
            return None
        t, remaining = since, allowance
        for a, b in self.vacations[seat]:
            if b <= t:
                continue
            if a > t:
                if a - t >= remaining:
                    return t + remaining
                remaining -= a - t
            t = b
        return t + remaining

    # -- timeouts, forfeits, vacations --------------------------------------------------------------
    def timeout_action(self, seat: int) -> str:
        """What a timeout of ``seat`` does now: ``forfeit`` or ``auto_move`` (CONTRACT section 8)."""
        if self.spec.get("on_timeout") == "forfeit":
            return "forfeit"
        if self.timeouts_in_row[seat] + 1 >= self.spec.get("max_auto_moves", 3):
            return "forfeit"
        return "auto_move"

    def forfeited(self, seat: int) -> bool:
        return self.forfeited_at[seat] is not None

    def standing(self) -> list[int]:
        """The seats that have not forfeited."""
        return [seat for seat in range(self.players) if self.forfeited_at[seat] is None]

    def grant_vacation(self, seat: int, at: int, seconds: int) -> None:
        ms = seconds * 1000
        intervals = self.vacations[seat]
        begin = max(at, intervals[-1][1]) if intervals else at
        intervals.append((begin, begin + ms))
        self.vacation_left[seat] -= ms

    def on_vacation(self, seat: int, now: int) -> bool:
        return any(a <= now < b for a, b in self.vacations[seat])

    def vacation_until(self, seat: int, now: int) -> int | None:
        """When the seat's vacation under way at ``now`` ends (ms; back-to-back vacations count as one)."""
        end = None
        for a, b in self.vacations[seat]:
            if a <= now < b or (end is not None and a <= end < b):
                end = b
        return end

    # -- reads ----------------------------------------------------------------------------------------
    def reminder_times(self) -> list[tuple[int, int]]:
        """``(seconds before, when)`` of the reminders of the current decision, earliest first."""
        deadline = self.deadline()
        if deadline is None or self.since is None:
            return []
        out = [(before, deadline - before * 1000) for before in self.spec.get("reminders", [])]
        return sorted((item for item in out if item[1] > self.since), key=lambda item: item[1])

    def view(self, now: int | None = None) -> list[dict[str, Any]]:
        """Per seat ``{deadline, left, bank, vacation_left, on_vacation, vacation_until, forfeited}``; seconds; times
        ``at`` strings. ``left`` (seconds of the allowance not yet used at ``now``) only for the seat to move
        and only when ``now`` is given; ``bank`` only for kind ``bank``."""
        out = []
        deadline = self.deadline()
        for seat in range(self.players):
            clock: dict[str, Any] = {"deadline": None, "left": None, "bank": None,
                                     "vacation_left": self.vacation_left[seat] // 1000 if self.running else None,
                                     "on_vacation": now is not None and self.on_vacation(seat, now),
                                     "vacation_until": None,
                                     "forfeited": self.forfeited(seat)}
            if clock["on_vacation"] and now is not None:
                until = self.vacation_until(seat, now)
                clock["vacation_until"] = format_ms(until) if until is not None else None
            if self.kind == "bank":
                clock["bank"] = self.bank[seat] // 1000
            if seat == self.seat and deadline is not None and self.since is not None and self.allowance is not None:
                clock["deadline"] = format_ms(deadline)
                if now is not None:
                    used = self.charged(seat, self.since, now)
                    clock["left"] = max(0, self.allowance - used) // 1000
                if self.kind == "bank":
                    clock["bank"] = self.allowance // 1000
            out.append(clock)
        return out
