"""Replaying a game's log through the rules engine: the one place that decides verdicts.

The web process (to check a submission before appending it), the RQ workers (to build projections)
and the offline verifier all fold a log with :class:`LogReplayer`, so they cannot disagree. It is pure:
it reads entries and a server seed, never Redis, a clock or the network.

Verdicts, one per entry (``status``):

* ``"ok"`` — a lifecycle entry (``created``, ``accepted``, ``started``, ``revealed``, ``vacation``,
  ``forfeited``) that is valid;
* ``"applied"`` — a ``move`` that the engine applied, or a move the referee played for a seat: a
  ``timeout``'s default move or a forfeited seat's ``auto_move`` (CONTRACT section 8);
* ``"rejected"`` — an entry that changed nothing, with ``error`` ``{code, rule?, message}``: an illegal
  move (the engine's code and rule id) or a submission whose binding or signature is wrong
  (``submission/…`` codes). A rejected entry never changes the state.

Time control (``referee.timecontrol``): the fold keeps every seat's clock from the entries' ``at``, so a
move logged after its seat's deadline, a timeout logged before it, or one that does not play the
engine's default move is rejected here, for the service, the workers and the verifier alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..decisions import Decisions, Offer, agreed, answer_problem, offer_problem, rank_decisions, revealing
from ..games import IllegalMove, ruleset
from ..games.base import Game, Ruleset
from ..games.randomness import derive_game_seed, recorded_game_seed
from ..logchain import GENESIS
from ..signing import ACCEPT_CTX, ANSWER_CTX, MOVE_CTX, OFFER_CTX, RESIGN_CTX, VACATION_CTX, submitted_entropy, verify
from ..timecontrol import Clocks, engine_options, format_ms, parse_ms
from ..timecontrol.forfeits import rank_forfeits
from ..timecontrol.spec import time_control_of

WAITING, ACTIVE, FINISHED, ABORTED = "waiting", "active", "finished", "aborted"
EXPIRED = "expired"  # never accepted by every seat in time (``created.accept_by``)

#: Entries the referee writes on its own (no seat signs them): a verifier fails a log where one is rejected.
REFEREE_ENTRIES = frozenset({"started", "revealed", "timeout", "forfeited", "auto_move", "adjudicated", "expired",
                             "agreed"})
#: The seats' own decisions (CONTRACT section 12): the service checks each one before it appends it, so a
#: verifier fails a log where one is rejected, as it does for the referee's own entries.
DECISION_ENTRIES = frozenset({"resigned", "offer", "answered"})
ADJUDICATE_CTX = "referee/adjudicate"


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


def envelope_problem(submission: Any, ctx: str) -> tuple[str, str] | None:
    """``(code, message)`` if ``submission`` is not ``{envelope, sig}`` with an envelope of version 1 and
    context ``ctx``; else None. The start of every signed submission's check (games and tournaments)."""
    if not isinstance(submission, dict) or not isinstance(submission.get("envelope"), dict):
        return "submission/malformed", "a submission is {envelope, sig}"
    envelope = submission["envelope"]
    if envelope.get("v") != 1:
        return "submission/version", "envelope v must be 1"
    if envelope.get("ctx") != ctx:
        return "submission/wrong_context", f"envelope ctx must be {ctx!r}"
    return None


