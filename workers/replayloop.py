"""The replay loop of every ``referee worker``: drains the queue's ready list (``workers/queue.py``) and
brings each named game's projection up to its log with the worker's :class:`~workers.projector.Projector`.

Each game's notifications go onto one of the ready list's shards (``workers/queue.py``), and each loop drains
the shards it owns: the loops of one queue list themselves in ``referee:replayers:<queue>`` (a sorted set scored
by each loop's last pass, in ms, refreshed every second), and a shard belongs to the live loop that scores
highest for it (rendezvous hashing of the loop's name and the shard: when a loop comes or goes, only its own
shards move). A loop that stops takes itself off the set at once; one that died is taken off, and its shards
taken over, once its entry is ``LIVE_MS`` old. While the loops' views of the set differ (a second at most) a
shard may be drained by two of them: harmless, as a catch-up is idempotent. So one worker folds each of a
game's entries once; before the shards, two workers taking turns with a game each folded all of it.

One pass (:meth:`ReplayLoop.run_once`): ``BRPOP`` on the loop's lists waits for the first game id, one script
(``POP_READY``: ``RPOP … count`` on each list) takes the rest that are waiting (up to ``batch`` a list),
duplicates are dropped, and the games are caught up: those this
worker folded before together (``Projector.catch_up_many``: their reads, events, projections and
releases in four pipelines for the whole batch), the others, and any the batch could not finish, one by
one (``Projector.catch_up``: fold the new entries, write the projection, release the pending flag). So a
notification costs one or two commands for a whole batch of games, not an RQ job's bookkeeping each.

A catch-up that raises is handed to RQ as a ``replay_game`` job (retried by RQ's scheduler, kept in the
failed registry). A loop that dies mid-catch-up loses nothing: the game's pending flag stays set, goes
stale, and the reconciler pushes the game again (``workers/reconciler.py``); the catch-up is idempotent.

The loop runs in a thread of the worker process, beside RQ's own loop (retries, deliveries) in the main
thread; it has a projector of its own (a projector's cache is not shared across threads).
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
import zlib
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError
from rq import Queue

from referee.clock import now_ms
from referee.host import logs

from .looping import PassLoop
from .projector import Projector
from .queue import enqueue_replay, ready_key, ready_keys

log = logging.getLogger(__name__)

#: the sorted set of a queue's live replay loops (member: a loop's name; score: its last pass, ms)
REPLAYERS_KEY = "referee:replayers:{queue}"
#: a loop whose entry is older than this is taken for dead, and its shards go to the others
LIVE_MS = 5000
#: how often a loop refreshes its entry and reads the others' (seconds)
REFRESH_EVERY = 1.0

#: pop up to ARGV[1] ids from each list of KEYS (one round trip for all the lists a loop drains)
POP_READY = """
local taken = {}
for i = 1, #KEYS do
  local got = redis.call('RPOP', KEYS[i], ARGV[1])
  if got then
    for j = 1, #got do taken[#taken + 1] = got[j] end
  end
