"""Redis bytes per live game, key by key (issue 28, item 2), run by hand; prints figures, asserts nothing.

    .venv/bin/python tests/bench/bench_memory.py [--games 60] [--entries 38] [--finish]

The ``docs/scale.md`` model game: 5 Towers, 2 seats, seeded, ``per_move`` of 3 days (so it has a timer and
its events go to the outbox), created, accepted by both seats and played by random legal moves (``random``
seeded 1) through the Flask app (its test client; projections folded inline by the replay worker's own
``Projector``, as ``REFEREE_DISPATCH=inline``) until its log holds ``--entries`` entries: 38 is half of the
72 a random game lasts, the average live game of the model. On two real ``redis-server`` processes laid out as
``referee serve`` does (the log Redis and the work Redis; not persisted here: ``MEMORY USAGE`` does not
depend on it).

Then every key of both servers is read with ``MEMORY USAGE key SAMPLES 0`` and summed by kind, divided by the
number of games:

* a game's own keys (``game:{<id>}:log``, ``:sigs``, ``:proj``, …) and the per-player indexes
  (``player:{<key>}:games``, one per seat here: every player of the model plays one game at a time);
* the shared keys that grow by one member a game (``referee:games``, ``referee:timers``, the status sets) and
  the outbox's ``{outbox}:seen:<event>`` ids (14 days each: about what a live game keeps at 2 moves a day);
* the outbox stream ``{outbox}:stream`` is capped (``OUTBOX_MAXLEN``, about 100,000 events whatever the
  number of games): its per-game share is the cap × the measured bytes per event ÷ ``--model-games``
  (1,000,000); the bytes it holds in this run are printed beside it;
* not counted: the rate limiter's and RQ's keys (not per game).

The total is ``redis_bytes_per_live_game`` (also in the JSON printed last; ``bench_service.py`` runs this
and carries the figure). The same table is printed at the game's start (after the acceptances, 4 entries), so
that the fixed cost and the cost per further entry of ``docs/scale.md``'s arithmetic come from one run;
``--finish`` adds a third, every game played to its end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "service"))

from referee.running.embedded_redis import EmbeddedRedis  # noqa: E402
from referee.store import keys  # noqa: E402

#: the model's time control: a correspondence game (``docs/scale.md``)
TIME_CONTROL = {"kind": "per_move", "per_move": 3 * 86400}
#: the model's number of live games (the outbox's capped stream is shared by them all)
MODEL_GAMES = 1_000_000


def kind_of(key: str) -> str | None:
    """The row of the table a key is counted in; ``None``: not per game."""
    for prefix in ("game:{", "player:{", "tournament:{"):
        if key.startswith(prefix):
            return prefix[:-1] + "{…}" + key[key.index("}") + 1:]
    if key.startswith("{outbox}:seen:"):
        return "{outbox}:seen:<event>"
    if key.startswith(("LIMITS", "rq:", "referee:ready:", keys.WORK_MARKER)):
        return None
    return key


def measure(servers: dict[str, Any], games: int, model_games: int = MODEL_GAMES) -> dict[str, Any]:
    """``MEMORY USAGE`` of every key of ``servers`` (name → redis client), per game: ``{rows, total}``."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: {"bytes": 0, "keys": 0, "type": ""})
    outbox: dict[str, float] = {}
    for server, client in servers.items():
        for raw in client.scan_iter(count=1000):
            key = raw.decode()
            kind = kind_of(key)
            if kind is None:
                continue
            size = int(client.memory_usage(raw, samples=0) or 0)
            if key == keys.OUTBOX:
                events = int(client.xlen(raw))
                per_event = size / max(events, 1)
                outbox = {"bytes": size, "events": events, "bytes_per_event": per_event,
                          "share": keys.OUTBOX_MAXLEN * per_event / model_games if events else 0.0}
                continue
            row = rows[(server, kind)]
            row["bytes"] += size
            row["keys"] += 1
            row["type"] = client.type(raw).decode()
    table = [{"server": server, "key": kind, "type": row["type"], "keys_per_game": row["keys"] / games,
              "bytes_per_game": row["bytes"] / games} for (server, kind), row in rows.items()]
    if outbox:
        table.append({"server": "log", "key": f"{keys.OUTBOX} (capped: its share at {model_games:,} games)",
                      "type": "stream", "keys_per_game": 0.0, "bytes_per_game": outbox["share"]})
    table.sort(key=lambda row: -row["bytes_per_game"])
    return {"rows": table, "total": sum(row["bytes_per_game"] for row in table), "outbox": outbox}


