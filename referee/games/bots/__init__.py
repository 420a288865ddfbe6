"""Bots: strategies that choose a move for a seat, pure like the engines (no clock of their own, no
network, no global random state: every choice is drawn from a ``random.Random(seed)``).

>>> from referee.games import ruleset
>>> from referee.games.bots import choose
>>> game = ruleset("fivetowers").new_game(2, seed=bytes(32))
>>> move = choose(game, 0, "greedy", seed=1)
>>> move in game.legal_moves()
True

The strategies (``docs/bots.md``):

* ``random``: a legal move, uniformly.
* ``greedy``: the move with the best immediate standing by the ruleset's provisional result (the scoring
  adjudication uses): own total minus the best other total; ties broken at random.
* ``mcts``: information-set Monte Carlo tree search. Each iteration samples the hidden cards from what the
  seat may know (:func:`.determinize.from_view` of the public view) and walks one shared tree.

This package lives beside the engines, not inside one, so that its files are not part of any ruleset's
``version`` hash (``referee/games/base.py``: ``engine_files``).
"""

from __future__ import annotations

from .determinize import from_view
from .strategies import STRATEGIES, choose, standing

__all__ = ["STRATEGIES", "choose", "from_view", "standing"]
