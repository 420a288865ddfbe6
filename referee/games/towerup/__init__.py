"""Tower Up (Crittin, Largey, Pauchon) as a pure rules engine.

>>> from referee.games import ruleset
>>> rules = ruleset("towerup")
>>> game = rules.new_game(players=2, seed=bytes(32))
>>> game.to_move()                     # the last seat places the start floors first (TU-G3)
1
>>> len(game.view()["start_floors"]["pending"])
3

Modules: ``data`` (data files, validation), ``objectives`` (the 10 objective checks), ``game`` (state and
moves), ``scoring`` (final result and tie-break), ``ruleset`` (options and ``new_game``).
"""

from __future__ import annotations

from pathlib import Path

from ..data import fixtures_dir
from .data import COLORS, DATA_FILES, load_data
from .game import TowerUpGame
from .ruleset import TowerUpRuleset

__all__ = ["COLORS", "DATA_FILES", "TowerUpGame", "TowerUpRuleset", "load_data", "load_ruleset"]


def load_ruleset(directory: Path | None = None) -> TowerUpRuleset:
    """The Tower Up ruleset with data from ``directory`` (default ``<fixtures>/towerup``)."""
    return TowerUpRuleset(load_data(Path(directory) if directory is not None else fixtures_dir() / "towerup"))
