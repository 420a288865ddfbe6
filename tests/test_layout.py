"""The suite's layout: every top-level subset of it collects on its own (and together with the others, which
is what every run of the whole suite does).

Test folders have no ``__init__.py``, so pytest imports every test and helper module under its bare file
name: two files with one name, or a test importing from ``conftest`` (which names whichever conftest was
loaded last), break any run that takes both folders (issue 14: ``pytest tests/service tests/web``).
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SKIP = {"bench"}  # run by hand, ignored by the suite (pyproject's addopts)


def _modules() -> list[Path]:
    return [path for path in TESTS.rglob("*.py")
            if not set(path.relative_to(TESTS).parts[:-1]) & SKIP and "__pycache__" not in path.parts]


def _subsets() -> list[str]:
    folders = sorted(p for p in TESTS.iterdir() if p.is_dir() and p.name not in SKIP and any(p.rglob("test_*.py")))
    return [str(p.relative_to(REPO)) for p in folders]


def test_no_two_test_modules_share_a_name():
    names = collections.defaultdict(list)
    for path in _modules():
        if path.name not in {"conftest.py", "__init__.py"}:
            names[path.stem].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}


def test_no_test_imports_from_a_conftest():
    offenders = [str(path.relative_to(TESTS)) for path in _modules()
                 if re.search(r"^\s*(from conftest import|import conftest\b)", path.read_text(), re.MULTILINE)]
    assert offenders == [], "move shared helpers into a helper module (e.g. tests/service/svc_helpers.py)"


# One fresh interpreter imports the heavy libraries once, then forks a child per run that collects with
# pytest.main: each child starts with no test module or conftest imported, as a run of its own would.
_COLLECT = """
import importlib, importlib.metadata, json, os, sys, tempfile
import pytest, _pytest.doctest, flask, flask_smorest, hypothesis, redis, rq, referee.app, workers.jobs
plugins = [entry.value.split(":")[0] for entry in importlib.metadata.entry_points(group="pytest11")]
for name in ("playwright.sync_api", *plugins):
    try:
        importlib.import_module(name)
    except ImportError:
        pass
runs, codes, children = json.loads(sys.argv[1]), {}, {}
reports = [tempfile.TemporaryFile("w+") for _ in runs]  # a child's report, shown when its run fails
sys.stdout.flush()
for number, run in enumerate(runs):  # two children at a time
    if len(children) == 2:
        pid, status = os.wait()
        codes[children.pop(pid)] = os.waitstatus_to_exitcode(status)
    pid = os.fork()
    if pid == 0:
        os.dup2(reports[number].fileno(), 1)  # not the shared stdout: the two children's lines would mix
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *run])
        sys.stdout.flush()
        os._exit(int(code))
    children[pid] = number
while children:
    pid, status = os.wait()
    codes[children.pop(pid)] = os.waitstatus_to_exitcode(status)
for number, run in enumerate(runs):
    if codes[number]:
        reports[number].seek(0)
        print(reports[number].read())
    print("exit", codes[number], " ".join(run), flush=True)
"""


def test_every_subset_collects_alone():
    subsets = _subsets()
    assert {"tests/service", "tests/web", "tests/verification"} <= set(subsets)
    # each alone; all of them in one run is what the suite's own run collects (each xdist worker too)
    runs = [[subset] for subset in subsets]
    out = subprocess.run([sys.executable, "-c", _COLLECT, json.dumps(runs)], cwd=REPO, capture_output=True,
                         text=True, timeout=300, check=False).stdout
    exits = re.findall(r"^exit (-?\d+) (.*)$", out, re.MULTILINE)
    assert [run for _, run in exits] == [" ".join(run) for run in runs], out[-3000:]
    assert [run for code, run in exits if code != "0"] == [], out[-3000:]


def test_ci_runs_the_readme_test_command():
    """``.ci/run`` runs exactly the test command the README gives (DEVELOPERS.md: "the same test command")."""
    readme = (REPO / "README.md").read_text()
    command = re.search(r"^python3 -m venv (--without-pip )?\.venv && .*-m pytest.*$", readme, re.MULTILINE)
    assert command, "the README gives no test command"
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert command.group(0) in ci, (command.group(0), ci[-3:])
