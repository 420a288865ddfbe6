"""The rules engines as a pure library (CONTRACT section 1).

>>> from referee.games import ruleset, IllegalMove
>>> try:
...     ruleset("no-such-game")
... except KeyError as err:
...     print(err.args[0])
unknown ruleset 'no-such-game'; known: fivetowers, towerup
"""

from __future__ import annotations

from importlib import import_module

from .base import Game, Ruleset
from .errors import DataError, GameOver, IllegalMove

__all__ = ["DataError", "Game", "GameOver", "IllegalMove", "Ruleset", "names", "ruleset"]

# name -> "module:factory"; modules load lazily so that one broken data file does not break the other game.
_REGISTRY = {
    "fivetowers": "referee.games.fivetowers:load_ruleset",
    "towerup": "referee.games.towerup:load_ruleset",
}
_LOADED: dict[str, Ruleset] = {}


def names() -> list[str]:
    """Names of every known ruleset, sorted."""
    return sorted(_REGISTRY)


def ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``; an unknown name raises ``KeyError``. Loaded (and validated) once."""
    if name not in _REGISTRY:
        raise KeyError(f"unknown ruleset {name!r}; known: {', '.join(names())}")
    if name not in _LOADED:
        module_name, factory = _REGISTRY[name].split(":")
        _LOADED[name] = getattr(import_module(module_name), factory)()
    return _LOADED[name]
