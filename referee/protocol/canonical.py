"""Strict JSON in, canonical JSON out (RFC 8785, JSON Canonicalization Scheme).

Everything signed or hashed by the referee is the RFC 8785 serialisation of a JSON value made only
of objects, arrays, strings, booleans, null and integers within ±(2**53 − 1). Floats are refused:
their canonical form is easy to get wrong across languages, and no move needs them.
"""

from __future__ import annotations

import json
from typing import Any

import rfc8785

MAX_SAFE_INTEGER = 2**53 - 1
#: Deepest nesting of objects and arrays accepted (real moves, logs and bundles are under 10 levels deep);
#: deeper input is refused instead of exhausting Python's recursion limit in a parser or serialiser.
MAX_DEPTH = 64


class StrictJSONError(ValueError):
    """Input that is not strict JSON; ``problems`` lists every problem found as ``{"path", "problem"}``."""

    def __init__(self, problems: list[dict[str, str]]):
        super().__init__("; ".join(f"{p['path']}: {p['problem']}" for p in problems))
        self.problems = problems


class _Float(float):
    """Marker for a parsed float, so that every offending field can be listed, not only the first."""


class _WithDuplicates(dict):  # type: ignore[type-arg]
    """An object that had duplicate keys: they are kept out of band (in ``duplicates``), never as a key,
    so no key a client sends can pose as the marker."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    duplicates = []
    for key, value in pairs:
        if key in out:
            duplicates.append(key)
        out[key] = value
    if duplicates:
        marked = _WithDuplicates(out)
        marked.duplicates = duplicates
        return marked
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


def parse_strict(data: bytes | str) -> Any:
    """Parse JSON, refusing floats, duplicate keys, NaN/Infinity and integers beyond ±(2**53 − 1).

    >>> parse_strict(b'{"a": 1, "b": [true, null, "x"]}')
    {'a': 1, 'b': [True, None, 'x']}
    >>> try:
    ...     parse_strict(b'{"a": 1, "a": 2, "b": 1.5}')
    ... except StrictJSONError as err:
    ...     print(err.problems)
    [{'path': '$', 'problem': "duplicate key 'a'"}, {'path': '$.b', 'problem': 'floats are not allowed'}]
    """
    try:
        value = json.loads(data, object_pairs_hook=_pairs, parse_float=_Float, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise StrictJSONError([{"path": "$", "problem": f"not valid JSON: {exc}"}]) from exc
    except RecursionError as exc:
        raise StrictJSONError([{"path": "$", "problem": f"nested deeper than {MAX_DEPTH} levels"}]) from exc
    problems: list[dict[str, str]] = []
    _check(value, "$", problems)
    if problems:
        raise StrictJSONError(problems)
    return value


def _check(value: Any, path: str, problems: list[dict[str, str]], depth: int = 0) -> None:
    if isinstance(value, dict | list) and depth >= MAX_DEPTH:
        problems.append({"path": path, "problem": f"nested deeper than {MAX_DEPTH} levels"})
        return
    if isinstance(value, dict):
        for key in getattr(value, "duplicates", ()):
            problems.append({"path": path, "problem": f"duplicate key {key!r}"})
        for key, item in value.items():
            _check(item, f"{path}.{key}", problems, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]", problems, depth + 1)
    elif isinstance(value, _Float):
        problems.append({"path": path, "problem": "floats are not allowed"})
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        problems.append({"path": path, "problem": "integer outside ±(2**53 - 1)"})


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only what the fast path serialises exactly as RFC 8785 does."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    if kind is list:
        return all(_plain(item) for item in value)
    return False


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 bytes of ``value``.

    Fast path: for values made of dicts with string keys, lists, strings, booleans, null and safe
    integers, ``json.dumps`` with sorted keys and no spaces produces exactly the RFC 8785 bytes — its
    string escapes (``\\" \\\\ \\b \\f \\n \\r \\t``, other controls as lowercase ``\\u00xx``) are
    ECMAScript's, and sorting by code point equals sorting by UTF-16 code unit as long as no character
    lies beyond U+FFFF. Anything else (floats, astral characters, lone surrogates) goes to the
    ``rfc8785`` package, which also raises its errors. A property test checks both agree.

    >>> canonical_bytes({"b": 1, "a": [True, None, "é"]})
    b'{"a":[true,null,"\\xc3\\xa9"],"b":1}'
    """
    if _plain(value):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if text.isascii():
            return text.encode("ascii")
        if max(text) <= "\uffff":
            try:
                return text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: let rfc8785 refuse it
                pass
    return rfc8785.dumps(value)
