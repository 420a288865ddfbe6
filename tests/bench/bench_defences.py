"""Benchmark of the defences' cost on the accept path (issue 17, "Measure"), run by hand; prints figures.

    .venv/bin/python tests/bench/bench_defences.py [--seconds 20]

Two apps on the same embedded Redis servers (durable log, non-persisted work), in one process, fed signed
5 Towers moves through Flask's test client in alternating short rounds so both see the same machine load:

* **on** — as deployed: the security headers on every answer (``referee.web.defences``), the body layer, and
  the rate limits (Flask-Limiter counting in the work Redis; creation limits are raised so the benchmark
  itself is not refused — moves are not limited by default);
* **off** — the same app with the headers' ``after_request`` hook removed and Flask-Limiter disabled
  (``RATELIMIT_ENABLED = False``).

Prints moves per second of each and the ratio on/off (goal ≥ 0.95).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_service import FlaskClient, LocalGame, alternate  # noqa: E402

from referee.running.embedded_redis import EmbeddedRedis  # noqa: E402


def make_app(url: str, work_url: str, tmp: str, defended: bool) -> Any:
    from referee.app import create_app

    app = create_app({"REDIS_URL": url, "REFEREE_WORK_REDIS_URL": work_url, "REFEREE_VAR": tmp,
                      "REFEREE_QUEUE": f"bench-{defended}", "REFEREE_RATE_CREATE": "100000 per minute",
                      "REFEREE_RATE_CREATE_PER_KEY": "100000 per minute"})
    if not defended:
        app.after_request_funcs[None] = [f for f in app.after_request_funcs.get(None, [])
                                         if "defences" not in getattr(f, "__module__", "")]
        app.extensions["referee.limiter"].enabled = False
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        logs = EmbeddedRedis(directory=Path(tmp) / "redis", durable=True).start()
        work = EmbeddedRedis(directory=Path(tmp) / "work", durable=False).start()
        try:
            apps = {name: make_app(logs.url, work.url, tmp, name == "on") for name in ("on", "off")}
            probe = apps["off"].test_client().get("/health")
            assert "Content-Security-Policy" not in probe.headers, "the headers were not switched off"
            assert "Content-Security-Policy" in apps["on"].test_client().get("/health").headers
            rng = random.Random(9)
            clients = {name: FlaskClient(app) for name, app in apps.items()}
            pools = {name: [LocalGame(client, rng) for _ in range(8)] for name, client in clients.items()}
            measured = alternate(clients, pools, rng, args.seconds, rounds=8)
            counts = {name: int(row["count"]) for name, row in measured.items()}
            spent = {name: row["spent"] for name, row in measured.items()}
            rates = {name: counts[name] / spent[name] for name in counts}
            print(f"accept path, signed 5 Towers moves through the app ({args.seconds:g} s each, alternating):")
            print(f"  defences on  {rates['on']:.1f} moves/s ({counts['on']} moves)")
            print(f"  defences off {rates['off']:.1f} moves/s ({counts['off']} moves)")
            print(f"  ratio on/off {rates['on'] / rates['off']:.3f} (goal >= 0.95)")
        finally:
            logs.stop()
            work.stop()


if __name__ == "__main__":
    main()
