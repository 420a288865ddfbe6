"""The fresh checkout's one collection before xdist's workers (``warm_collection.py``): its groups hold every
piece once, share the work, and keep a folder whole where they can; a warm checkout is told from a fresh one."""

from __future__ import annotations

from pathlib import Path

import pytest
from warm_collection import PYC_TAIL, files_of_tests, is_fresh, parts


def _tree(root: Path, spec: dict[str, int]) -> None:
    for folder, count in spec.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for i in range(count):
            (root / folder / f"test_{i}.py").write_text("def test_x():\n    assert True\n")
        (root / folder / "helper.py").write_text("X = 1\n")


def _covered(groups: list[list[Path]]) -> list[Path]:
    return sorted(f for group in groups for f in files_of_tests(group) if f.name.startswith("test_"))


def test_the_groups_hold_every_test_module_once_and_share_the_work(tmp_path):
    _tree(tmp_path / "tests", {"service": 40, "web": 12, "engines": 8, "small": 2})
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("Y = 2\n")
    roots = [tmp_path / "tests", tmp_path / "pkg"]

    groups = parts(roots, 2, ignored=set())

    assert len(groups) == 2
    assert _covered(groups) == sorted(files_of_tests(roots))  # each test module in exactly one group
    assert any(tmp_path / "pkg" in group for group in groups)  # a folder without tests is still collected
    sizes = [len(files_of_tests(group)) for group in groups]
    assert abs(sizes[0] - sizes[1]) <= 2, sizes
    # "service" holds over half a group's share: opened into its files; the smaller folders stay whole
    everything = [piece for group in groups for piece in group]
    assert tmp_path / "tests" / "service" not in everything
    assert {tmp_path / "tests" / name for name in ("web", "engines", "small")} <= set(everything)


def test_ignored_folders_are_left_out(tmp_path):
    _tree(tmp_path / "tests", {"bench": 5, "unit": 5})
    groups = parts([tmp_path / "tests"], 2, ignored={(tmp_path / "tests" / "bench").resolve()})
    assert _covered(groups) == sorted(files_of_tests([tmp_path / "tests" / "unit"]))


@pytest.mark.skipif(PYC_TAIL is None, reason="this pytest names its rewritten bytecode otherwise: never fresh")
def test_a_checkout_is_fresh_until_most_test_modules_have_rewritten_bytecode(tmp_path):
    _tree(tmp_path, {"t": 4})
    modules = files_of_tests([tmp_path / "t"])
    assert is_fresh(modules)
    (tmp_path / "t" / "__pycache__").mkdir()
    for module in modules[:3]:
        (tmp_path / "t" / "__pycache__" / (module.stem + PYC_TAIL)).write_bytes(b"")
    assert not is_fresh(modules)
