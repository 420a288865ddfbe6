"""A game's log on the log's Redis: one stream per game, appended only through the Lua scripts of
``referee.store.scripts`` (``CREATE_GAME``, ``APPEND_ENTRY``), read whole, from a position, or followed with
``XREAD BLOCK``; its tip, secret seed and logged signatures. A game whose keys are gone is read from its archived
document (:meth:`~referee.store.connection.StoreConnection.archived`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.typing import KeyT, StreamIdT

from ..clock import now_ms
from ..protocol.logchain import GENESIS
from . import codec, keys
from .base import KEEP_TIMER, Appended, Tip
from .connection import FOLLOW_BLOCK_MAX, confirmed_write
from .errors import DuplicateSubmission, GameExists, GameNotFound, StaleAppend, StoreUnavailable
from .indexes import Indexes
from .replies import entry_of, raw_entry_of, rows_of, streams_of, text_of

log = logging.getLogger(__name__)

#: on a cluster, how often ``follow_logs`` reads the logs of several games again (s): one XREAD per game each time
CLUSTER_POLL = 1.0


class GameLogs(Indexes):
    """The games' logs (a part of :class:`referee.store.RedisStore`)."""

    def create(self, game_id: str, entry: dict[str, Any], secret: bytes | None) -> Appended:
        k = keys.game_keys(game_id)
        if self.archive is not None and self.archive.has(game_id):
            raise GameExists(game_id)
        extra = self._flag_keys(game_id)
        now = now_ms()
        call_keys = [k.log, k.head, k.secret, k.pending, *extra]
        call_args = [codec.pack(entry, game_id), entry["hash"], secret.hex() if secret else "", now, game_id]
        try:
            if self.min_replicas:
                result = self._replicated(self._create, call_keys, call_args, f"game {game_id}'s creation")
            else:
                result = self._create(keys=call_keys, args=call_args)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            raise StoreUnavailable(f"Redis did not confirm the write: {exc}") from exc
        if text_of(result[0]) == "exists":
            raise GameExists(game_id)
        if self.cluster:
            self._index_pending([(game_id, now)])
        try:
            self._index(keys.GAMES_INDEX, game_id, now_ms(), nx=False)
        except RedisError as exc:  # the game exists; `referee rebuild --all` re-indexes it from the logs
            raise StoreUnavailable(f"the game was created but not indexed: {exc}") from exc
        return Appended(0, entry["hash"], True, len(extra) == 2)

    def append(self, game_id: str, entry: dict[str, Any], prev: str, signature: str | None = None, *,
               timer: int | object | None = KEEP_TIMER) -> Appended:
        return self._append_at(keys.game_keys(game_id), game_id, entry, prev, signature, game=True, timer=timer)

    def _append_at(self, k: Any, log_id: str, entry: dict[str, Any], prev: str, signature: str | None, *,
                   game: bool = False, timer: int | object | None = KEEP_TIMER) -> Appended:
        """``APPEND_ENTRY`` on a log's keys (a game's or a tournament's: the same script and answers). For a
        game on one Redis the same script indexes a raised flag, pushes the game onto the ready list and sets
        ``timer``; on a cluster these are separate commands after it."""
        extra: list[str] = []
        options: list[Any] = []
        if game and not self.cluster:
            ready = keys.ready_shard_key(self.ready_key, log_id) if self.ready_key else keys.READY_UNUSED
            extra = [keys.PENDING_INDEX, ready, keys.TIMERS]
            options = ["1" if self.ready_key else "0",
                       "" if timer is KEEP_TIMER else "-" if timer is None else int(timer)]  # type: ignore[call-overload]
        now = now_ms()
        call_keys = [k.log, k.head, k.sigs, k.pending, *extra]
        call_args = [entry["seq"], prev, codec.pack(entry, log_id), entry["hash"], signature or "", now, log_id,
                     *options]
        with confirmed_write():
            if self.min_replicas:
                result = self._replicated(self._append, call_keys, call_args,
                                          f"the entry at position {entry['seq']} of {log_id}")
            else:
                result = self._append(keys=call_keys, args=call_args)
        status = text_of(result[0])
        if status == "ok":
            flagged = bool(int(result[2]))
            if game and self.cluster:
                if flagged:
                    self._index_pending([(log_id, now)])
                if timer is not KEEP_TIMER:
                    try:  # best effort, as the web's own timer write always was: the worker sets it again
                        self.set_timer(log_id, timer)  # type: ignore[arg-type]
                    except RedisError:
                        log.warning("could not set the timer of %s; the replay worker will", log_id, exc_info=True)
            return Appended(int(result[1]), entry["hash"], flagged, flagged and bool(extra) and bool(self.ready_key))
        if status == "stale":
            raise StaleAppend(int(result[1]), text_of(result[2]) or GENESIS)
        if status == "duplicate":
            raise DuplicateSubmission(int(result[1]), int(result[2]), text_of(result[3]) or GENESIS)
        raise GameNotFound(log_id)

    def read_log(self, game_id: str, start: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        k = keys.game_keys(game_id)
        rows = rows_of(self.redis.xrange(k.log, min=keys.stream_id(max(start, 0)), max="+", count=limit))
        if not rows and (start == 0 or not self.redis.exists(k.log)):
            archived = self._archived_log(game_id)
            start = max(start, 0)
            return archived[start:None if limit is None else start + limit]
        return [entry_of(fields, game_id) for _id, fields in rows]

    def read_since(self, game_id: str, start: int) -> tuple[list[dict[str, Any]], Tip]:
        k = keys.game_keys(game_id)
        length, head, *rows = self._read_since(keys=[k.log, k.head], args=[keys.stream_id(max(start, 0))])
        if not length:
            archived = self._archived_log(game_id)
            return archived[max(start, 0):], Tip(len(archived), archived[-1]["hash"])
        return [codec.unpack(raw, game_id) for raw in rows], Tip(int(length), text_of(head) if head else GENESIS)

    def read_since_many(self, starts: list[tuple[str, int]]) -> list[tuple[list[dict[str, Any]], Tip] | Exception]:
        calls = []
        for game_id, start in starts:
            k = keys.game_keys(game_id)
            calls.append(([k.log, k.head], [keys.stream_id(max(start, 0))]))
        out: list[tuple[list[dict[str, Any]], Tip] | Exception] = []
        replies = self._evalsha_many(self.redis, self._read_since, calls)
        for (game_id, _start), reply in zip(starts, replies, strict=True):
            if isinstance(reply, Exception):
                out.append(reply)
                continue
            length, head, *rows = reply
            if length:
                out.append(([codec.unpack(raw, game_id) for raw in rows],
                            Tip(int(length), text_of(head) if head else GENESIS)))
            else:  # an archived game's log is not the replay workers' to fold again
                out.append(GameNotFound(game_id))
        return out

    # -- following logs ---------------------------------------------------------------------------------
    def follow_log(self, game_id: str, after: int, timeout: float, limit: int = 100) -> list[tuple[int, bytes]]:
        """The stored entries after position ``after`` as ``(position, stored JSON)``, waiting up to
        ``timeout`` seconds for the first one with ``XREAD BLOCK`` on the game's log (no polling): what
        ``GET /games/{id}/events`` streams. ``[]`` when nothing came in time.

        The blocking read uses a client of its own whose socket timeout outlasts the block (the
        store's main client times out after 10 s); under gevent each waiting stream holds one
        connection of that client's pool while it blocks."""
        return [(position, raw) for _game, position, raw in self.follow_logs({game_id: after}, timeout, limit)]

    def follow_logs(self, afters: dict[str, int], timeout: float, limit: int = 100) -> list[tuple[str, int, bytes]]:
        """:meth:`follow_log` over several games at once (one ``XREAD BLOCK`` on their logs):
        ``(game, position, stored JSON)`` of the entries after ``afters[game]``."""
        if self.cluster:
            return self._follow_logs_on_cluster(afters, timeout, limit)
        follower = self.follower()
        block_ms = max(1, int(min(timeout, FOLLOW_BLOCK_MAX) * 1000))
        streams: dict[KeyT, StreamIdT] = {keys.game_keys(game).log: keys.stream_id(after)
                                          for game, after in afters.items()}
        reply = streams_of(follower.xread(streams, count=limit, block=block_ms))
        out: list[tuple[str, int, bytes]] = []
        for stream, rows in reply or []:
            game = keys.game_id_of_log_key(stream)
            for stream_id_, fields in rows:
                out.append((game, keys.position_of(stream_id_), raw_entry_of(fields, game)))
        return out

    def _follow_logs_on_cluster(self, afters: dict[str, int], timeout: float,
                                limit: int) -> list[tuple[str, int, bytes]]:
        """:meth:`follow_logs` on a cluster: one ``XREAD BLOCK`` when every log is on one slot (one game);
        the logs of several games are on several slots, which one XREAD cannot span, so they are read
        without blocking (one pipeline, one round trip per node), then again every ``CLUSTER_POLL`` s until
        ``timeout`` (a poll, for multi-game streams only: the lobby's, whose other parts poll every 10 s)."""
        self.follower()
        assert self._follower is not None
        streams: dict[KeyT, StreamIdT] = {keys.game_keys(game).log: keys.stream_id(after)
                                          for game, after in afters.items()}
        deadline = time.monotonic() + min(timeout, FOLLOW_BLOCK_MAX)
        while True:
            if len(streams) == 1:
                remaining = max(0.001, deadline - time.monotonic())
                replies = [streams_of(self._follower.xread(streams, count=limit, block=max(1, int(remaining * 1000))))]
            else:
                pipe = self._follower.pipeline(transaction=False)
                for stream, start in streams.items():
                    pipe.xread({stream: start}, count=limit)
                replies = [streams_of(reply) for reply in pipe.execute()]
            out = [(game, keys.position_of(stream_id_), raw_entry_of(fields, game))
                   for reply in replies for stream, rows in (reply or []) for game in [keys.game_id_of_log_key(stream)]
                   for stream_id_, fields in rows]
            if out or len(streams) == 1 or time.monotonic() >= deadline:
                return out
            time.sleep(min(CLUSTER_POLL, max(0.0, deadline - time.monotonic())))

    def log_lengths(self, games: list[str]) -> dict[str, int]:
        """The log length of each game that exists (one pipeline)."""
        pipe = self.redis.pipeline(transaction=False)
        for game in games:
            pipe.xlen(keys.game_keys(game).log)
        return {game: int(n) for game, n in zip(games, pipe.execute(), strict=True) if n}

    # -- a game's tip, seed and signatures; the ends of several logs ------------------------------------
    def tip(self, game_id: str) -> Tip:
        k = keys.game_keys(game_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.xlen(k.log)
        pipe.get(k.head)
        length, head = pipe.execute()
        if not length:
            archived = self._archived_log(game_id)
            return Tip(len(archived), archived[-1]["hash"])
        return Tip(int(length), text_of(head) if head else GENESIS)

    def read_secret(self, game_id: str) -> bytes | None:
        raw = self.redis.get(keys.game_keys(game_id).secret)
        if not raw:
            document = self.archived(game_id)
            raw = document.get("secret") if document is not None else None
        return bytes.fromhex(text_of(raw)) if raw else None

    def find_submission(self, game_id: str, signature: str) -> int | None:
        short, whole = self.redis.hmget(keys.game_keys(game_id).sigs, [keys.sig_field(signature), signature])
        raw = short if short is not None else whole  # the whole signature: a field written before issue 28
        if raw is None:
            document = self.archived(game_id)
            sigs = (document.get("sigs") or {}) if document is not None else {}
            raw = sigs.get(keys.sig_field(signature), sigs.get(signature))
        return int(raw) if raw is not None else None

    def claim_rematch(self, game_id: str, rematch_id: str) -> str | None:
        """``CLAIM_REMATCH`` on the game's slot (its ``…:rematch`` and ``…:log``)."""
        if not keys.valid_game_id(rematch_id):
            raise ValueError(f"not a valid game id: {rematch_id!r}")
        named = self._claim_rematch(keys=[keys.rematch_key(game_id), keys.game_keys(game_id).log], args=[rematch_id])
        return text_of(named) or None

    def read_rematch(self, game_id: str) -> str | None:
        named = self.redis.get(keys.rematch_key(game_id))
        return text_of(named) if named is not None else None

    def read_created(self, game_ids: list[str]) -> list[dict[str, Any] | None]:
        """One ``XRANGE … COUNT 1`` per game in one pipeline."""
        if not game_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.xrange(keys.game_keys(game_id).log, min=keys.stream_id(0), max="+", count=1)
        found = [entry_of(rows_of(rows)[0][1], game_id) if rows else None
                 for game_id, rows in zip(game_ids, pipe.execute(), strict=True)]
        return self._archived_ends(game_ids, found, 0)

    def _archived_ends(self, game_ids: list[str], found: list[dict[str, Any] | None], index: int
                       ) -> list[dict[str, Any] | None]:
        """``found``, with the first (``index`` 0) or last (-1) entry of each archived game it lacks."""
        if self.archive is not None:
            for i, entry in enumerate(found):
                if entry is None:
                    document = self.archived(game_ids[i])
                    if document is not None and document["bundle"]["log"]:
                        found[i] = dict(document["bundle"]["log"][index])
        return found

    def read_last_entries(self, game_ids: list[str]) -> list[dict[str, Any] | None]:
        """One ``XREVRANGE … COUNT 1`` per game in one pipeline."""
        if not game_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.xrevrange(keys.game_keys(game_id).log, count=1)
        found = [entry_of(rows_of(rows)[0][1], game_id) if rows else None
                 for game_id, rows in zip(game_ids, pipe.execute(), strict=True)]
        return self._archived_ends(game_ids, found, -1)
