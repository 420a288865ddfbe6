"""The game's lifecycle and its seats: a game is created, its seats accept, the referee starts it (or it
expires, never accepted in time), and a seat leaves a running game by forfeit or by its player's
withdrawal from the tournament. The entries that fill a seat or give it up (CONTRACT section 14) belong here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..decisions import Decisions
from ..games import ruleset
from ..games.randomness import derive_game_seed, recorded_game_seed
from ..signing import ACCEPT_CTX, submitted_entropy
from ..timecontrol import Clocks, engine_options, parse_ms
from ..timecontrol.spec import time_control_of
from .moves import next_decision
from .verdicts import (
    ACTIVE,
    EXPIRED,
    FINISHED,
    WAITING,
    Handler,
    LogError,
    Verdict,
    entry_time,
    reject,
    seat_submission,
)

if TYPE_CHECKING:
    from .replayer import LogReplayer


def on_created(fold: LogReplayer, entry: dict[str, Any]) -> Verdict:
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
    fold.clocks = Clocks.start(time_control_of(entry), len(fold.keys))
    fold.decisions = Decisions.start(len(fold.keys))
    return Verdict(0, "created", "ok")


def on_accepted(fold: LogReplayer, entry: dict[str, Any]) -> Verdict:
    assert fold.created is not None
    seat = entry.get("seat")
    if fold.status != WAITING or fold.created.get("mode") != "seeded":
        return reject(entry, "game/not_waiting", "the game is not waiting for acceptances")
    if not isinstance(seat, int) or not 0 <= seat < len(fold.keys):
        return reject(entry, "submission/wrong_seat", f"no seat {seat!r} in this game")
    if seat in fold.entropies:
        return reject(entry, "accept/duplicate", f"seat {seat} has already accepted")
    refused = seat_submission(fold, entry, ACCEPT_CTX, seat)
    if refused:
        return refused
    entropy = submitted_entropy(entry)
    if entropy is None:
        return reject(entry, "accept/bad_entropy", "entropy must be 32 bytes of base64url")
    accept_by = fold.accept_by_ms()
    if accept_by is not None:
        try:
            late = parse_ms(entry.get("at")) > accept_by
        except ValueError:
            late = True
        if late:
            return reject(entry, "game/expired", f"the game had to be accepted by {entry_time(accept_by)}")
    fold.entropies[seat] = entropy
    return Verdict(entry["seq"], "accepted", "ok", seat)


def on_started(fold: LogReplayer, entry: dict[str, Any]) -> Verdict:
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


def on_expired(fold: LogReplayer, entry: dict[str, Any]) -> Verdict:
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


def on_forfeited(fold: LogReplayer, entry: dict[str, Any]) -> Verdict:
    """The referee's record of a seat's forfeit: the one its ``timeout`` decided (TC-F1), or a withdrawal."""
    clocks = fold.clocks
    seat = entry.get("seat")
    if entry.get("reason") == "withdrawn":
        return _withdrawn(fold, entry)
    if clocks is None or not isinstance(seat, int) or seat not in clocks.unconfirmed:
        return reject(entry, "time/no_forfeit", f"seat {seat!r} has no forfeit to record", "TC-F1")
    del clocks.unconfirmed[seat]
    return Verdict(entry["seq"], "forfeited", "ok", seat)


def _withdrawn(fold: LogReplayer, entry: dict[str, Any]) -> Verdict:
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
    if len(fold.keys) > 1 and len(clocks.standing()) < 2:  # TC-F2: the game ends as it stands
        fold.status = FINISHED
        clocks.begin(None, clocks.since or 0, entry["seq"])
    return Verdict(entry["seq"], "forfeited", "ok", seat)


HANDLERS: dict[str, Handler] = {
    "created": on_created, "accepted": on_accepted, "started": on_started, "expired": on_expired,
    "forfeited": on_forfeited,
}
