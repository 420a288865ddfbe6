"""``REDIS_URL`` naming a Redis Cluster (opt-in): ``redis+cluster://[:password@]host:port/0`` (or
``rediss+cluster://`` with TLS) puts the logs, the projections, the timers, the outbox and the contacts
on a cluster through redis-py's :class:`redis.cluster.RedisCluster`; the host:port is any node (the
client learns the others from ``CLUSTER SLOTS``). Any other URL keeps the single-Redis path exactly as
before (:func:`connect` is then ``redis.Redis.from_url``).

Why it works: every key of a game shares the hash tag ``{<game id>}`` (a tournament's ``{<tournament
id>}``, the outbox ``{outbox}``), every Lua script touches the keys of one tag only, and every other
command touches one key, or several keys that redis-py splits by slot (``DEL``) or one pipeline that
redis-py sends node by node (``transaction=False``) — see ``docs/scale.md``.

RQ does not run on a cluster (its jobs and queues are many keys per command, without hash tags): with a
cluster ``REFEREE_WORK_REDIS_URL`` must name a plain Redis, which then holds only RQ's queues and the
rate-limit counters (the projections stay on the cluster, next to their game's log).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import redis
from redis.cluster import RedisCluster

SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}

#: A client of the log's Redis: a plain Redis, or a cluster when ``REDIS_URL`` names one.
Client: TypeAlias = redis.Redis | RedisCluster


def is_cluster_url(url: str | None) -> bool:
    if not url:
        return False
    return url.split("://", 1)[0].lower() in SCHEMES


def plain_url(url: str) -> str:
    """The ``redis://`` (``rediss://``) URL redis-py's cluster client takes for a ``redis+cluster://`` one."""
    scheme, rest = url.split("://", 1)
    return f"{SCHEMES.get(scheme.lower(), scheme)}://{rest}"


def connect(url: str, **kwargs: Any) -> Client:
    """A client for ``url``: a :class:`RedisCluster` for a cluster URL, else ``redis.Redis.from_url``."""
    if is_cluster_url(url):
        return RedisCluster.from_url(plain_url(url), **kwargs)
    return redis.Redis.from_url(url, **kwargs)


def is_cluster(client: Any) -> bool:
    return isinstance(client, RedisCluster)
