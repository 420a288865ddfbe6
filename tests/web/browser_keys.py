"""Keys kept in a test browser as the keys page keeps them (``localStorage['referee.keys.v1']``), put there
before any page loads, so that a test need not load the keys page to hold a seat."""

from __future__ import annotations

import json
from typing import Any

from referee.protocol.signing import private_key_b64, public_key_b64

STORAGE_KEY = "referee.keys.v1"


def keys_entry(named: list[tuple[str, Any]]) -> list[dict[str, str]]:
    """The keys page's entry for ``named`` (``(name, private key)`` pairs), in that order."""
    return [{"name": name, "public": public_key_b64(key), "private": private_key_b64(key),
             "created": "2026-01-01T00:00:00Z"} for name, key in named]


def keep_keys(context: Any, named: list[tuple[str, Any]]) -> None:
    """Every page of the Playwright ``context`` starts with ``named``'s keys in its localStorage."""
    value = json.dumps(keys_entry(named))
    context.add_init_script(f"localStorage.setItem({json.dumps(STORAGE_KEY)}, {json.dumps(value)});")


def storage_state(base_url: str, named: list[tuple[str, Any]]) -> dict[str, Any]:
    """A context's ``storage_state`` whose localStorage holds ``named``'s keys for ``base_url``'s origin."""
    return {"cookies": [], "origins": [{"origin": base_url, "localStorage": [
        {"name": STORAGE_KEY, "value": json.dumps(keys_entry(named))}]}]}
