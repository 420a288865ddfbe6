"""The CPU a compressed answer costs (issue 49), run by hand:

    .venv/bin/python tests/bench/bench_compression.py [--requests 300]

On an app of the memory store (inline replays) with one game of each ruleset, through Flask's test client (no
sockets: the figures are the app's own CPU per request), for each kind of answer: its size as it is and as sent
with ``Accept-Encoding: br`` and ``gzip``, and the CPU per request (``time.process_time``, mean of N requests after
a warm-up) without and with compression; the difference is what compressing costs the request (noisy: a few
hundredths of a ms on a busy machine), and the compression alone of the same body (brotli 5, gzip 6; best of 5):

* pages and JSON: compressed per request (``referee.web.compression.compress_answer``: brotli 5, gzip 6);
* a module, the style sheet: sent from the copy compressed once (``<REFEREE_VAR>/cache/static``): a ``stat`` and a
  file sent, no compression per request;
* the JavaScript's translations: compressed once per language (brotli 11, gzip 9), kept in memory.

No assertion: the figures go to docs/performance.md ("The pages on a phone").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "service")]

from svc_helpers import Http, create_game  # noqa: E402

from referee.app import create_app  # noqa: E402
from referee.web import assets  # noqa: E402
from referee.web.compression import compress_fast  # noqa: E402


def per_request(client, url: str, accept: str | None, requests: int) -> tuple[float, int, str | None]:
    """CPU seconds per request (mean), the body's bytes and the Content-Encoding sent."""
    headers = {"Accept-Encoding": accept} if accept else {}
    for _ in range(20):  # warm-up: caches, the compressed copies made once
        answer = client.get(url, headers=headers)
        answer.close()
    start = time.process_time()
    for _ in range(requests):
        answer = client.get(url, headers=headers)
        body = answer.get_data()
        answer.close()
    return (time.process_time() - start) / requests, len(body), answer.headers.get("Content-Encoding")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    var = tempfile.mkdtemp(prefix="bench-compression-")
    app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": var, "TESTING": True})
    client = app.test_client()
    http = Http(client)
    games = {name: create_game(http, name, 2 if name == "towerup" else 4).game_id for name in ("towerup", "fivetowers")}
    with app.test_request_context():
        module, style = assets.static_url("games/towerup.js"), assets.static_url("style.css")
    page = client.get("/play/", headers={"Accept-Language": "de"}).get_data(as_text=True)
    i18n = page.split('data-i18n="')[1].split('"')[0].replace("&amp;", "&")
    urls = [("game page (HTML)", f"/play/games/{games['towerup']}"), ("lobby (HTML)", "/play/"),
            ("a game (JSON)", f"/games/{games['fivetowers']}"), ("rulesets (JSON)", "/rulesets"),
            ("towerup.js (static, 40 KB)", module), ("style.css (static)", style),
            ("translations, de (JSON, once)", i18n)]
    print(f"{args.requests} requests each after 20 of warm-up; CPU per request in ms (process time)\n")
    print(f"{'answer':32} {'bytes':>8} {'br':>8} {'gzip':>8} {'CPU plain':>10} {'CPU br':>8} {'CPU gzip':>9} "
          f"{'br cost':>8} {'gzip cost':>9} {'br 5 alone':>10} {'gzip 6 alone':>12}")
    for label, url in urls:
        plain_cpu, plain, _ = per_request(client, url, None, args.requests)
        br_cpu, br, br_sent = per_request(client, url, "br", args.requests)
        gz_cpu, gz, gz_sent = per_request(client, url, "gzip", args.requests)
        assert br_sent == "br" and gz_sent == "gzip", (label, br_sent, gz_sent)
        body = client.get(url).get_data()
        alone = [min(timeit.repeat(lambda e=encoding, b=body: compress_fast(b, e), number=20, repeat=5)) / 20
                 for encoding in ("br", "gzip")]
        print(f"{label:32} {plain:8} {br:8} {gz:8} {plain_cpu * 1e3:10.3f} {br_cpu * 1e3:8.3f} {gz_cpu * 1e3:9.3f} "
              f"{(br_cpu - plain_cpu) * 1e3:+8.3f} {(gz_cpu - plain_cpu) * 1e3:+9.3f} {alone[0] * 1e3:10.3f} "
              f"{alone[1] * 1e3:12.3f}")


if __name__ == "__main__":
    main()
