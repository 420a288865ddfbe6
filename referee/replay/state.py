"""The state of the fold (:class:`FoldState`): what the handlers of every concern read and change, the
queries asked of it, and what handlers share about it (the :data:`Handler` type, the check of a seat's signed
submission). Imports no handler, so every concern module can import it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..games.base import Game, Ruleset
from ..protocol.logchain import GENESIS
from ..protocol.signing import verify
from ..rulings.decisions import Decisions, agreed, rank_decisions
from ..timecontrol import Clocks, parse_ms
from ..timecontrol.forfeits import rank_forfeits
from .results import adjudicated_result, unplayed_result
from .verdicts import ACTIVE, FINISHED, WAITING, Verdict, check_submission, entry_time, reject


@dataclass
class FoldState:
    """What the fold knows of a game after the entries so far: what every concern's handler reads and changes,
    and the queries the service, the workers and the verifier ask. :class:`~referee.replay.replayer.LogReplayer`
    adds the dispatch of each entry to its handler.

    Folds log entries, in order, into a game and one verdict per entry.

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
    #: the seats' own decisions (CONTRACT section 12, :mod:`referee.rulings.decisions`); immutable, set by ``created``
    decisions: Decisions | None = None
    #: the moves applied to the game, newest first, as an immutable chain ``(rest, seat, move, position,
    #: entry type, undo)``: what a take-back re-folds without its last move (one tuple per move, never copied);
    #: ``undo`` is what the seat's clock gets back if a take-back voids a seat's own move (``Clocks.undo_point``)
    applied: tuple[Any, ...] | None = None
    #: the seats that have had a move applied (an ``abort`` offer is refused once every seat has, DC-A1);
    #: recomputed from ``applied`` after an agreed take-back
    moved: frozenset[int] = frozenset()
    #: how the game was dealt: ``(players, options, deck, seed)`` for ``Ruleset.new_game``
    dealt: tuple[Any, ...] | None = None
    #: each seat's current holder, ``(key, name)``, or None for an open seat nobody holds (CONTRACT section 14):
    #: set by ``created`` (the seats given to a key), changed by ``seated`` and ``left``; immutable
    holders: tuple[tuple[str, str | None] | None, ...] = ()
    #: the pending recoveries of lost keys (CONTRACT section 15, :mod:`referee.replay.keys`), at most one per
    #: seat; immutable
    recoveries: tuple[Any, ...] = ()
    #: every change of a seat's key after creation, in log order: ``(position, seat, old key, new key, reason)``
    key_history: tuple[tuple[int, int, str, str, str], ...] = ()

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
        """Each seat's key: the key that holds it now (given at creation, or the one that took it); ``""`` for an
        open seat nobody holds (no signature checks against it)."""
        return [holder[0] if holder is not None else "" for holder in self.holders]

    def creator_key(self) -> str | None:
        """Who created the game by a signed request and may cancel it before it starts: its ``creator``, else its
        ``organiser`` (CONTRACT section 14)."""
        created = self.created or {}
        for field_name in ("creator", "organiser"):
            if isinstance(created.get(field_name), str):
                return created[field_name]
        return None

    # -- queries ------------------------------------------------------------------------------------
    def to_move(self) -> int | None:
        return self.game.to_move() if self.game is not None and self.status == ACTIVE else None

    def accept_by_ms(self) -> int | None:
        """When a waiting game expires unless every seat has accepted (ms), or None (issue 17)."""
        accept_by = (self.created or {}).get("accept_by")
        if self.status != WAITING or accept_by is None:
            return None
        try:
            return parse_ms(accept_by)
        except ValueError:
            return None

    def deadline_ms(self) -> int | None:
        """The current decision's deadline in ms (None: no clock runs)."""
        if self.clocks is None or self.status != ACTIVE or self.game is None:
            return None
        return self.clocks.deadline()

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

    def agreement_due(self) -> int | None:
        """The position of the pending offer when it has every acceptance it needs (the referee owes
        ``agreed``), else None."""
        decisions, clocks = self.decisions, self.clocks
        if self.status != ACTIVE or decisions is None or decisions.pending is None or clocks is None:
            return None
        return decisions.pending.position if agreed(decisions.pending, clocks.standing()) else None

    def adjudicator_keys(self) -> list[str]:
        """Who may decide an ``organiser`` adjudication: the game's ``adjudicator`` (a tournament's
        organiser, written by the referee when it made the game) or the game's own organiser."""
        created = self.created or {}
        return [key for key in (created.get("adjudicator"), created.get("organiser")) if isinstance(key, str)]

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


#: An entry type's handler: it checks the entry against the fold and, when it holds, applies it.
Handler = Callable[[FoldState, dict[str, Any]], Verdict]


def seat_submission(fold: FoldState, entry: dict[str, Any], ctx: str, seat: int) -> Verdict | None:
    """The rejection of ``entry``'s signed submission when it is not ``seat``'s for this position of the
    fold's game (:func:`check_submission`), or None."""
    assert fold.created is not None
    problem = check_submission(entry.get("submission"), ctx=ctx, game_id=fold.created["game"], seat=seat,
                               seq=entry["seq"], prev=fold.head, keys=fold.keys, verifier=fold.verifier)
    return reject(entry, *problem) if problem else None
