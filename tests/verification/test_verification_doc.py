"""docs/verification.md stays true: its by-hand recipe verifies real bundles (and refuses a forged one),
and its exit-status table is the CLI's."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from gamelogs import GAMES, finished_log, reseal

from referee.verify import EXIT_CODES
from referee.verify.bundle import build_bundle

DOC = Path(__file__).resolve().parents[2] / "docs" / "verification.md"


def recipe() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def run_recipe(bundle, tmp_path, monkeypatch) -> str:
    (tmp_path / "bundle.json").write_text(json.dumps(bundle))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(recipe(), {"__name__": "recipe"})
    return out.getvalue()


@pytest.mark.parametrize(("ruleset_name", "players"), GAMES)
def test_the_by_hand_recipe_verifies_a_real_bundle(ruleset_name, players, referee_key, tmp_path, monkeypatch):
    bundle = build_bundle(finished_log(ruleset_name, players).entries, referee_key)
    assert run_recipe(bundle, tmp_path, monkeypatch) == "verified by hand\n"


def test_the_by_hand_recipe_refuses_a_forged_move(referee_key, tmp_path, monkeypatch):
    log = finished_log("fivetowers", 3)
    entries = log.entries
    entries[10]["submission"]["envelope"]["at"] = "2030-01-01T00:00:00Z"
    with pytest.raises(InvalidSignature):
        run_recipe(build_bundle(reseal(entries), referee_key), tmp_path, monkeypatch)
    with pytest.raises(AssertionError, match="chain broken at 10"):
        run_recipe(build_bundle(entries, referee_key), tmp_path, monkeypatch)


def test_exit_status_table_is_the_clis():
    rows = re.findall(r"^\| (\d) \| \*\*([a-z ]+)\*\*", DOC.read_text(encoding="utf-8"), flags=re.M)
    assert {word.replace(" ", "_"): int(code) for code, word in rows} == EXIT_CODES