def print_table(label: str, found: dict[str, Any], entries: float) -> None:
    print(f"\n{label}: {entries:.1f} entries a game")
    print(f"  {'server':6s} {'key':58s} {'type':7s} {'keys':>5s} {'bytes/game':>11s}")
    for row in found["rows"]:
        print(f"  {row['server']:6s} {row['key']:58s} {row['type']:7s} {row['keys_per_game']:5.2f} "
              f"{row['bytes_per_game']:11,.0f}")
    print(f"  {'total':6s} {'':58s} {'':7s} {'':5s} {found['total']:11,.0f}")
    if found["outbox"]:
        out = found["outbox"]
        print(f"  (the outbox stream holds {out['events']:,} events here, {out['bytes']:,} B: "
              f"{out['bytes_per_event']:,.0f} B an event)")


def run(games: int = 60, entries: int = 38, *, finish: bool = False, model_games: int = MODEL_GAMES,
        quiet: bool = False, config: dict[str, str] | None = None) -> dict[str, Any]:
    """Play ``games`` model games to ``entries`` entries on two fresh Redis servers; the tables, per game."""
    import redis
    from svc_helpers import Http, accept_all, create_game, play_random

    from referee.app import create_app

    os.environ.setdefault("REFEREE_RATE_CREATE", "1000000 per minute")
    os.environ.setdefault("REFEREE_RATE_CREATE_PER_KEY", "1000000 per minute")
    os.environ.setdefault("REFEREE_ACCEPT_WITHIN", "0")
    out: dict[str, Any] = {"games": games}
    with (EmbeddedRedis(durable=False) as log_redis, EmbeddedRedis(durable=False) as work_redis,
          tempfile.TemporaryDirectory() as tmp):
        app = create_app({"REDIS_URL": log_redis.url, "REFEREE_WORK_REDIS_URL": work_redis.url,
                          "REFEREE_VAR": tmp + "/var", "REFEREE_DISPATCH": "inline"})
        http, store, rng = Http(app.test_client()), app.extensions["referee.store"], random.Random(1)
        servers = {"log": redis.Redis.from_url(log_redis.url), "work": redis.Redis.from_url(work_redis.url)}
        for name, value in (config or {}).items():  # --config: another setting than embedded_redis.py's
            for client in servers.values():
                client.config_set(name, value)
        played = []
        for _ in range(games):
            game = create_game(http, "fivetowers", 2, options={"time_control": TIME_CONTROL})
            accept_all(http, game, rng)
            played.append(game)

        def length() -> float:
            return sum(store.tip(game.game_id).seq for game in played) / games

        phases = [("started", None)]
        phases.append(("half played", entries))
        if finish:
            phases.append(("finished", 0))
        for label, target in phases:
            if target is not None:
                for game in played:
                    seq = store.tip(game.game_id).seq
                    if target == 0:
                        play_random(http, game, rng)
                    elif target > seq:
                        play_random(http, game, rng, max_moves=target - seq)
            found = measure(servers, games, model_games)
            found["entries"] = length()
            out[label] = found
            if not quiet:
                print_table(label, found, found["entries"])
        start, half = out["started"], out["half played"]
        per_entry = (half["total"] - start["total"]) / max(half["entries"] - start["entries"], 1e-9)
        out["fixed_bytes"] = start["total"]
        out["bytes_per_entry"] = per_entry
        out["redis_bytes_per_live_game"] = half["total"]
        for client in servers.values():
            client.close()
        store.close()
    if not quiet:
        print(f"\nper game: {out['fixed_bytes']:,.0f} B at the start ({start['entries']:.1f} entries) + "
              f"{per_entry:,.0f} B per further entry; redis_bytes_per_live_game (the average live game, "
              f"{half['entries']:.1f} entries): {out['redis_bytes_per_live_game']:,.0f} B")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--entries", type=int, default=38, help="entries a game's log holds when measured")
    parser.add_argument("--finish", action="store_true", help="also measure every game played to its end")
    parser.add_argument("--model-games", type=int, default=MODEL_GAMES,
                        help="live games sharing the capped outbox stream")
    parser.add_argument("--config", action="append", default=[], metavar="NAME=VALUE",
                        help="a redis.conf setting for both servers (CONFIG SET), e.g. stream-node-max-bytes=4096")
    args = parser.parse_args()
    config = dict(item.split("=", 1) for item in args.config)
    found = run(args.games, args.entries, finish=args.finish, model_games=args.model_games, config=config)
    print(json.dumps({"redis_bytes_per_live_game": round(found["redis_bytes_per_live_game"]),
                      "fixed_bytes": round(found["fixed_bytes"]), "bytes_per_entry": round(found["bytes_per_entry"]),
                      "entries": found["half played"]["entries"], "games": found["games"],
                      "rows": {f"{row['server']} {row['key']}": round(row["bytes_per_game"])
                               for row in found["half played"]["rows"]}}, indent=1))


if __name__ == "__main__":
    main()
