"""Where the test suite's time and CPU go: a pytest plugin, and a report of what it wrote (run by hand).

    PYTHONPATH=tests/bench .venv/bin/python -m pytest -n auto -p suite_timeline     # writes /tmp/timeline.jsonl
    .venv/bin/python tests/bench/suite_timeline.py /tmp/timeline.jsonl              # the report

The plugin writes one JSON line per test (``SUITE_TIMELINE``, default ``/tmp/timeline.jsonl``): the xdist worker,
the node id, its start and stop (epoch seconds, setup and teardown included) and the CPU seconds its worker's
whole process tree spent meanwhile — the worker, its Redis servers, browsers and server subprocesses, and the
children they reaped — read from ``/proc``. A browser torn down at the end of a worker's session takes its
CPU with it (its processes leave the tree unreaped), which shows as one large negative figure: the report sums
the positive ones. Linux only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict

import pytest

_OUT = os.environ.get("SUITE_TIMELINE", "/tmp/timeline.jsonl")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _tree_cpu(root: int) -> float:
    """CPU seconds (user + system, own + reaped children) of ``root`` and every process below it."""
    stats = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                raw = f.read()
        except OSError:
            continue
        rest = raw[raw.rfind(")") + 2:].split()
        stats[int(name)] = (int(rest[1]), sum(int(x) for x in rest[11:15]))
    children: dict[int, list[int]] = defaultdict(list)
    for pid, (ppid, _) in stats.items():
        children[ppid].append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0))[1]
        todo.extend(children.get(pid, ()))
    return total / _TICK


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    start, cpu = time.time(), _tree_cpu(os.getpid())
    yield
    stop, spent = time.time(), _tree_cpu(os.getpid()) - cpu
    with open(_OUT, "a") as out:
        out.write(json.dumps({"w": worker, "id": item.nodeid, "start": start, "stop": stop, "cpu": spent}) + "\n")


def report(path: str, top: int = 25) -> None:
    rows = [json.loads(line) for line in open(path)]
    start, stop = min(r["start"] for r in rows), max(r["stop"] for r in rows)
    cpu = sum(max(r["cpu"], 0) for r in rows)
    print(f"{len(rows)} tests, {stop - start:.0f} s from the first start to the last stop, {cpu:.0f} CPU-seconds "
          f"({cpu / (stop - start):.2f} cores busy on average)")
    folders: dict[str, float] = defaultdict(float)
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for r in rows:
        path_part = r["id"].split("::")[0]
        folders["/".join(path_part.split("/")[:2])] += max(r["cpu"], 0)
        entry = files[path_part]
        entry[0] += max(r["cpu"], 0)
        entry[1] += r["stop"] - r["start"]
        entry[2] += 1
    largest = sorted(folders.items(), key=lambda x: -x[1])[:8]
    print("CPU-seconds by folder:", ", ".join(f"{k} {v:.0f}" for k, v in largest))
    print(f"the {top} files of most CPU (CPU s, wall s, tests):")
    for name, (spent, wall, count) in sorted(files.items(), key=lambda x: -x[1][0])[:top]:
        print(f"  {spent:6.1f} {wall:6.1f} {count:4d}  {name}")


if __name__ == "__main__":
    report(sys.argv[1] if len(sys.argv) > 1 else _OUT)
