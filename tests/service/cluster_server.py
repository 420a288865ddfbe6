"""The suite's real Redis Cluster (3 masters from the ``redis-server`` binary, slots assigned by
``referee.running.embedded_cluster``), started once per session on first use and stopped at exit.

Test modules import the fixtures from here (``from cluster_server import cluster_url``); a module-level
singleton keeps it to one cluster per session however many modules import them. When the cluster
cannot start (no binary, ports refused), the tests that need it are skipped with the reason."""

from __future__ import annotations

import atexit

import pytest

from referee.running.embedded_cluster import EmbeddedCluster
from referee.store.cluster import connect

_STARTED: dict[str, EmbeddedCluster | str] = {}


def session_cluster() -> EmbeddedCluster:
    """The session's cluster (started on first call); skips the calling test if it cannot start."""
    if "cluster" not in _STARTED:
        try:
            cluster = EmbeddedCluster(masters=3, durable=True).start()  # AOF on, as in production
        except Exception as exc:  # any reason the cluster cannot start skips its tests
            _STARTED["cluster"] = f"{type(exc).__name__}: {exc}"
        else:
            _STARTED["cluster"] = cluster
            atexit.register(cluster.stop)
    found = _STARTED["cluster"]
    if isinstance(found, str):
        pytest.skip(f"no local Redis Cluster could be started: {found}")
    return found


@pytest.fixture
def cluster_url():
    """The URL (``redis+cluster://``, with the password) of the session's cluster, flushed on every master."""
    cluster = session_cluster()
    client = connect(cluster.url)
    client.flushall(target_nodes=client.PRIMARIES)
    client.close()
    return cluster.url
