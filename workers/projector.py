"""Folding a game's log into its stored projection: the work of every replay job.

:meth:`Projector.catch_up` is idempotent and never loses work: it starts from whatever projection is
stored, folds every entry after it, appends the referee's own entries if they are due (``started``,
``revealed``; the web process normally did already), and stores the new projection only if nobody
stored a newer one meanwhile (``WRITE_PROJECTION`` in ``referee/store/scripts.py``). A job killed at any
point leaves the stored projection as it was; the next job, or the reconciler, simply does it again.

Each entry newly held by a stored projection is measured from its ``at`` (the time of its append) to the
moment the projection was stored: ``referee_replay_lag_seconds`` (``referee/host/metrics.py``).
"""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from referee.clock import now_ms
from referee.games_service.entries import append_system_entries
from referee.games_service.folds import fold
from referee.games_service.projection import projection_of
from referee.host import metrics
from referee.notify.events import entry_events, next_alarm
from referee.replay import FINISHED, LogReplayer
from referee.store.base import LogStore
from referee.timecontrol.times import parse_ms

log = logging.getLogger(__name__)


def observe_lag(entries: list[dict[str, Any]]) -> None:
    """``referee_replay_lag_seconds``: from each entry's ``at`` to now (its projection has just been stored)."""
    if not entries:
        return
    now = now_ms()
    for entry in entries:
        try:
            metrics.REPLAY_LAG.observe(max(0, now - parse_ms(entry.get("at"))) / 1000)
        except ValueError:  # an entry without a readable time is not measured
            continue

#: Test-only hook: seconds to sleep after each entry a job folds, so that a test can SIGKILL a worker
#: in the middle of a job. Never set it in production.
DELAY_ENV = "REFEREE_TEST_REPLAY_DELAY"
#: Verdicts a cached fold keeps (the last ones; see ``LogReplayer.trim``): its memory does not grow with the log
KEEP_VERDICTS = 16


