"""The bytes a game page costs a browser, first visit and repeat visit (issue 49), run by hand:

    .venv/bin/python tests/bench/bench_page_bytes.py [--root DIR]

Serves ``referee.app.create_app`` (memory store, inline replays) with a started Tower Up game and a started 5 Towers
game, opens each game page in headless Chromium (Debian's, as the browser tests) with an empty cache, waits for the
page to settle, then opens it again in the same browser context (a repeat visit: what the cache keeps is not asked
again). Counts, from the DevTools protocol, every request and the bytes received for it (``encodedDataLength``:
headers and body as they came over the wire), and how many were answered from the cache. The game's event stream
never finishes and is left out of the bytes (its opening is a few hundred bytes). Also the seconds from the
navigation until the board's SVG is drawn (with ``--slow-4g``: on a throttled network, where round trips count; the
CPU is not slowed, unlike Lighthouse's mobile run, so these are not Lighthouse's LCP).

``--root`` runs the same against another checkout of the project (e.g. ``git archive <commit> | tar -x -C DIR``, for
the figures before a change); the script itself is this one. No assertion: the figures go to docs/performance.md
("The pages on a phone").
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


class Counts:
    """What the DevTools protocol tells of one visit."""

    def __init__(self) -> None:
        self.requests = self.from_cache = self.bytes = 0

    def request(self, _event: dict) -> None:
        self.requests += 1

    def cached(self, _event: dict) -> None:  # from the memory cache
        self.from_cache += 1

    def response(self, event: dict) -> None:
        if event["response"].get("fromDiskCache") or event["response"].get("fromPrefetchCache"):
            self.from_cache += 1

    def finished(self, event: dict) -> None:
        self.bytes += int(event["encodedDataLength"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout whose referee is served")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds to wait after the load event")
    parser.add_argument("--slow-4g", action="store_true",
                        help="throttle as Lighthouse's mobile run does (150 ms round trip, 1.6 Mbit/s down, "
                             "750 kbit/s up) and print the time until the board is drawn")
    args = parser.parse_args()
    sys.path[:0] = [str(args.root), str(HERE / "tests"), str(HERE / "tests" / "service")]
    spec = importlib.util.spec_from_file_location("web_conftest", HERE / "tests" / "web" / "conftest.py")
    assert spec is not None and spec.loader is not None
    web_conftest = importlib.util.module_from_spec(spec)  # the browser tests' Chromium and its arguments
    spec.loader.exec_module(web_conftest)

    from live_server import serving
    from playwright.sync_api import sync_playwright
    from svc_helpers import Http, accept_all, create_game

    import referee
    from referee.app import create_app

    chromium, chromium_args = web_conftest.CHROMIUM, web_conftest.CHROMIUM_ARGS
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    print(f"serving {Path(referee.__file__).parent} in {chromium}")
    app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": tempfile.mkdtemp(prefix="bench-bytes-"),
                      "TESTING": True})
    http = Http(app.test_client())
    games = {}
    for name, seats in (("towerup", 2), ("fivetowers", 4)):
        game = create_game(http, name, seats)
        accept_all(http, game)
        games[name] = game.game_id
    with serving(app) as base, sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=chromium_args)
        print(f"{'page':28} {'visit':7} {'requests':>8} {'from cache':>10} {'bytes':>9} {'KiB':>7} {'board s':>8}")
        for name, game_id in games.items():
            context = browser.new_context()
            page = context.new_page()
            cdp = context.new_cdp_session(page)
            cdp.send("Network.enable")
            if args.slow_4g:
                cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 150,
                                                              "downloadThroughput": 1.6e6 / 8,
                                                              "uploadThroughput": 750e3 / 8})
            counts = Counts()
            cdp.on("Network.requestWillBeSent", counts.request)
            cdp.on("Network.requestServedFromCache", counts.cached)
            cdp.on("Network.loadingFinished", counts.finished)
            cdp.on("Network.responseReceived", counts.response)
            for visit in ("first", "repeat"):
                counts.__init__()
                started = time.monotonic()
                page.goto(f"{base}/play/games/{game_id}", wait_until="commit")
                page.wait_for_selector("#board svg", timeout=60_000)
                board = time.monotonic() - started
                page.wait_for_timeout(args.settle * 1000)
                print(f"{name + ' game page':28} {visit:7} {counts.requests:8} {counts.from_cache:10} "
                      f"{counts.bytes:9} {counts.bytes / 1024:7.1f} {board:8.2f}")
                page.goto("about:blank")
            context.close()
        browser.close()


if __name__ == "__main__":
    main()
