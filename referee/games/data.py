"""Loading the rulesets' data files (``fixtures/<ruleset>/*.json``).

Data files are plain JSON. They are parsed strictly (duplicate keys, NaN and floats where integers
are expected are errors) and every problem is raised as :class:`DataError` naming the file, so a
broken data file fails at load time, not in the middle of a game.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import DataError

#: The repository's ``fixtures/`` folder; ``REFEREE_FIXTURES`` overrides it (for tests of broken data).
FIXTURES_DIR = Path(os.environ.get("REFEREE_FIXTURES") or Path(__file__).resolve().parents[2] / "fixtures")


def fixtures_dir() -> Path:
    return Path(os.environ.get("REFEREE_FIXTURES") or FIXTURES_DIR)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def load_json(path: Path) -> Any:
    """Parse ``path`` strictly; any problem is a :class:`DataError` naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read data file ({exc.strerror or exc})") from exc
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except ValueError as exc:
        raise DataError(f"{path}: not valid JSON: {exc}") from exc


def require(condition: bool, path: Path, problem: str) -> None:
    """Raise :class:`DataError` for ``path`` with ``problem`` unless ``condition`` holds."""
    if not condition:
        raise DataError(f"{path.name}: {problem}")
