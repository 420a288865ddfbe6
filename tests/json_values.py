"""A quick check that a value is plain JSON, for the engines' invariants after every move of every playout."""

from __future__ import annotations

from typing import Any


def plain_json(value: Any) -> bool:
    """Whether ``value`` is made only of dicts with str keys, lists, str, int, bool and None (exact types): the
    quick check, without the paths that a failure message names (the helpers walk again for those)."""
    kind = type(value)
    if kind is dict:
        return all(type(key) is str and plain_json(item) for key, item in value.items())
    if kind is list:
        return all(plain_json(item) for item in value)
    return value is None or kind is str or kind is int or kind is bool
