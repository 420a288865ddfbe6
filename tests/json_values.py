"""Plain JSON, checked: the engines' invariant that a view, a result, a ruleset's components and options schema
hold only what JSON holds — after every move of every playout, so the check is one quick walk, and the path of
what is not plain is worked out only to name it in the failure."""

from __future__ import annotations

from typing import Any


def plain_json(value: Any) -> bool:
    """Whether ``value`` is made only of dicts with str keys, lists, str, int, bool and None (exact types)."""
    kind = type(value)
    if kind is dict:
        return all(type(key) is str and plain_json(item) for key, item in value.items())
    if kind is list:
        return all(plain_json(item) for item in value)
    return value is None or kind is str or kind is int or kind is bool


def assert_plain_json(value: Any, where: str = "$") -> None:
    """Fails, naming the first path (``$.seats[0].supply``) whose value is not plain JSON (no floats, tuples, sets,
    keys other than str), unless ``value`` is all plain."""
    if plain_json(value):
        return
    if type(value) is dict:
        for key, item in value.items():
            assert type(key) is str, f"{where}: key {key!r} is not a str"
            assert_plain_json(item, f"{where}.{key}")
    elif type(value) is list:
        for i, item in enumerate(value):
            assert_plain_json(item, f"{where}[{i}]")
    else:
        raise AssertionError(f"{where}: {type(value).__name__} {value!r} is not JSON-safe")
