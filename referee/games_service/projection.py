"""What a fold looks like from outside: the projection stored by the replay worker, and served by reads."""

from __future__ import annotations

from typing import Any

from ..clock import now
from ..replay import WAITING, LogReplayer, needed_answers, seat_kind
from ..store.base import OPEN_LISTING
from ..timecontrol import Clocks, parse_ms


def clocks_of(replayer: LogReplayer) -> dict[str, Any] | None:
    """What a reader needs to show the seats' clocks at any later time (:func:`clock_view`), or None for a
    game without a clock."""
    clocks = replayer.clocks
    if clocks is None or not clocks.running:
        return None
    return {"spec": clocks.spec, "seat": clocks.seat if replayer.status == "active" else None,
            "since": clocks.since, "allowance": clocks.allowance, "bank": clocks.bank,
            "vacation_left": clocks.vacation_left, "vacations": clocks.vacations,
            "forfeited_at": clocks.forfeited_at, "timeouts_in_row": clocks.timeouts_in_row}


def clock_view(stored: dict[str, Any] | None, players: int, now: int) -> list[dict[str, Any]] | None:
    """Per seat ``{deadline, left, bank, vacation_left, on_vacation, forfeited}`` at ``now`` (ms) from what
    :func:`clocks_of` stored; None for a game without a clock."""
    if not stored:
        return None
    clocks = Clocks(spec=stored["spec"], players=players, bank=list(stored["bank"]),
                    vacation_left=list(stored["vacation_left"]),
                    vacations=[[(a, b) for a, b in seat] for seat in stored["vacations"]],
                    timeouts_in_row=list(stored["timeouts_in_row"]), forfeited_at=list(stored["forfeited_at"]))
    if stored["seat"] is not None:
        clocks.seat, clocks.since, clocks.allowance = stored["seat"], stored["since"], stored["allowance"]
    return clocks.view(now)


def open_listing(replayer: LogReplayer) -> dict[str, Any] | None:
    """What the open games' listing (``GET /games?open=true``) needs of a game created with a seat open to anyone:
    its creator, its creation time and whether it is open now (waiting, and a seat open to anyone nobody holds);
    None for any other game."""
    created = replayer.created or {}
    seats = created.get("seats") or []
    if not any(seat_kind(seat) == "open" for seat in seats):
        return None
    free = any(seat_kind(spec) == "open" and holder is None
               for spec, holder in zip(seats, replayer.holders, strict=False))
    return {"creator": replayer.creator_key(), "created_ms": parse_ms(created["at"]),
            "open": free and replayer.status == WAITING and created.get("mode") == "seeded"}


def projection_of(replayer: LogReplayer) -> dict[str, Any]:
    """The projection fields (``referee.store.PROJECTION_FIELDS``) of a fold; for a game created with a seat open
    to anyone also its ``OPEN_LISTING`` (not stored: the store lists the game by it)."""
    listing = open_listing(replayer)
    return {**projection_fields(replayer), **({OPEN_LISTING: listing} if listing is not None else {})}


def decisions_view(replayer: LogReplayer) -> dict[str, Any] | None:
    """The projection's ``decisions``: the offers and resignations (CONTRACT section 12) and, once a seat's key
    changed or a recovery was asked (section 15), ``seat_keys`` (each seat's key now), ``rekeys`` (``{position, seat,
    old, new, reason}`` in log order) and ``recoveries`` (the pending ones, with the seats whose acceptance each
    needs)."""
    if replayer.decisions is None:
        return None
    view = replayer.decisions.view()
    if replayer.key_history or replayer.recoveries:
        view["seat_keys"] = replayer.keys
        view["rekeys"] = [{"position": position, "seat": seat, "old": old, "new": new, "reason": reason}
                          for position, seat, old, new, reason in replayer.key_history]
        view["recoveries"] = [recovery.to_dict(needed_answers(replayer, recovery))
                              for recovery in replayer.recoveries]
    return view


def projection_fields(replayer: LogReplayer) -> dict[str, Any]:
    game = replayer.game
    return {
        "seq": replayer.seq,
        "head": replayer.head,
        "status": replayer.status,
        "to_move": replayer.to_move(),
        "view": game.view() if game is not None else None,
        "result": replayer.result(),
        "version_mismatch": replayer.version_mismatch,
        "blocked": replayer.blocked,
        "accepted": sorted(replayer.entropies),
        "clocks": clocks_of(replayer),
        "decisions": decisions_view(replayer),
        "last_verdict": replayer.verdicts[-1].to_dict() if replayer.verdicts else None,
        "updated_at": now(),
    }
