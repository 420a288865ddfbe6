"""Verifiable randomness shared by every ruleset (CONTRACT section 4).

Everything random in a game — the initial deck order, reshuffles, random start floors, random
objectives — is drawn from :class:`Rng`, a deterministic generator keyed by the 32-byte game seed and
a *purpose label*. Each purpose gets its own independent stream, so the order in which an engine
draws for different purposes never changes the result of another.

Byte layout (all integers big-endian, ``‖`` is concatenation):

* game seed (service only, commit–reveal)::

      game_seed = SHA-256("referee/seed/v1" ‖ server_seed(32) ‖ game_id(UTF-8)
                          ‖ entropy_seat_0(32) ‖ … ‖ entropy_seat_n-1(32))

* block ``i`` (``i`` = 0, 1, 2, …) of the stream for ``label``::

      block_i = SHA-256("referee/rng/v1" ‖ 0x00 ‖ game_seed(32)
                        ‖ len(label)(2 bytes) ‖ label(UTF-8) ‖ i(8 bytes))

  The stream is block_0 ‖ block_1 ‖ …, read 8 bytes at a time as unsigned 64-bit integers
  (4 integers per block).

* ``below(n)`` (uniform integer in ``[0, n)``): if ``n == 1`` it returns 0 and reads nothing.
  Otherwise ``limit = 2**64 - (2**64 mod n)``; read integers ``x`` until ``x < limit``; return
  ``x mod n`` (rejection sampling: no modulo bias).

* ``shuffle(items)``: Fisher–Yates from the end: for ``i`` from ``len-1`` down to ``1``:
  ``j = below(i + 1)``, swap positions ``i`` and ``j``.

Labels used by the engines: ``"deck"`` (initial deck), ``"reshuffle/1"``, ``"reshuffle/2"``, …
(the k-th reshuffle), ``"start-floors"``, ``"objectives"``. ``docs/randomness.md`` has a worked
example that can be recomputed by hand with ``hashlib``.

>>> rng = Rng(bytes(32), "deck")
>>> rng.shuffle(range(5)) == Rng(bytes(32), "deck").shuffle(range(5))
True
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

SEED_DOMAIN = b"referee/seed/v1"
RNG_DOMAIN = b"referee/rng/v1"
RECORDED_DOMAIN = b"referee/recorded-seed/v1"
_TWO64 = 1 << 64


def derive_game_seed(server_seed: bytes, game_id: str, entropies: Sequence[bytes]) -> bytes:
    """The game seed of CONTRACT section 4 from the revealed server seed and every seat's entropy."""
    if len(server_seed) != 32:
        raise ValueError("server seed must be 32 bytes")
    for i, entropy in enumerate(entropies):
        if len(entropy) != 32:
            raise ValueError(f"entropy of seat {i} must be 32 bytes")
    return hashlib.sha256(SEED_DOMAIN + server_seed + game_id.encode("utf-8") + b"".join(entropies)).digest()


def recorded_game_seed(game_id: str) -> bytes:
    """Seed of a recorded-mode game (a given deck) for any reshuffle its options do not record.

    Public by design: a recorded game replays a physical game and has no secret to protect.
    """
    return hashlib.sha256(RECORDED_DOMAIN + game_id.encode("utf-8")).digest()


class Rng:
    """Deterministic random stream for one purpose of one game (see the module docstring)."""

    __slots__ = ("_buffer", "_counter", "_prefix_hash")

    def __init__(self, seed: bytes, label: str):
        if len(seed) != 32:
            raise ValueError("seed must be 32 bytes")
        encoded = label.encode("utf-8")
        if len(encoded) > 0xFFFF:
            raise ValueError("label too long")
        self._prefix_hash = hashlib.sha256(RNG_DOMAIN + b"\x00" + seed + len(encoded).to_bytes(2, "big") + encoded)
        self._counter = 0
        self._buffer: list[int] = []

    def _next_u64(self) -> int:
        if not self._buffer:
            block = self._prefix_hash.copy()
            block.update(self._counter.to_bytes(8, "big"))
            self._counter += 1
            # reversed, so that pop() yields the block's four integers in order
            self._buffer = list(reversed(struct.unpack(">4Q", block.digest())))
        return self._buffer.pop()

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n < 1:
            raise ValueError("below(n) needs n >= 1")
        if n == 1:
            return 0
        limit = _TWO64 - (_TWO64 % n)
        while True:
            x = self._next_u64()
            if x < limit:
                return x % n

    def shuffle(self, items: Iterable[T]) -> list[T]:
        """A new list with ``items`` in a uniformly random order (Fisher–Yates, from the end)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def choice(self, items: Sequence[T]) -> T:
        """One element of ``items``, uniformly: ``items[below(len(items))]``."""
        return items[self.below(len(items))]