def check_submission(
    submission: Any, *, ctx: str, game_id: str, seat: int, seq: int, prev: str, keys: list[str],
    verifier: Callable[[str, Any, str], bool] = verify,
) -> tuple[str, str] | None:
    """``(code, message)`` of the first thing wrong with a signed submission for this log position, or None.

    Checks the shape, the binding (ctx, game, seat, seq, prev) and the seat's Ed25519 signature over the
    RFC 8785 bytes of the envelope. ``verifier(key, envelope, sig)`` is the signature check
    (:func:`referee.signing.verify`; the offline verifier passes a memoising one).
    """
    problem = envelope_problem(submission, ctx)
    if problem:
        return problem
    envelope, sig = submission["envelope"], submission.get("sig")
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
    #: the seats' clocks (CONTRACT section 8), folded from the entries' ``at``; set by ``created``
    clocks: Clocks | None = None
    #: the game's adjudication (CONTRACT section 10): ``{method, reason, ranks, position}``, once adjudicated
    adjudication: dict[str, Any] | None = None
    #: the signature check passed to :func:`check_submission` (the verifier memoises it: one check per signature)
    verifier: Callable[[str, Any, str], bool] = verify
    #: verdicts dropped from the front by :meth:`trim` (``verdicts[i]`` is then the verdict on position
    #: ``dropped + i``); 0 for a fold that keeps them all (the verifier's)
    dropped: int = 0
    #: whether a ``revealed`` entry has been accepted (kept as a flag, so a trimmed fold knows it too)
    revealed: bool = False
    #: the seats' own decisions (CONTRACT section 12, :mod:`referee.decisions`); immutable, set by ``created``
    decisions: Decisions | None = None
    #: the moves applied to the game, newest first, as an immutable chain ``(rest, seat, move, position,
    #: entry type)``: what a take-back re-folds without its last move (one tuple per move, never copied)
    applied: tuple[Any, ...] | None = None
    #: the seats that have had a move applied (an ``abort`` offer is refused once every seat has, DC-A1)
    moved: frozenset[int] = frozenset()
    #: how the game was dealt: ``(players, options, deck, seed)`` for ``Ruleset.new_game``
    dealt: tuple[Any, ...] | None = None

    @property
    def seq(self) -> int:
        """Number of entries folded so far (the next entry's position)."""
        return self.dropped + len(self.verdicts)

    def verdicts_since(self, start: int) -> list[Verdict]:
        """The verdicts on positions ``start`` onwards; ``ValueError`` when :meth:`trim` has dropped some of them."""
        if start < self.dropped:
            raise ValueError(f"the verdicts before position {self.dropped} were trimmed from this fold")
        return self.verdicts[start - self.dropped:]

    def trim(self, keep: int) -> None:
        """Keep only the last ``keep`` (at least 1) verdicts, once there are twice as many: what a long-lived
        cache of folds calls, so the memory a fold holds does not grow with its log (issue 13). Only for a
        fold no other thread reads (the caches trim their own copy before they share it)."""
        keep = max(1, keep)
        if len(self.verdicts) > 2 * keep:
            cut = len(self.verdicts) - keep
            self.verdicts = self.verdicts[cut:]
            self.dropped += cut

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
        if verdict.type == "revealed" and verdict.status == "ok":
            self.revealed = True
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
        self.clocks = Clocks.start(time_control_of(entry), len(self.keys))
        self.decisions = Decisions.start(len(self.keys))
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
        entropy = submitted_entropy(entry)
        if entropy is None:
            return _reject(entry, "accept/bad_entropy", "entropy must be 32 bytes of base64url")
        accept_by = self.accept_by_ms()
        if accept_by is not None:
            try:
                late = parse_ms(entry.get("at")) > accept_by
            except ValueError:
                late = True
            if late:
                return _reject(entry, "game/expired", f"the game had to be accepted by {entry_time(accept_by)}")
        self.entropies[seat] = entropy
        return Verdict(entry["seq"], "accepted", "ok", seat)

    def _on_started(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None and self.rules is not None
        if self.status != WAITING:
            return _reject(entry, "game/not_waiting", "the game has already started")
        players = len(self.keys)
        options = engine_options(self.created.get("options"))
        game_id = self.created["game"]
        if self.created.get("mode") == "recorded":
            self.dealt = (players, options, list(self.created["deck"]), recorded_game_seed(game_id))
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
            self.dealt = (players, options, None, seed)
            self.game = self.rules.new_game(players, options, seed=seed)
        self.status = ACTIVE
        self._next_decision(entry, None)
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
        late = self._late(entry, seat)
        if late:
            return late
        move = entry["submission"]["envelope"].get("move")
        try:
            self.game.play(seat, move)
        except IllegalMove as exc:
            return _reject(entry, exc.code, exc.message, exc.rule)
        assert self.clocks is not None
        self.clocks.timeouts_in_row[seat] = 0
        self._applied(seat, move, entry)
        if self.decisions is not None and self.decisions.pending is not None:  # DC-O2: a move lapses an offer
            self.decisions = self.decisions.lapsed("lapsed", entry["seq"])
        self._next_decision(entry, seat)
        return Verdict(entry["seq"], "move", "applied", seat)

    def _applied(self, seat: int, move: Any, entry: dict[str, Any]) -> None:
        """Remember a move the game applied (for a take-back, DC-T1); O(1), nothing copied."""
        self.applied = (self.applied, seat, move, entry["seq"], entry.get("type"))
        if seat not in self.moved:
            self.moved = self.moved | {seat}

    # -- time control (CONTRACT section 8; docs/timecontrol.md) ------------------------------------
    def _late(self, entry: dict[str, Any], seat: int) -> Verdict | None:
        """The rejection of a seat's signed entry that comes too late or from a forfeited seat, or None."""
        clocks = self.clocks
        assert clocks is not None
        if clocks.forfeited(seat):
            if self.decisions is not None and self.decisions.has_left(seat):
                return _reject(entry, "decision/resigned", f"seat {seat} has resigned; the referee moves for it",
                               "DC-R2")
            return _reject(entry, "time/forfeited", f"seat {seat} has forfeited; the referee moves for it", "TC-F1")
        if not clocks.running:
            return None
        try:
            at = parse_ms(entry.get("at"))
        except ValueError as exc:
            return _reject(entry, "log/bad_time", str(exc))
        deadline = clocks.deadline() if clocks.seat == seat else None
        if deadline is not None and at > deadline:
            return _reject(entry, "time/expired", f"seat {seat}'s time ran out at {entry_time(deadline)}", "TC-T1")
        return None

    def _next_decision(self, entry: dict[str, Any], decided: int | None, timed_out: bool = False) -> None:
        """After an entry that changed the game: the decision in progress ends at its ``at`` and the next
        seat's starts; the game finishes when the engine says so or when fewer than two seats stand."""
        clocks = self.clocks
        assert clocks is not None and self.game is not None
        try:
            at = parse_ms(entry.get("at"))
        except ValueError:
            at = clocks.since or 0  # only reachable without a clock (a clock game rejects bad times first)
        if decided is not None:
            clocks.finish(at, timed_out)
        if self.game.is_over() or (len(self.keys) > 1 and len(clocks.standing()) < 2):
            self.status = FINISHED
            clocks.begin(None, at, entry["seq"])
        else:
            clocks.begin(self.game.to_move(), at, entry["seq"])

    def expected_timeout(self) -> dict[str, Any] | None:
        """The payload (``seat``, ``deadline``, ``action``, ``move``) a ``timeout`` of the seat to move must
        carry now, or None when no clock runs for anyone."""
        clocks, game = self.clocks, self.game
        if clocks is None or game is None or self.status != ACTIVE:
            return None
        deadline = clocks.deadline()
        seat = clocks.seat
        if deadline is None or seat is None:
            return None
        action = clocks.timeout_action(seat)
        goes_on = not (action == "forfeit" and len(self.keys) > 1 and len(clocks.standing()) - 1 < 2)
        move = game.default_move() if goes_on else None
        return {"seat": seat, "deadline": entry_time(deadline), "action": action, "move": move}

    def deadline_ms(self) -> int | None:
        """The current decision's deadline in ms (None: no clock runs)."""
        if self.clocks is None or self.status != ACTIVE or self.game is None:
            return None
        return self.clocks.deadline()

    def _on_timeout(self, entry: dict[str, Any]) -> Verdict:
        expected = self.expected_timeout()
        seat = entry.get("seat")
        if expected is None:
            return _reject(entry, "time/no_clock", "no clock is running: nothing can time out", "TC-T1")
        if seat != expected["seat"]:
            return _reject(entry, "time/wrong_seat", f"seat {expected['seat']} is to move, not seat {seat!r}", "TC-T1")
        try:
            at = parse_ms(entry.get("at"))
        except ValueError as exc:
            return _reject(entry, "log/bad_time", str(exc))
        for name in ("deadline", "action", "move"):
            if entry.get(name) != expected[name]:
                return _reject(entry, f"time/wrong_{name}",
                               f"the timeout's {name} is {entry.get(name)!r}, the fold says {expected[name]!r}",
                               "TC-M1" if name == "move" else "TC-T1")
        if at < parse_ms(expected["deadline"]):
            return _reject(entry, "time/early", f"the timeout is logged at {entry.get('at')}, before seat {seat}'s "
                           f"deadline {expected['deadline']}", "TC-T1")
        clocks, game = self.clocks, self.game
        assert clocks is not None and game is not None
        clocks.timeouts_in_row[seat] += 1
        if expected["action"] == "forfeit":
            clocks.forfeited_at[seat] = entry["seq"]
            clocks.unconfirmed[seat] = entry["seq"]
        if expected["move"] is not None:
            game.play(seat, expected["move"])
            self._applied(seat, expected["move"], entry)
            self._lapse_takeback(entry)
        self._next_decision(entry, seat, timed_out=True)
        return Verdict(entry["seq"], "timeout", "applied", seat)

    def _on_forfeited(self, entry: dict[str, Any]) -> Verdict:
        clocks = self.clocks
        seat = entry.get("seat")
        if entry.get("reason") == "withdrawn":
            return self._withdrawn(entry)
        if clocks is None or not isinstance(seat, int) or seat not in clocks.unconfirmed:
            return _reject(entry, "time/no_forfeit", f"seat {seat!r} has no forfeit to record", "TC-F1")
        del clocks.unconfirmed[seat]
        return Verdict(entry["seq"], "forfeited", "ok", seat)

    def _withdrawn(self, entry: dict[str, Any]) -> Verdict:
        """A tournament game's seat whose player withdrew from the tournament (``forfeited`` with reason
        ``withdrawn``, written by the referee with the tournament whose log holds the signed withdrawal):
        the seat is forfeited here (its turns are played by default moves, it ranks last, TC-F1)."""
        clocks, seat, created = self.clocks, entry.get("seat"), self.created or {}
        if not created.get("tournament") or entry.get("tournament") != created.get("tournament"):
            return _reject(entry, "withdrawal/not_tournament", "only a tournament's game is forfeited by a withdrawal")
        if self.status != ACTIVE or clocks is None or self.game is None:
            return _reject(entry, "game/not_active", f"the game is {self.status}")
        if not isinstance(seat, int) or not 0 <= seat < len(self.keys) or clocks.forfeited(seat):
            return _reject(entry, "withdrawal/seat", f"seat {seat!r} cannot forfeit here")
        clocks.forfeited_at[seat] = entry["seq"]
        if len(self.keys) > 1 and len(clocks.standing()) < 2:  # TC-F2: the game ends as it stands
            self.status = FINISHED
            clocks.begin(None, clocks.since or 0, entry["seq"])
        return Verdict(entry["seq"], "forfeited", "ok", seat)

    def _on_auto_move(self, entry: dict[str, Any]) -> Verdict:
        clocks, game = self.clocks, self.game
        seat = entry.get("seat")
        if self.status != ACTIVE or clocks is None or game is None:
            return _reject(entry, "game/not_active", f"the game is {self.status}")
        if seat != game.to_move() or not isinstance(seat, int) or not clocks.forfeited(seat):
            return _reject(entry, "time/not_forfeited", f"seat {seat!r} is not a forfeited seat to move", "TC-F1")
        move = game.default_move()
        if entry.get("move") != move:
            return _reject(entry, "time/wrong_move", f"the default move is {move!r}", "TC-M1")
        game.play(seat, move)
        self._applied(seat, move, entry)
        self._lapse_takeback(entry)
        self._next_decision(entry, seat)
        return Verdict(entry["seq"], "auto_move", "applied", seat)

    def _lapse_takeback(self, entry: dict[str, Any]) -> None:
        """A pending take-back lapses at any applied move: the move it names is no longer the last (DC-T1)."""
        decisions = self.decisions
        if decisions is not None and decisions.pending is not None and decisions.pending.kind == "takeback":
            self.decisions = decisions.lapsed("lapsed", entry["seq"])

    # -- expiry of a game never accepted (issue 17) ----------------------------------------------------
    def accept_by_ms(self) -> int | None:
        """When a waiting game expires unless every seat has accepted (ms), or None."""
        accept_by = (self.created or {}).get("accept_by")
        if self.status != WAITING or accept_by is None:
            return None
        try:
            return parse_ms(accept_by)
        except ValueError:
            return None

    def _on_expired(self, entry: dict[str, Any]) -> Verdict:
        deadline = self.accept_by_ms()
        if deadline is None:
            return _reject(entry, "game/not_waiting", "only a waiting game with an acceptance deadline expires")
        try:
            at = parse_ms(entry.get("at"))
        except ValueError as exc:
            return _reject(entry, "log/bad_time", str(exc))
        if at < deadline:
            return _reject(entry, "expired/early", f"the game may be accepted until {entry_time(deadline)}")
        self.status = EXPIRED
        return Verdict(entry["seq"], "expired", "ok")

    # -- adjudication (CONTRACT section 10; docs/tournaments.md) ------------------------------------
    def adjudicator_keys(self) -> list[str]:
        """Who may decide an ``organiser`` adjudication: the game's ``adjudicator`` (a tournament's
        organiser, written by the referee when it made the game) or the game's own organiser."""
        created = self.created or {}
        return [key for key in (created.get("adjudicator"), created.get("organiser")) if isinstance(key, str)]

    def _on_adjudicated(self, entry: dict[str, Any]) -> Verdict:
        """The game ends by adjudication: ``provisional`` scores the position as it stands (the engine's
        ``provisional_result()``); ``organiser`` takes the ranks of the adjudicator's signed decision."""
        game = self.game
        unplayed = self.status == WAITING and (self.created or {}).get("mode") == "seeded"
        if not unplayed and (self.status != ACTIVE or game is None):
            return _reject(entry, "game/not_active", f"the game is {self.status}: nothing to adjudicate")
        method, reason = entry.get("method"), entry.get("reason")
        if not isinstance(reason, str) or not reason:
            return _reject(entry, "adjudication/reason", "an adjudication gives its reason")
        players = len(self.keys)
        if method == "provisional" and unplayed:
            # never started (a seat did not accept in time): the seats that accepted share the first rank
            accepted = len(self.entropies)
            ranks = [1 if seat in self.entropies else accepted + 1 for seat in range(players)]
            if entry.get("ranks") not in (None, ranks):
                return _reject(entry, "adjudication/ranks", f"an unplayed game ranks the seats {ranks}")
        elif method == "provisional":
            assert game is not None
            ranks = [seat["rank"] for seat in game.provisional_result()["seats"]]
            if entry.get("ranks") not in (None, ranks):
                return _reject(entry, "adjudication/ranks", f"the provisional result ranks the seats {ranks}")
        elif method == "organiser":
            given = entry.get("ranks")
            if (not isinstance(given, list) or len(given) != players
                    or any(isinstance(r, bool) or not isinstance(r, int) for r in given)
                    or sorted(given) != [1 + sum(1 for o in given if o < r) for r in sorted(given)]):
                return _reject(entry, "adjudication/ranks", f"ranks must be competition ranks of the {players} seats")
            ranks = given
            decision = entry.get("decision")
            if not isinstance(decision, dict):
                decision = {}  # no envelope: refused below
            envelope = decision.get("envelope")
            if (not isinstance(envelope, dict) or envelope.get("ctx") != ADJUDICATE_CTX
                    or envelope.get("game") != (self.created or {}).get("game") or envelope.get("ranks") != ranks
                    or envelope.get("reason") != reason):
                return _reject(entry, "adjudication/decision", "the decision must be a signed referee/adjudicate "
                               "envelope naming this game, these ranks and this reason")
            sig = decision.get("sig")
            signers = self.adjudicator_keys()
            if not isinstance(sig, str) or not any(self.verifier(key, envelope, sig) for key in signers):
                return _reject(entry, "adjudication/bad_signature", "the decision is not signed by this game's "
                               "adjudicator or organiser")
        else:
            return _reject(entry, "adjudication/method", "method is 'provisional' or 'organiser'")
        self.adjudication = {"method": method, "reason": reason, "ranks": ranks, "position": entry["seq"]}
        self.status = FINISHED
        if self.clocks is not None:
            self.clocks.begin(None, self.clocks.since or 0, entry["seq"])
        return Verdict(entry["seq"], "adjudicated", "ok")

    def _on_vacation(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        clocks = self.clocks
        seat = entry.get("seat")
        if self.status != ACTIVE or clocks is None:
            return _reject(entry, "game/not_active", f"the game is {self.status}")
        if not clocks.running:
            return _reject(entry, "time/no_clock", "this game has no clock: there is no vacation to take", "TC-V1")
        if not isinstance(seat, int):
            return _reject(entry, "submission/wrong_seat", "a vacation entry names its seat")
        problem = check_submission(entry.get("submission"), ctx=VACATION_CTX, game_id=self.created["game"], seat=seat,
                                   seq=entry["seq"], prev=self.head, keys=self.keys, verifier=self.verifier)
        if problem:
            return _reject(entry, *problem)
        late = self._late(entry, seat)
        if late:
            return late
        seconds = entry["submission"]["envelope"].get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds <= 0:
            return _reject(entry, "vacation/bad_seconds", "a vacation is a positive whole number of seconds", "TC-V1")
        if seconds * 1000 > clocks.vacation_left[seat]:
            return _reject(entry, "vacation/exceeded", f"seat {seat} has {clocks.vacation_left[seat] // 1000} s of "
                           f"vacation left, not {seconds}", "TC-V1")
        clocks.grant_vacation(seat, parse_ms(entry["at"]), seconds)
        return Verdict(entry["seq"], "vacation", "ok", seat)

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

    # -- the players' own decisions (CONTRACT section 12; referee.decisions) --------------------------
    def _decision_entry(self, entry: dict[str, Any], ctx: str) -> Verdict | int:
        """The seat of a seat's signed decision entry (resign, offer, answer) that may be taken now, or the
        rejection: the game runs, the binding and signature hold, the seat is still in the game and in time."""
        assert self.created is not None
        seat = entry.get("seat")
        if self.status != ACTIVE or self.clocks is None or self.decisions is None:
            return _reject(entry, "game/not_active", f"the game is {self.status}")
        if not isinstance(seat, int) or isinstance(seat, bool):
            return _reject(entry, "submission/wrong_seat", f"a {entry.get('type')} entry names its seat")
        problem = check_submission(entry.get("submission"), ctx=ctx, game_id=self.created["game"], seat=seat,
                                   seq=entry["seq"], prev=self.head, keys=self.keys, verifier=self.verifier)
        if problem:
            return _reject(entry, *problem)
        late = self._late(entry, seat)
        return late if late is not None else seat

    def _on_resigned(self, entry: dict[str, Any]) -> Verdict:
        """A seat resigns (DC-R1): it leaves the game; its turns are played by default moves (DC-R2), and with
        fewer than two seats left the game ends."""
        seat = self._decision_entry(entry, RESIGN_CTX)
        if isinstance(seat, Verdict):
            return seat
        clocks, decisions = self.clocks, self.decisions
        assert clocks is not None and decisions is not None
        clocks.forfeited_at[seat] = entry["seq"]  # out of the game: the clocks treat it as a forfeited seat
        self.decisions = decisions.resigned(seat, entry["seq"])
        if len(self.keys) > 1 and len(clocks.standing()) < 2:
            self.status = FINISHED
            clocks.begin(None, self._at(entry), entry["seq"])
        return Verdict(entry["seq"], "resigned", "ok", seat)

    def _on_offer(self, entry: dict[str, Any]) -> Verdict:
        """A seat's offer (DC-O1, DC-A1, DC-T1, DC-T2): checked against the position, then pending."""
        seat = self._decision_entry(entry, OFFER_CTX)
        if isinstance(seat, Verdict):
            return seat
        clocks, decisions, created = self.clocks, self.decisions, self.created
        assert clocks is not None and decisions is not None and created is not None
        kind = entry["submission"]["envelope"].get("offer")
        if entry.get("offer") != kind:
            return _reject(entry, "offer/mismatch", "the entry's offer is not the signed envelope's", "DC-O1")
        applied = self.applied
        last = (applied[1], applied[4], applied[3]) if applied is not None else None
        before, revealed_rule = None, None
        if kind == "takeback" and last is not None and last[:2] == (seat, "move") and self.game is not None \
                and decisions.pending is None:
            before = self._without_last_move()
            assert self.rules is not None
            revealed_rule = revealing(self.rules.name, before.view(), self.game.view())
        problem = offer_problem(decisions, kind, seat, standing=clocks.standing(),
                                tournament=bool(created.get("tournament")),
                                all_moved=len(self.moved) >= len(self.keys), last_move=last,
                                revealed_rule=revealed_rule)
        if problem:
            return _reject(entry, *problem)
        target = last[2] if kind == "takeback" and last is not None else None
        self.decisions = decisions.offered(Offer(entry["seq"], seat, kind, target=target, before=before))
        return Verdict(entry["seq"], "offer", "ok", seat)

    def _on_answered(self, entry: dict[str, Any]) -> Verdict:
        """A seat's answer to the pending offer (DC-O2): an acceptance, a decline, or the offerer's withdrawal."""
        seat = self._decision_entry(entry, ANSWER_CTX)
        if isinstance(seat, Verdict):
            return seat
        clocks, decisions = self.clocks, self.decisions
        assert clocks is not None and decisions is not None
        envelope = entry["submission"]["envelope"]
        offer, accept = envelope.get("offer"), envelope.get("accept")
        if entry.get("offer") != offer or entry.get("accept") is not accept:
            return _reject(entry, "answer/mismatch", "the entry's offer and accept are not the signed envelope's",
                           "DC-O2")
        problem = answer_problem(decisions, offer, seat, accept, standing=clocks.standing())
        if problem:
            return _reject(entry, *problem)
        self.decisions = decisions.answered(seat, accept is True)
        return Verdict(entry["seq"], "answered", "ok", seat)

    def agreement_due(self) -> int | None:
        """The position of the pending offer when it has every acceptance it needs (the referee owes
        ``agreed``), else None."""
        decisions, clocks = self.decisions, self.clocks
        if self.status != ACTIVE or decisions is None or decisions.pending is None or clocks is None:
            return None
        return decisions.pending.position if agreed(decisions.pending, clocks.standing()) else None

    def _on_agreed(self, entry: dict[str, Any]) -> Verdict:
        """The referee's record that the pending offer passed (DC-O2): a draw or an end finishes the game, an
        abort ends it without a result, a take-back voids the last move (the game is re-folded without it)."""
        decisions, clocks = self.decisions, self.clocks
        if self.status != ACTIVE or decisions is None or clocks is None:
            return _reject(entry, "game/not_active", f"the game is {self.status}")
        offer = decisions.pending
        if offer is None or entry.get("offer") != offer.position:
            return _reject(entry, "agreement/no_offer", f"no offer at position {entry.get('offer')!r} is pending",
                           "DC-O2")
        standing = clocks.standing()
        if not agreed(offer, standing):
            missing = sorted(set(standing) - {offer.seat} - offer.accepted)
            return _reject(entry, "agreement/not_agreed", f"seats {missing} have not accepted offer {offer.position}",
                           "DC-O2")
        at = self._at(entry)
        if offer.kind == "takeback":
            if self.game is not None:
                if self.applied is None or self.applied[3] != offer.target or offer.before is None:
                    return _reject(entry, "agreement/stale", f"the move at position {offer.target} is no longer "
                                   "the last applied one", "DC-T1")
                self.game = offer.before.copy()
                self.applied = self.applied[0]
            self.decisions = decisions.agreed(entry["seq"])
            if self.game is not None:
                clocks.begin(self.game.to_move(), at, entry["seq"])
            return Verdict(entry["seq"], "agreed", "ok")
        self.decisions = decisions.agreed(entry["seq"])
        self.status = ABORTED if offer.kind == "abort" else FINISHED
        clocks.begin(None, at, entry["seq"])
        return Verdict(entry["seq"], "agreed", "ok")

    def _without_last_move(self) -> Game:
        """The game as it was before its last applied move: dealt again and every earlier move replayed."""
        assert self.rules is not None and self.dealt is not None and self.applied is not None
        moves = []
        node = self.applied[0]
        while node is not None:
            moves.append((node[1], node[2]))
            node = node[0]
        players, options, deck, seed = self.dealt
        if deck is not None:
            game = self.rules.new_game(players, options, deck=list(deck), seed=seed)
        else:
            game = self.rules.new_game(players, options, seed=seed)
        for seat, move in reversed(moves):
            game.play(seat, move)
        return game

    def _at(self, entry: dict[str, Any]) -> int:
        try:
            return parse_ms(entry.get("at"))
        except ValueError:
            since = self.clocks.since if self.clocks is not None else None
            return since or 0

    # -- reads -------------------------------------------------------------------------------------
    def to_move(self) -> int | None:
        return self.game.to_move() if self.game is not None and self.status == ACTIVE else None

    def result(self) -> dict[str, Any] | None:
        """The result of a finished game: the engine's ``result()`` (or, for a game that forfeits ended
        early, its ``provisional_result()``), with every seat marked ``forfeited`` and forfeited seats ranked
        below the others (TC-F1). ``None`` until the game is finished."""
        game = self.game
        if self.status == FINISHED and game is None and self.adjudication is not None:
            return unplayed_result(len(self.keys), self.entropies, self.adjudication,
                                   mark_forfeits="time_control" in (self.created or {}))
        if self.status != FINISHED or game is None:
            return None
        base = game.result() if game.is_over() else game.provisional_result()
        if self.adjudication is not None:
            base = adjudicated_result(base, self.adjudication)
        decisions = self.decisions
        if decisions is not None and decisions.shapes_result and (
                self.adjudication is None or self.adjudication["method"] == "provisional"):
            left: list[int | None] = self.clocks.forfeited_at if self.clocks is not None else [None] * len(self.keys)
            return rank_decisions(base, decisions, left, ended_early=not game.is_over())
        if "time_control" not in (self.created or {}):
            return base  # a game logged before clocks existed: its result is the engine's, as it was signed
        forfeited_at: list[int | None] = (self.clocks.forfeited_at if self.clocks is not None
                                          else [None] * len(self.keys))
        return rank_forfeits(base, forfeited_at, ended_early=not game.is_over())


entry_time = format_ms  # a time (ms) in the log's ``at`` format


def unplayed_result(players: int, accepted: dict[int, bytes], adjudication: dict[str, Any], *,
                    mark_forfeits: bool) -> dict[str, Any]:
    """The result of a game adjudicated before it started: no scores, the adjudication's ranks, and which
    seats had accepted."""
    seats = [{"seat": seat, "total": None, "rank": adjudication["ranks"][seat], "accepted": seat in accepted,
              **({"forfeited": False} if mark_forfeits else {})} for seat in range(players)]
    return {"unplayed": True, "seats": seats, "winners": [s["seat"] for s in seats if s["rank"] == 1],
            "adjudicated": {"method": adjudication["method"], "reason": adjudication["reason"],
                            "position": adjudication["position"]}}


def adjudicated_result(provisional: dict[str, Any], adjudication: dict[str, Any]) -> dict[str, Any]:
    """The result of an adjudicated game: the position's score breakdown (``provisional_result()``), the
    ranks of the adjudication, and what decided them."""
    seats = [{**seat, "rank": adjudication["ranks"][seat["seat"]]} for seat in provisional.get("seats", [])]
    return {**provisional, "seats": seats, "winners": [s["seat"] for s in seats if s["rank"] == 1],
            "adjudicated": {"method": adjudication["method"], "reason": adjudication["reason"],
                            "position": adjudication["position"]}}


def revealed_seed(entries: list[dict[str, Any]]) -> bytes | None:
    """The server seed revealed in a log, if any (last ``revealed`` entry with valid hex)."""
    for entry in reversed(entries):
        if isinstance(entry, dict) and entry.get("type") == "revealed":
            try:
                return bytes.fromhex(entry.get("server_seed", ""))
            except (ValueError, TypeError):
                return None
    return None


def replay_log(entries: list[dict[str, Any]], server_seed: bytes | None = None) -> LogReplayer:
    """Fold a whole log. Without ``server_seed`` the seed revealed in the log (if any) is used."""
    replayer = LogReplayer(server_seed=server_seed if server_seed is not None else revealed_seed(entries))
    for entry in entries:
        replayer.feed(entry)
    return replayer
