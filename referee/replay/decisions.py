"""The players' own decisions (CONTRACT section 12; the rules in :mod:`referee.rulings.decisions`): a seat resigns,
offers (a draw, an end, an abort, a take-back), answers the pending offer, and the referee records that an
offer passed (``agreed``)."""

from __future__ import annotations

from typing import Any

from ..games.base import Game
from ..protocol.signing import ANSWER_CTX, OFFER_CTX, RESIGN_CTX
from ..rulings.decisions import Offer, agreed, answer_problem, offer_problem, revealing
from ..timecontrol import parse_ms
from .keys import on_recovery_answer, pending_recovery
from .moves import late, moved_seats
from .state import FoldState, Handler, seat_submission
from .verdicts import ABORTED, ACTIVE, FINISHED, Verdict, reject


def _decision_entry(fold: FoldState, entry: dict[str, Any], ctx: str) -> Verdict | int:
    """The seat of a seat's signed decision entry (resign, offer, answer) that may be taken now, or the
    rejection: the game runs, the binding and signature hold, the seat is still in the game and in time."""
    assert fold.created is not None
    seat = entry.get("seat")
    if fold.status != ACTIVE or fold.clocks is None or fold.decisions is None:
        return reject(entry, "game/not_active", f"the game is {fold.status}")
    if not isinstance(seat, int) or isinstance(seat, bool):
        return reject(entry, "submission/wrong_seat", f"a {entry.get('type')} entry names its seat")
    refused = seat_submission(fold, entry, ctx, seat)
    if refused:
        return refused
    too_late = late(fold, entry, seat)
    return too_late if too_late is not None else seat


