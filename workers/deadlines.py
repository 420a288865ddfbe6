"""The deadline scheduler: writes ``timeout`` entries when a seat's time runs out, and reminder events.

Every game with a running clock has one timer in a sorted set on the log's Redis (``referee:timers``,
scored by the next time something is due for it: a reminder or the deadline). The web process sets it
after each append, the replay worker after each catch-up, and this scheduler after each look. The
scheduler polls the set (``ZRANGEBYSCORE … -inf now``, earliest first, every ``every`` seconds, ``batch``
games at a time, looked at by up to ``threads`` threads at once), and for each due game, at the server
time of that look:

1. folds the game's log (the same :class:`~referee.replay.LogReplayer` as everyone else);
2. puts the reminders whose time has come into the outbox (stable ids: a second scheduler, or a second
   look, adds nothing);
3. if the seat to move is past its deadline, appends the ``timeout`` and what it entails (``forfeited``,
   forfeited seats' ``auto_move``, ``revealed``) through the same atomic append as moves
   (:func:`referee.games_service.entries.append_system_entries`), so a timeout and a last-second move can
   never both land at one position; a refused append means the log moved on: it folds again;
4. sets the game's next timer and queues the replay job for what it appended.

Round deadlines of tournaments ride on the same set: the member ``tournament:<id>`` is due at the open
round's deadline, and :meth:`DeadlineScheduler.handle_tournament` hands it to the tournament service
(``TournamentService.on_deadline``: adjudicate the round's unfinished games, close the round).

Nothing here decides a result: the timeout is checked by every fold (it must be at or after the
deadline the fold computes, for the seat and with the default move the fold computes). After a restart
the timers are still there (the log's Redis is durable), so every deadline that passed while the
service was down is handled, earliest first, with the ``at`` of the moment it is written.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from referee.clock import now_ms
from referee.errors import ServiceError
from referee.games_service.core import Dispatcher, NoDispatch, notify_appended
from referee.games_service.entries import append_system_entries, due_system_entry
from referee.games_service.folds import ReplayerCache, clone_replayer
from referee.host import logs, metrics
from referee.host.diskspace import LogDisk
from referee.notify.events import due_reminders, entry_events, next_alarm
from referee.replay import LogError
from referee.store import GameNotFound, StoreUnavailable
from referee.store.base import LogStore
from referee.store.keys import TOURNAMENT_TIMER_PREFIX

from .looping import PassLoop

log = logging.getLogger(__name__)

#: how long a claimed timer is left to its scheduler before another may take it (a scheduler that died)
LEASE_MS = 30_000


class DeadlineScheduler:
    """Handles due timers: :meth:`run_once` for one pass, :meth:`start`/:meth:`stop` for a thread."""

    def __init__(self, store: LogStore, dispatcher: Dispatcher | None = None, every: float = 0.25,
                 batch: int = 200, threads: int = 4, *, tournaments: Any = None, disk: LogDisk | None = None):
        self.store = store
        #: the log Redis's disk: below its floor a pass claims and writes nothing (``referee/host/diskspace.py``)
        self.disk = disk
        self._disk_full = False
        self.threads = threads
        #: the :class:`~referee.tournaments.service.TournamentService` that handles round deadlines (the
        #: ``tournament:<id>`` members of the timers); without one those timers are dropped
        self.tournaments = tournaments
        self.dispatcher: Dispatcher = dispatcher or NoDispatch()
        self.every = every
        self.batch = batch
        self.cache = ReplayerCache(store, size=2048)
        self._loop = PassLoop("referee-deadlines", self.run_once, pause=every, retry=every)
        self._stop = self._loop.stopping

    # -- one pass -----------------------------------------------------------------------------------
    def run_once(self, now: int | None = None) -> list[dict[str, Any]]:
        """Handle every timer due at ``now`` (server time when None), earliest first; returns what was done
        per game: ``{"game", "appended": [types], "reminders": n}``.

        The games of a batch are handled by up to ``threads`` threads at once: a look is mostly waiting for
        the durable Redis (each write is fsync'd before it is acknowledged, and Redis fsyncs once for all
        the writes it has in hand), so one thread per game in turn leaves it idle. Each game is looked at
        the server time of that look (``now`` when given), so a timeout's ``at`` is when it is written."""
        done: list[dict[str, Any]] = []
        if self.disk is not None:
            full = self.disk.full()
            if full != self._disk_full:
                self._disk_full = full
                log.warning("the log's disk is below REFEREE_MIN_FREE_DISK: deadlines wait until space is freed"
                            if full else "the log's disk has room again: deadlines resume")
            if full:
                return done
        while True:
            moment = now if now is not None else now_ms()
            # claimed, not only read: concurrent schedulers (one per worker) split the due games
            due = [game_id for game_id, _when in self.store.claim_timers(moment, self.batch, LEASE_MS)]
            if len(due) > 1 and self.threads > 1:
                with ThreadPoolExecutor(max_workers=min(self.threads, len(due)),
                                        thread_name_prefix="referee-deadlines") as pool:
                    looks = list(pool.map(lambda game_id: self._look(game_id, now), due))
            else:
                looks = [self._look(game_id, now) for game_id in due]
            done += [look for look in looks if look is not None]
            if len(due) < self.batch or self._stop.is_set():
                return done

    def _look(self, game_id: str, now: int | None) -> dict[str, Any] | None:
        if game_id.startswith(TOURNAMENT_TIMER_PREFIX):
            return self.handle_tournament(game_id, now if now is not None else now_ms())
        with logs.bound(game_id=game_id):
            try:
                return self.handle(game_id, now if now is not None else now_ms())
            except (GameNotFound, LogError) as exc:
                log.warning("dropping the timer of %s: %s", game_id, exc)
                self.store.set_timer(game_id, None)
                return None
            except StoreUnavailable as exc:  # Redis refused, or (REFEREE_MIN_REPLICAS) no replica confirmed in time
                log.warning("%s: not done, looked at again when its claim lapses (%d s): %s", game_id,
                            LEASE_MS // 1000, exc)
                return None

    def handle(self, game_id: str, now: int) -> dict[str, Any]:
        """Look at one game at ``now``: reminders, the timeout if its deadline has passed, the next timer."""
        appended_types: list[str] = []
        reminders = 0
        trial = clone_replayer(self.cache.current(game_id))
        for _attempt in range(5):
            reminders += self.store.emit_events(due_reminders(trial, now))
            events: list[dict[str, Any]] = []

            def observe(entry: dict[str, Any], verdict: Any, was: str, events: list[dict[str, Any]] = events) -> None:
                appended_types.append(entry["type"])
                events.extend(entry_events(trial, entry, verdict, was))  # noqa: B023 - used at once, in this pass

            appended = append_system_entries(self.store, game_id, trial, trial.server_seed, now=now, observe=observe)
            if events:
                self.store.emit_events(events)
            if appended:
                self.cache.put(game_id, trial)
                self._notify(game_id, appended)
            if due_system_entry(trial, trial.server_seed, now) is None:
                break
            trial = clone_replayer(self.cache.current(game_id))  # the log moved on under us: fold again
        self.store.set_timer(game_id, next_alarm(trial, now))
        if appended_types:
            metrics.TIMEOUTS.inc(appended_types.count("timeout"))
            log.info("%s: appended %s", game_id, ", ".join(appended_types))
        return {"game": game_id, "appended": appended_types, "reminders": reminders}

    def handle_tournament(self, member: str, now: int) -> dict[str, Any]:
        """A tournament's round deadline: its service adjudicates the round's unfinished games and closes the
        round (``TournamentService.on_deadline``), and sets the tournament's next timer."""
        tournament_id = member[len(TOURNAMENT_TIMER_PREFIX):]
        if self.tournaments is None:
            self.store.set_timer(member, None)
            return {"tournament": tournament_id, "appended": [], "dropped": True}
        try:
            return self.tournaments.on_deadline(tournament_id, now)
        except ServiceError as exc:
            if exc.status == 404:
                log.warning("dropping the timer of tournament %s: %s", tournament_id, exc.message)
                self.store.set_timer(member, None)
                return {"tournament": tournament_id, "appended": [], "dropped": True}
            log.warning("round deadline of tournament %s failed: %s; again in a minute", tournament_id, exc)
        except Exception:  # one tournament must not stop the pass; look again in a minute
            log.exception("round deadline of tournament %s failed", tournament_id)
        self.store.set_timer(member, now + 60_000)
        return {"tournament": tournament_id, "appended": [], "failed": True}

    def _notify(self, game_id: str, appended: list[Any]) -> None:
        notify_appended(self.dispatcher, game_id, appended)

    # -- as a thread ----------------------------------------------------------------------------------
    def start(self) -> DeadlineScheduler:
        self._loop.start()
        return self

    def request_stop(self) -> None:
        self._loop.request_stop()

    def stop(self, timeout: float = 5.0) -> None:
        self._loop.stop(timeout)
