"""Folding logs with :class:`referee.replay.LogReplayer`, and keeping folds warm between requests.

The web process folds a game's log to check a submission before it is appended (legality, turn,
binding), and to answer reads when the worker's projection lags. Folding from scratch on every
request would re-verify every signature in the log, so :class:`ReplayerCache` keeps one folded
replayer per game and brings it up to date with only the entries appended since (one Redis round trip
when nothing changed), without checking again the signatures of what it reads back from the log
(:func:`logged`). Cached replayers are never mutated: advancing one makes a copy
(:func:`clone_replayer`), so readers in other threads always see a consistent fold.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..protocol.signing import verify
from ..replay import LogReplayer
from ..store.base import LogStore

#: Verdicts a cached fold keeps (the last ones)
KEEP_VERDICTS = 16


def clone_replayer(replayer: LogReplayer) -> LogReplayer:
    """An independent copy of ``replayer`` (its game copied with the engine's own ``copy()``)."""
    return dataclasses.replace(
        replayer,
        verdicts=list(replayer.verdicts),
        entropies=dict(replayer.entropies),
        game=replayer.game.copy() if replayer.game is not None else None,
        clocks=replayer.clocks.copy() if replayer.clocks is not None else None,
    )


def fold(store: LogStore, game_id: str, entries: list[dict[str, Any]] | None = None, *,
         verifier: Callable[[str, Any, str], bool] = verify) -> LogReplayer:
    """A fresh fold of ``game_id``'s whole log (read from ``store`` unless given) with its secret seed;
    ``verifier`` checks the entries' signatures (see :func:`logged`)."""
    replayer = LogReplayer(server_seed=store.read_secret(game_id), verifier=verifier)
    for entry in entries if entries is not None else store.read_log(game_id):
        replayer.feed(entry)
    replayer.verifier = verify
    return replayer


def logged(key: str, value: Any, signature: str) -> bool:
    """The signature check of the web's cached folds (:class:`ReplayerCache`), which fold only entries read
    back from the log: every seat-signed entry there was checked before it was appended (the web's
    ``authenticated_seat``, the mail gateway's own check), and the replay workers, the judge of record, check
    each one again. A web process need not check a third time the entries another process appended (with two
    web processes, a third of an accept's signature checks); a submission it takes is checked as before."""
    return True


def fold_with_states(store: LogStore, game_id: str, stop: int | None = None) -> list[dict[str, Any]]:
    """Every entry up to position ``stop`` (exclusive; all when None) with its verdict and the public
    state after it (``None`` before the game has started), from a fresh fold."""
    entries = store.read_log(game_id, 0, stop)
    replayer = LogReplayer(server_seed=store.read_secret(game_id))
    steps = []
    for entry in entries:
        verdict = replayer.feed(entry)
        steps.append({
            "seq": entry["seq"],
            "entry": entry,
            "verdict": verdict.to_dict(),
            "status": replayer.status,
            "to_move": replayer.to_move(),
            "state": replayer.game.view() if replayer.game is not None else None,
            # a seat's new key (CONTRACT section 15): each seat's key from this step on
            **({"seat_keys": replayer.keys} if entry.get("type") == "rekeyed" and verdict.status == "ok" else {}),
        })
    return steps


class ReplayerCache:
    """Up-to-date replayers of recently used games, at most ``size`` of them (least recently used out)."""

    def __init__(self, store: LogStore, size: int = 512):
        self.store = store
        self.size = size
        self._items: OrderedDict[str, LogReplayer] = OrderedDict()
        self._lock = threading.Lock()

    def peek(self, game_id: str) -> LogReplayer | None:
        """The cached replayer of ``game_id`` as it is (possibly behind the log), without any I/O."""
        return self._peek(game_id)

    def _peek(self, game_id: str) -> LogReplayer | None:
        with self._lock:
            replayer = self._items.get(game_id)
            if replayer is not None:
                self._items.move_to_end(game_id)
            return replayer

    def put(self, game_id: str, replayer: LogReplayer) -> None:
        """Keep ``replayer`` (which the caller must not mutate afterwards) unless a longer fold is cached. Its
        older verdicts are dropped first (:meth:`LogReplayer.trim`): the memory of a cached fold, and the
        copy each accept makes of it, do not grow with the log (the web reads only the last verdict)."""
        with self._lock:
            current = self._items.get(game_id)
            if current is None or current.seq <= replayer.seq:
                replayer.trim(KEEP_VERDICTS)
                self._items[game_id] = replayer
                self._items.move_to_end(game_id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def forget(self, game_id: str) -> None:
        with self._lock:
            self._items.pop(game_id, None)

    def current(self, game_id: str) -> LogReplayer:
        """A replayer folded up to the log's current end (shared: do not mutate; use :func:`clone_replayer`).

        Raises ``GameNotFound`` for an unknown game.
        """
        cached = self._peek(game_id)
        start = cached.seq if cached is not None else 0
        entries, tip = self.store.read_since(game_id, start)
        if cached is not None and tip.seq == cached.seq and tip.head == cached.head:
            return cached
        replayer = None
        if cached is not None and tip.seq == start + len(entries) and tip.seq > cached.seq:
            replayer = clone_replayer(cached)
            replayer.verifier = logged
            for entry in entries:
                replayer.feed(entry)
            replayer.verifier = verify
            if replayer.head != tip.head:
                replayer = None
        if replayer is None:
            replayer = fold(self.store, game_id, entries if start == 0 else None, verifier=logged)
        self.put(game_id, replayer)
        return replayer
