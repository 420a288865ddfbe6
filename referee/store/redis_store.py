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

One part a module, each a mixin over the connection layer (``referee.store.connection``: the clients, the
scripts, the routing to a cluster's masters, ``WAIT``): ``logs`` (a game's log: create, append, read, follow,
tip), ``indexes`` (the lobby's and the players' indexes), ``projections`` (projections, verdicts, status sets),
``pending`` (the replay workers' pending flags), ``timers``, ``outbox``, ``tournaments`` and ``archiving``
(dropping an archived game's keys). Key names are all in ``referee.store.keys``, Lua in ``referee.store.scripts``.
"""

from __future__ import annotations

from . import codec
from .archiving import Archiving
from .base import LogStore
from .connection import FOLLOW_BLOCK_MAX, REPLICA_TIMEOUT_MS, NotReplicated, StoreConnection, confirmed_write
from .indexes import Indexes
from .logs import GameLogs
from .outbox import Outbox
from .pending import PendingFlags
from .projections import WAIT_STREAM_TTL, Projections
from .replies import rows_of, streams_of
from .timers import Timers
from .tournaments import Tournaments

__all__ = ["FOLLOW_BLOCK_MAX", "REPLICA_TIMEOUT_MS", "WAIT_STREAM_TTL", "NotReplicated", "RedisStore",
           "confirmed_write", "rows_of", "stored_json", "streams_of"]

#: an entry's stored JSON (``referee.store.codec``; kept here too for the modules that import it from here)
stored_json = codec.stored_json


class RedisStore(Tournaments, GameLogs, PendingFlags, Timers, Indexes, Projections, Outbox, Archiving, StoreConnection,
                 LogStore):
    """A :class:`LogStore` on a redis-py client (``decode_responses`` off, as RQ needs): the parts above over one
    connection layer."""
