"""The tests' own ports (``tests/ports.py``): a block per xdist worker, below the ephemeral range, each port
bindable when handed out, and one that a server holds is passed over."""

from __future__ import annotations

import socket
from pathlib import Path

import ports


def test_ports_come_from_this_workers_block_below_the_ephemeral_range():
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    handed = [ports.free_port() for _ in range(5)]
    assert len(set(handed)) == 5
    assert all(ports._start <= port < ports._start + ports.BLOCK for port in handed)
    assert ports.FIRST + ports.BLOCKS * ports.BLOCK <= min(low, 20000)  # nor in the cluster nodes' ports


def test_a_port_a_server_listens_on_is_passed_over():
    first = ports.free_port()
    with socket.socket() as held:  # the port after it, taken by a server of someone else
        following = first + 1 if first + 1 < ports._start + ports.BLOCK else ports._start
        held.bind(("127.0.0.1", following))
        held.listen()
        assert ports.free_port() not in (following, first)
