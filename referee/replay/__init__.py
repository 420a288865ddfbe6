"""Replaying a game's log through the rules engine: the one place that decides verdicts.

The web process (to check a submission before appending it), the RQ workers (to build projections)
and the offline verifier all fold a log with :class:`LogReplayer`, so they cannot disagree. It is pure:
it reads entries and a server seed, never Redis, a clock or the network.

Verdicts, one per entry (``status``):

* ``"ok"`` — any other entry (``created``, ``accepted``, ``started``, ``revealed``, ``vacation``,
  ``forfeited``, a seat's decision, …) that is valid;
* ``"applied"`` — a ``move`` that the engine applied, or a move the referee played for a seat: a
  ``timeout``'s default move or a forfeited seat's ``auto_move`` (CONTRACT section 8);
* ``"rejected"`` — an entry that changed nothing, with ``error`` ``{code, rule?, message}``: an illegal
  move (the engine's code and rule id) or a submission whose binding or signature is wrong
  (``submission/…`` codes). A rejected entry never changes the state.

Time control (``referee.timecontrol``): the fold keeps every seat's clock from the entries' ``at``, so a
move logged after its seat's deadline, a timeout logged before it, or one that does not play the
engine's default move is rejected here, for the service, the workers and the verifier alike.

The fold is split by concern. ``state.py`` holds its state (:class:`~referee.replay.state.FoldState`) and the
queries several concerns ask (``to_move``, ``deadline_ms``, ``expected_timeout``, ``accept_by_ms``,
``agreement_due``, ``result``); :class:`LogReplayer` (``replayer.py``) adds the dispatch; each entry type's
handler lives with its concern, a plain function ``(fold, entry) -> Verdict`` in the module's ``HANDLERS`` (an
entry type claimed twice fails the import). Imports run one way: ``replayer`` over the concern modules, over
``state``, over ``results`` and ``verdicts``:

============================================================  ==================  =================================
entry types                                                   module              concern
============================================================  ==================  =================================
``created``, ``accepted``, ``started``, ``expired``,          ``lifecycle.py``    the game's lifecycle and its seats
``forfeited`` (a timeout's forfeit, a withdrawal),
``seated``, ``left``, ``cancelled`` (open seats, section 14)
``move``, ``timeout``, ``auto_move``, ``vacation``            ``moves.py``        moves and clocks (section 8)
``resigned``, ``offer``, ``answered``, ``agreed``             ``decisions.py``    the players' decisions (section 12)
``adjudicated``, ``revealed``                                 ``adjudication.py`` adjudication (section 10), reveal
``rekeyed``, ``recovery``, ``recovery_declined``              ``keys.py``         a seat's new key (section 15)
============================================================  ==================  =================================

``verdicts.py`` holds what they all share (statuses, :class:`Verdict`, :class:`LogError`, the check of a
signed submission), ``results.py`` the results an adjudication shapes; neither imports the fold. A new entry
type goes into its concern's ``HANDLERS``.

A seat's key is the key that holds it now (``FoldState.holders``): given at creation, or taken by a ``seated``
entry, or changed by ``rekeyed`` (section 15: by its holder, or recovered); every later submission of the seat is
checked against it.
"""

from .adjudication import ABORT_CTX, ABORT_STARTED, ADJUDICATE_CTX, abort_problem, revealed_seed
from .keys import (
    RECOVER_CTX,
    REKEY_CTX,
    Recovery,
    keys_in_turn,
    needed_answers,
    organiser_of,
    pending_recovery,
    public_key_ok,
    recover_problem,
    recovery_alarm,
    recovery_due,
    recovery_not_before,
    rekey_problem,
)
from .lifecycle import cancel_problem
from .replayer import LogReplayer, replay_log
from .results import adjudicated_result, unplayed_result
from .verdicts import (
    ABORTED,
    ACTIVE,
    CANCELLED,
    DECISION_ENTRIES,
    EXPIRED,
    FINISHED,
    KEY_ENTRIES,
    REFEREE_ENTRIES,
    SEAT_ENTRIES,
    WAITING,
    LogError,
    Verdict,
    check_submission,
    entry_time,
    envelope_problem,
    seat_kind,
    seated_problem,
)

__all__ = [
    "ABORTED",
    "ABORT_CTX",
    "ABORT_STARTED",
    "ACTIVE",
    "ADJUDICATE_CTX",
    "CANCELLED",
    "DECISION_ENTRIES",
    "EXPIRED",
    "FINISHED",
    "KEY_ENTRIES",
    "RECOVER_CTX",
    "REFEREE_ENTRIES",
    "REKEY_CTX",
    "SEAT_ENTRIES",
    "WAITING",
    "LogError",
    "LogReplayer",
    "Recovery",
    "Verdict",
    "abort_problem",
    "adjudicated_result",
    "cancel_problem",
    "check_submission",
    "entry_time",
    "envelope_problem",
    "keys_in_turn",
    "needed_answers",
    "organiser_of",
    "pending_recovery",
    "public_key_ok",
    "recover_problem",
    "recovery_alarm",
    "recovery_due",
    "recovery_not_before",
    "rekey_problem",
    "replay_log",
    "revealed_seed",
    "seat_kind",
    "seated_problem",
    "unplayed_result",
]
