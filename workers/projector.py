"""Folding a game's log into its stored projection: the work of every replay job.

:meth:`Projector.catch_up` is idempotent and never loses work: it starts from whatever projection is
stored, folds every entry after it, appends the referee's own entries if they are due (``started``,
``revealed``; the web process normally did already), and stores the new projection only if nobody
stored a newer one meanwhile (``WRITE_PROJECTION`` in ``referee/store/scripts.py``). A job killed at any
point leaves the stored projection as it was; the next job, or the reconciler, simply does it again.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from typing import Any

from referee.games_service.entries import append_system_entries
from referee.games_service.folds import fold
from referee.games_service.projection import projection_of
from referee.replay import LogReplayer
from referee.store.base import LogStore

#: Test-only hook: seconds to sleep after each entry a job folds, so that a test can SIGKILL a worker
#: in the middle of a job. Never set it in production.
DELAY_ENV = "REFEREE_TEST_REPLAY_DELAY"


class Projector:
    """Keeps the folds of recently replayed games in memory (a worker that does not fork per job, like
    RQ's ``SimpleWorker``, then folds only new entries), and writes projections."""

    def __init__(self, store: LogStore, cache_size: int = 512, entry_delay: float | None = None):
        self.store = store
        self.cache_size = cache_size
        self._cache: OrderedDict[str, LogReplayer] = OrderedDict()
        self.entry_delay = float(os.environ.get(DELAY_ENV) or 0) if entry_delay is None else entry_delay

    def _cached(self, game_id: str, seq: int, head: str | None) -> LogReplayer | None:
        replayer = self._cache.pop(game_id, None)
        if replayer is not None and replayer.seq == seq and replayer.head == head:
            return replayer
        return None

    def _keep(self, game_id: str, replayer: LogReplayer) -> None:
        self._cache[game_id] = replayer
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _feed(self, replayer: LogReplayer, entries: list[dict[str, Any]]) -> None:
        for entry in entries:
            replayer.feed(entry)
            if self.entry_delay:
                time.sleep(self.entry_delay)

    def catch_up(self, game_id: str, clear_pending: bool = True) -> dict[str, Any]:
        """Bring the stored projection of ``game_id`` up to the end of its log; returns a summary."""
        if clear_pending:  # before reading: an append from now on raises the flag again and queues a job
            self.store.clear_pending(game_id)
        secret = self.store.read_secret(game_id)
        for _attempt in range(8):
            stored = self.store.read_projection(game_id)
            from_seq = stored["seq"] if stored else 0
            replayer = self._cached(game_id, from_seq, stored["head"] if stored else None)
            if replayer is None:
                replayer = LogReplayer(server_seed=secret)
                start = 0
            else:
                start = replayer.seq
            entries, tip = self.store.read_since(game_id, start)
            self._feed(replayer, entries)
            append_system_entries(self.store, game_id, replayer, secret)
            if replayer.seq < from_seq:  # the stored projection is ahead of the log we read: read again
                continue
            if replayer.seq == from_seq:
                self._keep(game_id, replayer)
                return {"game": game_id, "seq": replayer.seq, "written": False}
            written = self.store.write_projection(game_id, projection_of(replayer),
                                                  [v.to_dict() for v in replayer.verdicts[from_seq:]], from_seq)
            if written == 1:
                self._keep(game_id, replayer)
                return {"game": game_id, "seq": replayer.seq, "written": True, "log": tip.seq}
            if written == 0:  # someone stored this far or further meanwhile
                return {"game": game_id, "seq": replayer.seq, "written": False}
        raise RuntimeError(f"could not store the projection of {game_id}: it kept moving")

    def rebuild(self, game_id: str) -> dict[str, Any]:
        """Fold ``game_id``'s whole log from scratch and replace its stored projection (reads the log only)."""
        self._cache.pop(game_id, None)
        replayer = fold(self.store, game_id)
        self.store.write_projection(game_id, projection_of(replayer), [v.to_dict() for v in replayer.verdicts],
                                    0, replace=True)
        self._keep(game_id, replayer)
        return {"game": game_id, "seq": replayer.seq, "status": replayer.status}
