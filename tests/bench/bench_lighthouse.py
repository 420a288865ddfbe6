"""Lighthouse's mobile run over the player pages (issue 49), run by hand:

    npm install --prefix /tmp/lh lighthouse@12.8.2        # once, outside the repository
    .venv/bin/python tests/bench/bench_lighthouse.py --lighthouse /tmp/lh/node_modules/.bin/lighthouse [--root DIR]

Serves ``referee.create_app`` (memory store, inline replays; werkzeug's threaded server, not gunicorn) with a started
game of each ruleset, and runs Lighthouse (its default: a mid-range phone, simulated slow 4G, a 4× slower CPU) on
Debian's full Chromium (``/usr/bin/chromium``, new headless mode) over the lobby, new game, keys, tournaments,
verify, a game of each ruleset and a replay; prints each page's scores (performance, accessibility, best
practices, SEO), LCP, CLS, TBT and the bytes transferred. ``--root`` serves another checkout (e.g. a ``git archive``
of an older commit, for the figures before a change). Scores move with the machine's load: take them on a quiet
machine, twice. No assertion: the figures go to docs/performance.md ("The pages on a phone").
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lighthouse", required=True, help="the lighthouse command (pinned: 12.8.2)")
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout whose referee is served")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--pages", default="", help="comma-separated labels to run (default: all)")
    args = parser.parse_args()
    sys.path[:0] = [str(args.root), str(HERE / "tests"), str(HERE / "tests" / "service")]

    from live_server import serving
    from svc_helpers import Http, accept_all, create_game

    import referee
    from referee.app import create_app

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    version = subprocess.check_output([args.lighthouse, "--version"], text=True).strip()
    print(f"serving {Path(referee.__file__).parent}; Lighthouse {version}")
    app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": tempfile.mkdtemp(prefix="bench-lh-"),
                      "TESTING": True})
    http = Http(app.test_client())
    games = {}
    for name, seats in (("towerup", 2), ("fivetowers", 4)):
        game = create_game(http, name, seats)
        accept_all(http, game)
        games[name] = game.game_id
    pages = {"lobby": "/play/", "new game": "/play/new", "keys": "/play/keys", "tournaments": "/play/tournaments",
             "verify": "/play/verify", "Tower Up game": f"/play/games/{games['towerup']}",
             "5 Towers game": f"/play/games/{games['fivetowers']}",
             "replay": f"/play/games/{games['fivetowers']}/replay"}
    chosen = [label for label in pages if not args.pages or label in args.pages.split(",")]
    with serving(app) as base:
        print(f"{'page':16} {'perf':>4} {'a11y':>4} {'bp':>4} {'seo':>4} {'LCP s':>6} {'CLS':>6} {'TBT ms':>7} "
              f"{'KiB':>7}  first opportunity")
        for label in chosen:
            out = Path(tempfile.mkdtemp(prefix="lh-")) / "report.json"
            subprocess.run([args.lighthouse, base + pages[label], "--output=json", f"--output-path={out}",
                            "--quiet", f"--chrome-path={args.chromium}",
                            "--chrome-flags=--headless=new --no-sandbox --disable-gpu"],
                           check=False, env={"CHROME_PATH": args.chromium, "PATH": "/usr/bin:/bin"})
            if not out.exists():
                print(f"{label:16} (no report)")
                continue
            report = json.loads(out.read_text())
            if report.get("runtimeError") or "numericValue" not in report["audits"]["largest-contentful-paint"]:
                print(f"{label:16} (Lighthouse failed: {report.get('runtimeError', {}).get('code', '?')}; run again)")
                continue
            score = {name: round(100 * (category["score"] or 0)) for name, category in report["categories"].items()}
            audits = report["audits"]
            chances = sorted((audit for audit in audits.values()
                              if audit.get("details", {}).get("type") == "opportunity"
                              and audit.get("score") is not None and audit["score"] < 1
                              and (audit.get("numericValue") or 0) > 0), key=lambda audit: -audit["numericValue"])
            first = f"{chances[0]['title']} ({chances[0]['numericValue']:.0f} ms)" if chances else "-"
            print(f"{label:16} {score['performance']:4} {score['accessibility']:4} {score['best-practices']:4} "
                  f"{score['seo']:4} {audits['largest-contentful-paint']['numericValue'] / 1000:6.2f} "
                  f"{audits['cumulative-layout-shift']['numericValue']:6.3f} "
                  f"{audits['total-blocking-time']['numericValue']:7.0f} "
                  f"{audits['total-byte-weight']['numericValue'] / 1024:7.1f}  {first}")


if __name__ == "__main__":
    main()
