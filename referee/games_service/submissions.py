"""A seat's signed submissions: the one path every kind of them goes through (CONTRACT sections 5, 6, 8).

:meth:`Submissions._submit` takes a submission from the fold its envelope names to the receipt: the seat
whose key signed it, the kind's check of the game's state, staleness (409 ``submission/stale``, or
``submission/duplicate`` for a retry of a submission already logged), the seat's deadline, the kind's
check of the turn, the entry sealed at the fold's position and checked on a copy of the fold, the atomic
append at exactly that position with the referee's own entries it entails, and the referee's signed
receipt. Moves and vacations come in here (:meth:`Submissions.submit_move`, :meth:`Submissions.vacation`),
acceptances from ``lifecycle``, resignations, offers and answers from ``decisions``; every further kind of
signed submission is one more caller of ``_submit``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..clock import now, now_ms
from ..errors import ServiceError
from ..notify.events import next_alarm
from ..protocol.signing import RECEIPT_CTX, sign, verify
from ..replay import ACTIVE, LogReplayer
from ..store import DuplicateSubmission, GameNotFound, StaleAppend, StoreUnavailable
from ..store.base import KEEP_TIMER, Appended, Tip
from ..timecontrol import format_ms
from .core import ServiceCore, clock_view_of, not_found, unavailable
from .entries import append_system_entries, make_entry
from .errors import from_verdict_error
from .folds import clone_replayer

log = logging.getLogger(__name__)

#: A kind's check of the game's state for a seat's submission, before its staleness is looked at:
#: ``None`` admits it; a returned error refuses it (answered as ``submission/duplicate`` instead when
#: the submission is a retry of one already logged); a raised error refuses it whatever the log holds.
StateCheck = Callable[[LogReplayer, int], ServiceError | None]

#: A kind's check of the turn, after the deadline is enforced (raises the refusal).
TurnCheck = Callable[[LogReplayer, int], None]

#: A kind's check of who signed, ``(game id, fold, submission) -> seat`` (raises the refusal); by default the seat
#: whose current key signed it (:func:`authenticated_seat`); taking an open seat checks the joining key instead.
Authenticate = Callable[[str, LogReplayer, dict[str, Any]], int]

#: The fields of a kind's entry beside ``seat`` and ``submission``: a dict, or ``(fold, at) -> dict`` for fields that
#: depend on the entry's server time
Payload = dict[str, Any] | Callable[[LogReplayer, str], dict[str, Any]]


def _move_state(replayer: LogReplayer, seat: int) -> ServiceError | None:
    if replayer.status != ACTIVE:
        return ServiceError(409, "game/not_active", f"the game is {replayer.status}; it takes no moves",
                            details={"status": replayer.status})
    return None


def _on_turn(replayer: LogReplayer, seat: int) -> None:
    to_move = replayer.to_move()
    if seat != to_move:
        raise ServiceError(403, "move/not_your_turn", f"seat {to_move} is to move, not seat {seat}",
                           details={"to_move": to_move})


def _vacation_state(replayer: LogReplayer, seat: int) -> ServiceError | None:
    clocks = replayer.clocks
    if replayer.status != ACTIVE:
        return ServiceError(409, "game/not_active", f"the game is {replayer.status}; no vacation to take",
                            details={"status": replayer.status})
    if clocks is None or not clocks.running:
        raise ServiceError(409, "time/no_clock", "this game has no clock: there is no vacation to take", "TC-V1")
    return None


#: refusals that already come from the log's own tip or from a write (nothing a behind fold decided)
_ANSWERED_FROM_THE_TIP = frozenset({"submission/stale", "submission/duplicate", "time/expired"})


def authenticated_seat(game_id: str, keys: list[str], submission: dict[str, Any]) -> int:
    """The seat of a seat-signed request (a move, a decision, a message) bound to ``game_id`` whose signature is
    that seat's key among ``keys``.

    :raises ServiceError: 403 ``submission/wrong_game``, 403 ``submission/wrong_seat``, then, for a signature that
        is not the seat's: 403 ``submission/wrong_key`` when another seat's key made it, else 401
        ``submission/bad_signature``.
    """
    envelope, sig = submission["envelope"], submission["sig"]
    if envelope["game"] != game_id:
        raise ServiceError(403, "submission/wrong_game",
                           f"the envelope is bound to game {envelope['game']!r}, not {game_id!r}")
    seat = envelope["seat"]
    if not 0 <= seat < len(keys):
        raise ServiceError(403, "submission/wrong_seat", f"this game has no seat {seat} ({len(keys)} seats)")
    if not verify(keys[seat], envelope, sig):
        others = [other for other, key in enumerate(keys) if other != seat and key != keys[seat]
                  and verify(key, envelope, sig)]
        if others:
            raise ServiceError(403, "submission/wrong_key", f"signed with seat {others[0]}'s key, not seat {seat}'s",
                               details={"seat": seat, "signed_by": others[0]})
        raise ServiceError(401, "submission/bad_signature",
                           f"the signature is not seat {seat}'s key over this envelope")
    return seat


class Submissions(ServiceCore):
    """Takes a seat's signed submissions: one path (:meth:`_submit`) for every kind."""

    def submit_move(self, game_id: str, submission: dict[str, Any], wait: float | None = None, *,
                    legal: bool = False) -> tuple[int, dict[str, Any]]:
        """A seat's signed move: ``(202, receipt)``, or ``(200, receipt with verdict)`` when ``wait`` is given
        and the worker's verdict arrives in time. With ``legal`` the answer also holds the legal moves of
        the seat now to move, from the fold that checked this move: a client needs no second request.

        :raises ServiceError: the first that applies of
            404 ``game/not_found``, 500 ``log/corrupt`` (reading the log);
            403 ``submission/wrong_game``, 403 ``submission/wrong_seat``, 401 ``submission/bad_signature``,
            403 ``submission/wrong_key`` (the envelope's binding and signature);
            409 ``game/not_active`` (the game is waiting or over);
            409 ``submission/stale`` (``seq``/``prev`` are not the log's; ``details`` has its ``seq`` and
            ``head``), 409 ``submission/duplicate`` instead when this very submission is in the log already
            (``details.position``);
            409 ``time/expired`` (the seat's time ran out: the timeout is logged instead, ``details.timeout``),
            503 ``log/unavailable`` (writing that timeout);
            403 ``move/not_your_turn`` (``details.to_move``);
            the fold's verdict on the move: 422 with the engine's own code and rule id for an illegal move
            (``move/wrong_phase``, ``build/not_adjacent``, …), 403 ``time/forfeited`` for a forfeited seat;
            409 ``submission/stale`` or ``submission/duplicate`` when the log moved on before the append,
            503 ``log/unavailable`` when the store could not take it.
        """
        receipt, advanced, appended = self._submit(game_id, submission, "move", _move_state, turn=_on_turn)
        if legal:
            game = advanced.game
            receipt["legal_moves"] = game.legal_moves() if game is not None and advanced.status == ACTIVE else []
        if wait:
            verdict = self.wait_for_verdict(game_id, appended[0].position, min(wait, self.max_wait))
            if verdict is not None:
                return 200, {**receipt, "verdict": verdict}
        return 202, receipt

    def vacation(self, game_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A seat's signed vacation request (``ctx`` ``referee/vacation``, ``seconds`` from now): its clock
        stops for that long, within its allowance (CONTRACT section 8, TC-V1).

        :raises ServiceError: as :meth:`submit_move` does up to the deadline (there is no turn to check),
            and 409 ``time/no_clock`` for a game without a running clock (after ``game/not_active``);
            the fold's verdict: 400 ``vacation/bad_seconds``, 422 ``vacation/exceeded`` (more than the
            seat's allowance left), 403 ``time/forfeited``.
        """
        receipt, _advanced, _appended = self._submit(game_id, submission, "vacation", _vacation_state)
        return receipt

    # -- the path -------------------------------------------------------------------------------------
    def _submit(self, game_id: str, submission: dict[str, Any], kind: str, state: StateCheck, *,
                clocked: bool = True, turn: TurnCheck | None = None, payload: Payload | None = None,
                authenticate: Authenticate | None = None) -> tuple[dict[str, Any], LogReplayer, list[Appended]]:
        """Take a seat's signed ``submission`` into the log as an entry of type ``kind`` (with the fields of
        ``payload`` beside ``seat`` and ``submission``); returns the receipt (:meth:`_receipt`), the fold
        advanced past it (now cached) and what was appended.

        In this order: the fold the envelope names (:meth:`fold_for`); the seat whose key signed it
        (:meth:`_authenticate`, or ``authenticate``); ``state(fold, seat)`` (see :data:`StateCheck`); staleness of
        ``seq`` and ``prev`` (:meth:`_stale`); for a ``clocked`` kind the server time ``at`` and the deadline of the
        seat to move (:meth:`_enforce_deadline`), then ``turn(fold, seat)``; the entry, checked and
        appended with what it entails (:meth:`_append_submission`). A refusal from a fold that the log has
        left behind (a cached one, when another process appended since) is made again from the current
        fold, so that every process answers a submission with the same error (issue 26)."""
        replayer = self.fold_for(game_id, submission["envelope"])
        try:
            return self._submit_at(game_id, submission, kind, state, replayer, clocked=clocked, turn=turn,
                                   payload=payload, authenticate=authenticate)
        except ServiceError as error:
            if error.code in _ANSWERED_FROM_THE_TIP or error.status >= 500 or not self._behind(game_id, replayer):
                raise
        # The fold came from this process's cache and the log has moved on since (another process took a
        # submission): a refusal must not depend on which process answers (CONTRACT section 6 puts 409
        # stale before 403 not-your-turn and 422 illegal), so it is answered again from the current fold.
        self.cache.forget(game_id)
        return self._submit_at(game_id, submission, kind, state, self.fold(game_id), clocked=clocked, turn=turn,
                               payload=payload, authenticate=authenticate)

    def _behind(self, game_id: str, replayer: LogReplayer) -> bool:
        """Whether the log has entries past ``replayer`` (one round trip; asked only before a refusal)."""
        try:
            tip = self.store.tip(game_id)
        except (StoreUnavailable, GameNotFound):
            return False
        return (tip.seq, tip.head) != (replayer.seq, replayer.head)

    def _submit_at(self, game_id: str, submission: dict[str, Any], kind: str, state: StateCheck,
                   replayer: LogReplayer, *, clocked: bool, turn: TurnCheck | None,
                   payload: Payload | None = None, authenticate: Authenticate | None = None
                   ) -> tuple[dict[str, Any], LogReplayer, list[Appended]]:
        envelope, sig = submission["envelope"], submission["sig"]
        seat = (authenticate or self._authenticate)(game_id, replayer, submission)
        tip = Tip(replayer.seq, replayer.head)
        refused = state(replayer, seat)
        if refused is not None:
            raise self._conflict(game_id, tip, sig, refused)
        if envelope["seq"] != tip.seq or envelope["prev"] != tip.head:
            raise self._stale(game_id, tip, sig, envelope)
        at = self._enforce_deadline(game_id, replayer, seat, envelope, sig) if clocked else None
        if turn is not None:
            turn(replayer, seat)
        if callable(payload):  # a payload that depends on the entry's time (a recovery's not_before)
            at = at or now()
            payload = payload(replayer, at)
        entry = make_entry(kind, tip.seq, tip.head, at=at, seat=seat, **(payload or {}), submission=submission)
        advanced, appended = self._append_submission(game_id, replayer, entry, submission)
        return self._receipt(game_id, appended[0], advanced, entry), advanced, appended

    def _conflict(self, game_id: str, tip: Tip, signature: str | None, error: ServiceError) -> ServiceError:
        """``error``, unless the submission is simply already in the log (a client's retry): then a 409
        ``submission/duplicate`` naming its position."""
        position = self.store.find_submission(game_id, signature) if signature else None
        if position is not None:
            return ServiceError(409, "submission/duplicate",
                                f"this submission is already in the log at position {position}",
                                details={"position": position, "seq": tip.seq, "head": tip.head})
        return error

    def _stale(self, game_id: str, tip: Tip, signature: str | None, envelope: dict[str, Any]) -> ServiceError:
        """409 ``submission/stale``; the message names the stale field and the log's seq and head (as details)."""
        now = f"the log is at seq {tip.seq} with head {tip.head}"
        if envelope.get("seq") != tip.seq:
            message = f"stale seq: the envelope is for seq {envelope.get('seq')}, but {now}"
        else:
            message = f"stale prev: the envelope's prev {envelope.get('prev')} is not the log's head; {now}"
        return self._conflict(game_id, tip, signature, ServiceError(409, "submission/stale", message,
                            details={"seq": tip.seq, "head": tip.head}))

    def _authenticate(self, game_id: str, replayer: LogReplayer, submission: dict[str, Any]) -> int:
        """The seat of a signed submission whose binding to this game and signature hold; else the error."""
        return authenticated_seat(game_id, replayer.keys, submission)

    def _enforce_deadline(self, game_id: str, replayer: LogReplayer, seat: int, envelope: dict[str, Any],
                          signature: str) -> str:
        """The server time (``at``) for a seat's submission at this position; if the seat to move is past
        its deadline, the timeout is written at this position instead (with what it entails) and the
        submission is refused: 409 ``time/expired`` for the seat that ran out of time, 409
        ``submission/stale`` for any other (the log has moved on)."""
        at_ms = now_ms()
        deadline = replayer.deadline_ms()
        if deadline is None or at_ms <= deadline:
            return format_ms(at_ms)
        trial = clone_replayer(replayer)
        try:
            written = append_system_entries(self.store, game_id, trial, trial.server_seed, now=at_ms)
        except StoreUnavailable as exc:
            raise unavailable(exc) from exc
        if written:
            trial = self._settle(game_id, trial)  # a worker may have appended part of it first
            self._set_timer(game_id, trial)
            self._notify(game_id, written)
        tip = Tip(trial.seq, trial.head) if written else self.store.tip(game_id)
        if not written or seat != replayer.clocks.seat:  # type: ignore[union-attr]
            raise self._stale(game_id, tip, signature, envelope)
        raise ServiceError(409, "time/expired", f"seat {seat}'s time ran out at {format_ms(deadline)}; the timeout "
                           f"is logged at position {written[0].position}", "TC-T1",
                           details={"deadline": format_ms(deadline), "timeout": written[0].position,
                                    "seq": tip.seq, "head": tip.head})

    def _append_submission(self, game_id: str, replayer: LogReplayer, entry: dict[str, Any],
                           submission: dict[str, Any]) -> tuple[LogReplayer, list[Appended]]:
        """Check ``entry`` on a copy of the fold, append it at the fold's position, then the referee's own
        due entries; returns the advanced copy (now cached) and what was appended."""
        trial = clone_replayer(replayer)
        envelope, sig = submission["envelope"], submission["sig"]
        seat = envelope.get("seat")
        seat_key = envelope.get("key") or (replayer.keys[seat] if isinstance(seat, int) else None)

        def checked_once(key: str, value: Any, signature: str) -> bool:
            # _authenticate verified exactly this (key, envelope, sig) already; other checks go to verify()
            return (key == seat_key and value is envelope and signature == sig) or verify(key, value, signature)

        trial.verifier = checked_once
        try:
            verdict = trial.feed(entry)
        finally:
            trial.verifier = verify
        if verdict.status == "rejected":
            raise from_verdict_error(verdict.error or {})
        # the game's next timer goes with the append (one write, one fsync); set again below only if the
        # referee's own entries follow
        timer = next_alarm(trial, now_ms()) if (trial.clocks is not None and trial.clocks.running) \
            or trial.recoveries or replayer.recoveries else KEEP_TIMER
        try:
            first = self.store.append(game_id, entry, replayer.head, signature=submission["sig"], timer=timer)
        except StaleAppend as exc:
            raise self._stale(game_id, Tip(exc.seq, exc.head), submission["sig"], submission["envelope"]) from exc
        except DuplicateSubmission as exc:
            raise ServiceError(409, "submission/duplicate",
                               f"this submission is already in the log at position {exc.position}",
                               details={"position": exc.position, "seq": exc.seq, "head": exc.head}) from exc
        except StoreUnavailable as exc:
            raise unavailable(exc) from exc
        except GameNotFound as exc:
            raise not_found(game_id) from exc
        try:
            more = append_system_entries(self.store, game_id, trial, trial.server_seed)
        except StoreUnavailable:  # the submission is logged; the worker appends what is due
            log.exception("could not append the referee's entries after %s:%s", game_id, first.position)
            more = []
        trial = self._settle(game_id, trial)
        appended = [first, *more]
        if more and trial.clocks is not None and trial.clocks.running:
            self._set_timer(game_id, trial)
        self._notify(game_id, appended)
        return trial, appended

    def _receipt(self, game_id: str, first: Appended, replayer: LogReplayer,
                 entry: dict[str, Any] | None = None) -> dict[str, Any]:
        """The 2xx body of a submission: where it went and, signed by the referee, the receipt that proves
        it is in the log at that position and time (CONTRACT section 8)."""
        out: dict[str, Any] = {"game": game_id, "position": first.position, "hash": first.head, "seq": replayer.seq,
                               "head": replayer.head, "status": replayer.status, "to_move": replayer.to_move()}
        if entry is not None:
            receipt = {"ctx": RECEIPT_CTX, "game": game_id, "seq": first.position, "hash": first.head,
                       "at": entry["at"]}
            out["receipt"] = receipt
            out["receipt_sig"] = sign(self.referee_key, receipt)
        clocks = clock_view_of(replayer)
        if clocks is not None:
            out["clocks"] = clocks
        return out
