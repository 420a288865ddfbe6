"""The type checks of issue 27: ``mypy --strict`` over the engine library (``referee.games``, which ships
``py.typed``), and mypy with the settings of ``pyproject.toml`` (``[tool.mypy]``) over the service.

Both run mypy in this process from the repository root, with their caches in ``.mypy_cache/`` (ignored by
git; one folder per run, since a cache written with other options is not reused), so a second run is quick.
A failure shows mypy's report.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"


def _mypy(monkeypatch: pytest.MonkeyPatch, cache: str, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(ROOT)
    stdout, stderr, status = api.run(["--config-file", str(CONFIG), "--cache-dir", str(ROOT / ".mypy_cache" / cache),
                                      *args])
    return status, stdout + stderr


def test_the_engine_library_is_strictly_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    status, report = _mypy(monkeypatch, "test-strict-games", "--strict", "referee/games")
    assert status == 0, f"mypy --strict referee/games:\n{report}"


def test_the_service_type_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    status, report = _mypy(monkeypatch, "test-default")  # the files and settings of [tool.mypy]
    assert status == 0, f"mypy (pyproject settings):\n{report}"
