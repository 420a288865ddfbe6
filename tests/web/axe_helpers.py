"""Running the vendored axe-core (``tests/web/vendor/axe.min.js``, never fetched at test time) in a page.

The script is put into the page through the DevTools protocol (``page.evaluate``); the pages' contexts are made
with ``bypass_csp=True`` so that the pages' Content-Security-Policy (which ``test_csp.py`` checks) does not
stand in its way."""

from __future__ import annotations

from functools import cache
from pathlib import Path

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
IMPACTS = ("critical", "serious", "moderate", "minor")
RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + " :: " + (n.failureSummary || "").slice(0, 200)),
    count: v.nodes.length }));
}"""


@cache
def axe_source() -> str:
    return AXE.read_text(encoding="utf-8")


def run_axe(page) -> tuple[dict[str, int], list[dict]]:
    """axe-core's violations in ``page``: the count of failing nodes by impact, and the serious or critical
    violations themselves."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    found = page.evaluate(RUN_AXE)
    tally = dict.fromkeys(IMPACTS, 0)
    for violation in found:
        tally[violation["impact"] or "minor"] += violation["count"]
    return tally, [v for v in found if v["impact"] in ("serious", "critical")]


def tally_line(name: str, tally: dict[str, int]) -> str:
    return f"  {name}: " + ", ".join(f"{impact} {tally[impact]}" for impact in IMPACTS)
