"""Fixtures of the verification tests: real game logs (see ``gamelogs.py``) and the referee's key."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from gamelogs import finished_log

from referee.verify.bundle import build_bundle


@pytest.fixture(scope="session")
def referee_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"tests/verification/referee").digest())


@pytest.fixture
def make_bundle(referee_key) -> Callable[..., dict[str, Any]]:
    """``make_bundle(ruleset, players, seed=7)``: the signed bundle of a finished game."""

    def make(ruleset_name: str = "fivetowers", players: int = 3, seed: int = 7) -> dict[str, Any]:
        return build_bundle(finished_log(ruleset_name, players, seed).entries, referee_key)

    return make
