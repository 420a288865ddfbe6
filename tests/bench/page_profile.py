"""Where the browser tests' pages spend their renderers' time: a pytest plugin (run by hand).

    PYTHONPATH=tests/bench .venv/bin/python -m pytest tests/web -n 4 -p page_profile
    cat /tmp/page_profile.txt*        # one report per xdist worker (``…gw0``, ``…gw1``, …)

Every page a test makes (``BrowserContext.new_page``) runs the DevTools protocol's sampling profiler
(``Profiler.start``, a sample every 0.5 ms) until its context is closed; the plugin then adds up, over the whole
run, each function's time inclusive of what it called and its own (self) time, idle samples left out.
``(program)`` is the renderer's own work outside JavaScript (style, layout, paint, parsing). A page whose
context is never closed is not counted. The profiler slows the pages a little: compare figures of one run.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from playwright.sync_api._generated import BrowserContext

_INCLUSIVE: dict[str, float] = defaultdict(float)
_SELF: dict[str, float] = defaultdict(float)
_BUSY = [0.0]
_SESSIONS: dict[int, list[Any]] = {}
_new_page = BrowserContext.new_page
_close = BrowserContext.close


def _name(frame: dict[str, Any]) -> str:
    return f"{frame['functionName'] or '(anonymous)'} {frame['url'].rsplit('/', 1)[-1]}:{frame['lineNumber']}"


def _add(session: Any) -> None:
    try:
        profile = session.send("Profiler.stop")["profile"]
    except Exception:  # the page is gone (closed, crashed): nothing to add
        return
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=False):
        name = _name(nodes[sample]["callFrame"])
        if name.startswith("(idle)"):
            continue
        seconds = delta / 1e6
        _BUSY[0] += seconds
        _SELF[name] += seconds
        seen, node = set(), sample
        while node is not None:
            above = _name(nodes[node]["callFrame"])
            if above not in seen:
                _INCLUSIVE[above] += seconds
                seen.add(above)
            node = parent.get(node)


def _profiled_new_page(self: BrowserContext, *args: Any, **kwargs: Any) -> Any:
    page = _new_page(self, *args, **kwargs)
    session = self.new_cdp_session(page)
    session.send("Profiler.enable")
    session.send("Profiler.setSamplingInterval", {"interval": 500})
    session.send("Profiler.start")
    _SESSIONS.setdefault(id(self), []).append(session)
    return page


def _profiled_close(self: BrowserContext, *args: Any, **kwargs: Any) -> None:
    for session in _SESSIONS.pop(id(self), []):
        _add(session)
    _close(self, *args, **kwargs)


BrowserContext.new_page = _profiled_new_page  # type: ignore[method-assign]
BrowserContext.close = _profiled_close  # type: ignore[method-assign]


def pytest_sessionfinish(session: Any) -> None:
    out = os.environ.get("PAGE_PROFILE", "/tmp/page_profile.txt") + os.environ.get("PYTEST_XDIST_WORKER", "")
    with open(out, "w") as report:
        print(f"renderers' main threads, idle left out: {_BUSY[0]:.1f} s", file=report)
        for name, seconds in sorted(_INCLUSIVE.items(), key=lambda item: -item[1])[:80]:
            print(f"inclusive {seconds:7.2f} s  {name}", file=report)
        for name, seconds in sorted(_SELF.items(), key=lambda item: -item[1])[:40]:
            print(f"self      {seconds:7.2f} s  {name}", file=report)
