"""Ports the tests own: each pytest process (xdist worker) hands out ports from a block of its own, below the
ephemeral range and below the cluster nodes' ports (``referee.running.embedded_cluster``: 20000–30000, buses +10000).

``socket.bind(("127.0.0.1", 0))`` then ``close()`` names a port that is free *now*; the server that binds it
later (a ``referee serve``, a redis-server) may find it taken by a neighbour who was handed the same port in
between, or, worse, a neighbour's server may answer in its place (a CI run met a ``referee serve`` whose
``/house-bot`` was another test's). Ephemeral ports (every ``bind(0)`` and outgoing connection) never fall in
these blocks, and no two pytest processes of one run share a block; each port is checked bindable first. (Two
runs at once on one machine share the blocks: then that check is what keeps them apart.)
"""

from __future__ import annotations

import itertools
import os
import re

from referee.running.embedded_redis import bindable

BLOCK = 1000
FIRST = 10000  # blocks from 10000 to 19999: ten workers; an eleventh shares the first block's ports
BLOCKS = 10


def _worker_index() -> int:
    found = re.fullmatch(r"gw(\d+)", os.environ.get("PYTEST_XDIST_WORKER", ""))
    return int(found.group(1)) % BLOCKS if found else 0


_start = FIRST + _worker_index() * BLOCK
_next = itertools.cycle(range(_start, _start + BLOCK))


def free_port() -> int:
    """A free loopback port from this process's block (the next one round the block that binds)."""
    for _ in range(BLOCK):
        port = next(_next)
        if bindable(port):
            return port
    raise RuntimeError(f"no free port in {_start}–{_start + BLOCK - 1}")
