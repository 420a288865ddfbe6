"""Final scoring (FT-E2 to FT-E5) as a pure function of the towers and demolition piles.

>>> demolition_penalty(0), demolition_penalty(2), demolition_penalty(4)
(0, 3, 10)
>>> tower_points(4, spire=False), tower_points(6, spire=True)
(4, 12)
>>> competition_ranks([25, 30, 25, 10])
[2, 1, 2, 4]
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from .cards import CardRules


class TowerScore(TypedDict):
    suit: str
    cards: list[str]  # card ids, bottom to top
    size: int
    spire: bool
    points: int


class MainTower(TypedDict):
    suit: str | None  # None when the seat built nothing
    bonus: int


class SeatScore(TypedDict):
    seat: int
    towers: list[TowerScore]
    tower_points: int
    main_tower: MainTower
    demolished: list[str]
    demolition_penalty: int
    total: int
    rank: NotRequired[int]  # set once every total is known


def tower_points(cards: int, spire: bool) -> int:
    """FT-E2: 1 point per card, 2 per card in a tower with a spire (a 0)."""
    return cards * (2 if spire else 1)


def demolition_penalty(demolished: int) -> int:
    """FT-E4: the n-th demolished card costs n points, so n cards cost 1 + 2 + … + n."""
    return demolished * (demolished + 1) // 2


def competition_ranks(totals: list[int]) -> list[int]:
    """FT-E5: rank 1 for the most points; tied seats share a rank, the next rank skips (1, 1, 3)."""
    return [1 + sum(other > total for other in totals) for total in totals]


def score(rules: CardRules, towers: list[list[list[int]]], demolished: list[list[int]]) -> dict[str, Any]:
    """The ``result()`` document of a finished game."""
    ids, suit_ids, value_of = rules.ids, rules.suit_ids, rules.value_of
    seats: list[SeatScore] = []
    for seat, seat_towers in enumerate(towers):
        built: list[TowerScore] = []
        main_suit: str | None = None
        main_bonus = 0
        for suit, tower in enumerate(seat_towers):
            if not tower:
                continue
            spire = any(value_of[card] == 0 for card in tower)
            built.append({"suit": suit_ids[suit], "cards": [ids[c] for c in tower], "size": len(tower),
                          "spire": spire, "points": tower_points(len(tower), spire)})
            # FT-E3: the referee picks the tower with the most cards (the first in suit order on a tie;
            # every tied choice gives the same bonus).
            if len(tower) > main_bonus:
                main_suit, main_bonus = suit_ids[suit], len(tower)
        pile = [ids[c] for c in demolished[seat]]
        penalty = demolition_penalty(len(pile))
        tower_total = sum(t["points"] for t in built)
        seats.append({
            "seat": seat,
            "towers": built,
            "tower_points": tower_total,
            "main_tower": {"suit": main_suit, "bonus": main_bonus},
            "demolished": pile,
            "demolition_penalty": penalty,
            "total": tower_total + main_bonus - penalty,
        })
    totals = [entry["total"] for entry in seats]
    ranks = competition_ranks(totals)
    for entry, rank in zip(seats, ranks, strict=True):
        entry["rank"] = rank
    winners = [seat for seat, rank in enumerate(ranks) if rank == 1]
    tiebreak: list[dict[str, Any]] = []
    for rank in sorted(set(ranks)):
        group = [seat for seat, r in enumerate(ranks) if r == rank]
        if len(group) > 1:
            tiebreak.append({
                "rule": "FT-E5",
                "rank": rank,
                "seats": group,
                "criterion": "total points",
                "values": [{"seat": seat, "value": totals[seat]} for seat in group],
                "decided": False,
                "outcome": "shared " + ("victory" if rank == 1 else f"rank {rank}"),
            })
    return {"ruleset": rules.name, "seats": seats, "winners": winners, "tiebreak": tiebreak}
