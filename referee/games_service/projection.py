"""What a fold looks like from outside: the projection stored by the replay worker, and served by reads."""

from __future__ import annotations

from typing import Any

from ..clock import now
from ..replay import LogReplayer


def projection_of(replayer: LogReplayer) -> dict[str, Any]:
    """The projection fields (``referee.store.PROJECTION_FIELDS``) of a fold."""
    game = replayer.game
    over = game is not None and game.is_over()
    return {
        "seq": replayer.seq,
        "head": replayer.head,
        "status": replayer.status,
        "to_move": replayer.to_move(),
        "view": game.view() if game is not None else None,
        "result": game.result() if over else None,
        "version_mismatch": replayer.version_mismatch,
        "blocked": replayer.blocked,
        "accepted": sorted(replayer.entropies),
        "last_verdict": replayer.verdicts[-1].to_dict() if replayer.verdicts else None,
        "updated_at": now(),
    }
