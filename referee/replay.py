"""Replaying a game's log through the rules engine: the one place that decides verdicts.

The web process (to check a submission before appending it), the RQ workers (to build projections)
and the offline verifier all fold a log with :class:`LogReplayer`, so they cannot disagree. It is pure:
it reads entries and a server seed, never Redis, a clock or the network.

Verdicts, one per entry (``status``):

* ``"ok"`` — a lifecycle entry (``created``, ``accepted``, ``started``, ``revealed``) that is valid;
* ``"applied"`` — a ``move`` that the engine applied;
* ``"rejected"`` — an entry that changed nothing, with ``error`` ``{code, rule?, message}``: an illegal
  move (the engine's code and rule id) or a submission whose binding or signature is wrong
  (``submission/…`` codes). A rejected entry never changes the state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .games import IllegalMove, ruleset
from .games.base import Game, Ruleset
from .games.randomness import derive_game_seed, recorded_game_seed
from .logchain import GENESIS
from .signing import ACCEPT_CTX, MOVE_CTX, b64url_decode, verify

WAITING, ACTIVE, FINISHED, ABORTED = "waiting", "active", "finished", "aborted"


class LogError(ValueError):
    """The log itself is malformed (not a verdict on a move): e.g. no ``created`` entry first."""

    def __init__(self, position: int, message: str):
        super().__init__(f"log entry {position}: {message}")
        self.position = position
        self.message = message


@dataclass
class Verdict:
    seq: int
    type: str
    status: str
    seat: int | None = None
    error: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "type": self.type, "status": self.status}
        if self.seat is not None:
            out["seat"] = self.seat
        if self.error is not None:
            out["error"] = self.error
        return out


def _reject(entry: dict[str, Any], code: str, message: str, rule: str | None = None) -> Verdict:
    error: dict[str, Any] = {"code": code, "message": message}
    if rule:
        error["rule"] = rule
    seat = entry.get("seat") if isinstance(entry.get("seat"), int) else None
    return Verdict(entry.get("seq", -1), str(entry.get("type")), "rejected", seat, error)


def check_submission(
    submission: Any, *, ctx: str, game_id: str, seat: int, seq: int, prev: str, keys: list[str],
    verifier: Callable[[str, Any, str], bool] = verify,
) -> tuple[str, str] | None:
    """``(code, message)`` of the first thing wrong with a signed submission for this log position, or None.

    Checks the shape, the binding (ctx, game, seat, seq, prev) and the seat's Ed25519 signature over the
    RFC 8785 bytes of the envelope. ``verifier(key, envelope, sig)`` is the signature check
    (:func:`referee.signing.verify`; the offline verifier passes a memoising one).
    """
    if not isinstance(submission, dict) or not isinstance(submission.get("envelope"), dict):
        return "submission/malformed", "a submission is {envelope, sig}"
    envelope, sig = submission["envelope"], submission.get("sig")
    if envelope.get("v") != 1:
        return "submission/version", "envelope v must be 1"
    if envelope.get("ctx") != ctx:
        return "submission/wrong_context", f"envelope ctx must be {ctx!r}"
    if envelope.get("game") != game_id:
        return "submission/wrong_game", "the envelope is for another game"
    if envelope.get("seat") != seat or not (0 <= seat < len(keys)):
        return "submission/wrong_seat", f"the envelope is for seat {envelope.get('seat')!r}, not seat {seat}"
    if envelope.get("seq") != seq or envelope.get("prev") != prev:
        return "submission/stale", f"the envelope is bound to seq {envelope.get('seq')!r}, not {seq}"
    if not isinstance(sig, str) or not verifier(keys[seat], envelope, sig):
        return "submission/bad_signature", f"the signature is not seat {seat}'s over this envelope"
    return None


@dataclass
class LogReplayer:
    """Folds log entries, in order, into a game and one verdict per entry.

    ``server_seed`` is the referee's secret (the workers have it from the store); a verifier leaves it
    ``None`` and the seed is taken from the ``revealed`` entry, which it must pass as ``server_seed``
    after scanning the log (see :func:`replay_log`). Without a seed a seeded game cannot be started:
    the replay stops with ``blocked`` set.
    """

    server_seed: bytes | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    created: dict[str, Any] | None = None
    rules: Ruleset | None = None
    game: Game | None = None
    status: str = WAITING
    version_mismatch: dict[str, str] | None = None
    blocked: str | None = None
    entropies: dict[int, bytes] = field(default_factory=dict)
    head: str = GENESIS
    #: the signature check passed to :func:`check_submission` (the verifier memoises it: one check per signature)
    verifier: Callable[[str, Any, str], bool] = verify

    @property
    def seq(self) -> int:
        """Number of entries folded so far (the next entry's position)."""
        return len(self.verdicts)

    @property
    def keys(self) -> list[str]:
        return [seat["key"] for seat in (self.created or {}).get("seats", [])]

    def feed(self, entry: dict[str, Any]) -> Verdict:
        position = self.seq
        if entry.get("seq") != position:
            raise LogError(position, f"entry carries seq {entry.get('seq')!r}")
        kind = entry.get("type")
        handler = getattr(self, f"_on_{kind}", None) if isinstance(kind, str) else None
        if position == 0 and kind != "created":
            raise LogError(0, "the first entry of a log must be 'created'")
        if handler is None:
            verdict = _reject(entry, "log/unknown_entry", f"unknown entry type {kind!r}")
        else:
            verdict = handler(entry)
        self.verdicts.append(verdict)
        self.head = entry.get("hash", self.head)
        return verdict

    # -- lifecycle -------------------------------------------------------------------------------
    def _on_created(self, entry: dict[str, Any]) -> Verdict:
        if self.created is not None:
            return _reject(entry, "log/duplicate_created", "a game is created once")
        try:
            self.rules = ruleset(entry["ruleset"]["name"])
        except (KeyError, TypeError) as exc:
            raise LogError(0, f"unknown or missing ruleset: {exc}") from exc
        pinned = entry["ruleset"].get("version")
        if pinned != self.rules.version:
            self.version_mismatch = {"pinned": str(pinned), "installed": self.rules.version}
        self.created = entry
        return Verdict(0, "created", "ok")

    def _on_accepted(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        seat = entry.get("seat")
        if self.status != WAITING or self.created.get("mode") != "seeded":
            return _reject(entry, "game/not_waiting", "the game is not waiting for acceptances")
        if not isinstance(seat, int) or not 0 <= seat < len(self.keys):
            return _reject(entry, "submission/wrong_seat", f"no seat {seat!r} in this game")
        if seat in self.entropies:
            return _reject(entry, "accept/duplicate", f"seat {seat} has already accepted")
        problem = check_submission(entry.get("submission"), ctx=ACCEPT_CTX, game_id=self.created["game"], seat=seat,
                                   seq=entry["seq"], prev=self.head, keys=self.keys, verifier=self.verifier)
        if problem:
            return _reject(entry, *problem)
        try:
            entropy = b64url_decode(entry["submission"]["envelope"].get("entropy", ""))
        except ValueError:
            entropy = b""
        if len(entropy) != 32:
            return _reject(entry, "accept/bad_entropy", "entropy must be 32 bytes of base64url")
        self.entropies[seat] = entropy
        return Verdict(entry["seq"], "accepted", "ok", seat)

    def _on_started(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None and self.rules is not None
        if self.status != WAITING:
            return _reject(entry, "game/not_waiting", "the game has already started")
        players = len(self.keys)
        options = self.created.get("options") or {}
        game_id = self.created["game"]
        if self.created.get("mode") == "recorded":
            self.game = self.rules.new_game(players, options, deck=list(self.created["deck"]),
                                            seed=recorded_game_seed(game_id))
        else:
            if len(self.entropies) != players:
                return _reject(entry, "game/not_accepted", "not every seat has accepted")
            if self.server_seed is None:
                self.blocked = "the server seed is not known (not revealed yet)"
                self.status = ACTIVE
                return Verdict(entry["seq"], "started", "ok")
            seed = derive_game_seed(self.server_seed, game_id, [self.entropies[i] for i in range(players)])
            self.game = self.rules.new_game(players, options, seed=seed)
        self.status = ACTIVE
        return Verdict(entry["seq"], "started", "ok")

    def _on_move(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        seat = entry.get("seat")
        if self.status != ACTIVE:
            return _reject(entry, "game/not_active", f"the game is {self.status}")
        if not isinstance(seat, int):
            return _reject(entry, "submission/wrong_seat", "a move entry names its seat")
        problem = check_submission(entry.get("submission"), ctx=MOVE_CTX, game_id=self.created["game"], seat=seat,
                                   seq=entry["seq"], prev=self.head, keys=self.keys, verifier=self.verifier)
        if problem:
            return _reject(entry, *problem)
        if self.game is None:  # blocked: seeded game replayed without its seed
            return Verdict(entry["seq"], "move", "unknown", seat)
        try:
            self.game.play(seat, entry["submission"]["envelope"].get("move"))
        except IllegalMove as exc:
            return _reject(entry, exc.code, exc.message, exc.rule)
        if self.game.is_over():
            self.status = FINISHED
        return Verdict(entry["seq"], "move", "applied", seat)

    def _on_revealed(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        try:
            seed = bytes.fromhex(entry.get("server_seed", ""))
        except ValueError:
            seed = b""
        if self.created.get("mode") != "seeded" or hashlib.sha256(seed).hexdigest() != self.created.get("commitment"):
            return _reject(entry, "reveal/commitment_mismatch", "the revealed seed does not match the commitment")
        if entry.get("reason") == "aborted":
            self.status = ABORTED
        return Verdict(entry["seq"], "revealed", "ok")

    # -- reads -------------------------------------------------------------------------------------
    def to_move(self) -> int | None:
        return self.game.to_move() if self.game is not None and self.status == ACTIVE else None


def revealed_seed(entries: list[dict[str, Any]]) -> bytes | None:
    """The server seed revealed in a log, if any (last ``revealed`` entry with valid hex)."""
    for entry in reversed(entries):
        if entry.get("type") == "revealed":
            try:
                return bytes.fromhex(entry.get("server_seed", ""))
            except ValueError:
                return None
    return None


def replay_log(entries: list[dict[str, Any]], server_seed: bytes | None = None) -> LogReplayer:
    """Fold a whole log. Without ``server_seed`` the seed revealed in the log (if any) is used."""
    replayer = LogReplayer(server_seed=server_seed if server_seed is not None else revealed_seed(entries))
    for entry in entries:
        replayer.feed(entry)
    return replayer
