"""Log times: RFC 3339 UTC with milliseconds and ``Z`` (``2026-11-21T10:00:00.123Z``) <-> epoch ms.

>>> parse_ms("2026-11-21T10:00:00.123Z")
1795255200123
>>> format_ms(1795255200123)
'2026-11-21T10:00:00.123Z'
>>> parse_ms("2026-11-21T10:00:00Z")
1795255200000
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_AT = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_ms(value: object) -> int:
    """Epoch milliseconds of an ``at`` string; ``ValueError`` unless it is RFC 3339 UTC with ``Z``."""
    if not isinstance(value, str):
        raise ValueError(f"a time must be an RFC 3339 string, not {value!r}")
    match = _AT.fullmatch(value)
    if match is None:
        raise ValueError(f"{value!r} is not an RFC 3339 UTC time like 2026-11-21T10:00:00.123Z")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction = (match.group(7) or "0").ljust(6, "0")
    stamp = datetime(year, month, day, hour, minute, second, int(fraction), tzinfo=UTC)
    delta = stamp - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def format_ms(ms: int) -> str:
    """The ``at`` string of epoch milliseconds ``ms``."""
    stamp = datetime.fromtimestamp(ms / 1000, UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
