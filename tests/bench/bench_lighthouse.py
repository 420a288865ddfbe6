"""Lighthouse 12 (mobile: a mid-range phone, slow 4G, 4x slower CPU; its defaults) on every player page of a running
``referee serve`` — run by hand, never in the suite (issue 49; docs/performance.md, "The pages on a phone").

    npm install --prefix /tmp/lh lighthouse@12.2.3          # pinned; uses the machine's Chromium
    python tests/bench/bench_lighthouse.py --lighthouse /tmp/lh/node_modules/.bin/lighthouse [--root OTHER_CHECKOUT]

It starts ``referee serve`` (of this checkout, or of ``--root``: the same command on an older commit, for a before and
after) on a free port with a fresh data directory, sets up a game of each ruleset (started, a few moves in), a
waiting game with an open seat and a tournament, runs Lighthouse on each page at ``localhost`` (``--runs`` times; the
best run is shown, as the issue asks for "one of two runs") and prints a table: the four scores, LCP, CLS and TBT.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(HERE / "tests"), str(HERE / "tests" / "web"), str(HERE / "tests" / "service")]

from seat_helpers import create_open_game  # noqa: E402
from signed_requests import start, submit  # noqa: E402
from svc_helpers import Http  # noqa: E402

CHROMIUM = os.environ.get("CHROME_PATH", "/usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(root: Path, var: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "REFEREE_VAR": str(var), "PYTHONPATH": str(root)}
    env.pop("REDIS_URL", None)
    process = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--port", str(port)], cwd=root, env=env,
                               stdout=subprocess.DEVNULL, stderr=open(var / "serve.log", "w"), start_new_session=True)
    for _ in range(240):
        try:
            if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).ok:
                return process
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise SystemExit(f"referee serve did not answer: {(var / 'serve.log').read_text()[-2000:]}")


def play(base: str, ruleset: str, moves: int) -> str:
    game, keys = start(base, ruleset, [{"name": "Ann"}, {"name": "Bo"}])
    for _ in range(moves):
        legal = requests.get(f"{base}/games/{game}/legal-moves?wait=5", timeout=15).json()
        if not legal.get("moves"):
            break
        seat = legal["to_move"]
        assert submit(base, game, keys[seat], seat, "referee/move", at=legal, move=legal["moves"][0]).ok
    return game


def pages(base: str) -> dict[str, str]:
    fivetowers, towerup = play(base, "fivetowers", 6), play(base, "towerup", 6)
    http = Http(requests.Session(), base)
    opened = create_open_game(http, "fivetowers", ["key", "open"])
    join = f"/play/join/{opened.game_id}" if not isinstance(opened, tuple) else None
    out = {"lobby": "/play/", "new game": "/play/new", "keys": "/play/keys", "tournaments": "/play/tournaments",
           "verify": "/play/verify", "5 Towers game": f"/play/games/{fivetowers}",
           "Tower Up game": f"/play/games/{towerup}", "replay": f"/play/games/{towerup}/replay"}
    if join:
        out["join"] = join
    return out


def lighthouse(binary: str, url: str, keep: Path | None = None) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", dir=keep, delete=keep is None) as report:
        subprocess.run([binary, url, "--quiet", "--output=json", f"--output-path={report.name}",
                        "--only-categories=performance,accessibility,best-practices,seo",
                        "--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-background-networking"],
                       check=True, env={**os.environ, "CHROME_PATH": CHROMIUM}, timeout=300)
        data = json.loads(Path(report.name).read_text())
    cat, audits = data["categories"], data["audits"]
    return {"perf": round(cat["performance"]["score"] * 100), "a11y": round(cat["accessibility"]["score"] * 100),
            "bp": round(cat["best-practices"]["score"] * 100), "seo": round(cat["seo"]["score"] * 100),
            "lcp": audits["largest-contentful-paint"]["numericValue"] / 1000,
            "cls": audits["cumulative-layout-shift"]["numericValue"],
            "tbt": audits["total-blocking-time"]["numericValue"],
            "bytes": audits["total-byte-weight"]["numericValue"] / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lighthouse", default="lighthouse", help="the lighthouse command (npm, 12.2.3)")
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to serve (default: this one)")
    parser.add_argument("--runs", type=int, default=2, help="runs per page; the best is shown")
    parser.add_argument("--only", help="only the pages whose name contains this")
    parser.add_argument("--keep", type=Path, help="keep every run's Lighthouse JSON report in this folder")
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as var:
        process = serve(args.root.resolve(), Path(var), port)
        try:
            base = f"http://localhost:{port}"
            print(f"referee serve of {args.root} on {base}; Lighthouse {args.runs} run(s) a page", file=sys.stderr)
            heads = " ".join(f"{h:>4}" for h in ("perf", "a11y", "bp", "seo"))
            print(f"{'page':16} {heads} {'LCP s':>6} {'CLS':>6} {'TBT ms':>7} {'KiB':>6}")
            for name, path in pages(base).items():
                if args.only and args.only not in name:
                    continue
                runs = []
                for i in range(args.runs):
                    print(f"  {name}: run {i + 1} of {args.runs}…", file=sys.stderr)
                    runs.append(lighthouse(args.lighthouse, base + path, args.keep))
                r = max(runs, key=lambda run: run["perf"])
                print(f"{name:16} {r['perf']:4} {r['a11y']:4} {r['bp']:4} {r['seo']:4} {r['lcp']:6.2f} {r['cls']:6.3f} "
                      f"{r['tbt']:7.0f} {r['bytes']:6.0f}", flush=True)
        finally:
            os.killpg(process.pid, signal.SIGINT)
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
