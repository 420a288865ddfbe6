"""The static checks of issue 27: ``mypy --strict`` over the engine library (``referee.games``, which ships
``py.typed``), mypy with the settings of ``pyproject.toml`` (``[tool.mypy]``) over the service, and the
import layers of ``docs/service.md`` (``[tool.importlinter]``: import-linter, on grimp's import graph).

Both run mypy in this process from the repository root, with their caches in ``.mypy_cache/`` (ignored by
git; one folder per run, since a cache written with other options is not reused), so a second run is quick.
A failure shows mypy's report.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logging_state import kept
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


def test_imports_run_one_way(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``cli`` → ``app`` → ``api``/``web`` → ``workers`` → services → store and fold → signing → ``games``:
    a module imports only from the layers below its own (``pyproject.toml``, ``[tool.importlinter]``)."""
    from importlinter.cli import lint_imports

    monkeypatch.chdir(ROOT)
    with kept():  # (import-linter's dictConfig disables every logger there is: issue 50)
        status = lint_imports(config_filename=str(CONFIG), no_cache=True)
    assert status == 0, capsys.readouterr().out


#: ``(module under referee/, the import added to it, what the contract answers)``
UPWARD_IMPORTS = {
    "engine": ("games/errors.py", "from referee.store import keys",
               "referee.games is not allowed to import referee.store"),
    # inside the store, a part of RedisStore never imports the module that puts the parts together
    "store-part": ("store/logs.py", "from referee.store import redis_store",
                   "referee.store.logs is not allowed to import referee.store.redis_store"),
}


@pytest.mark.parametrize("case", UPWARD_IMPORTS)
def test_the_layer_contract_fails_on_an_import_that_runs_up(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The contracts can fail: a copy of the tree where the engine imports the store (or a part of the store the
    module that puts the parts together) breaks them."""
    import shutil

    from importlinter.cli import lint_imports

    for package in ("referee", "workers", "schemas"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("static", "templates",
                                                                                          "__pycache__"))
    shutil.copy(CONFIG, tmp_path / "pyproject.toml")
    module, line, refusal = UPWARD_IMPORTS[case]
    upward = tmp_path / "referee" / module
    upward.write_text(upward.read_text() + f"\n{line}  # noqa\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [name for name in list(__import__("sys").modules) if name.split(".")[0] in {"referee", "workers",
                                                                                             "schemas"}]:
        monkeypatch.delitem(__import__("sys").modules, name)
    with kept():
        status = lint_imports(config_filename=str(tmp_path / "pyproject.toml"), no_cache=True)
    out = capsys.readouterr().out
    assert status == 1 and refusal in out, out
