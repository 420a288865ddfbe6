"""docs/tournaments.md's worked examples, recomputed with hashlib alone and checked against the code."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from referee.tournaments.certificate import merkle_root
from referee.tournaments.points import DEFAULT_POINTS
from referee.tournaments.seed import lot_order, tournament_seed

DOC = (Path(__file__).resolve().parents[2] / "docs" / "tournaments.md").read_text(encoding="utf-8")


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def test_the_seed_and_lot_example():
    seed = sha(b"referee/tournament/v1" + bytes(range(32)) + bytes([1]) * 32 + bytes([2]) * 32 + bytes([3]) * 32)
    assert seed == tournament_seed(bytes(range(32)), [bytes([1]) * 32, bytes([2]) * 32, bytes([3]) * 32])
    block = sha(b"referee/rng/v1" + b"\x00" + seed + (3).to_bytes(2, "big") + b"lot" + (0).to_bytes(8, "big"))
    assert f"tournament_seed = {seed.hex()}" in DOC
    assert f"= {block.hex()}" in DOC
    numbers = list(struct.unpack(">4Q", block))  # below(3) then below(2), no rejection at these sizes
    order = ["alice", "bob", "carol"]
    j = numbers[0] % 3
    order[2], order[j] = order[j], order[2]
    j = numbers[1] % 2
    order[1], order[j] = order[j], order[1]
    assert order == lot_order(seed, ["alice", "bob", "carol"])
    assert f"= [{', '.join(order)}]" in DOC


def test_the_merkle_example():
    games = [("g_r1_t1", "11"), ("g_r1_t2", "22"), ("g_r2_t1", "33")]
    leaves = [sha(b"\x00" + g.encode() + b"\x00" + bytes.fromhex(h * 32)) for g, h in games]
    root = sha(b"\x01" + sha(b"\x01" + leaves[0] + leaves[1]) + leaves[2])
    for i, leaf in enumerate(leaves):
        assert f"leaf {i} = {leaf.hex()}" in DOC
    assert f"= {root.hex()}" in DOC
    assert root.hex() == merkle_root([{"id": g, "head": h * 32} for g, h in games])


def test_the_default_points_table():
    for n, row in DEFAULT_POINTS.items():
        cells = " | ".join(str(x) for x in row)
        assert f"| {n} | {cells} |" in DOC
