"""Load for the fail-over tests and benchmark (``test_failover.py``, ``tests/bench/bench_failover.py``):
writer threads appending chained entries to their own logs through a :class:`RedisStore`, recording every
append the store acknowledged; a game played through the HTTP API that retries a 503 with the same signed
request; and the check afterwards that every acknowledged entry is in its log and every log chains.

An entry is acknowledged when ``append`` returned, or when the same entry sent again was answered
``DuplicateSubmission`` at its position (the store waited for the replicas then too). A 503
(``StoreUnavailable``, its subclass ``NotReplicated``) is not an acknowledgement: the writer sends the same
entry again (same position, same previous hash, same signature) until one of the two answers comes."""

from __future__ import annotations

import hashlib
import itertools
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from svc_helpers import Http, move_envelope, signed

from referee.protocol.logchain import GENESIS, first_broken_link, seal
from referee.store import DuplicateSubmission, StaleAppend, StoreUnavailable, keys


def signature_of(game: str, seq: int) -> str:
    """A stand-in for a submission's signature: as unpredictable in its first characters as an Ed25519
    signature's base64url (the log's signature index keys a signature by its first 20: ``keys.sig_field``)."""
    return hashlib.sha256(f"{game}/{seq}".encode()).hexdigest()


def first_entry(game: str) -> dict[str, Any]:
    return seal({"v": 1, "type": "created", "seq": 0, "at": "2025-01-01T00:00:00Z", "game": game}, GENESIS)


def next_entry(game: str, seq: int, prev: str) -> dict[str, Any]:
    return seal({"v": 1, "type": "note", "seq": seq, "at": "2025-01-01T00:00:00Z", "game": game, "n": seq}, prev)


@dataclass
class Writers:
    """``threads`` writers, each appending to its share of ``games`` (created here) one entry after another
    through ``self.store`` (swappable: the single layout's fail-over points it at the new master)."""

    store: Any
    games: list[str]
    threads: int = 4
    acked: dict[str, list[str]] = field(default_factory=dict)   # game -> hashes acknowledged, by position
    ack_times: dict[str, list[float]] = field(default_factory=dict)  # game -> monotonic time of each ack
    unavailable: int = 0
    not_replicated: int = 0
    problems: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def create(self) -> Writers:
        for game in self.games:
            entry = first_entry(game)
            self.store.create(game, entry, None)
            self.acked[game], self.ack_times[game] = [entry["hash"]], [time.monotonic()]
        return self

    def start(self) -> Writers:
        for i in range(self.threads):
            mine = self.games[i::self.threads]
            thread = threading.Thread(target=self._run, args=(mine,), daemon=True, name=f"writer-{i}")
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def total(self) -> int:
        return sum(len(hashes) for hashes in self.acked.values())

    def _run(self, games: list[str]) -> None:
        pending: dict[str, dict[str, Any]] = {}
        while not self._stop.is_set():
            for game in games:
                hashes = self.acked[game]
                entry = pending.get(game) or next_entry(game, len(hashes), hashes[-1])
                pending[game] = entry
                try:
                    self.store.append(game, entry, hashes[-1], signature=signature_of(game, entry["seq"]))
                except DuplicateSubmission as exc:
                    if exc.position != entry["seq"]:
                        self._problem(f"{game}: duplicate at {exc.position}, sent for {entry['seq']}")
                        return
                except StaleAppend as exc:
                    self._problem(f"{game}: stale at {entry['seq']} (the log is at {exc.seq}): an entry vanished")
                    return
                except StoreUnavailable as exc:
                    with self._lock:
                        self.unavailable += 1
                        self.not_replicated += type(exc).__name__ == "NotReplicated"
                    time.sleep(0.02)
                    continue
                except Exception as exc:
                    self._problem(f"{game}: {type(exc).__name__}: {exc}")
                    time.sleep(0.05)
                    continue
                hashes.append(entry["hash"])
                self.ack_times[game].append(time.monotonic())
                del pending[game]

    def _problem(self, text: str) -> None:
        with self._lock:
            self.problems.append(text)

    def lost(self, store: Any) -> tuple[list[str], list[str]]:
        """``(lost, broken)``: each acknowledged entry missing from its log (or another entry in its place),
        and each log whose hash chain does not hold."""
        lost, broken = [], []
        for game, hashes in self.acked.items():
            entries = store.read_log(game)
            link = first_broken_link(entries)
            if link is not None:
                broken.append(f"{game}: {link}")
            for position, expected in enumerate(hashes):
                if position >= len(entries) or entries[position]["hash"] != expected:
                    lost.append(f"{game}@{position}")
        return lost, broken

    def resumed_after(self, games: list[str], since: float) -> float | None:
        """Seconds from ``since`` to the first acknowledgement after it on any of ``games``."""
        after = [t for game in games for t in self.ack_times[game] if t > since]
        return min(after) - since if after else None

    def longest_gap(self, games: list[str]) -> float:
        """The longest time none of ``games`` had an append acknowledged (while the writers ran)."""
        times = sorted(t for game in games for t in self.ack_times[game][1:])  # [0]: the creation
        return max((b - a for a, b in itertools.pairwise(times)), default=0.0)


