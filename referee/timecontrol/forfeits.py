"""Ranking with forfeits (TC-F1, TC-F2): a forfeited seat ranks below every seat that did not forfeit.

The engine's ranks stand among the seats that did not forfeit, and among the forfeited seats; the
forfeited group is placed below (competition ranks, as the engines use: "1, 1, 3"). Every seat gets
``forfeited: true | false``; a forfeited seat's entry says why, and the document's ``forfeits`` lists
them. A game that forfeits ended early is scored by the engine's ``provisional_result()``.

>>> base = {"seats": [{"seat": 0, "total": 10, "rank": 1}, {"seat": 1, "total": 7, "rank": 2}], "winners": [0]}
>>> out = rank_forfeits(base, [9, None], ended_early=True)
>>> [(s["seat"], s["rank"], s["forfeited"]) for s in out["seats"]], out["winners"]
([(0, 2, True), (1, 1, False)], [1])
"""

from __future__ import annotations

import copy
from typing import Any


def rank_forfeits(result: dict[str, Any], forfeited_at: list[int | None], *, ended_early: bool) -> dict[str, Any]:
    """``result`` (an engine's result document) with forfeits applied; ``forfeited_at[seat]`` is the log
    position of the timeout at which the seat forfeited, or None."""
    out = copy.deepcopy(result)
    seats = out.get("seats") or []
    keys = {}
    for entry in seats:
        seat = entry["seat"]
        lost = seat < len(forfeited_at) and forfeited_at[seat] is not None
        entry["forfeited"] = lost
        keys[seat] = (1 if lost else 0, entry.get("rank", 0))
    if all(position is None for position in forfeited_at):
        return out
    for entry in seats:
        key = keys[entry["seat"]]
        entry["rank"] = 1 + sum(1 for other in keys.values() if other < key)
        if entry["forfeited"]:
            entry["forfeit"] = {"rule": "TC-F1", "position": forfeited_at[entry["seat"]],
                                "reason": "forfeited on time: ranked below every seat that did not forfeit"}
    out["winners"] = [entry["seat"] for entry in seats if entry["rank"] == 1]
    out["forfeits"] = [{"seat": seat, "position": position, "rule": "TC-F1"}
                       for seat, position in enumerate(forfeited_at) if position is not None]
    if ended_early:
        out["ended_by"] = {"rule": "TC-F2", "reason": "fewer than two seats remained that had not forfeited; "
                                                      "the position was scored as it stood"}
    return out
