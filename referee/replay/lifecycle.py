"""The game's lifecycle and its seats: a game is created, its seats accept, the referee starts it (or it
expires, never accepted in time), and a seat leaves a running game by forfeit or by its player's
withdrawal from the tournament.

Open seats (CONTRACT section 14): a seat of ``created`` may be open to a holder of an invitation key
(``{"invite": key}``) or to anyone (``{"open": true}``). ``seated`` fills one (signed by the joining key, and by
the invitation key for an ``invite`` seat; it is also the seat's acceptance, its ``entropy`` counting for the
seed), ``left`` gives it up again before the start (signed by its holder), ``cancelled`` ends a waiting game
(signed by its creator). From ``seated`` on, every submission of the seat is checked against the key that took
it (``LogReplayer.holders``).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from ..games import ruleset
from ..games.randomness import derive_game_seed, recorded_game_seed
from ..protocol.signing import ACCEPT_CTX, CANCEL_CTX, LEAVE_CTX, submitted_entropy
from ..rulings.decisions import Decisions
from ..timecontrol import Clocks, engine_options, parse_ms
from ..timecontrol.spec import time_control_of
from .moves import lapse_offer, next_decision
from .state import FoldState, Handler, seat_submission
from .verdicts import (
    ACTIVE,
    CANCELLED,
    EXPIRED,
    FINISHED,
    WAITING,
    LogError,
    Verdict,
    entry_time,
    envelope_problem,
    reject,
    seat_kind,
    seated_problem,
)


def on_created(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    if fold.created is not None:
        return reject(entry, "log/duplicate_created", "a game is created once")
    try:
        fold.rules = ruleset(entry["ruleset"]["name"])
    except (KeyError, TypeError) as exc:
        raise LogError(0, f"unknown or missing ruleset: {exc}") from exc
    pinned = entry["ruleset"].get("version")
    if pinned != fold.rules.version:
        fold.version_mismatch = {"pinned": str(pinned), "installed": fold.rules.version}
    fold.created = entry
    fold.holders = tuple(_given(spec) for spec in entry.get("seats") or [])
    fold.clocks = Clocks.start(time_control_of(entry), len(fold.keys))
    fold.decisions = Decisions.start(len(fold.keys))
    return Verdict(0, "created", "ok")


def on_accepted(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    assert fold.created is not None
    seat = entry.get("seat")
    if fold.status != WAITING or fold.created.get("mode") != "seeded":
        return reject(entry, "game/not_waiting", "the game is not waiting for acceptances")
    if not isinstance(seat, int) or not 0 <= seat < len(fold.keys):
        return reject(entry, "submission/wrong_seat", f"no seat {seat!r} in this game")
    if seat in fold.entropies:
        return reject(entry, "accept/duplicate", f"seat {seat} has already accepted")
    if fold.holders[seat] is None:
        return reject(entry, "seat/open", f"seat {seat} is open: it is accepted by taking it")
    refused = seat_submission(fold, entry, ACCEPT_CTX, seat)
    if refused:
        return refused
    entropy = _entropy_in_time(fold, entry)
    if isinstance(entropy, Verdict):
        return entropy
    fold.entropies[seat] = entropy
    return Verdict(entry["seq"], "accepted", "ok", seat)


def _given(spec: Any) -> tuple[str, str | None] | None:
    """A seat's holder as ``created`` gives it: ``(key, name)`` for a seat given to a key, None for an open one."""
    if seat_kind(spec) != "key":
        return None
    key = spec.get("key") if isinstance(spec, dict) else None
    name = spec.get("name") if isinstance(spec, dict) else None
    return (key if isinstance(key, str) else "", name if isinstance(name, str) else None)


def _entropy_in_time(fold: FoldState, entry: dict[str, Any]) -> bytes | Verdict:
    """An acceptance's (``accepted``, ``seated``) 32 bytes of entropy; or its rejection when it has none, or was
    logged after ``created.accept_by``."""
    entropy = submitted_entropy(entry)
    if entropy is None:
        return reject(entry, "accept/bad_entropy", "entropy must be 32 bytes of base64url")
    accept_by = fold.accept_by_ms()
    if accept_by is None:
        return entropy
    try:
        late = parse_ms(entry.get("at")) > accept_by
    except ValueError:
        late = True
    if late:
        return reject(entry, "game/expired", f"the game had to be accepted by {entry_time(accept_by)}")
    return entropy