def on_resigned(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """A seat resigns (DC-R1): it leaves the game; its turns are played by default moves (DC-R2), and with
    fewer than two seats left the game ends."""
    seat = _decision_entry(fold, entry, RESIGN_CTX)
    if isinstance(seat, Verdict):
        return seat
    clocks, decisions = fold.clocks, fold.decisions
    assert clocks is not None and decisions is not None
    clocks.forfeited_at[seat] = entry["seq"]  # out of the game: the clocks treat it as a forfeited seat
    fold.decisions = decisions.resigned(seat, entry["seq"])
    if len(fold.keys) > 1 and len(clocks.standing()) < 2:
        fold.status = FINISHED
        clocks.begin(None, _at(fold, entry), entry["seq"])
    return Verdict(entry["seq"], "resigned", "ok", seat)


def on_offer(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """A seat's offer (DC-O1, DC-A1, DC-T1, DC-T2): checked against the position, then pending."""
    seat = _decision_entry(fold, entry, OFFER_CTX)
    if isinstance(seat, Verdict):
        return seat
    clocks, decisions, created = fold.clocks, fold.decisions, fold.created
    assert clocks is not None and decisions is not None and created is not None
    kind = entry["submission"]["envelope"].get("offer")
    if entry.get("offer") != kind:
        return reject(entry, "offer/mismatch", "the entry's offer is not the signed envelope's", "DC-O1")
    applied = fold.applied
    last = (applied[1], applied[4], applied[3]) if applied is not None else None
    before, revealed_rule = None, None
    if kind == "takeback" and last is not None and last[:2] == (seat, "move") and fold.game is not None \
            and decisions.pending is None:
        before = _without_last_move(fold)
        assert fold.rules is not None
        revealed_rule = revealing(fold.rules.name, before.view(), fold.game.view())
    problem = offer_problem(decisions, kind, seat, standing=clocks.standing(),
                            tournament=bool(created.get("tournament")),
                            all_moved=len(fold.moved) >= len(fold.keys), last_move=last,
                            revealed_rule=revealed_rule)
    if problem:
        return reject(entry, *problem)
    target = last[2] if kind == "takeback" and last is not None else None
    fold.decisions = decisions.offered(Offer(entry["seq"], seat, kind, target=target, before=before))
    return Verdict(entry["seq"], "offer", "ok", seat)


def on_answered(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """A seat's answer to the pending offer (DC-O2): an acceptance, a decline, or the offerer's withdrawal; or
    to a pending recovery of a seat's key (RK-R2, :mod:`referee.replay.keys`)."""
    recovery = pending_recovery(fold, position=entry.get("offer")) if fold.recoveries else None
    if recovery is not None:
        return on_recovery_answer(fold, entry, recovery)
    seat = _decision_entry(fold, entry, ANSWER_CTX)
    if isinstance(seat, Verdict):
        return seat
    clocks, decisions = fold.clocks, fold.decisions
    assert clocks is not None and decisions is not None
    envelope = entry["submission"]["envelope"]
    offer, accept = envelope.get("offer"), envelope.get("accept")
    if entry.get("offer") != offer or entry.get("accept") is not accept:
        return reject(entry, "answer/mismatch", "the entry's offer and accept are not the signed envelope's", "DC-O2")
    problem = answer_problem(decisions, offer, seat, accept, standing=clocks.standing())
    if problem:
        return reject(entry, *problem)
    fold.decisions = decisions.answered(seat, accept is True)
    return Verdict(entry["seq"], "answered", "ok", seat)


def on_agreed(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """The referee's record that the pending offer passed (DC-O2): a draw or an end finishes the game, an
    abort ends it without a result, a take-back voids the last move (the game is re-folded without it)."""
    decisions, clocks = fold.decisions, fold.clocks
    if fold.status != ACTIVE or decisions is None or clocks is None:
        return reject(entry, "game/not_active", f"the game is {fold.status}")
    offer = decisions.pending
    if offer is None or entry.get("offer") != offer.position:
        return reject(entry, "agreement/no_offer", f"no offer at position {entry.get('offer')!r} is pending", "DC-O2")
    standing = clocks.standing()
    if not agreed(offer, standing):
        missing = sorted(set(standing) - {offer.seat} - offer.accepted)
        return reject(entry, "agreement/not_agreed", f"seats {missing} have not accepted offer {offer.position}",
                      "DC-O2")
    at = _at(fold, entry)
    if offer.kind == "takeback":
        if fold.game is not None:
            if fold.applied is None or fold.applied[3] != offer.target or offer.before is None:
                return reject(entry, "agreement/stale", f"the move at position {offer.target} is no longer "
                              "the last applied one", "DC-T1")
            voided = fold.applied
            fold.game = offer.before.copy()
            fold.applied = voided[0]
            fold.moved = moved_seats(fold.applied)  # the voided move no longer counts as the seat's (DC-A1)
            if voided[5] is not None:  # TC-D3: the clock as if the move had never been made
                clocks.take_back(voided[1], voided[5])
        fold.decisions = decisions.agreed(entry["seq"])
        if fold.game is not None:
            clocks.begin(fold.game.to_move(), at, entry["seq"])
        return Verdict(entry["seq"], "agreed", "ok")
    fold.decisions = decisions.agreed(entry["seq"])
    fold.status = ABORTED if offer.kind == "abort" else FINISHED
    clocks.begin(None, at, entry["seq"])
    return Verdict(entry["seq"], "agreed", "ok")


def _without_last_move(fold: FoldState) -> Game:
    """The game as it was before its last applied move: dealt again and every earlier move replayed."""
    assert fold.rules is not None and fold.dealt is not None and fold.applied is not None
    moves = []
    node = fold.applied[0]
    while node is not None:
        moves.append((node[1], node[2]))
        node = node[0]
    players, options, deck, seed = fold.dealt
    if deck is not None:
        game = fold.rules.new_game(players, options, deck=list(deck), seed=seed)
    else:
        game = fold.rules.new_game(players, options, seed=seed)
    for seat, move in reversed(moves):
        game.play(seat, move)
    return game


def _at(fold: FoldState, entry: dict[str, Any]) -> int:
    try:
        return parse_ms(entry.get("at"))
    except ValueError:
        since = fold.clocks.since if fold.clocks is not None else None
        return since or 0


HANDLERS: dict[str, Handler] = {
    "resigned": on_resigned, "offer": on_offer, "answered": on_answered, "agreed": on_agreed,
}
