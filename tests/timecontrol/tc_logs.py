"""Hand-built, really signed game logs with clocks, for the time-control tests (no service, no Redis).

``ClockLog`` plays a seeded game the way the service records it and lets a test write any entry at any
time: the referee's own entries exactly as the fold expects them, or wrong ones (an early timeout, a
wrong default move, a vacation past its allowance) to see them rejected.
"""

from __future__ import annotations

import hashlib
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from referee.games import ruleset
from referee.protocol.logchain import GENESIS, seal
from referee.protocol.signing import (
    ACCEPT_CTX,
    ANSWER_CTX,
    MOVE_CTX,
    OFFER_CTX,
    VACATION_CTX,
    b64url_encode,
    public_key_b64,
    sign,
)
from referee.replay import LogReplayer
from referee.timecontrol import format_ms, resolve

T0 = 1_795_255_200_000  # 2026-11-21T10:00:00.000Z
SERVER_SEED = bytes(range(32))


def at(seconds: float) -> str:
    """The ``at`` string ``seconds`` after T0."""
    return format_ms(T0 + round(seconds * 1000))


class ClockLog:
    def __init__(self, ruleset_name: str, players: int, time_control: dict[str, Any], game_id: str = "g_clocktest",
                 **created_extra: Any):
        self.game_id = game_id
        self.keys = [Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"tc-{i}".encode()).digest())
                     for i in range(players)]
        self.entries: list[dict[str, Any]] = []
        rules = ruleset(ruleset_name)
        self.append("created", 0, game=game_id, ruleset={"name": rules.name, "version": rules.version},
                    seats=[{"name": f"p{i}", "key": public_key_b64(k)} for i, k in enumerate(self.keys)],
                    options={"time_control": time_control}, time_control=resolve(time_control), organiser=None,
                    mode="seeded",
                    commitment=hashlib.sha256(SERVER_SEED).hexdigest(), **created_extra)
        for seat, key in enumerate(self.keys):
            envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game_id, "seat": seat, "seq": self.seq, "prev": self.head,
                        "entropy": b64url_encode(bytes([seat]) * 32)}
            self.append("accepted", 0, seat=seat, submission={"envelope": envelope, "sig": sign(key, envelope)})
        self.append("started", 0)

    @property
    def seq(self) -> int:
        return len(self.entries)

    @property
    def head(self) -> str:
        return self.entries[-1]["hash"] if self.entries else GENESIS

    def append(self, kind: str, seconds: float, **payload: Any) -> dict[str, Any]:
        entry = seal({"v": 1, "type": kind, "seq": self.seq, "at": at(seconds), **payload}, self.head)
        self.entries.append(entry)
        return entry

    def move(self, seat: int, move: dict[str, Any], seconds: float) -> dict[str, Any]:
        envelope = {"v": 1, "ctx": MOVE_CTX, "game": self.game_id, "seat": seat, "seq": self.seq, "prev": self.head,
                    "move": move}
        return self.append("move", seconds, seat=seat, submission={"envelope": envelope,
                                                                   "sig": sign(self.keys[seat], envelope)})

    def vacation(self, seat: int, vacation_seconds: int, seconds: float) -> dict[str, Any]:
        envelope = {"v": 1, "ctx": VACATION_CTX, "game": self.game_id, "seat": seat, "seq": self.seq,
                    "prev": self.head, "seconds": vacation_seconds}
        return self.append("vacation", seconds, seat=seat, submission={"envelope": envelope,
                                                                       "sig": sign(self.keys[seat], envelope)})

    def offer(self, seat: int, kind: str, seconds: float) -> dict[str, Any]:
        """A seat's signed offer (CONTRACT section 12); its position is the offer's id."""
        envelope = {"v": 1, "ctx": OFFER_CTX, "game": self.game_id, "seat": seat, "seq": self.seq, "prev": self.head,
                    "offer": kind}
        return self.append("offer", seconds, seat=seat, offer=kind,
                           submission={"envelope": envelope, "sig": sign(self.keys[seat], envelope)})

    def answer(self, seat: int, offer: int, accept: bool, seconds: float) -> dict[str, Any]:
        """A seat's signed answer to the offer at position ``offer``."""
        envelope = {"v": 1, "ctx": ANSWER_CTX, "game": self.game_id, "seat": seat, "seq": self.seq,
                    "prev": self.head, "offer": offer, "accept": accept}
        return self.append("answered", seconds, seat=seat, offer=offer, accept=accept,
                           submission={"envelope": envelope, "sig": sign(self.keys[seat], envelope)})

    def replay(self) -> LogReplayer:
        """A fresh fold of the whole log."""
        replayer = LogReplayer(server_seed=SERVER_SEED)
        for entry in self.entries:
            replayer.feed(entry)
        return replayer

    def current(self) -> LogReplayer:
        """The fold of the whole log, kept between calls while the log only grows (long games)."""
        kept = getattr(self, "_kept", None)
        if kept is None or kept.seq > self.seq or (kept.seq and self.entries[kept.seq - 1]["hash"] != kept.head):
            kept = LogReplayer(server_seed=SERVER_SEED)
        for entry in self.entries[kept.seq:]:
            kept.feed(entry)
        self._kept = kept
        return kept

    def timeout(self, seconds: float, **override: Any) -> dict[str, Any]:
        """A timeout as the fold expects it now (``override`` changes fields, to make a wrong one)."""
        expected = self.replay().expected_timeout()
        assert expected is not None, "no clock is running"
        return self.append("timeout", seconds, **{**expected, **override})

    def referee_entries(self, seconds: float) -> list[str]:
        """Append what the referee owes after the last entry (forfeited, auto moves, revealed); their types."""
        from referee.games_service.entries import due_system_entry

        kinds = []
        for _ in range(64):
            due = due_system_entry(self.current(), SERVER_SEED)
            if due is None:
                return kinds
            kind = due.pop("type")
            self.append(kind, seconds, **due)
            kinds.append(kind)
        raise AssertionError("the referee kept owing entries")