def _open_for_seating(fold: FoldState, entry: dict[str, Any]) -> Verdict | None:
    """The rejection of a seat entry (``seated``, ``left``) of a game that is not waiting, or None."""
    assert fold.created is not None
    if fold.status == CANCELLED:
        return reject(entry, "game/cancelled", "the game was cancelled by its creator")
    if fold.status != WAITING or fold.created.get("mode") != "seeded":
        return reject(entry, "game/not_waiting", f"the game is {fold.status}, not waiting for its seats")
    return None


def on_seated(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """An open seat taken (CONTRACT section 14): the seat was declared open and nobody holds it, the joining key
    holds no other seat, its name is no other holder's, and the signatures hold (:func:`seated_problem`)."""
    assert fold.created is not None
    refused = _open_for_seating(fold, entry)
    if refused:
        return refused
    seat = entry.get("seat")
    problem = seated_problem(entry.get("submission"), created=fold.created, seat=seat, seq=entry["seq"],
                             prev=fold.head, verifier=fold.verifier)
    if problem:
        return reject(entry, *problem)
    assert isinstance(seat, int)
    envelope = entry["submission"]["envelope"]
    key, name = envelope["key"], envelope.get("name")
    if fold.holders[seat] is not None:
        return reject(entry, "seat/taken", f"seat {seat} is taken already")
    if any(holder is not None and holder[0] == key for holder in fold.holders):
        return reject(entry, "seat/same_key", "this key holds a seat of this game already")
    if not isinstance(name, str) or not name:
        return reject(entry, "submission/malformed", "a seat is taken with a name")
    if any(holder is not None and isinstance(holder[1], str) and name_clash(holder[1], name)
           for holder in fold.holders):
        return reject(entry, "seat/name_taken", f"another seat of this game is called {name}")
    entropy = _entropy_in_time(fold, entry)
    if isinstance(entropy, Verdict):
        return entropy
    fold.holders = (*fold.holders[:seat], (key, name), *fold.holders[seat + 1:])
    fold.entropies[seat] = entropy
    return Verdict(entry["seq"], "seated", "ok", seat)


def name_clash(one: str, other: str) -> bool:
    """Whether two seat names are the same ignoring case (CONTRACT section 11; ``schemas.common.name_key``)."""
    return unicodedata.normalize("NFC", one).casefold() == unicodedata.normalize("NFC", other).casefold()


def on_left(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """The holder of an open seat gives it up before the start: the seat is open again, its acceptance gone."""
    assert fold.created is not None
    refused = _open_for_seating(fold, entry)
    if refused:
        return refused
    seat = entry.get("seat")
    seats = fold.created.get("seats") or []
    if not isinstance(seat, int) or not 0 <= seat < len(seats):
        return reject(entry, "submission/wrong_seat", f"no seat {seat!r} in this game")
    if seat_kind(seats[seat]) == "key":
        return reject(entry, "seat/not_open", f"seat {seat} was given to a key at creation; it cannot be left "
                      "(the creator may cancel the game)")
    if fold.holders[seat] is None:
        return reject(entry, "seat/not_taken", f"nobody holds seat {seat}")
    refused = seat_submission(fold, entry, LEAVE_CTX, seat)
    if refused:
        return refused
    fold.holders = (*fold.holders[:seat], None, *fold.holders[seat + 1:])
    fold.entropies.pop(seat, None)
    return Verdict(entry["seq"], "left", "ok", seat)


def on_cancelled(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """The creator's signed cancel of a game that has not started (CONTRACT section 14)."""
    assert fold.created is not None
    if fold.status != WAITING or fold.created.get("mode") != "seeded":
        return reject(entry, "game/not_waiting", f"the game is {fold.status}, not waiting for its seats")
    problem = cancel_problem(entry.get("submission"), fold.created, fold.creator_key(), seq=entry["seq"],
                             prev=fold.head, verifier=fold.verifier)
    if problem:
        return reject(entry, *problem)
    fold.status = CANCELLED
    return Verdict(entry["seq"], "cancelled", "ok")


def cancel_problem(submission: Any, created: dict[str, Any], creator: str | None, *, seq: int, prev: str,
                   verifier: Any) -> tuple[str, str] | None:
    """``(code, message)`` of what is wrong with a signed cancel (``ctx`` ``referee/cancel``, bound to the game
    and to its log position, signed by the game's creator), or None."""
    problem = envelope_problem(submission, CANCEL_CTX)
    if problem:
        return problem
    envelope, sig = submission["envelope"], submission.get("sig")
    if envelope.get("game") != created.get("game"):
        return "submission/wrong_game", "the envelope is for another game"
    if envelope.get("seq") != seq or envelope.get("prev") != prev:
        return "submission/stale", f"the envelope is bound to seq {envelope.get('seq')!r}, not {seq}"
    if creator is None:
        return "cancel/no_creator", "this game was created without a signed request: it has no creator to cancel it"
    if not isinstance(sig, str) or not verifier(creator, envelope, sig):
        return "submission/bad_signature", "a game is cancelled by its creator: the signature is not the creator's"
    return None


def on_started(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    assert fold.created is not None and fold.rules is not None
    if fold.status != WAITING:
        return reject(entry, "game/not_waiting", "the game has already started")
    players = len(fold.keys)
    options = engine_options(fold.created.get("options"))
    game_id = fold.created["game"]
    if fold.created.get("mode") == "recorded":
        fold.dealt = (players, options, list(fold.created["deck"]), recorded_game_seed(game_id))
        fold.game = fold.rules.new_game(players, options, deck=list(fold.created["deck"]),
                                        seed=recorded_game_seed(game_id))
    else:
        if len(fold.entropies) != players:
            return reject(entry, "game/not_accepted", "not every seat has accepted")
        if fold.server_seed is None:
            fold.blocked = "the server seed is not known (not revealed yet)"
            fold.status = ACTIVE
            return Verdict(entry["seq"], "started", "ok")
        seed = derive_game_seed(fold.server_seed, game_id, [fold.entropies[i] for i in range(players)])
        fold.dealt = (players, options, None, seed)
        fold.game = fold.rules.new_game(players, options, seed=seed)
    fold.status = ACTIVE
    next_decision(fold, entry, None)
    return Verdict(entry["seq"], "started", "ok")


def on_expired(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """A waiting game that not every seat accepted by ``created.accept_by`` (issue 17)."""
    deadline = fold.accept_by_ms()
    if deadline is None:
        return reject(entry, "game/not_waiting", "only a waiting game with an acceptance deadline expires")
    try:
        at = parse_ms(entry.get("at"))
    except ValueError as exc:
        return reject(entry, "log/bad_time", str(exc))
    if at < deadline:
        return reject(entry, "expired/early", f"the game may be accepted until {entry_time(deadline)}")
    fold.status = EXPIRED
    return Verdict(entry["seq"], "expired", "ok")


def on_forfeited(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """The referee's record of a seat's forfeit: the one its ``timeout`` decided (TC-F1), or a withdrawal."""
    clocks = fold.clocks
    seat = entry.get("seat")
    if entry.get("reason") == "withdrawn":
        return _withdrawn(fold, entry)
    if clocks is None or not isinstance(seat, int) or seat not in clocks.unconfirmed:
        return reject(entry, "time/no_forfeit", f"seat {seat!r} has no forfeit to record", "TC-F1")
    del clocks.unconfirmed[seat]
    return Verdict(entry["seq"], "forfeited", "ok", seat)


def _withdrawn(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """A tournament game's seat whose player withdrew from the tournament (``forfeited`` with reason
    ``withdrawn``, written by the referee with the tournament whose log holds the signed withdrawal):
    the seat is forfeited here (its turns are played by default moves, it ranks last, TC-F1)."""
    clocks, seat, created = fold.clocks, entry.get("seat"), fold.created or {}
    if not created.get("tournament") or entry.get("tournament") != created.get("tournament"):
        return reject(entry, "withdrawal/not_tournament", "only a tournament's game is forfeited by a withdrawal")
    if fold.status != ACTIVE or clocks is None or fold.game is None:
        return reject(entry, "game/not_active", f"the game is {fold.status}")
    if not isinstance(seat, int) or not 0 <= seat < len(fold.keys) or clocks.forfeited(seat):
        return reject(entry, "withdrawal/seat", f"seat {seat!r} cannot forfeit here")
    clocks.forfeited_at[seat] = entry["seq"]
    lapse_offer(fold, entry)  # DC-O2: the seat left the game, as at a resignation
    if len(fold.keys) > 1 and len(clocks.standing()) < 2:  # TC-F2: the game ends as it stands
        fold.status = FINISHED
        clocks.begin(None, clocks.since or 0, entry["seq"])
    return Verdict(entry["seq"], "forfeited", "ok", seat)


HANDLERS: dict[str, Handler] = {
    "created": on_created, "accepted": on_accepted, "started": on_started, "expired": on_expired,
    "forfeited": on_forfeited, "seated": on_seated, "left": on_left, "cancelled": on_cancelled,
}
