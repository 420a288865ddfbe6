"""Benchmark of the browser verifier (``/play/verify``, issue 38) against ``referee verify`` (run by hand):

    .venv/bin/python tests/bench/bench_verify_page.py [--runs 3]

For a finished 5-seat 5 Towers game and a 4-seat Tower Up game (the longest of a few seeded games with random legal
moves, logged as the service logs them, see ``tests/verification/gamelogs.py``), prints:

* ``referee verify`` as a command (the wall time of ``python -m referee.cli verify bundle.json``: start, imports,
  verification) and ``verify_bundle`` alone (in this process);
* the page in headless Chromium (``/usr/bin/chromium``, the pages-only app): Pyodide's first load (Python, the
  Ed25519 check and the engine files, until the worker is ready) and the verification of the bundle in the worker
  (median of R runs), and its ratio to ``verify_bundle``.

Needs the vendored files (``python referee/web/vendor.py``). No assertion: the figures go to docs/verification.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "verification")]

from flask import Flask  # noqa: E402
from gamelogs import make_game_log  # noqa: E402
from live_server import serving  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from referee.protocol.signing import generate_key  # noqa: E402
from referee.verify import verify_bundle  # noqa: E402
from referee.verify.bundle import build_bundle  # noqa: E402
from referee.web import bp, vendor  # noqa: E402
from referee.web.defences import security_headers  # noqa: E402

GAMES = (("fivetowers", 5), ("towerup", 4))


def longest_bundle(name: str, players: int, key) -> dict:
    logs = [make_game_log(name, players, seed=seed) for seed in range(4)]
    return build_bundle(max(logs, key=lambda g: len(g.entries)).entries, key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not vendor.installed():
        sys.exit("the Pyodide files are not installed: python referee/web/vendor.py")
    key = generate_key()
    bundles = {f"{name} {players} seats": longest_bundle(name, players, key) for name, players in GAMES}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, bundle in bundles.items():
            path = Path(tmp) / "bundle.json"
            path.write_text(json.dumps(bundle))
            command = []
            for _ in range(args.runs):
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "referee.cli", "verify", str(path)], cwd=ROOT, check=True,
                               stdout=subprocess.DEVNULL)
                command.append(time.perf_counter() - started)
            inner = []
            for _ in range(args.runs):
                started = time.perf_counter()
                assert verify_bundle(bundle).ok
                inner.append(time.perf_counter() - started)
            moves = sum(1 for e in bundle["log"] if e["type"] == "move")
            rows.append([label, len(bundle["log"]), moves, statistics.median(command) * 1000,
                         statistics.median(inner) * 1000])
    app = Flask("bench-verify-page")
    app.register_blueprint(bp)
    app.after_request(security_headers)
    with serving(app) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
        page = browser.new_page()
        started = time.perf_counter()
        page.goto(f"{url}/play/verify")
        page.wait_for_selector("#verify[data-loaded=yes]", state="attached", timeout=300_000)
        load = (time.perf_counter() - started) * 1000
        parts = page.evaluate("window.refereeEngine.parts")
        for row, bundle in zip(rows, bundles.values(), strict=True):
            times = []
            for _ in range(args.runs):
                answer = page.evaluate("(t) => window.refereeVerify(t)", json.dumps(bundle))
                assert answer["exit_code"] == 0, answer["report"]["first_failure"]
                times.append(answer["ms"])
            row.append(statistics.median(times))
        browser.close()
    print(f"Pyodide's first load (Python, Ed25519, the engine files; until the worker is ready): {load:.0f} ms "
          f"(in the worker: Pyodide {parts['python']} ms, engine files {parts['files']} ms, "
          f"engine import {parts['engine']} ms)")
    print("| game | entries | moves | `referee verify` (command) | `verify_bundle` | page (worker) | page / "
          "`verify_bundle` |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, entries, moves, command, inner, page_ms in rows:
        print(f"| {label} | {entries} | {moves} | {command:.0f} ms | {inner:.0f} ms | {page_ms:.0f} ms | "
              f"{page_ms / inner:.1f}× |")


if __name__ == "__main__":
    main()