end
return taken
"""


def shard_owner(shard: int, loops: list[str]) -> str:
    """The loop of ``loops`` that owns ``shard`` (rendezvous hashing: the highest CRC-32 of name and shard)."""
    return max(loops, key=lambda name: (zlib.crc32(f"{name}|{shard}".encode()), name))


class ReplayLoop:
    """:meth:`run_once` for one pass, :meth:`drain` until the list is empty, :meth:`start`/:meth:`stop` for
    a thread."""

    def __init__(self, queue: Queue, projector: Projector, *, batch: int = 64,
                 on_finished: Callable[[str, str], Any] | None = None, name: str | None = None):
        self.queue = queue
        self.connection = projector.store.ready_redis  # type: ignore[attr-defined]
        self.key = ready_key(queue)
        #: every list of the queue: the unsharded one first, then shard ``n`` at index ``n + 1``
        self.all_keys = ready_keys(queue)
        #: this loop's name in the set of live loops (unique: host, process, and a random part)
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.replayers_key = REPLAYERS_KEY.format(queue=queue.name)
        #: where the live loops' set is kept: RQ's Redis (the work Redis), not the log's: a heartbeat a second
        #: is no entry, and the log Redis's disk takes only what must last (issue 50: a full disk killed it
        #: with no player writing)
        self.liveness = queue.connection
        #: the lists this loop drains: the unsharded one and the shards it owns (all until it has read the set)
        self.keys = list(self.all_keys)
        self._refreshed = float("-inf")
        self._pop = self.connection.register_script(POP_READY)
        self.projector = projector
        if on_finished is not None:
            projector.on_finished = on_finished
        self.batch = batch
        self._loop = PassLoop("referee-replay-loop", lambda: self.run_once(block=1.0))
        #: catch-ups done and handed to RQ after a failure, since the start (for logs and tests)
        self.done = 0
        self.failed = 0

    def refresh(self, force: bool = False) -> list[str]:
        """Say this loop is alive, and work out which shards it owns from the live loops (at most once a
        ``REFRESH_EVERY`` unless ``force``). Returns the live loops' names."""
        now = time.monotonic()
        if not force and now - self._refreshed < REFRESH_EVERY:
            return []
        self._refreshed = now
        ms = int(time.time() * 1000)
        pipe = self.liveness.pipeline(transaction=False)
        pipe.zadd(self.replayers_key, {self.name: ms})
        pipe.zremrangebyscore(self.replayers_key, "-inf", ms - LIVE_MS)
        pipe.zrange(self.replayers_key, 0, -1)
        live = sorted(n.decode() if isinstance(n, bytes) else n for n in pipe.execute()[2])
        if self.name not in live:  # cannot be, but then: drain everything rather than nothing
            self.keys = list(self.all_keys)
            return live
        self.keys = [self.all_keys[0]] + [key for shard, key in enumerate(self.all_keys[1:])
                                          if shard_owner(shard, live) == self.name]
        return live

    def leave(self) -> None:
        """Take this loop off the set of live loops: its shards go to the others at their next refresh."""
        try:
            self.liveness.zrem(self.replayers_key, self.name)
        except RedisError:
            log.warning("could not take %s off %s; its shards move when its entry is %d ms old",
                        self.name, self.replayers_key, LIVE_MS)

    def take(self, block: float) -> list[str]:
        """The game ids waiting in this loop's lists (the shards it owns, and the unsharded list), without
        duplicates, oldest first; waits up to ``block`` seconds for the first one. With ``block`` 0 it takes
        from every list, whoever owns it (``drain``: ``referee worker --burst``, tests)."""
        names: list[Any] = []
        if block > 0:
            self.refresh()
            lists = self.keys
            first = self.connection.brpop(lists, timeout=block)
            if first is None:
                return []
            names.append(first[1])
        else:
            lists = self.all_keys
        names += self._pop(keys=lists, args=[self.batch]) or []
        return list(dict.fromkeys(name.decode() if isinstance(name, bytes) else name for name in names))

    def replay(self, game_id: str) -> bool:
        """Catch ``game_id`` up; on failure hand it to RQ (retries, the failed registry). Returns whether it
        was caught up here."""
        with logs.bound(game_id=game_id):
            try:
                self.projector.catch_up(game_id)
                self.done += 1
                return True
            except Exception:
                self.failed += 1
                log.exception("replay of %s failed; handed to RQ for retries", game_id)
                try:
                    enqueue_replay(self.queue, game_id, f"retry-{game_id}-{now_ms()}")
                except RedisError:  # the flag stays set: the reconciler pushes the game again once it is stale
                    log.exception("could not hand %s to RQ; the reconciler will push it again", game_id)
                return False

    def run_once(self, block: float = 0.0) -> int:
        """One pass: take what waits (waiting up to ``block`` s for the first) and catch each game up.
        Returns how many games were taken."""
        games = self.take(block)
        rest = games
        if len(games) > 1:  # the games folded here before, in one batch of round trips
            try:
                rest = self.projector.catch_up_many(games)
                self.done += len(games) - len(rest)
            except Exception:  # each game on its own then (idempotent: what the batch did is not done twice)
                log.exception("batched catch-up of %d games failed; one by one", len(games))
                rest = games
        for game_id in rest:
            self.replay(game_id)
        return len(games)

    def drain(self) -> int:
        """Pass after pass until the ready list is empty (``referee worker --burst``, tests)."""
        total = 0
        while True:
            taken = self.run_once(0)
            if not taken:
                return total
            total += taken

    def start(self) -> ReplayLoop:
        try:
            self.refresh(force=True)  # in the set at once: the other loops hand over its shards within a second
        except RedisError:
            log.warning("could not join %s yet; the loop drains every list until it has", self.replayers_key)
        self._loop.start()
        return self

    def request_stop(self) -> None:
        self._loop.request_stop()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the current pass (a pass in progress finishes its games), then leave the set of live
        loops."""
        self._loop.stop(timeout)
        self.leave()