def game_ids(count: int, prefix: str = "g_fo") -> list[str]:
    """``count`` valid game ids (``g_`` and 16 base32 characters)."""
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    rng = random.Random()
    return [prefix + "".join(rng.choice(alphabet) for _ in range(18 - len(prefix))) for _ in range(count)]


def log_key(game: str) -> str:
    return keys.game_keys(game).log


@dataclass
class AppPlayer:
    """Plays one game through the HTTP API, sending the same signed move again after a 5xx until it is
    answered 2xx (or 409 ``submission/duplicate``: it is in the log); records where each move went."""

    http: Http
    game: Any
    rng: random.Random
    acked: list[tuple[int, str]] = field(default_factory=list)  # (position, signature)
    retries: int = 0
    statuses: dict[str, int] = field(default_factory=dict)  # "GET 503", "POST 503", … -> how many

    def _count(self, method: str, status: int) -> None:
        self.retries += 1
        self.statuses[f"{method} {status}"] = self.statuses.get(f"{method} {status}", 0) + 1

    def _get(self, path: str, deadline: float) -> Any:
        while True:
            status, body = self.http.get(path)
            if status == 200:
                return body
            assert status >= 500 and time.monotonic() < deadline, (status, body)
            self._count("GET", status)
            time.sleep(0.05)

    def play(self, moves: int, deadline: float) -> bool:
        """Up to ``moves`` moves; whether the game ended."""
        for _ in range(moves):
            legal = self._get(f"/games/{self.game.game_id}/legal-moves", deadline)
            if legal["to_move"] is None:
                return True
            seat = legal["to_move"]
            move = self.rng.choice(legal["moves"])
            body = signed(self.game.keys[seat], move_envelope(self.game.game_id, seat, legal["seq"], legal["head"],
                                                              move))
            while True:
                status, answer = self.http.post(f"/games/{self.game.game_id}/moves", body)
                if status in (200, 202):
                    self.acked.append((answer["position"], body["sig"]))
                    break
                if status == 409 and answer["error"]["code"] == "submission/duplicate":
                    self.acked.append((answer["error"]["details"]["position"], body["sig"]))
                    break
                assert status >= 500 and time.monotonic() < deadline, (status, answer)
                if status == 503:
                    assert answer["error"]["code"] == "log/unavailable", answer
                self._count("POST", status)
                time.sleep(0.05)
            self.game.moves.append((seat, move))
        return False

    def lost(self, entries: list[dict[str, Any]]) -> list[int]:
        return [position for position, sig in self.acked
                if position >= len(entries) or (entries[position].get("submission") or {}).get("sig") != sig]
