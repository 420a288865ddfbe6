"""The log store on Redis: one stream per game, appended only through the Lua scripts of
``referee.store.scripts``, every key built by ``referee.store.keys``.

Durability: a 2xx for a submission means "durably in the log". With the embedded Redis
(``appendonly yes``, ``appendfsync always``) Redis fsyncs the append-only file before it replies, so
an acknowledged append is on disk. :meth:`RedisStore.durability` reports what a given server does.

Two connections: ``connection`` holds what must be durable (logs, heads, secrets, signatures, pending
flags, the index of games); ``work`` holds derived data (projections and verdicts; RQ's queue lives
there too). They may be the same server. Keeping derived data on a second, non-fsync'd server matters
for speed: with ``appendfsync always`` every write waits for a disk flush in Redis's only thread, and
RQ alone issues some sixty commands per job. Losing the work server loses nothing: projections are
rebuilt from the logs and the reconciler re-queues every game whose projection lags.

On a Redis Cluster (opt-in: ``REDIS_URL=redis+cluster://…``, ``referee.store.cluster``) ``connection`` is
a :class:`redis.cluster.RedisCluster`, the projections stay on it (``work`` is the cluster too) and only
RQ's queue goes to the plain Redis of ``REFEREE_WORK_REDIS_URL`` (``queue_redis``).

Fail-over (``REFEREE_MIN_REPLICAS``, :meth:`RedisStore.require_replicas`): with N >= 1 every log write the
service acknowledges (a game's or a tournament's creation and appends) is followed, on the same connection
to the master that took it, by ``WAIT N timeout`` (``WAITAOF`` on Redis >= 7.2); fewer than N replicas in
time is :class:`StoreUnavailable` (a 503): the entry is in the master's log and may or may not survive a
fail-over (``docs/scale.md``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeAlias, cast

import redis
from redis.cluster import RedisCluster
from redis.exceptions import AskError, ClusterDownError, MovedError, NoScriptError, RedisError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.typing import KeyT, StreamIdT

from ..clock import now_ms
from ..logchain import GENESIS
from . import cluster, codec, keys, scripts
from .archive import Archive
from .base import KEEP_TIMER, Appended, LogStore, Tip, decode_projection, encode_projection
from .errors import DuplicateSubmission, GameExists, GameNotFound, StaleAppend, StoreUnavailable

log = logging.getLogger(__name__)

#: an entry's stored JSON (``referee.store.codec``; kept here too for the modules that import it from here)
stored_json = codec.stored_json


# redis-py types its replies for RESP2 and RESP3 (and for str and bytes) at once; these clients speak RESP2 with
# ``decode_responses`` off, whose replies are the shapes below (``rows_of`` and ``streams_of`` say so to mypy).

#: The fields of a stream entry (the store keeps one, ``e``: the entry's stored JSON).
Fields: TypeAlias = dict[bytes | str, bytes | str]
#: ``XRANGE``'s reply: ``(stream id, fields)`` of each entry.
Rows: TypeAlias = list[tuple[bytes, Fields]]
#: ``XREAD``'s reply: ``(stream key, rows)`` of each stream with new entries; ``None`` (or empty) when none had.
Streams: TypeAlias = list[tuple[bytes, Rows]] | None


def rows_of(reply: object) -> Rows:
    """``reply`` of ``XRANGE``/``XREVRANGE`` as what it is (no conversion)."""
    return cast(Rows, reply)


def streams_of(reply: object) -> Streams:
    """``reply`` of ``XREAD``/``XREADGROUP`` as what it is (no conversion)."""
    return cast(Streams, reply)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _merged(live: list[tuple[str, int]], archived: list[tuple[str, int]], offset: int, limit: int | None
            ) -> list[tuple[str, int]]:
    """One page of two lists of ``(id, score)``, each newest first (by score, then the greater id, as
    ``ZREVRANGE``): the index of the games in Redis and the archive's. A game in both (archived, but a crash or
    a fail-over came before its keys were deleted) is counted once. Each list need only hold its first
    ``offset + limit`` rows."""
    rows = sorted({(score, game) for game, score in live} | {(score, game) for game, score in archived},
                  reverse=True)
    seen: set[str] = set()
    out = []
    for score, game in rows:
        if game not in seen:
            seen.add(game)
            out.append((game, score))
    return out[offset:None if limit is None else offset + limit]


def _field(fields: Fields) -> bytes:
    raw = fields.get(b"e", fields.get("e"))  # every entry has "e" (APPEND_ENTRY, CREATE_GAME, EMIT_EVENT write it)
    return raw if isinstance(raw, bytes) else str(raw).encode()


def _event(fields: Fields) -> dict[str, Any]:
    """An outbox event (JSON as it is)."""
    return json.loads(_field(fields))  # type: ignore[no-any-return]


def _entry(fields: Fields, log_id: str) -> dict[str, Any]:
    """A log entry of ``log_id`` (packed or JSON: ``referee.store.codec``)."""
    return codec.unpack(_field(fields), log_id)


def _raw_entry(fields: Fields, log_id: str) -> bytes:
    """The stored JSON of a log entry of ``log_id``, byte for byte as written (``codec.unpack_json``)."""
    return codec.unpack_json(_field(fields), log_id)


#: the most connections one process opens for event streams (``follow_log``), each blocked in XREAD
FOLLOWERS_MAX = 20_000
#: the longest one XREAD BLOCK of ``follow_log`` waits (s); an event stream's heartbeat comes at least this often
FOLLOW_BLOCK_MAX = 60.0
#: on a cluster, how often ``follow_logs`` reads the logs of several games again (s): one XREAD per game each time
CLUSTER_POLL = 1.0
#: seconds a game's ``?wait`` events stream lives after the last wait's look (each look, at least every 5 s while
#: a wait lasts, renews it): a game nobody waits on keeps no stream (``WAIT_VERDICT``)
WAIT_STREAM_TTL = 30
#: the default of ``REFEREE_REPLICA_TIMEOUT_MS``: how long a write waits for its replicas (``WAIT``)
REPLICA_TIMEOUT_MS = 1000
#: replies that mean "this node no longer serves the slot" (a fail-over or a resharding): nothing was run
_ELSEWHERE = (MovedError, AskError, ClusterDownError, TryAgainError)


class NotReplicated(StoreUnavailable):
    """A write the master took whose replicas did not all confirm it in time (``REFEREE_MIN_REPLICAS``): the
    entry is in the master's log, and survives a fail-over only if a replica got it anyway."""

    def __init__(self, what: str, acked: int, wanted: int, timeout_ms: int, command: str):
        super().__init__(
            f"{what} is in the log of the Redis master that took it, but only {acked} of the {wanted} replica(s) "
            f"asked for confirmed it within {timeout_ms} ms ({command}): it may or may not survive a fail-over. "
            "Sending the same signed request again is safe: if the entry is in the log, the answer is 409 "
            "submission/duplicate (game/exists for a creation) with its position")
        self.acked = acked
        self.wanted = wanted


