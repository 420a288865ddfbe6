"""The referee: rules engines (``referee.games``), the log store, the HTTP API and the verifier.

``referee.create_app`` is imported lazily so that the engine library can be used without Flask.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app  # noqa: PLC0415 - keep `import referee.games` free of Flask

        return create_app
    raise AttributeError(name)
