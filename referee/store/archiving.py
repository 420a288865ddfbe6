"""The store's share of archiving (``referee.games_service.archiving``): a game archived to the archive
(``referee.store.archive``) leaves Redis — every key of it and its rows in every index go in one ``MULTI`` on its
master, guarded by ``WATCH`` — and the archive lists the archived games from then on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import cast

import redis
from redis.cluster import RedisCluster

from . import keys
from .connection import StoreConnection

log = logging.getLogger(__name__)


class Archiving(StoreConnection):
    """Dropping archived games from Redis (a part of :class:`referee.store.RedisStore`)."""

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
                    pipe.zrem(keys.OPEN_GAMES, game_id)
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
            pipe.zrem(keys.OPEN_GAMES, game_id)
            pipe.execute()
        return True

    def _archiving_client(self, key: str) -> tuple[redis.Redis, str]:
        """A client of one connection to the master holding ``key`` (made once per master): ``WATCH``, ``MULTI``
        and the ``WAIT`` after them must share a connection (``WAIT`` counts the writes of its own)."""
        if self.cluster:
            on_cluster = cast(RedisCluster, self.redis)
            node = on_cluster.get_node_from_key(key, replica=False)
            # the settings of the cluster's own client of that node: its connection class too (an SSLConnection
            # for rediss+cluster://; a plain Connection given the ssl_* settings would refuse them)
            pool = node.redis_connection.connection_pool if node.redis_connection is not None else None
            name = node.name
            if pool is not None:
                kwargs, connection_class = dict(pool.connection_kwargs), pool.connection_class
            else:
                kwargs = {**on_cluster.nodes_manager.connection_kwargs, "host": node.host, "port": node.port}
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
