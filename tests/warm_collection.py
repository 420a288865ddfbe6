"""A fresh checkout's collection, done once on every core before pytest-xdist's workers start.

Each xdist worker collects the whole suite for itself. In a fresh clone nothing is compiled yet, so each of the
four workers compiled the same ~1,550 modules it imports (the project's and its dependencies') and re-wrote the
asserts of the same ~200 test modules, each its own copy: 35–47 s before the first test could run, against 13 s
when the bytecode is there (this machine, ``pytest -n auto -k nothing``). Here the controller first runs the same
collection (``pytest --collect-only``) in one process per core, each over part of the folders to collect, so that
every module is compiled once and written to ``__pycache__``; the workers then collect from it: 24–30 s in all,
back to back with 35–37 s without it (two fresh checkouts each way).

It runs only where it pays: under xdist, in the controller, when most test modules have no rewritten bytecode of
this pytest yet (a fresh clone, a new pytest). A warm checkout skips it after a ``stat`` of each test module.
``REFEREE_TEST_NO_BYTECODE=1`` turns it off with the rest of the bytecode (``conftest.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

try:  # the suffix of pytest's assert-rewritten bytecode (a private name, stable since pytest 3)
    from _pytest.assertion.rewrite import PYC_TAIL
except ImportError:  # pragma: no cover - a pytest that moved it: every checkout counts as warm (a slower start only)
    PYC_TAIL = None


def files_of_tests(roots: list[Path]) -> list[Path]:
    """The ``test_*.py`` files under ``roots`` (files or folders), outside ``__pycache__``."""
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            found.extend(path for path in root.rglob("test_*.py") if "__pycache__" not in path.parts)
    return found


def is_fresh(modules: list[Path]) -> bool:
    """Whether most of ``modules`` have no assert-rewritten bytecode of this pytest (a fresh checkout)."""
    if PYC_TAIL is None:
        return False
    missing = sum(not (module.parent / "__pycache__" / (module.stem + PYC_TAIL)).exists() for module in modules)
    return missing * 2 > len(modules)


def _weight(path: Path) -> int:
    """A piece's share of the work: its test modules (each imports what it tests), at least 1."""
    return max(1, len(files_of_tests([path])))


def parts(roots: list[Path], count: int, ignored: set[Path]) -> list[list[Path]]:
    """``roots`` in ``count`` groups of about as many test modules each, for one process each. A folder stays one
    piece while it holds under half a group's share: its modules import the same things (``tests/web`` Playwright,
    ``tests/tournaments`` networkx), which one process then compiles alone. A larger folder is opened into its files
    and folders, so that ``tests/service`` (16 s to collect fresh, as long as all the rest) is shared."""
    def wanted(path: Path) -> bool:
        return (path.resolve() not in ignored and path.name != "__pycache__" and not path.name.startswith(".")
                and (path.is_dir() or path.suffix == ".py"))

    pieces = [(_weight(root), root) for root in roots if wanted(root)]
    limit = sum(weight for weight, _ in pieces) / (2 * count)
    while any(weight > limit and path.is_dir() for weight, path in pieces):
        weight, path = next(p for p in pieces if p[0] > limit and p[1].is_dir())
        pieces.remove((weight, path))
        pieces.extend((_weight(child), child) for child in sorted(path.iterdir()) if wanted(child))
    groups: list[tuple[int, list[Path]]] = [(0, []) for _ in range(count)]
    for weight, piece in sorted(pieces, key=lambda p: -p[0]):
        groups.sort(key=lambda g: g[0])
        groups[0] = (groups[0][0] + weight, groups[0][1] + [piece])
    return [group for _, group in groups if group]


def warm(config) -> None:
    """Collect the session's folders once, on every core, if the checkout is fresh (see the module's text)."""
    if os.environ.get("REFEREE_TEST_NO_BYTECODE") or hasattr(config, "workerinput"):
        return
    if not config.pluginmanager.has_plugin("dsession"):  # not under xdist (serial, or --collect-only)
        return
    rootdir = Path(config.rootpath)
    args = config.args or [str(rootdir / p) for p in config.getini("testpaths")]
    roots = [Path(arg.split("::")[0]).resolve() for arg in args]
    roots = [root for root in roots if root.exists()]
    if not roots or not is_fresh(files_of_tests(roots)):
        return
    ignored = {Path(p).resolve() for p in (config.getoption("ignore") or [])}
    groups = parts(roots, os.cpu_count() or 1, ignored)
    started = time.monotonic()
    print(f"\nfresh checkout: compiling the suite once on {len(groups)} cores before the workers collect it",
          file=sys.stderr, flush=True)
    processes = [
        subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
                          "-p", "no:cacheprovider", *map(str, group)],
                         cwd=rootdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for group in groups]
    for process in processes:  # a failure here is only a slower start: the workers' own collection reports errors
        process.wait()
    print(f"compiled in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
