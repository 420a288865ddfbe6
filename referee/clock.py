"""Server time: the one place the referee reads the clock.

Everything the service writes into a log (``at`` of every entry) comes from :func:`now`, so a test
freezes it with ``freezegun`` and sees exact timestamps.

>>> from freezegun import freeze_time
>>> with freeze_time("2026-11-21T10:00:00.123456Z"):
...     now(), now_ms()
('2026-11-21T10:00:00.123Z', 1795255200123)
"""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> str:
    """Current server time as RFC 3339 UTC with milliseconds and ``Z``: ``2026-11-21T10:00:00.123Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_ms() -> int:
    """Current server time in milliseconds since the epoch (for bookkeeping, never written into a log)."""
    return int(datetime.now(UTC).timestamp() * 1000)
