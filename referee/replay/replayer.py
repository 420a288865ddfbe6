"""The fold itself: :class:`LogReplayer` hands each entry to its concern's handler (:data:`HANDLERS`) over the
state of :class:`~referee.replay.state.FoldState` (which also answers the queries of the service, the workers and
the verifier)."""

from __future__ import annotations

from typing import Any

from .adjudication import HANDLERS as ADJUDICATION
from .adjudication import revealed_seed
from .decisions import HANDLERS as DECISIONS
from .keys import HANDLERS as KEYS
from .keys import key_used
from .lifecycle import HANDLERS as LIFECYCLE
from .moves import HANDLERS as MOVES
from .state import FoldState, Handler
from .verdicts import LogError, Verdict, reject


def _handlers(*concerns: dict[str, Handler]) -> dict[str, Handler]:
    """The entry types of every concern in one table; an entry type claimed by two concerns is an error."""
    table: dict[str, Handler] = {}
    for concern in concerns:
        claimed = table.keys() & concern.keys()
        if claimed:
            raise ValueError(f"entry types handled twice: {sorted(claimed)}")
        table.update(concern)
    return table


#: entry type → its handler, from the concern modules (the package docstring has the table)
HANDLERS = _handlers(LIFECYCLE, MOVES, DECISIONS, ADJUDICATION, KEYS)


class LogReplayer(FoldState):
    """The fold: each entry, in order, handed to its concern's handler (:data:`HANDLERS`) over the state of
    :class:`~referee.replay.state.FoldState` (its fields, the verifier's use without a seed, the queries)."""

    def feed(self, entry: dict[str, Any]) -> Verdict:
        position = self.seq
        if entry.get("seq") != position:
            raise LogError(position, f"entry carries seq {entry.get('seq')!r}")
        kind = entry.get("type")
        handler = HANDLERS.get(kind) if isinstance(kind, str) else None
        if position == 0 and kind != "created":
            raise LogError(0, "the first entry of a log must be 'created'")
        if handler is None:
            verdict = reject(entry, "log/unknown_entry", f"unknown entry type {kind!r}")
        else:
            verdict = handler(self, entry)
            key_used(self, entry, verdict)  # RK-R3: the seat's current key at work ends its pending recovery
        self.verdicts.append(verdict)
        self.head = entry.get("hash", self.head)
        return verdict


def replay_log(entries: list[dict[str, Any]], server_seed: bytes | None = None) -> LogReplayer:
    """Fold a whole log. Without ``server_seed`` the seed revealed in the log (if any) is used."""
    replayer = LogReplayer(server_seed=server_seed if server_seed is not None else revealed_seed(entries))
    for entry in entries:
        replayer.feed(entry)
    return replayer
