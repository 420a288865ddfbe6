"""The tournament seed (CONTRACT section 10) and the random streams drawn from it.

::

    tournament_seed = SHA-256("referee/tournament/v1" ‖ server_seed(32) ‖ entropy_1(32) ‖ … ‖ entropy_n(32))

with the entropies in **join order** (the order of the ``joined`` entries in the log, not the order of
the players in ``created``). The referee commits to ``server_seed`` in ``created`` (``commitment`` =
hex SHA-256 of it) and reveals it in ``revealed``; until then only the referee can recompute pairings
that draw lots, afterwards anyone can.

Every random choice of a tournament is a stream of :class:`referee.games.randomness.Rng` keyed by the
tournament seed and a label (the same generator as the games', ``docs/randomness.md``). Labels:

* ``lot`` — the lot order of the players (tie-break ``lot``, the standings before any game);
* ``round-robin/order`` — the player order of a round robin;
* ``round-robin/search`` — the proposals of the multi-player round-robin search;
* ``series`` — the seat order of a single-table series;
* ``seats/<round>/<table>`` — the seat order at a table (round and table 1-based).

>>> seed = tournament_seed(bytes(32), [bytes([1]) * 32, bytes([2]) * 32])
>>> len(seed), seed == tournament_seed(bytes(32), [bytes([2]) * 32, bytes([1]) * 32])
(32, False)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ..games.randomness import Rng

TOURNAMENT_DOMAIN = b"referee/tournament/v1"


def tournament_seed(server_seed: bytes, entropies: Sequence[bytes]) -> bytes:
    """The seed every lot of a tournament is drawn from (entropies in join order)."""
    if len(server_seed) != 32:
        raise ValueError("server seed must be 32 bytes")
    for i, entropy in enumerate(entropies):
        if len(entropy) != 32:
            raise ValueError(f"entropy of join {i + 1} must be 32 bytes")
    return hashlib.sha256(TOURNAMENT_DOMAIN + server_seed + b"".join(entropies)).digest()


def commitment(server_seed: bytes) -> str:
    """Hex SHA-256 of the server seed, written in ``created``."""
    return hashlib.sha256(server_seed).hexdigest()


def stream(seed: bytes, label: str) -> Rng:
    """The random stream for ``label`` (see the module docstring for the labels in use)."""
    return Rng(seed, label)


def lot_order(seed: bytes, players: Sequence[str]) -> list[str]:
    """The players' keys in lot order: ``players`` (in ``created`` order) shuffled by the ``lot`` stream.

    The first key has lot number 1 (wins a lot against everyone else).
    """
    return stream(seed, "lot").shuffle(players)