@contextmanager
def confirmed_write() -> Iterator[None]:
    """Around a write the caller answers 2xx for: Redis's errors become :class:`StoreUnavailable` (a 503), a lost
    connection or a time-out ("did not confirm": the write may or may not have happened) and a refusal alike."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as exc:
        raise StoreUnavailable(f"Redis did not confirm the write: {exc}") from exc
    except RedisError as exc:
        raise StoreUnavailable(f"Redis refused the write: {exc}") from exc


class RedisStore(LogStore):
    """A :class:`LogStore` on a redis-py client (``decode_responses`` off, as RQ needs)."""

    def __init__(self, connection: cluster.Client, work: cluster.Client | None = None,
                 queue: redis.Redis | None = None):
        self.redis = connection
        self.work = work if work is not None else connection
        #: the plain Redis of RQ's queue: ``work`` unless the store is on a cluster
        # (a store on a cluster is always given its plain Redis for the queue: ``of``, ``_on_cluster``)
        self.queue_redis = queue if queue is not None else cast(redis.Redis, self.work)
        #: the logs are on a Redis Cluster (``referee.store.cluster``)
        self.cluster = cluster.is_cluster(connection)
        self._append = connection.register_script(scripts.APPEND_ENTRY)
        self._create = connection.register_script(scripts.CREATE_GAME)
        self._read_since = connection.register_script(scripts.READ_SINCE)
        self._release_pending = connection.register_script(scripts.RELEASE_PENDING)
        self._mark_pending = connection.register_script(scripts.MARK_PENDING)
        self._write_projection = self.work.register_script(scripts.WRITE_PROJECTION)
        self._wait_verdict = self.work.register_script(scripts.WAIT_VERDICT)
        self._emit_event = connection.register_script(scripts.EMIT_EVENT)
        self._claim_timers = connection.register_script(scripts.CLAIM_TIMERS)
        self._follower: cluster.Client | None = None
        #: the replay workers' ready list that the append scripts push a game onto when they raise its pending
        #: flag (:meth:`use_ready_list`); ``None``: the caller notifies the workers itself
        self.ready_key: str | None = None
        #: replicas that must confirm each acknowledged log write (``REFEREE_MIN_REPLICAS``; 0: no ``WAIT``)
        self.min_replicas = 0
        #: how long a write waits for them (``REFEREE_REPLICA_TIMEOUT_MS``)
        self.replica_timeout_ms = REPLICA_TIMEOUT_MS
        #: the wait command per master (``WAIT`` or, on Redis >= 7.2, ``WAITAOF``), by the node's name
        self._wait_commands: dict[str, tuple[Any, ...]] = {}
        self._refreshed = 0.0
        #: where archived games are (``REFEREE_ARCHIVE_DIR``): the reads of a game whose keys are gone from
        #: Redis are answered from its archived document (:meth:`archived`); ``None``: no archive
        self.archive: Archive | None = None
        #: one single-connection client per master for archiving's WATCH, MULTI and WAIT (``_archiving_client``)
        self._archivers: dict[str, redis.Redis] = {}

    def use_archive(self, archive: Archive | None) -> RedisStore:
        """Answer the reads of archived games from ``archive`` (``referee.store.archive``)."""
        self.archive = archive
        return self

    def archived(self, game_id: str) -> dict[str, Any] | None:
        """The archived document of ``game_id`` (``referee.store.archive``), or ``None``: no archive, or the
        game is not in it. (Not cached: a document written by an archiving run that then did not delete the
        game's keys is rewritten by the next run.)"""
        if self.archive is None:
            return None
        return self.archive.get(game_id)

    def _archived_log(self, game_id: str) -> list[dict[str, Any]]:
        """The log of an archived game; ``GameNotFound`` when the game is not archived either."""
        document = self.archived(game_id)
        if document is None:
            raise GameNotFound(game_id)
        return list(document["bundle"]["log"])

    def require_replicas(self, count: int, timeout_ms: int = REPLICA_TIMEOUT_MS) -> RedisStore:
        """Acknowledge a log write only once ``count`` replicas have it (``WAIT count timeout_ms`` on the
        connection that wrote it; ``WAITAOF 0|1 count timeout_ms`` on Redis >= 7.2, where the replicas must
        also have fsync'd it). 0 turns it off."""
        if count < 0 or timeout_ms <= 0:
            raise ValueError("REFEREE_MIN_REPLICAS must be >= 0 and REFEREE_REPLICA_TIMEOUT_MS > 0")
        self.min_replicas, self.replica_timeout_ms = int(count), int(timeout_ms)
        return self

    def replicas_from(self, config: Any) -> RedisStore:
        """:meth:`require_replicas` from the settings (``REFEREE_MIN_REPLICAS``, ``REFEREE_REPLICA_TIMEOUT_MS``):
        every process that writes the logs — the web, and the workers' own appends (``started``, ``timeout``,
        ``forfeited``, ``auto_move``, ``adjudicated``, ``revealed``, a mailed move) and archive deletions."""
        return self.require_replicas(int(config["REFEREE_MIN_REPLICAS"]), int(config["REFEREE_REPLICA_TIMEOUT_MS"]))

    @property
    def ready_redis(self) -> cluster.Client:
        """Where the replay workers' ready lists live: the log's Redis, so that the append that raises a game's
        pending flag pushes the game in the same script (one round trip, and no notification lost between
        the two); on a cluster, whose scripts touch one slot, RQ's plain Redis."""
        return self.queue_redis if self.cluster else self.redis

    def use_ready_list(self, key: str) -> bool:
        """Have every game append that raises a pending flag push the game onto its shard of ``key``
        (:func:`keys.ready_shard_key`, on :attr:`ready_redis`) in its own script. Returns whether it will (never
        on a cluster)."""
        if self.cluster:
            return False
        self.ready_key = key
        return True

    @classmethod
    def from_url(cls, url: str, work_url: str | None = None, **kwargs: Any) -> RedisStore:
        kwargs.setdefault("socket_timeout", 10)
        kwargs.setdefault("socket_connect_timeout", 5)
        kwargs.setdefault("health_check_interval", 30)
        # gevent workers serve many requests at once (``?wait`` blocks in XREAD): redis-py's default pool of
        # 100 connections would refuse the 101st with "Too many connections"
        kwargs.setdefault("max_connections", 1000)
        if cluster.is_cluster_url(url):
            return cls._on_cluster(url, work_url, **kwargs)
        connection = redis.Redis.from_url(url, **kwargs)
        work = redis.Redis.from_url(work_url, **kwargs) if work_url and work_url != url else None
        return cls(connection, work)

    @classmethod
    def of(cls, connection: cluster.Client, work: redis.Redis) -> RedisStore:
        """A store on the log client ``connection`` and the work client ``work``: the projections on ``work``,
        or, when ``connection`` is a cluster, on the cluster (``work`` then holds only RQ's queue)."""
        if cluster.is_cluster(connection):
            return cls(connection, None, work)
        return cls(connection, work)

    @classmethod
    def _on_cluster(cls, url: str, queue_url: str | None, **kwargs: Any) -> RedisStore:
        """The logs and the projections on the cluster of ``url``; RQ's queue on the plain Redis ``queue_url``."""
        if not queue_url or queue_url == url or cluster.is_cluster_url(queue_url):
            raise ValueError("REDIS_URL names a Redis Cluster: REFEREE_WORK_REDIS_URL must name a plain "
                             "(non-cluster) Redis for RQ's queue")
        connection = cluster.connect(url, **kwargs)
        return cls(connection, None, redis.Redis.from_url(queue_url, **kwargs))

    # -- games and their logs ---------------------------------------------------------------------
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
        if _text(result[0]) == "exists":
            raise GameExists(game_id)
        if self.cluster:
            self._index_pending([(game_id, now)])
        try:
            self._index(keys.GAMES_INDEX, game_id, now_ms(), nx=False)
        except RedisError as exc:  # the game exists; `referee rebuild --all` re-indexes it from the logs
            raise StoreUnavailable(f"the game was created but not indexed: {exc}") from exc
        return Appended(0, entry["hash"], True, len(extra) == 2)

    # -- replicas (REFEREE_MIN_REPLICAS) ----------------------------------------------------------------
    def _replicated(self, script: Any, call_keys: list[str], call_args: list[Any], what: str) -> Any:
        """``script`` on ``call_keys``, then ``WAIT`` (:meth:`_wait_command`) in the same pipeline: one round trip,
        one connection — ``WAIT`` counts the replicas that have the writes of its own connection — to the master
        of the keys' slot (on a cluster, that node's own client: redis-py's cluster client would take the two
        commands on two connections). Returns the script's reply; raises :class:`NotReplicated` when it wrote
        (or found its entry already written: ``duplicate``, ``exists``) and fewer than ``min_replicas`` replicas
        confirmed in time, :class:`StoreUnavailable` when the master could not be reached or refused it.

        After a fail-over the slot's old master answers ``MOVED`` (or is gone): the cluster's map is read again
        and the call sent to the new master (a ``MOVED`` reply means nothing was run)."""
        for attempt in range(4):
            client, node = self._master_of(call_keys[0])
            wait = self._wait_command(client, node)
            pipe = client.pipeline(transaction=False)
            pipe.evalsha(script.sha, len(call_keys), *call_keys, *call_args)
            pipe.execute_command(*wait)
            try:
                result, acked = pipe.execute(raise_on_error=False)
            except (RedisConnectionError, RedisTimeoutError) as exc:
                self._refresh_cluster(force=True)
                raise StoreUnavailable(f"Redis did not confirm the write: {exc}") from exc
            if isinstance(result, NoScriptError):  # a restarted or promoted node that never saw the script
                script.sha = client.script_load(script.script)
                continue
            if isinstance(result, _ELSEWHERE):
                self._refresh_cluster(force=attempt > 0)
                time.sleep(0.05 * attempt)
                continue
            if isinstance(result, Exception):
                raise StoreUnavailable(f"Redis refused the write: {result}")
            status = _text(result[0])
            if status in {"ok", "duplicate", "exists"}:
                count = self._replicas_of(acked)
                if count < self.min_replicas:
                    raise NotReplicated(what, count, self.min_replicas, self.replica_timeout_ms, str(wait[0]))
            return result
        raise StoreUnavailable("the cluster kept moving the slot of the write (a fail-over under way?): retry")

    @staticmethod
    def _replicas_of(reply: Any) -> int:
        """The replicas that confirmed, from a ``WAIT`` reply (an integer) or a ``WAITAOF`` one
        (``[local, replicas]``)."""
        if isinstance(reply, Exception):
            log.warning("the replicas' confirmation failed: %s", reply)
            return 0
        if isinstance(reply, list | tuple):
            return int(reply[1])
        return int(reply)

    def _master_of(self, key: str) -> tuple[redis.Redis, str]:
        """The client of the master that owns ``key`` (a plain Redis: the store's own) and its name."""
        if not self.cluster:
            return cast(redis.Redis, self.redis), ""
        on_cluster = cast(RedisCluster, self.redis)
        node = on_cluster.get_node_from_key(key, replica=False)
        return on_cluster.get_redis_connection(node), node.name

    def _refresh_cluster(self, force: bool = False) -> None:
        """Read the cluster's map of slots again (after ``MOVED`` or a lost master): at most every 0.2 s unless
        ``force``. Nothing on a plain Redis (its pool reconnects by itself)."""
        if not self.cluster or (not force and time.monotonic() - self._refreshed < 0.2):
            return
        self._refreshed = time.monotonic()
        try:
            cast(RedisCluster, self.redis).nodes_manager.initialize()
        except RedisError:
            log.warning("could not read the cluster's slots again", exc_info=True)

    def _wait_command(self, client: redis.Redis, node: str) -> tuple[Any, ...]:
        """``WAIT n timeout``, or ``WAITAOF local n timeout`` where the master runs Redis >= 7.2 (``local`` 1 when
        its own append-only file is on): asked once per master (``INFO``)."""
        found = self._wait_commands.get(node)
        if found is None:
            found = ("WAIT", self.min_replicas, self.replica_timeout_ms)
            try:
                info = client.info()
                version = tuple(int(part) for part in str(info.get("redis_version", "0")).split(".")[:2])
                if version >= (7, 2):
                    local = 1 if int(info.get("aof_enabled", 0)) else 0
                    found = ("WAITAOF", local, self.min_replicas, self.replica_timeout_ms)
            except (RedisError, ValueError):
                log.warning("could not read the Redis version of %s; using WAIT", node or "the log's Redis",
                            exc_info=True)
                return found
            self._wait_commands[node] = found
        return found

    def _index(self, key: str, member: str, score: int, *, nx: bool) -> None:
        """List ``member`` in the index ``key`` (the games', the tournaments'); with ``min_replicas``, on its
        master's connection followed by ``WAIT`` (a shortfall is only logged: the log is what counts, and
        ``referee rebuild --all`` re-indexes from the logs)."""
        if not self.min_replicas:
            self.redis.zadd(key, {member: score}, nx=nx)
            return
        for attempt in range(4):
            client, node = self._master_of(key)
            pipe = client.pipeline(transaction=False)
            pipe.zadd(key, {member: score}, nx=nx)
            pipe.execute_command(*self._wait_command(client, node))
            added, acked = pipe.execute(raise_on_error=False)
            if isinstance(added, _ELSEWHERE):
                self._refresh_cluster(force=attempt > 0)
                time.sleep(0.05 * attempt)
                continue
            if isinstance(added, Exception):
                raise added
            if self._replicas_of(acked) < self.min_replicas:
                log.warning("%s is listed in %s, but not confirmed by %d replica(s)", member, key, self.min_replicas)
            return
        raise StoreUnavailable(f"the cluster kept moving the slot of {key} (a fail-over under way?)")

    def _flag_keys(self, game_id: str) -> list[str]:
        """The optional keys of a game's flag-raising script: the pending index and the game's shard of the ready
        list (plain Redis only; on a cluster they live on other slots, written by :meth:`_index_pending` and the
        dispatcher)."""
        if self.cluster:
            return []
        if self.ready_key:
            return [keys.PENDING_INDEX, keys.ready_shard_key(self.ready_key, game_id)]
        return [keys.PENDING_INDEX]

    def _index_pending(self, flags: list[tuple[str, int | None]]) -> None:
        """On a cluster, the pending index apart from the flags (best effort: the reconciler's periodic scan of
        every game covers what a failure here misses). ``None``: the flag was released."""
        try:
            self._score_members(keys.PENDING_INDEX, flags)
        except RedisError:
            log.warning("could not index the pending flags of %s", [g for g, _ in flags], exc_info=True)

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
        status = _text(result[0])
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
            raise StaleAppend(int(result[1]), _text(result[2]) or GENESIS)
        if status == "duplicate":
            raise DuplicateSubmission(int(result[1]), int(result[2]), _text(result[3]) or GENESIS)
        raise GameNotFound(log_id)

    def read_log(self, game_id: str, start: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        k = keys.game_keys(game_id)
        rows = rows_of(self.redis.xrange(k.log, min=keys.stream_id(max(start, 0)), max="+", count=limit))
        if not rows and (start == 0 or not self.redis.exists(k.log)):
            archived = self._archived_log(game_id)
            start = max(start, 0)
            return archived[start:None if limit is None else start + limit]
        return [_entry(fields, game_id) for _id, fields in rows]

    def read_since(self, game_id: str, start: int) -> tuple[list[dict[str, Any]], Tip]:
        k = keys.game_keys(game_id)
        length, head, *rows = self._read_since(keys=[k.log, k.head], args=[keys.stream_id(max(start, 0))])
        if not length:
            archived = self._archived_log(game_id)
            return archived[max(start, 0):], Tip(len(archived), archived[-1]["hash"])
        return [codec.unpack(raw, game_id) for raw in rows], Tip(int(length), _text(head) if head else GENESIS)

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
                            Tip(int(length), _text(head) if head else GENESIS)))
            else:  # an archived game's log is not the replay workers' to fold again
                out.append(GameNotFound(game_id))
        return out

    def _evalsha_many(self, client: Any, script: Any, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        """Run ``script`` once per ``(keys, args)`` of ``calls`` in one round trip: plain ``EVALSHA`` in a
        non-transactional pipeline (each call still atomic, in order; a pipeline given the Script object
        would ask ``SCRIPT EXISTS`` first: a second round trip); after a ``NOSCRIPT`` (a restarted Redis that
        forgot the script: then every call of the batch failed, none ran) the script is loaded and the batch
        sent again. A cluster client refuses ``EVALSHA`` in a pipeline: one call each there. Replies in order; a call
        that failed is its exception."""
        if not calls:
            return []
        if cluster.is_cluster(client):
            out: list[Any] = []
            for call_keys, args in calls:
                try:
                    out.append(script(keys=call_keys, args=args))
                except RedisError as exc:
                    out.append(exc)
            return out
        for attempt in range(2):
            pipe = client.pipeline(transaction=False)
            for call_keys, args in calls:
                pipe.evalsha(script.sha, len(call_keys), *call_keys, *args)
            results = pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(r, NoScriptError) for r in results):
                script.sha = client.script_load(script.script)
                continue
            return results
        raise AssertionError("unreachable")

    def follower(self) -> cluster.Client:
        """The client of the blocking reads (``XREAD BLOCK``) that follow logs and message streams: its own,
        made once, whose socket timeout outlasts the longest block (``FOLLOW_BLOCK_MAX``), with one connection
        per open stream (bounded by the web server's connections, not by redis-py's default pool size)."""
        if self._follower is None:
            if self.cluster:
                # a pool per node as large as a single Redis's follower pool
                on_cluster = cast(RedisCluster, self.redis)
                node = on_cluster.get_default_node()
                kwargs = {**on_cluster.nodes_manager.connection_kwargs, "socket_timeout": FOLLOW_BLOCK_MAX + 10.0,
                          "max_connections": FOLLOWERS_MAX}
                kwargs = {k: v for k, v in kwargs.items() if k not in {"host", "port", "connection_class", "db"}}
                self._follower = cluster.RedisCluster(host=node.host, port=node.port, **kwargs)
            else:
                pool = cast(redis.Redis, self.redis).connection_pool
                kwargs = {**pool.connection_kwargs, "socket_timeout": FOLLOW_BLOCK_MAX + 10.0}
                self._follower = redis.Redis(connection_pool=redis.ConnectionPool(
                    connection_class=pool.connection_class, max_connections=FOLLOWERS_MAX, **kwargs))
        return self._follower

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
                out.append((game, keys.position_of(stream_id_), _raw_entry(fields, game)))
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
            out = [(game, keys.position_of(stream_id_), _raw_entry(fields, game))
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

    def tip(self, game_id: str) -> Tip:
        k = keys.game_keys(game_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.xlen(k.log)
        pipe.get(k.head)
        length, head = pipe.execute()
        if not length:
            archived = self._archived_log(game_id)
            return Tip(len(archived), archived[-1]["hash"])
        return Tip(int(length), _text(head) if head else GENESIS)

    def read_secret(self, game_id: str) -> bytes | None:
        raw = self.redis.get(keys.game_keys(game_id).secret)
        if not raw:
            document = self.archived(game_id)
            raw = document.get("secret") if document is not None else None
        return bytes.fromhex(_text(raw)) if raw else None

    def find_submission(self, game_id: str, signature: str) -> int | None:
        short, whole = self.redis.hmget(keys.game_keys(game_id).sigs, [keys.sig_field(signature), signature])
        raw = short if short is not None else whole  # the whole signature: a field written before issue 28
        if raw is None:
            document = self.archived(game_id)
            sigs = (document.get("sigs") or {}) if document is not None else {}
            raw = sigs.get(keys.sig_field(signature), sigs.get(signature))
        return int(raw) if raw is not None else None

    def list_games(self, offset: int = 0, limit: int | None = None) -> list[str]:
        """The lobby's games, newest first: those of ``referee:games`` (the games in Redis) and, with an archive,
        the archived ones at the place their score gives them (:meth:`Archive.games`), as one list."""
        if self.archive is None:
            return self.live_games(offset, limit)
        wanted = None if limit is None else offset + limit
        stop = -1 if wanted is None else wanted - 1
        live = cast(list[tuple[bytes, float]], self.redis.zrevrange(keys.GAMES_INDEX, 0, stop, withscores=True))
        rows = [(_text(game), int(score)) for game, score in live]
        return [game for game, _score in _merged(rows, self.archive.games(0, wanted), offset, limit)]

    def live_games(self, offset: int = 0, limit: int | None = None) -> list[str]:
        """The games still in Redis (``referee:games``), newest first: what the replay workers, the reconciler and
        the archiver go over."""
        stop = -1 if limit is None else offset + limit - 1
        return [_text(game) for game in self.redis.zrevrange(keys.GAMES_INDEX, offset, stop)]

    def count_games(self) -> int:
        """How many games the lobby holds: in Redis and in the archive (one ``ZCARD``; the archive counts its own)."""
        return int(self.redis.zcard(keys.GAMES_INDEX)) + (self.archive.count() if self.archive is not None else 0)

    def scan_games(self) -> list[str]:
        found = {keys.game_id_of_log_key(key) for key in self.redis.scan_iter(match=keys.LOG_SCAN_PATTERN, count=500)}
        return sorted(game for game in found if keys.valid_game_id(game))

    def index_game(self, game_id: str, created_ms: int) -> None:
        """(Re-)list a game in the index (used by ``rebuild --all`` for games found by scanning)."""
        self.redis.zadd(keys.GAMES_INDEX, {game_id: created_ms}, nx=True)

    def drop_archived(self, game_id: str, when_ms: int, archive_first: Callable[[], bool] | None = None,
                      players: Iterable[str] = ()) -> bool:
        """Delete every key of ``game_id`` (``keys.archived_game_keys``) and its rows in the indexes: the lobby's
        (``referee:games``), its seated ``players``' (``player:{<key>}:games``), the pending and timer indexes.
        The archive lists it from then on (:meth:`Archive.games`, :meth:`Archive.player_games`): nothing of an
        archived game stays in Redis.

        The game's keys on the log's Redis are ``WATCH``ed first (on the connection of the master that holds
        them: all of one game's keys share its hash tag, so on a Redis Cluster too); then ``archive_first()``
        runs (it writes and checks the archived document from what it reads now; ``False``: do not delete); then
        the deletion is one ``MULTI``, which Redis refuses if any watched key changed meanwhile (a message, a
        mute, an entry): then nothing is deleted and this returns ``False`` (archive it again: the document is
        rewritten). On one Redis the index rows go in the same ``MULTI``; on a cluster (other slots) and for the
        derived keys on a separate work Redis, just after. Repeating it is harmless.

        With ``REFEREE_MIN_REPLICAS`` the ``MULTI`` is followed by ``WAIT`` on its connection; a shortfall is
        logged, not raised: a deletion a fail-over loses leaves the game whole in Redis beside its document, which
        is served the same and which the next archiving pass deletes again."""
        log_keys, work_keys = keys.archived_game_keys(game_id)
        same = self.work is self.redis
        client, node = self._archiving_client(log_keys[0])
        with client.pipeline(transaction=True) as pipe:
            pipe.watch(*log_keys)
            if archive_first is not None and not archive_first():
                pipe.unwatch()
                return False
            # ``players`` may be filled by ``archive_first`` (from the document it wrote)
            indexes = [(keys.GAMES_INDEX, game_id), (keys.PENDING_INDEX, game_id), (keys.TIMERS, game_id),
                       *((keys.player_games_key(key), game_id) for key in players)]
            pipe.multi()
            pipe.delete(*log_keys, *(work_keys if same else []))
            if not self.cluster:
                for index, member in indexes:
                    pipe.zrem(index, member)
                if same:
                    for status in keys.GAME_STATUSES:
                        pipe.srem(keys.STATUS_SET.format(status=status), game_id)
            try:
                pipe.execute()
            except redis.WatchError:
                return False
        if self.min_replicas:
            acked = self._replicas_of(client.execute_command(*self._wait_command(client, node)))
            if acked < self.min_replicas:
                log.warning("the deletion of archived game %s was confirmed by %d of %d replica(s): a fail-over now "
                            "leaves it in Redis beside its archived document; the next archiving pass deletes it",
                            game_id, acked, self.min_replicas)
        if self.cluster:
            pipe = self.redis.pipeline(transaction=False)
            for index, member in indexes:
                pipe.zrem(index, member)
            pipe.execute()
        statuses = [keys.STATUS_SET.format(status=s) for s in keys.GAME_STATUSES]
        if not same or self.cluster:
            pipe = self.work.pipeline(transaction=False)
            if not same:
                pipe.delete(*work_keys)
            for status_set in statuses:
                pipe.srem(status_set, game_id)
            pipe.execute()
        return True

    def _archiving_client(self, key: str) -> tuple[redis.Redis, str]:
        """A client of one connection to the master holding ``key`` (made once per master): ``WATCH``, ``MULTI``
        and the ``WAIT`` after them must share a connection (``WAIT`` counts the writes of its own)."""
        if self.cluster:
            on_cluster = cast(RedisCluster, self.redis)
            node = on_cluster.get_node_from_key(key, replica=False)
            name, kwargs = node.name, {**on_cluster.nodes_manager.connection_kwargs, "host": node.host,
                                       "port": node.port}
            connection_class = redis.Connection
        else:
            pool = cast(redis.Redis, self.redis).connection_pool
            name, kwargs, connection_class = "", dict(pool.connection_kwargs), pool.connection_class
        found = self._archivers.get(name)
        if found is None:
            kwargs = {k: v for k, v in kwargs.items() if k not in {"connection_class", "max_connections"}}
            found = redis.Redis(connection_pool=redis.BlockingConnectionPool(
                connection_class=connection_class, max_connections=1, timeout=30, **kwargs))
            self._archivers[name] = found
        return found, name

    def archived_games(self) -> list[str]:
        """The archived games, oldest archived first (the archive's own list)."""
        return self.archive.archived_order() if self.archive is not None else []

    # -- the games of a player's key ------------------------------------------------------------------
    def _index_rows(self, key_of: Any, rows: list[tuple[str, str, int]]) -> None:
        """One ``ZADD`` per row in one pipeline (on a cluster, redis-py's pipeline sends each to its key's node)."""
        if not rows:
            return
        pipe = self.redis.pipeline(transaction=False)
        for public_key, item, created_ms in rows:
            pipe.zadd(key_of(public_key), {item: int(created_ms)})
        pipe.execute()

    def _listed(self, key: str, offset: int, limit: int | None) -> list[tuple[str, int]]:
        if limit == 0:
            return []
        stop = -1 if limit is None else offset + limit - 1
        rows = cast(list[tuple[bytes, float]], self.redis.zrevrange(key, offset, stop, withscores=True))
        return [(_text(item), int(score)) for item, score in rows]

    def index_player_games(self, rows: list[tuple[str, str, int]]) -> None:
        self._index_rows(keys.player_games_key, rows)

    def player_games(self, public_key: str, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        """The key's games in Redis and, with an archive, its archived ones, newest first, as one list."""
        key = keys.player_games_key(public_key)
        if self.archive is None:
            return self._listed(key, offset, limit)
        wanted = None if limit is None else offset + limit
        return _merged(self._listed(key, 0, wanted), self.archive.player_games(public_key), offset, limit)

    def index_player_tournaments(self, rows: list[tuple[str, str, int]]) -> None:
        self._index_rows(keys.player_tournaments_key, rows)

    def player_tournaments(self, public_key: str, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        return self._listed(keys.player_tournaments_key(public_key), offset, limit)

    def read_projections(self, game_ids: list[str], fields: tuple[str, ...] | None = None
                         ) -> list[dict[str, Any] | None]:
        """One ``HGETALL`` (with ``fields``: ``HMGET`` of those and ``seq``) per game in one pipeline on the work
        Redis."""
        if not game_ids:
            return []
        names = None if fields is None else ["seq", *(name for name in fields if name != "seq")]
        pipe = self.work.pipeline(transaction=False)
        for game_id in game_ids:
            if names is None:
                pipe.hgetall(keys.game_keys(game_id).projection)
            else:
                pipe.hmget(keys.game_keys(game_id).projection, names)
        out: list[dict[str, Any] | None] = []
        for reply in pipe.execute():
            raw = reply if names is None else {} if reply[0] is None else {
                name: value for name, value in zip(names, reply, strict=True) if value is not None}
            out.append(decode_projection({_text(name): codec.unpack_value(value) for name, value in raw.items()})
                       if raw else None)
        for index, found in enumerate(out):  # an archived game's projection is in its archived document
            if found is None and self.archive is not None:
                document = self.archived(game_ids[index])
                if document is not None and document.get("projection") is not None:
                    projection = dict(document["projection"])
                    out[index] = projection if fields is None else {
                        name: value for name, value in projection.items() if name in {"seq", *fields}}
        return out

    def read_created(self, game_ids: list[str]) -> list[dict[str, Any] | None]:
        """One ``XRANGE … COUNT 1`` per game in one pipeline."""
        if not game_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.xrange(keys.game_keys(game_id).log, min=keys.stream_id(0), max="+", count=1)
        found = [_entry(rows_of(rows)[0][1], game_id) if rows else None
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
        found = [_entry(rows_of(rows)[0][1], game_id) if rows else None
                 for game_id, rows in zip(game_ids, pipe.execute(), strict=True)]
        return self._archived_ends(game_ids, found, -1)

    # -- replay bookkeeping -------------------------------------------------------------------------
    def read_projection(self, game_id: str, with_verdicts: bool = False) -> dict[str, Any] | None:
        k = keys.game_keys(game_id)
        if with_verdicts:
            pipe = self.work.pipeline(transaction=True)
            pipe.hgetall(k.projection)
            pipe.lrange(k.verdicts, 0, -1)
            raw, verdicts = pipe.execute()
        else:
            raw, verdicts = self.work.hgetall(k.projection), None
        if not raw:
            document = self.archived(game_id)
            if document is None or document.get("projection") is None:
                return None
            projection = dict(document["projection"])
            if with_verdicts:
                projection["verdicts"] = list(document.get("verdicts") or [])
            return projection
        projection = decode_projection({_text(name): codec.unpack_value(value) for name, value in raw.items()})
        if verdicts is not None:
            projection["verdicts"] = [json.loads(v) for v in verdicts]
        return projection

    def read_verdicts(self, game_id: str, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        end = -1 if stop is None else stop - 1
        if stop is not None and stop <= start:
            return []
        stored = [json.loads(v) for v in self.work.lrange(keys.game_keys(game_id).verdicts, start, end)]
        if not stored:
            document = self.archived(game_id)
            if document is not None:
                return list(document.get("verdicts") or [])[start:stop]
        return stored

    def _projection_call(self, game_id: str, projection: dict[str, Any], verdicts: list[dict[str, Any]],
                         from_seq: int, replace: bool = False) -> tuple[list[str], list[Any]]:
        k = keys.game_keys(game_id)
        fields = encode_projection(projection)
        args: list[Any] = ["replace" if replace else "advance", from_seq, projection["seq"], len(fields)]
        for name, value in fields.items():  # long values deflated (``codec.pack_value``): the view, the clocks
            args += [name, codec.pack_value(value)]
        args += [json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in verdicts]
        statuses = [] if self.cluster else keys.status_sets(projection.get("status"))
        if statuses:  # the status sets in the same script (``referee_games{status}``)
            args.append(game_id)
        return [k.projection, k.verdicts, k.events, *statuses], args

    def write_projection(self, game_id: str, projection: dict[str, Any], verdicts: list[dict[str, Any]],
                         from_seq: int, replace: bool = False) -> int:
        return self.write_projections([(game_id, projection, verdicts, from_seq)], replace)[0]

    def write_projections(self, writes: list[tuple[str, dict[str, Any], list[dict[str, Any]], int]],
                          replace: bool = False) -> list[int]:
        replies = self._evalsha_many(self.work, self._write_projection,
                                     [self._projection_call(*w, replace=replace) for w in writes])
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        written = [int(reply[0]) for reply in replies]
        if self.cluster:  # the status sets are on other slots: one pipeline after the scripts
            self._set_statuses([(w[0], w[1].get("status"))
                                for w, done in zip(writes, written, strict=True) if done == 1])
        return written

    def _set_statuses(self, statuses: list[tuple[str, Any]]) -> None:
        """Put each game in the set of its status and take it out of the others (``None``: out of all)."""
        pipe = self.work.pipeline(transaction=False)
        for game_id, status in statuses:
            sets = keys.status_sets(status) or [keys.STATUS_SET.format(status=s) for s in keys.GAME_STATUSES]
            if status in keys.GAME_STATUSES:
                pipe.sadd(sets[0], game_id)
                sets = sets[1:]
            for other in sets:
                pipe.srem(other, game_id)
        if statuses:
            pipe.execute()

    def games_by_status(self) -> dict[str, int]:
        """How many games in Redis have each status (one ``SCARD`` per status, and ``ZCARD`` of the lobby's index:
        ``new`` counts the games not projected yet), and how many are archived: ``referee_games{status}``."""
        pipe = self.work.pipeline(transaction=False)
        for status in keys.GAME_STATUSES:
            pipe.scard(keys.STATUS_SET.format(status=status))
        counts = [int(n) for n in pipe.execute()]
        out = dict(zip(keys.GAME_STATUSES, counts, strict=True))
        out["new"] = max(0, int(self.redis.zcard(keys.GAMES_INDEX)) - sum(counts))
        out["archived"] = self.archive.count() if self.archive is not None else 0
        return out

    def wait_for_verdict(self, game_id: str, position: int, timeout: float) -> dict[str, Any] | None:
        k = keys.game_keys(game_id)
        deadline = time.monotonic() + timeout
        while True:
            # The verdict, or the events stream's tail, in one script (WAIT_VERDICT): a projection stored after
            # it XADDs to the stream it made sure of (WRITE_PROJECTION adds to an existing stream only), so
            # XREAD wakes up for it.
            found, value = self._wait_verdict(keys=[k.events, k.verdicts], args=[position, WAIT_STREAM_TTL])
            if int(found):
                return json.loads(value)  # type: ignore[no-any-return]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            last_id = value
            # at most 5 s per call: well under the connection's socket timeout and the stream's lifetime
            self.work.xread({k.events: last_id}, count=1, block=max(1, int(min(remaining, 5.0) * 1000)))

    def mark_pending(self, game_id: str, now_ms_: int) -> None:
        index = [] if self.cluster else [keys.PENDING_INDEX]
        self._mark_pending(keys=[keys.game_keys(game_id).pending, *index], args=[now_ms_, game_id])
        if self.cluster:
            self._index_pending([(game_id, now_ms_)])

    def release_pending(self, game_id: str, seq: int) -> bool:
        return self.release_many([(game_id, seq)])[0]

    def release_many(self, seqs: list[tuple[str, int]]) -> list[bool]:
        now = now_ms()
        index = [] if self.cluster else [keys.PENDING_INDEX]
        calls = []
        for game_id, seq in seqs:
            k = keys.game_keys(game_id)
            calls.append(([k.log, k.pending, *index], [seq, now, game_id]))
        replies = self._evalsha_many(self.redis, self._release_pending, calls)
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        released = [bool(int(reply)) for reply in replies]
        if self.cluster and seqs:
            self._index_pending([(game_id, None if done else now) for (game_id, _), done in zip(seqs, released,
                                                                                               strict=True)])
        return released

    def stale_pending(self, before_ms: int, limit: int = 10_000) -> list[str]:
        return [_text(game) for game in self.redis.zrangebyscore(keys.PENDING_INDEX, "-inf", before_ms, start=0,
                                                                  num=limit)]

    def work_intact(self) -> bool:
        return bool(self.work.exists(keys.WORK_MARKER))

    def mark_work_intact(self) -> None:
        self.work.set(keys.WORK_MARKER, now_ms())

    def pending_since(self, game_id: str) -> int | None:
        raw = self.redis.get(keys.game_keys(game_id).pending)
        return int(raw) if raw is not None else None

    def lagging_games(self, games: list[str] | None = None) -> list[tuple[str, int, int, int | None]]:
        games = self.live_games() if games is None else games
        out: list[tuple[str, int, int, int | None]] = []
        for chunk_start in range(0, len(games), 500):
            chunk = games[chunk_start:chunk_start + 500]
            logs, work = self.redis.pipeline(transaction=False), self.work.pipeline(transaction=False)
            for game in chunk:
                k = keys.game_keys(game)
                logs.xlen(k.log)
                logs.get(k.pending)
                work.hget(k.projection, "seq")
            log_replies, seqs = logs.execute(), work.execute()
            for i, game in enumerate(chunk):
                length, pending = log_replies[2 * i: 2 * i + 2]
                seq = seqs[i]
                length, seq = int(length or 0), int(seq or 0)
                if length > seq:
                    out.append((game, length, seq, int(pending) if pending is not None else None))
        return out

    # -- time control: timers and the outbox ------------------------------------------------------------
    def set_timer(self, game_id: str, when_ms: int | None) -> None:
        if when_ms is None:
            self.redis.zrem(keys.TIMERS, game_id)
        else:
            self.redis.zadd(keys.TIMERS, {game_id: when_ms})

    def set_timers(self, timers: list[tuple[str, int | None]]) -> None:
        self._score_members(keys.TIMERS, timers)

    def _score_members(self, key: str, scores: list[tuple[str, int | None]]) -> None:
        """Set each member's score in the sorted set ``key`` (``None``: remove it), in one round trip."""
        if not scores:
            return
        pipe = self.redis.pipeline(transaction=False)
        for member, score in scores:
            if score is None:
                pipe.zrem(key, member)
            else:
                pipe.zadd(key, {member: score})
        pipe.execute()

    def due_timers(self, now_ms_: int, limit: int = 100) -> list[tuple[str, int]]:
        rows = cast(list[tuple[bytes, float]],
                    self.redis.zrangebyscore(keys.TIMERS, "-inf", now_ms_, start=0, num=limit, withscores=True))
        return [(_text(game), int(score)) for game, score in rows]

    def claim_timers(self, now_ms_: int, limit: int = 100, lease_ms: int = 30_000) -> list[tuple[str, int]]:
        rows = self._claim_timers(keys=[keys.TIMERS], args=[now_ms_, limit, now_ms_ + lease_ms])
        return [(_text(rows[i]), int(float(rows[i + 1]))) for i in range(0, len(rows), 2)]

    def emit_events(self, events: list[dict[str, Any]]) -> int:
        # One round trip for the whole batch (issue 13): a catch-up of N entries emits about N events, and on
        # the durable Redis (appendfsync always) each separate call waited for its own fsync.
        if not events:
            return 0
        replies = self._evalsha_many(self.redis, self._emit_event, [
            ([keys.OUTBOX, keys.OUTBOX_SEEN.format(event=event["id"])],
             [json.dumps(event, separators=(",", ":"), ensure_ascii=False), keys.OUTBOX_SEEN_TTL, keys.OUTBOX_MAXLEN])
            for event in events])
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return sum(int(added) for added in replies)

    def read_outbox(self, count: int = 1000) -> list[dict[str, Any]]:
        return [_event(fields) for _id, fields in rows_of(self.redis.xrange(keys.OUTBOX, count=count))]

    # -- tournaments ------------------------------------------------------------------------------------
    def create_tournament(self, tournament_id: str, entry: dict[str, Any], secret: bytes) -> Appended:
        k = keys.tournament_keys(tournament_id)
        call_keys = [k.log, k.head, k.secret, k.pending]
        call_args = [codec.pack(entry, tournament_id), entry["hash"], secret.hex(), now_ms()]
        try:
            if self.min_replicas:
                result = self._replicated(self._create, call_keys, call_args, f"tournament {tournament_id}'s creation")
            else:
                result = self._create(keys=call_keys, args=call_args)
            if _text(result[0]) == "exists":
                raise GameExists(tournament_id)
            self._index(keys.TOURNAMENTS_INDEX, tournament_id, now_ms(), nx=True)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            raise StoreUnavailable(f"Redis did not confirm the write: {exc}") from exc
        return Appended(0, entry["hash"], True)

    def append_tournament(self, tournament_id: str, entry: dict[str, Any], prev: str,
                          signature: str | None = None) -> Appended:
        return self._append_at(keys.tournament_keys(tournament_id), tournament_id, entry, prev, signature)

    def read_tournament(self, tournament_id: str, start: int = 0) -> tuple[list[dict[str, Any]], Tip]:
        k = keys.tournament_keys(tournament_id)
        length, head, *rows = self._read_since(keys=[k.log, k.head], args=[keys.stream_id(max(start, 0))])
        if not length:
            raise GameNotFound(tournament_id)
        return [codec.unpack(raw, tournament_id) for raw in rows], Tip(int(length), _text(head) if head else GENESIS)

    def tournament_secret(self, tournament_id: str) -> bytes | None:
        raw = self.redis.get(keys.tournament_keys(tournament_id).secret)
        return bytes.fromhex(_text(raw)) if raw else None

    def list_tournaments(self) -> list[str]:
        return [_text(t) for t in self.redis.zrange(keys.TOURNAMENTS_INDEX, 0, -1)]

    def newest_tournaments(self, offset: int = 0, limit: int | None = None) -> list[str]:
        stop = -1 if limit is None else offset + limit - 1
        return [_text(t) for t in self.redis.zrevrange(keys.TOURNAMENTS_INDEX, offset, stop)]

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping()) and (self.work is self.redis or bool(self.work.ping()))
        except RedisError:
            return False

    def durability(self) -> dict[str, str]:
        """The server's persistence settings (``appendonly``, ``appendfsync``), for the health report; on a
        cluster, those of a master that is not ``appendonly yes``, ``appendfsync always`` if there is one (the
        log is only as durable as its least durable master), else the masters' common settings."""
        wanted = {"appendonly", "appendfsync"}
        try:
            if self.cluster:
                on_cluster = cast(RedisCluster, self.redis)
                per_node = cast(dict[Any, dict[Any, Any]],
                                on_cluster.config_get("append*", target_nodes=on_cluster.PRIMARIES))
                found = [{_text(name): _text(value) for name, value in conf.items() if _text(name) in wanted}
                         for _node, conf in sorted(per_node.items())]
                weak = [conf for conf in found if conf != {"appendonly": "yes", "appendfsync": "always"}]
                return (weak or found or [{}])[0]
            conf = self.redis.config_get("append*")
        except RedisError:
            return {}
        return {_text(name): _text(value) for name, value in conf.items() if _text(name) in wanted}

    def close(self) -> None:
        if self._follower is not None:
            self._follower.close()
            if not self.cluster:
                cast(redis.Redis, self._follower).connection_pool.disconnect()
        self.redis.close()
        if self.work is not self.redis:
            self.work.close()
        if self.queue_redis is not self.work:
            self.queue_redis.close()
