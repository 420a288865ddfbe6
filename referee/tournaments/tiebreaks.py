"""The tie-break catalogue (CONTRACT section 10): ids, what each measures, which way it sorts.

Applied in the order ``created`` lists them, after points, with ``lot`` always last:

* ``game_score`` — the sum of the player's game scores (each game's total as its result reports it;
  a game adjudicated without scores counts 0). Higher is better.
* ``opponents_points`` — Buchholz: for every game, the sum of the final points of every other player at
  the table (an opponent met twice counts twice). Byes add nothing. Higher is better.
* ``wins`` — games finished at rank 1 (alone or shared). Higher is better.
* ``head_to_head`` — among the players still tied when it applies (same points and same values of the
  tie-breaks before it), for every game that sat the player with another player of that tied group:
  1 for each such player ranked below, 1/2 for each with the same rank. Higher is better. A player
  alone in its group scores 0.
* ``average_rank`` — the mean rank over the player's games (null without games, sorted last). Lower is
  better.
* ``lot`` — the player's place in the lot order drawn from the revealed tournament seed
  (:func:`referee.tournaments.seed.lot_order`), 1 first. Lower is better. Before the seed is revealed
  it is null and players otherwise tied stay in ``created`` order.
"""

from __future__ import annotations

GAME_SCORE, OPPONENTS_POINTS, WINS, HEAD_TO_HEAD, AVERAGE_RANK, LOT = (
    "game_score", "opponents_points", "wins", "head_to_head", "average_rank", "lot")

#: every tie-break id, in the default chain's order
CATALOGUE = (GAME_SCORE, OPPONENTS_POINTS, WINS, HEAD_TO_HEAD, AVERAGE_RANK, LOT)
#: ids sorted with the smallest value first (all others: largest first)
ASCENDING = frozenset({AVERAGE_RANK, LOT})
DEFAULT_CHAIN = [OPPONENTS_POINTS, HEAD_TO_HEAD, WINS, GAME_SCORE, AVERAGE_RANK, LOT]


def chain_problem(chain: object) -> str | None:
    """What is wrong with a tie-break chain as written in ``created``, or None."""
    if not isinstance(chain, list) or not all(isinstance(i, str) for i in chain):
        return "tie_breaks is a list of tie-break ids"
    unknown = [i for i in chain if i not in CATALOGUE]
    if unknown:
        return f"unknown tie-break ids {unknown}; the catalogue is {list(CATALOGUE)}"
    if len(set(chain)) != len(chain):
        return "a tie-break id appears twice"
    if not chain or chain[-1] != LOT:
        return "lot must be the last tie-break"
    return None


def resolve_chain(chain: list[str] | None) -> list[str]:
    """The chain written into ``created``: the default when omitted, ``lot`` appended when missing."""
    if chain is None:
        return list(DEFAULT_CHAIN)
    return [i for i in chain if i != LOT] + [LOT]
