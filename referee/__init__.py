"""The referee: rules engines (``referee.games``), the log store, the HTTP API and the verifier.

``referee.create_app`` is imported lazily so that the engine library can be used without Flask.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        # Keep `import referee.games` free of Flask. import_module, not `from .app import ...`, so that a type
        # checker does not follow it either: `mypy --strict referee/games` checks the engine library alone.
        return import_module(".app", __name__).create_app
    raise AttributeError(name)
