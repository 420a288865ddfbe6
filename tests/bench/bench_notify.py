"""Benchmark of notifications and play by e-mail (issue 11, "Measure"), run by hand; prints figures, asserts
nothing about speed.

    .venv/bin/python tests/bench/bench_notify.py [--moves 200] [--mail-games 20] [--mail-rounds 5]

Everything runs on 127.0.0.1, laid out as ``referee serve`` does: an embedded durable Redis (logs, outbox,
contacts) and a non-persisted one (queues, projections), one ``referee worker --notify no`` for replays and
one ``referee worker --notify only`` for deliveries (real subprocesses), the app in process (Flask test
client), a real HTTP webhook receiver, an ``aiosmtpd`` SMTP sink for the replies, and the mail gateway.

1. **move → webhook delivered**: two seats with webhook contacts for ``turn``; ``--moves`` signed moves, each
   after the previous turn's webhook arrived; for each, the time from the move's 2xx to the arrival of the
   next seat's ``turn`` webhook (verified with ``standardwebhooks``). p50/p90/p99.
2. **mails per second through the gateway**: ``--mail-games`` games; in each of ``--mail-rounds`` rounds one
   mail per game carrying the seat to move's armored move is sent over SMTP; the time until every reply
   arrived; mails per second, and per mail the time from SMTP 250 to the reply (p50/p99).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import smtplib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from email.message import EmailMessage
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "service"))

from notify_servers import smtp_sink, webhook_receiver  # noqa: E402
from standardwebhooks import Webhook  # noqa: E402
from svc_helpers import Http, accept_all, create_game, move_envelope, signed  # noqa: E402

from referee.clock import now  # noqa: E402
from referee.notify.armor import armor  # noqa: E402
from referee.protocol.signing import generate_key, public_key_b64, sign  # noqa: E402
from referee.running.embedded_redis import EmbeddedRedis, free_port  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def describe(values: list[float]) -> str:
    if not values:
        return "no samples"
    return (f"p50 {pct(values, 50) * 1000:.0f} ms, p90 {pct(values, 90) * 1000:.0f} ms, "
            f"p99 {pct(values, 99) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms (n={len(values)})")


def spawn_worker(env: dict[str, str], name: str, notify: str, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "referee.cli", "worker", "--name", name, "--notify", notify],
                            env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=log.open("wb"))


def webhook_latency(app: Any, moves: int, receiver: Any) -> list[float]:
    http = Http(app.test_client())
    keys = [generate_key(), generate_key()]
    secrets = {}
    for key in keys:
        envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key), "webhook": receiver.url,
                    "events": ["turn"], "at": now()}
        answer = app.test_client().post("/contacts", json={"envelope": envelope, "sig": sign(key, envelope)}).json
        secrets[public_key_b64(key)] = answer["secret"]
    game = create_game(http, "towerup", 2, keys=keys)
    accept_all(http, game)
    games = 1
    rng = random.Random(7)
    samples: list[float] = []
    refused: list[tuple[int, str]] = []
    for _ in range(moves):
        _s, legal = http.get(f"/games/{game.game_id}/legal-moves")
        if legal["to_move"] is None:  # the game is over: the next one (same seats, same contacts)
            game = create_game(http, "towerup", 2, keys=keys)
            accept_all(http, game)
            games += 1
            _s, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat = legal["to_move"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], rng.choice(legal["moves"]))
        seen = len(receiver.received)
        status, answer = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], envelope))
        accepted = time.monotonic()
        if status != 202:
            refused.append((status, (answer or {}).get("error", {}).get("code")))
            continue
        expected_id = f"{game.game_id}:{legal['seq']}:turn"
        deadline = accepted + 30
        while time.monotonic() < deadline:
            arrived = [r for r in receiver.received[seen:] if r["headers"].get("webhook-id") == expected_id]
            if arrived:
                samples.append(arrived[0]["t"] - accepted)
                owner = json.loads(arrived[0]["body"])["key"]
                event = Webhook(secrets[owner]).verify(arrived[0]["body"], arrived[0]["headers"])
                assert event["id"] == expected_id
                break
            time.sleep(0.002)
    print(f"  ({games} game(s))" + (f"; {len(refused)} moves refused: {sorted(set(refused))}" if refused else ""))
    return samples


def mail_rate(app: Any, gateway_port: int, sink: Any, games: int, rounds: int) -> tuple[float, list[float], int]:
    http = Http(app.test_client())
    played = []
    for _ in range(games):
        game = create_game(http, "fivetowers", 2)
        accept_all(http, game)
        played.append(game)
    rng = random.Random(3)
    per_mail: list[float] = []
    sent_total = 0
    started = time.monotonic()
    for _round in range(rounds):
        sent: dict[str, float] = {}
        for index, game in enumerate(played):
            _s, legal = http.get(f"/games/{game.game_id}/legal-moves")
            if legal["to_move"] is None:
                continue
            seat = legal["to_move"]
            block = armor(signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"],
                                                                rng.choice(legal["moves"]))))
            message = EmailMessage()
            address = f"player{index}@example.org"
            message["From"], message["To"], message["Subject"] = address, "play@referee.example", "move"
            message.set_content(f"my move\n\n{block}")
            with smtplib.SMTP("127.0.0.1", gateway_port, timeout=10) as smtp:
                smtp.send_message(message)
            sent[address] = time.monotonic()
        sent_total += len(sent)
        waiting = dict(sent)
        deadline = time.monotonic() + 120
        while waiting and time.monotonic() < deadline:
            for address in list(waiting):
                if len(sink.to(address)) > _round:
                    per_mail.append(time.monotonic() - waiting.pop(address))
            time.sleep(0.005)
    elapsed = time.monotonic() - started
    return sent_total / elapsed, per_mail, sent_total


class Stamped(list):  # type: ignore[type-arg]
    """The receiver's list of requests, each stamped with its arrival time."""

    def append(self, item: dict[str, Any]) -> None:
        item["t"] = time.monotonic()
        super().append(item)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--mail-games", type=int, default=20)
    parser.add_argument("--mail-rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, smtp_sink() as sink, webhook_receiver() as receiver:
        logs = EmbeddedRedis(directory=Path(tmp) / "redis", durable=True).start()
        work = EmbeddedRedis(directory=Path(tmp) / "redis-work", durable=False).start()
        env = {**os.environ, "REDIS_URL": logs.url, "REFEREE_WORK_REDIS_URL": work.url, "REFEREE_VAR": tmp,
               "REFEREE_SMTP_URL": f"smtp://127.0.0.1:{sink.port}", "REFEREE_RATE_CREATE": "100000 per minute",
               "REFEREE_RATE_CONTACTS": "100000 per minute", "REFEREE_ACCEPT_WITHIN": "0"}
        os.environ.update({k: v for k, v in env.items() if k.startswith("REFEREE_") or k.endswith("REDIS_URL")})
        receiver.received = Stamped()
        from referee.app import create_app
        from workers.mailjobs import run_gateway

        app = create_app({"REDIS_URL": logs.url, "REFEREE_WORK_REDIS_URL": work.url, "REFEREE_VAR": tmp})
        workers = [spawn_worker(env, "bench-replay", "no", Path(tmp) / "w1.log"),
                   spawn_worker(env, "bench-notify", "only", Path(tmp) / "w2.log")]
        gateway_port, stop, ready = free_port(), threading.Event(), threading.Event()
        threading.Thread(target=run_gateway, args=("127.0.0.1", gateway_port),
                         kwargs={"ready": ready, "stop": stop}, daemon=True).start()
        ready.wait(10)
        try:
            time.sleep(1.0)
            print(f"move -> turn webhook delivered ({args.moves} moves, Tower Up, 2 seats):")
            samples = webhook_latency(app, args.moves, receiver)
            print("  " + describe(samples))
            rate, per_mail, count = mail_rate(app, gateway_port, sink, args.mail_games, args.mail_rounds)
            print(f"mail gateway ({count} mails, {args.mail_games} games x {args.mail_rounds} rounds, one mail per "
                  f"game per round): {rate:.1f} mails/s end to end (SMTP in, move logged, reply out)")
            print("  SMTP 250 -> reply received: " + describe(per_mail))
            print(f"  (median of all: {statistics.median(per_mail) * 1000:.0f} ms)" if per_mail else "")
        finally:
            stop.set()
            for worker in workers:
                worker.terminate()
                worker.wait(10)
            logs.stop()
            work.stop()


if __name__ == "__main__":
    main()
