"""The connection layer of :class:`referee.store.RedisStore`: the clients and scripts every part of the store works
through, and how a write reaches the master that holds its key and is confirmed there.

:class:`StoreConnection` holds the log's Redis (``redis``: what must be durable), the work Redis (``work``:
derived data), RQ's plain Redis (``queue_redis``), the Lua scripts of ``referee.store.scripts`` registered on them,
the client of the blocking reads (:meth:`~StoreConnection.follower`) and the archive that the reads of a game whose
keys are gone from Redis fall back to (:meth:`~StoreConnection.archived`). On a Redis Cluster it routes a key to
its master (:meth:`~StoreConnection._master_of`); with ``REFEREE_MIN_REPLICAS`` it has a log write confirmed by
replicas on that master's connection (:meth:`~StoreConnection._replicated`, ``WAIT``).

The store's parts are mixins over it, one module each (``logs``, ``indexes``, ``projections``, ``pending``,
``timers``, ``outbox``, ``tournaments``, ``archiving``); ``referee.store.redis_store`` puts them together.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Self, cast

import redis
from redis.cluster import RedisCluster
from redis.exceptions import AskError, ClusterDownError, MovedError, NoScriptError, RedisError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from . import cluster, scripts
from .archive import Archive
from .base import LogStore
from .errors import GameNotFound, StoreUnavailable
from .replies import text_of

log = logging.getLogger(__name__)

#: the most connections one process opens for event streams (``follow_log``), each blocked in XREAD
FOLLOWERS_MAX = 20_000
#: the longest one XREAD BLOCK of ``follow_log`` waits (s); an event stream's heartbeat comes at least this often
FOLLOW_BLOCK_MAX = 60.0
#: the default of ``REFEREE_REPLICA_TIMEOUT_MS``: how long a write waits for its replicas (``WAIT``)
REPLICA_TIMEOUT_MS = 1000
#: replies that mean "this node no longer serves the slot" (a fail-over or a resharding): nothing was run
ELSEWHERE = (MovedError, AskError, ClusterDownError, TryAgainError)


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


class StoreConnection(LogStore):
    """The clients, the scripts and the routing that the parts of :class:`referee.store.RedisStore` share (a
    redis-py client with ``decode_responses`` off, as RQ needs). Abstract: each part implements its share of
    :class:`LogStore`."""

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
        self._claim_rematch = connection.register_script(scripts.CLAIM_REMATCH)
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

    def use_archive(self, archive: Archive | None) -> Self:
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

    def require_replicas(self, count: int, timeout_ms: int = REPLICA_TIMEOUT_MS) -> Self:
        """Acknowledge a log write only once ``count`` replicas have it (``WAIT count timeout_ms`` on the
        connection that wrote it; ``WAITAOF 0|1 count timeout_ms`` on Redis >= 7.2, where the replicas must
        also have fsync'd it). 0 turns it off."""
        if count < 0 or timeout_ms <= 0:
            raise ValueError("REFEREE_MIN_REPLICAS must be >= 0 and REFEREE_REPLICA_TIMEOUT_MS > 0")
        self.min_replicas, self.replica_timeout_ms = int(count), int(timeout_ms)
        return self

    def replicas_from(self, config: Any) -> Self:
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
    def from_url(cls, url: str, work_url: str | None = None, **kwargs: Any) -> Self:
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
    def of(cls, connection: cluster.Client, work: redis.Redis) -> Self:
        """A store on the log client ``connection`` and the work client ``work``: the projections on ``work``,
        or, when ``connection`` is a cluster, on the cluster (``work`` then holds only RQ's queue)."""
        if cluster.is_cluster(connection):
            return cls(connection, None, work)
        return cls(connection, work)

    @classmethod
    def _on_cluster(cls, url: str, queue_url: str | None, **kwargs: Any) -> Self:
        """The logs and the projections on the cluster of ``url``; RQ's queue on the plain Redis ``queue_url``."""
        if not queue_url or queue_url == url or cluster.is_cluster_url(queue_url):
            raise ValueError("REDIS_URL names a Redis Cluster: REFEREE_WORK_REDIS_URL must name a plain "
                             "(non-cluster) Redis for RQ's queue")
        connection = cluster.connect(url, **kwargs)
        return cls(connection, None, redis.Redis.from_url(queue_url, **kwargs))

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
            if isinstance(result, ELSEWHERE):
                self._refresh_cluster(force=attempt > 0)
                time.sleep(0.05 * attempt)
                continue
            if isinstance(result, Exception):
                raise StoreUnavailable(f"Redis refused the write: {result}")
            status = text_of(result[0])
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

    # -- round trips and blocking reads -----------------------------------------------------------------
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
                found = [{text_of(name): text_of(value) for name, value in conf.items() if text_of(name) in wanted}
                         for _node, conf in sorted(per_node.items())]
                weak = [conf for conf in found if conf != {"appendonly": "yes", "appendfsync": "always"}]
                return (weak or found or [{}])[0]
            conf = self.redis.config_get("append*")
        except RedisError:
            return {}
        return {text_of(name): text_of(value) for name, value in conf.items() if text_of(name) in wanted}

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