class Projector:
    """Keeps the folds of recently replayed games in memory (a worker that does not fork per job, like
    RQ's ``SimpleWorker``, then folds only new entries), and writes projections."""

    def __init__(self, store: LogStore, cache_size: int = 512, entry_delay: float | None = None,
                 on_finished: Callable[[str, str], Any] | None = None):
        self.store = store
        #: ``on_finished(game, tournament)``: called after a catch-up that leaves a tournament's game finished
        #: (its log final), so the tournament writes the result and what follows (``TournamentService.game_over``;
        #: idempotent, so a second call for the same game writes nothing)
        self.on_finished = on_finished
        self.cache_size = cache_size
        self._cache: OrderedDict[str, LogReplayer] = OrderedDict()
        #: games of the cache whose timer this projector last set to "none" (a game without a clock): it is
        #: not removed again after every catch-up (one round trip less per move; nobody else sets a timer
        #: for a game whose fold has no alarm)
        self._no_timer: set[str] = set()
        self.entry_delay = float(os.environ.get(DELAY_ENV) or 0) if entry_delay is None else entry_delay

    def _take_cached(self, game_id: str) -> LogReplayer | None:
        return self._cache.pop(game_id, None)

    def _keep(self, game_id: str, replayer: LogReplayer) -> None:
        replayer.trim(KEEP_VERDICTS)  # the next write starts at replayer.seq: older verdicts are stored already
        self._cache[game_id] = replayer
        while len(self._cache) > self.cache_size:
            evicted, _replayer = self._cache.popitem(last=False)
            self._no_timer.discard(evicted)

    def _feed(self, game_id: str, replayer: LogReplayer, entries: list[dict[str, Any]],
              events: list[dict[str, Any]], emit_from: int) -> None:
        """Fold ``entries`` into ``replayer``, then append what the referee owes after them; the events of
        positions from ``emit_from`` on go into ``events``."""
        beat = time.monotonic() + 1.0
        for entry in entries:
            was = replayer.status
            verdict = replayer.feed(entry)
            if verdict.seq >= emit_from:
                events += entry_events(replayer, entry, verdict, was)
            if self.entry_delay:
                time.sleep(self.entry_delay)
            if time.monotonic() > beat:  # a long fold: keep the flag fresh so the reconciler leaves it be
                self.store.mark_pending(game_id, now_ms())
                beat = time.monotonic() + 1.0

        def observe(entry: dict[str, Any], verdict: Any, was: str) -> None:
            events.extend(entry_events(replayer, entry, verdict, was))

        # then the referee's own entries that are due (started, revealed, a timeout…; the web usually did)
        append_system_entries(self.store, game_id, replayer, replayer.server_seed, now=now_ms(), observe=observe)

    def catch_up(self, game_id: str, release: bool = True, time_limit: float = 30.0) -> dict[str, Any]:
        """Bring the stored projection of ``game_id`` up to the end of its log, again and again while entries
        keep arriving, then release the game's pending flag. Returns a summary of the last pass.

        After ``time_limit`` seconds of uninterrupted arrivals it returns with the flag still set (the
        reconciler queues a fresh job), so one busy game cannot hold a worker forever."""
        deadline = time.monotonic() + time_limit
        passes = 0
        while True:
            summary = self._catch_up_once(game_id)
            passes += 1
            if not release or self.store.release_pending(game_id, summary["seq"]) or time.monotonic() > deadline:
                self._tournament_hook(game_id)
                return {**summary, "passes": passes}

    def catch_up_many(self, game_ids: list[str]) -> list[str]:
        """Catch up the games of ``game_ids`` that this process folded before, with their round trips batched
        (one ``READ_SINCE`` pipeline, one pipeline of all their events, one of their projections, one of
        their releases: four round trips for the batch instead of four per game). Returns the games left for
        :meth:`catch_up` one by one, in order: those without a cached fold, with nothing new (whose stored
        projection the single path checks), whose projection write or release found the log or the stored
        projection elsewhere (entries arrived meanwhile). Like :meth:`catch_up` it can be stopped at any point
        and done again: the events go out before the projections, with the same ids."""
        hot: list[tuple[str, LogReplayer]] = []
        rest: list[str] = []
        for game_id in dict.fromkeys(game_ids):
            replayer = self._take_cached(game_id)
            if replayer is None:
                rest.append(game_id)
            else:
                hot.append((game_id, replayer))
        fed: list[tuple[str, LogReplayer, int]] = []
        fresh: dict[str, list[dict[str, Any]]] = {}  # the entries each game's projection will newly hold
        events: list[dict[str, Any]] = []
        for (game_id, replayer), read in zip(hot, self.store.read_since_many([(g, r.seq) for g, r in hot]),
                                             strict=True):
            if isinstance(read, Exception):
                rest.append(game_id)
                continue
            entries, _tip = read
            if not entries:
                self._keep(game_id, replayer)
                rest.append(game_id)
                continue
            from_seq = replayer.seq
            self._feed(game_id, replayer, entries, events, from_seq)
            fed.append((game_id, replayer, from_seq))
            fresh[game_id] = entries
        if events:  # before the projections are stored, as in the single path
            self.store.emit_events(events)
        self.store.set_timers([timer for game_id, replayer, _from_seq in fed
                               if (timer := self._alarm_change(game_id, replayer, trusted=True)) is not None])
        results = self.store.write_projections([
            (game_id, projection_of(replayer), [v.to_dict() for v in replayer.verdicts_since(from_seq)], from_seq)
            for game_id, replayer, from_seq in fed])
        written: list[tuple[str, LogReplayer]] = []
        for (game_id, replayer, _from_seq), result in zip(fed, results, strict=True):
            if result == 1:
                self._keep(game_id, replayer)
                written.append((game_id, replayer))
                observe_lag(fresh[game_id])
            else:  # someone else stored a projection meanwhile: the single path starts from what is stored
                rest.append(game_id)
        for (game_id, _replayer), released in zip(
                written, self.store.release_many([(g, r.seq) for g, r in written]), strict=True):
            if released:
                self._tournament_hook(game_id)
            else:  # entries arrived meanwhile
                rest.append(game_id)
        return rest

    def _set_alarm(self, game_id: str, replayer: LogReplayer, trusted: bool) -> None:
        """Set the game's timer from ``replayer``'s next alarm (see :meth:`_alarm_change`)."""
        change = self._alarm_change(game_id, replayer, trusted)
        if change is not None:
            self.store.set_timer(*change)

    def _alarm_change(self, game_id: str, replayer: LogReplayer, trusted: bool) -> tuple[str, int | None] | None:
        """The timer to write for ``replayer``'s next alarm, or ``None`` when there is nothing to write: a
        removal this projector made already (the game has no clock) is not repeated."""
        alarm = next_alarm(replayer, now_ms())
        change = (game_id, alarm) if alarm is not None or not trusted or game_id not in self._no_timer else None
        if alarm is None:
            self._no_timer.add(game_id)
        else:
            self._no_timer.discard(game_id)
        return change

    def _tournament_hook(self, game_id: str) -> None:
        replayer = self._cache.get(game_id)
        if self.on_finished is None or replayer is None or replayer.status != FINISHED:
            return
        tournament = (replayer.created or {}).get("tournament")
        if tournament:
            try:
                self.on_finished(game_id, tournament)
            except Exception:  # the game is projected; the next look (deadline, another game) advances it
                log.exception("could not advance tournament %s after game %s", tournament, game_id)

    def _catch_up_once(self, game_id: str) -> dict[str, Any]:
        # Fast path: this process folded the game last time and assumes the stored projection is still where
        # it left it (WRITE_PROJECTION refuses a write that starts elsewhere). A cached fold keeps only its last
        # verdicts (LogReplayer.trim); if the stored projection turns out to be further behind, it folds afresh.
        replayer = self._take_cached(game_id)
        trusted = replayer is not None
        from_seq = replayer.seq if replayer is not None else 0
        for _attempt in range(8):
            if replayer is None:  # slow path: a fresh fold, written from the stored projection's position
                stored = self.store.read_projection(game_id)
                from_seq = stored["seq"] if stored else 0
                replayer = LogReplayer(server_seed=self.store.read_secret(game_id))
                trusted = False
            entries, tip = self.store.read_since(game_id, replayer.seq)
            events: list[dict[str, Any]] = []
            self._feed(game_id, replayer, entries, events, from_seq)
            if events:  # before the projection is stored: a job killed in between emits them again (same ids)
                self.store.emit_events(events)
            if replayer.seq > from_seq or not trusted:
                self._set_alarm(game_id, replayer, trusted)
            if replayer.seq == from_seq and trusted:
                # Nothing new since this process stored it; but is it still stored? (the work Redis may have
                # been restarted and lost it)
                stored = self.store.read_projection(game_id)
                from_seq = stored["seq"] if stored else 0
                trusted = False
            if replayer.seq < from_seq:  # the stored projection is ahead of this fold: start again from it
                replayer = None
                continue
            if replayer.seq == from_seq:
                self._keep(game_id, replayer)
                return {"game": game_id, "seq": replayer.seq, "written": False}
            if from_seq < replayer.dropped:  # stored projection behind what this trimmed fold still holds
                replayer = None
                continue
            written = self.store.write_projection(game_id, projection_of(replayer),
                                                  [v.to_dict() for v in replayer.verdicts_since(from_seq)], from_seq)
            if written == 1:
                self._keep(game_id, replayer)
                observe_lag([entry for entry in entries if entry.get("seq", from_seq) >= from_seq])
                return {"game": game_id, "seq": replayer.seq, "written": True, "log": tip.seq}
            replayer = None  # someone else stored a projection meanwhile: start again from what is stored
        raise RuntimeError(f"could not store the projection of {game_id}: it kept moving")

    def rebuild(self, game_id: str) -> dict[str, Any]:
        """Fold ``game_id``'s whole log from scratch and replace its stored projection (reads the log only)."""
        self._cache.pop(game_id, None)
        self._no_timer.discard(game_id)
        replayer = fold(self.store, game_id)
        self.store.write_projection(game_id, projection_of(replayer), [v.to_dict() for v in replayer.verdicts],
                                    0, replace=True)
        self._keep(game_id, replayer)
        return {"game": game_id, "seq": replayer.seq, "status": replayer.status}
