"""Final scoring (TU-E4) and the tie-break (TU-E5) of a finished Tower Up game."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypedDict

from .data import COLORS


class ScoredConfig(Protocol):
    """What scoring reads of a game's configuration (``game.GameConfig``)."""

    @property
    def players(self) -> int: ...
    @property
    def track_values(self) -> Sequence[int]: ...
    @property
    def cone_max(self) -> int: ...
    @property
    def objectives(self) -> Sequence[int]: ...


class ScoredGame(Protocol):
    """What scoring reads of a finished game (``game.TowerUpGame``): scoring depends on this shape, not on the game's
    module, so the game imports scoring and never the other way round."""

    @property
    def cfg(self) -> ScoredConfig: ...
    @property
    def loco(self) -> Sequence[int]: ...
    @property
    def cone(self) -> Sequence[int | None]: ...
    @property
    def chips(self) -> Sequence[Sequence[tuple[int, int]]]: ...
    @property
    def supply(self) -> Sequence[int]: ...


class LocomotiveScore(TypedDict):
    color: str
    position: int  # track column
    points: int


class ConeScore(TypedDict):
    visible_roofs: int
    position: int  # track column: the visible roofs, at most the cone's max
    points: int


class ChipScore(TypedDict):
    objective: int  # the objective's number
    value: int


def final_result(game: ScoredGame) -> dict[str, Any]:
    """The result shape of the issue: per seat each locomotive, the cone and the chips with their points,
    the total, the supply (tie-break value) and the rank; the winners; the tie-break chain.

    Ranks are competition ranks ("1, 1, 3") over (total, floors in own supply): seats still tied after
    the tie-break share the rank (TU-E5, shared victory).
    """
    cfg = game.cfg
    values = cfg.track_values
    seats: list[dict[str, Any]] = []
    keys: list[tuple[int, int]] = []
    for seat in range(cfg.players):
        base = 4 * seat
        locomotives: list[LocomotiveScore] = [
            {"color": COLORS[c], "position": game.loco[base + c], "points": values[game.loco[base + c]]}
            for c in range(4)
        ]
        visible = game.cone[seat] or 0
        position = min(visible, cfg.cone_max)
        cone: ConeScore = {"visible_roofs": visible, "position": position, "points": values[position]}
        chips: list[ChipScore] = [{"objective": cfg.objectives[slot], "value": value}
                                  for slot, value in game.chips[seat]]
        supply = sum(game.supply[base:base + 4])
        total = sum(x["points"] for x in locomotives) + cone["points"] + sum(x["value"] for x in chips)
        seats.append({
            "seat": seat,
            "total": total,
            "rank": 0,
            "locomotives": locomotives,
            "cone": cone,
            "chips": chips,
            "supply_floors": supply,
        })
        keys.append((total, supply))
    for seat, key in enumerate(keys):
        seats[seat]["rank"] = 1 + sum(1 for other in keys if other > key)
    winners = [s["seat"] for s in seats if s["rank"] == 1]

    tiebreak: list[dict[str, Any]] = []
    for total in sorted({k[0] for k in keys}, reverse=True):
        group = [seat for seat in range(cfg.players) if keys[seat][0] == total]
        if len(group) < 2:
            continue
        supplies = sorted({keys[seat][1] for seat in group}, reverse=True)
        order = [[seat for seat in group if keys[seat][1] == value] for value in supplies]
        tiebreak.append({
            "rule": "TU-E5",
            "total": total,
            "seats": group,
            "criterion": "floors in own supply",
            "values": [{"seat": seat, "value": keys[seat][1]} for seat in group],
            "order": order,
            "decided": len(order[0]) == 1,
        })
        if len(order[0]) > 1 and order[0] == winners:
            tiebreak.append({"rule": "TU-E5", "total": total, "seats": order[0], "criterion": "shared victory",
                             "values": [], "order": [order[0]], "decided": False})
    return {"ruleset": "towerup", "seats": seats, "winners": winners, "tiebreak": tiebreak}
