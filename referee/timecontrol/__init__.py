"""Correspondence time control (CONTRACT section 8): a pure core beside ``referee/replay/``.

* :mod:`.spec` — the ``options.time_control`` object: validation and defaults (``resolve``).
* :mod:`.times` — RFC 3339 ``at`` strings to and from epoch milliseconds.
* :mod:`.clocks` — the per-seat clocks folded from the log's entries (deadline, bank, vacation).

Nothing here reads a clock: every time comes from the ``at`` of a log entry, or from the ``now`` a
caller passes in (the service and the scheduler pass the server time; a verifier never needs one).
"""

from .clocks import Clocks
from .spec import TimeControlError, engine_options, resolve
from .times import format_ms, parse_ms

__all__ = ["Clocks", "TimeControlError", "engine_options", "format_ms", "parse_ms", "resolve"]
