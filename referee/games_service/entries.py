"""Building log entries (format in ``referee.logchain``) and the entries the referee writes itself.

Besides the submissions of the seats, the referee appends two kinds of entries on its own:
``started`` once every seat has accepted (or right after ``created`` in recorded mode), and
``revealed`` with the server seed once the game is over. Both the web process (right after the append
that calls for them) and the replay worker (in case the web process died in between) append them
through :func:`append_system_entries`; the atomic append makes sure only one of them succeeds.
"""

from __future__ import annotations

from typing import Any

from ..clock import now
from ..logchain import ENTRY_VERSION, seal
from ..replay import FINISHED, WAITING, LogReplayer
from ..store.base import Appended, LogStore
from ..store.errors import StaleAppend


def make_entry(kind: str, seq: int, prev: str, **payload: Any) -> dict[str, Any]:
    """A sealed entry of type ``kind`` at position ``seq`` chained from ``prev``, stamped with server time."""
    return seal({"v": ENTRY_VERSION, "type": kind, "seq": seq, "at": now(), **payload}, prev)


def due_system_entry(replayer: LogReplayer, secret: bytes | None) -> dict[str, Any] | None:
    """Payload (with ``type``) of the entry the referee owes this log next, or ``None``."""
    created = replayer.created
    if created is None:
        return None
    mode = created.get("mode")
    if replayer.status == WAITING:
        if mode == "recorded" or (mode == "seeded" and len(replayer.entropies) == len(replayer.keys)):
            return {"type": "started"}
        return None
    if replayer.status == FINISHED and mode == "seeded" and secret is not None:
        revealed = any(v.type == "revealed" and v.status == "ok" for v in reversed(replayer.verdicts))
        if not revealed:
            return {"type": "revealed", "server_seed": secret.hex(), "reason": "finished"}
    return None


def append_system_entries(store: LogStore, game_id: str, replayer: LogReplayer,
                          secret: bytes | None) -> list[Appended]:
    """Append every entry the referee owes (feeding each into ``replayer``, which must be private to the
    caller). Stops quietly when someone else appended first (the caller's fold is then behind)."""
    appended: list[Appended] = []
    for _ in range(4):
        due = due_system_entry(replayer, secret)
        if due is None:
            break
        kind = due.pop("type")
        entry = make_entry(kind, replayer.seq, replayer.head, **due)
        try:
            appended.append(store.append(game_id, entry, replayer.head))
        except StaleAppend:
            break
        replayer.feed(entry)
    return appended
