"""5 Towers (Kasper Lapp, Deep Print Games) as a pure rules engine.

>>> from referee.games import ruleset
>>> rules = ruleset("fivetowers")
>>> game = rules.new_game(players=2, seed=bytes(32))
>>> game.to_move(), game.view()["phase"], len(game.view()["display"])
(0, 'bidding', 5)
>>> game.play(0, {"type": "bid", "amount": 0})
>>> game.play(1, {"type": "pass"})          # FT-R7: the round ends, seat 0 stays start player
>>> game.view()["round"], game.view()["start_player"], len(game.view()["discard"])
(2, 0, 5)

Rules digest: ``docs/rules-fivetowers.md`` (rule ids FT-C*, FT-B*, FT-S*, FT-R*, FT-E*, FT-G*).
"""

from __future__ import annotations

from .cards import Card, CardSet, Suit, load_cards
from .game import FiveTowersGame
from .ruleset import FiveTowers, load_ruleset

__all__ = ["Card", "CardSet", "FiveTowers", "FiveTowersGame", "Suit", "load_cards", "load_ruleset"]
