"""The results an adjudication shapes: of a game adjudicated before it started, and of one adjudicated
while it was played. Pure; imports nothing of the fold."""

from __future__ import annotations

from typing import Any


def unplayed_result(players: int, accepted: dict[int, bytes], adjudication: dict[str, Any], *,
                    mark_forfeits: bool) -> dict[str, Any]:
    """The result of a game adjudicated before it started: no scores, the adjudication's ranks, and which
    seats had accepted."""
    seats = [{"seat": seat, "total": None, "rank": adjudication["ranks"][seat], "accepted": seat in accepted,
              **({"forfeited": False} if mark_forfeits else {})} for seat in range(players)]
    return {"unplayed": True, "seats": seats, "winners": [s["seat"] for s in seats if s["rank"] == 1],
            "adjudicated": {"method": adjudication["method"], "reason": adjudication["reason"],
                            "position": adjudication["position"]}}


def adjudicated_result(provisional: dict[str, Any], adjudication: dict[str, Any]) -> dict[str, Any]:
    """The result of an adjudicated game: the position's score breakdown (``provisional_result()``), the
    ranks of the adjudication, and what decided them."""
    seats = [{**seat, "rank": adjudication["ranks"][seat["seat"]]} for seat in provisional.get("seats", [])]
    return {**provisional, "seats": seats, "winners": [s["seat"] for s in seats if s["rank"] == 1],
            "adjudicated": {"method": adjudication["method"], "reason": adjudication["reason"],
                            "position": adjudication["position"]}}
