"""Process start-up of the long-running processes (gunicorn's workers, ``referee worker``).

:func:`settle_heap`: CPython's full garbage collection walks every tracked object, and a referee process
holds ~110,000 of them before it serves anything (Flask, marshmallow, redis-py, RQ, the rules engines):
measured, one full collection of them alone takes ~45 ms, and with the caches of folds full (512 games)
~100 ms, during which a gevent worker answers nobody and a replay worker replays nothing: the tail of the
move → verdict latency (issue 13). ``gc.freeze()`` after start-up moves those objects to a permanent
generation that collections skip (they live as long as the process anyway); a full collection then walks
only what was made since.
"""

from __future__ import annotations

import gc


def settle_heap() -> int:
    """Load every ruleset (its engine and components), collect once, then freeze every object alive now out
    of the collector's passes. Returns how many objects were frozen."""
    from ..games import names, ruleset  # noqa: PLC0415

    for name in names():
        ruleset(name)
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
