"""Building log entries (format in ``referee.protocol.logchain``) and the entries the referee writes itself.

Besides the submissions of the seats, the referee appends entries on its own: ``started`` once every seat has
accepted (or right after ``created`` in recorded mode), ``revealed`` with the server seed once the game is
over (or aborted by agreement, or cancelled by its creator), ``agreed`` once every seat needed has accepted
the pending offer (CONTRACT section 12), ``recovery_declined`` once a pending recovery of a seat's key ended and
(deadline scheduler only) the ``rekeyed`` that completes an accepted recovery after its wait (CONTRACT section 15),
and with a clock (CONTRACT section 8) ``timeout`` when the seat to
move is past its deadline, ``forfeited`` right after a timeout that forfeits, and ``auto_move`` for a
forfeited seat on each of its turns. The web process (right after the append that calls for them), the replay
worker (in case the web process died in between) and the deadline scheduler append them through
:func:`append_system_entries`; the atomic append makes sure only one of them succeeds at a position.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..clock import now
from ..protocol.logchain import ENTRY_VERSION, seal
from ..replay import ABORTED, ACTIVE, CANCELLED, EXPIRED, FINISHED, WAITING, LogReplayer, Verdict, recovery_due
from ..store.base import Appended, LogStore
from ..store.errors import StaleAppend
from ..timecontrol import format_ms, parse_ms

log = logging.getLogger(__name__)


def make_entry(kind: str, seq: int, prev: str, at: str | None = None, **payload: Any) -> dict[str, Any]:
    """A sealed entry of type ``kind`` at position ``seq`` chained from ``prev``, stamped with server time
    (or with ``at``, when the caller has already read the clock to decide on the entry)."""
    return seal({"v": ENTRY_VERSION, "type": kind, "seq": seq, "at": at or now(), **payload}, prev)


def due_system_entry(replayer: LogReplayer, secret: bytes | None, now: int | None = None) -> dict[str, Any] | None:
    """Payload (with ``type``) of the entry the referee owes this log next, or ``None``. A ``timeout`` is
    owed only when ``now`` (server time, ms) is given and the seat to move is past its deadline."""
    created = replayer.created
    if created is None:
        return None
    mode = created.get("mode")
    clocks = replayer.clocks
    if clocks is not None and clocks.unconfirmed:
        seat = min(clocks.unconfirmed)
        return {"type": "forfeited", "seat": seat, "reason": "timeout", "timeout": clocks.unconfirmed[seat]}
    agreement = replayer.agreement_due()
    if agreement is not None:  # every seat needed accepted the pending offer (DC-O2)
        return {"type": "agreed", "offer": agreement}
    recovery = recovery_due(replayer, now)  # a seat's new key (CONTRACT section 15, RK-R3, RK-R4)
    if recovery is not None:
        return recovery
    if replayer.status == ACTIVE and clocks is not None and replayer.game is not None:
        mover = replayer.to_move()
        if mover is not None and clocks.forfeited(mover):
            return {"type": "auto_move", "seat": mover, "move": replayer.game.default_move()}
        deadline = replayer.deadline_ms()
        if now is not None and deadline is not None and deadline <= now:
            return {"type": "timeout", **(replayer.expected_timeout() or {})}
    if replayer.status == WAITING:
        if mode == "recorded" or (mode == "seeded" and len(replayer.entropies) == len(replayer.keys)):
            return {"type": "started"}
        accept_by = replayer.accept_by_ms()
        if now is not None and accept_by is not None and accept_by <= now:
            return {"type": "expired"}
        return None
    if replayer.status == EXPIRED and mode == "seeded" and secret is not None:
        if not replayer.revealed:
            return {"type": "revealed", "server_seed": secret.hex(), "reason": "expired"}
        return None
    if replayer.status == CANCELLED and mode == "seeded" and secret is not None and not replayer.revealed:
        return {"type": "revealed", "server_seed": secret.hex(), "reason": "cancelled"}  # CONTRACT section 14
    if replayer.status == ABORTED and mode == "seeded" and secret is not None and not replayer.revealed:
        return {"type": "revealed", "server_seed": secret.hex(), "reason": "abort_agreed"}  # DC-A1
    if replayer.status == FINISHED and mode == "seeded" and secret is not None:
        if not replayer.revealed:
            return {"type": "revealed", "server_seed": secret.hex(), "reason": "finished"}
    return None


def reindex_key(store: LogStore, game_id: str, replayer: LogReplayer) -> None:
    """After a ``rekeyed`` entry (CONTRACT section 15): list the game under the seat's new key and take it off the old
    one's list. Best effort: a key's list is read through the fold's holders (``PlayerGames.player_games``)."""
    if not replayer.key_history or replayer.created is None:
        return
    _position, _seat, old, new, _reason = replayer.key_history[-1]
    try:
        store.index_player_games([(new, game_id, parse_ms(replayer.created["at"]))])
        store.unindex_player_games([(old, game_id)])
    except Exception:
        log.exception("could not move game %s to the seat's new key's list", game_id)


#: ``observe(entry, verdict, status_before)``: told of every entry :func:`append_system_entries` folds
Observer = Callable[[dict[str, Any], Verdict, str], None]


def append_system_entries(store: LogStore, game_id: str, replayer: LogReplayer,
                          secret: bytes | None, *, now: int | None = None,
                          observe: Observer | None = None) -> list[Appended]:
    """Append every entry the referee owes (feeding each into ``replayer``, which must be private to the
    caller). Stops quietly when someone else appended first (the caller's fold is then behind).

    ``now`` (server time, ms) lets a ``timeout`` be owed, and stamps the entries (the time the caller
    decided at); without it they are stamped with the time of writing."""
    appended: list[Appended] = []
    for _ in range(64):  # a forfeited seat with extra turns may owe several auto moves in a row
        at_ms = now
        due = due_system_entry(replayer, secret, at_ms)
        if due is None:
            break
        kind = due.pop("type")
        entry = make_entry(kind, replayer.seq, replayer.head, at=format_ms(at_ms) if at_ms is not None else None,
                           **due)
        try:
            appended.append(store.append(game_id, entry, replayer.head))
        except StaleAppend:
            break
        was = replayer.status
        verdict = replayer.feed(entry)
        if kind == "rekeyed" and verdict.status == "ok":
            reindex_key(store, game_id, replayer)
        if observe is not None:
            observe(entry, verdict, was)
    return appended
