"""How a game ends outside its moves, and the seed it reveals: an adjudication (CONTRACT section 10;
docs/tournaments.md) scores the position or takes an adjudicator's signed ranks; ``revealed`` discloses the
server seed against the game's commitment (section 4). Beside them, the results an adjudication shapes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from ..protocol.signing import verify
from .state import FoldState, Handler
from .verdicts import ABORTED, ACTIVE, FINISHED, WAITING, Verdict, reject

ADJUDICATE_CTX = "referee/adjudicate"
#: ``ctx`` of a signed abort (``POST /games/{id}/abort``)
ABORT_CTX = "referee/abort"
#: why a seat alone may not abort a game under way (issue 37): what it may do instead
ABORT_STARTED = ("the game has started: a seat alone may abort it only before it starts; now an abort is an offer "
                 "the other seats accept (DC-A1)")


def on_adjudicated(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    """The game ends by adjudication: ``provisional`` scores the position as it stands (the engine's
    ``provisional_result()``); ``organiser`` takes the ranks of the adjudicator's signed decision."""
    game = fold.game
    unplayed = fold.status == WAITING and (fold.created or {}).get("mode") == "seeded"
    if not unplayed and (fold.status != ACTIVE or game is None):
        return reject(entry, "game/not_active", f"the game is {fold.status}: nothing to adjudicate")
    method, reason = entry.get("method"), entry.get("reason")
    if not isinstance(reason, str) or not reason:
        return reject(entry, "adjudication/reason", "an adjudication gives its reason")
    players = len(fold.keys)
    if method == "provisional" and unplayed:
        # never started (a seat did not accept in time): the seats that accepted share the first rank
        accepted = len(fold.entropies)
        ranks = [1 if seat in fold.entropies else accepted + 1 for seat in range(players)]
        if entry.get("ranks") not in (None, ranks):
            return reject(entry, "adjudication/ranks", f"an unplayed game ranks the seats {ranks}")
    elif method == "provisional":
        assert game is not None
        ranks = [seat["rank"] for seat in game.provisional_result()["seats"]]
        if entry.get("ranks") not in (None, ranks):
            return reject(entry, "adjudication/ranks", f"the provisional result ranks the seats {ranks}")
    elif method == "organiser":
        given = entry.get("ranks")
        if (not isinstance(given, list) or len(given) != players
                or any(isinstance(r, bool) or not isinstance(r, int) for r in given)
                or sorted(given) != [1 + sum(1 for o in given if o < r) for r in sorted(given)]):
            return reject(entry, "adjudication/ranks", f"ranks must be competition ranks of the {players} seats")
        ranks = given
        decision = entry.get("decision")
        if not isinstance(decision, dict):
            decision = {}  # no envelope: refused below
        envelope = decision.get("envelope")
        if (not isinstance(envelope, dict) or envelope.get("ctx") != ADJUDICATE_CTX
                or envelope.get("game") != (fold.created or {}).get("game") or envelope.get("ranks") != ranks
                or envelope.get("reason") != reason):
            return reject(entry, "adjudication/decision", "the decision must be a signed referee/adjudicate "
                          "envelope naming this game, these ranks and this reason")
        sig = decision.get("sig")
        signers = fold.adjudicator_keys()
        if not isinstance(sig, str) or not any(fold.verifier(key, envelope, sig) for key in signers):
            return reject(entry, "adjudication/bad_signature", "the decision is not signed by this game's "
                          "adjudicator or organiser")
    else:
        return reject(entry, "adjudication/method", "method is 'provisional' or 'organiser'")
    fold.adjudication = {"method": method, "reason": reason, "ranks": ranks, "position": entry["seq"]}
    fold.status = FINISHED
    if fold.clocks is not None:
        fold.clocks.begin(None, fold.clocks.since or 0, entry["seq"])
    return Verdict(entry["seq"], "adjudicated", "ok")


def on_revealed(fold: FoldState, entry: dict[str, Any]) -> Verdict:
    assert fold.created is not None
    try:
        seed = bytes.fromhex(entry.get("server_seed", ""))
    except ValueError:
        seed = b""
    if fold.created.get("mode") != "seeded" or hashlib.sha256(seed).hexdigest() != fold.created.get("commitment"):
        return reject(entry, "reveal/commitment_mismatch", "the revealed seed does not match the commitment")
    if entry.get("reason") == "aborted":
        problem = abort_problem(entry.get("abort"), fold.created, status=fold.status, seq=entry["seq"],
                                prev=fold.head, keys=fold.keys, verifier=fold.verifier)
        if problem:
            return reject(entry, *problem)
        fold.status = ABORTED
    fold.revealed = True
    return Verdict(entry["seq"], "revealed", "ok")


def abort_problem(abort: Any, created: dict[str, Any], *, status: str | None, seq: int, prev: Any,
                  keys: list[str], verifier: Callable[[str, Any, str], bool] = verify) -> tuple[str, str] | None:
    """What is wrong with the signed abort an ``aborted`` reveal carries, or None (``docs/service.md``, "Aborting").

    An abort is signed (``ctx`` ``referee/abort``) by the organiser named in ``created`` or, when the game has no
    organiser, by any seat; it is bound to the game and to the reveal's position like a move. A seat alone may
    abort only a game that has not started (``status`` waiting): once it is under way an abort needs the others'
    agreement, as an offer (DC-A1). A tournament's game is never aborted. ``status`` None checks the signature and
    the binding only (the verifier's signature check; the fold checks the rest).
    """
    if not isinstance(abort, dict) or not isinstance(abort.get("envelope"), dict):
        return "abort/unsigned", "the game was aborted without a signed abort (organiser's or a seat's)"
    envelope, sig = abort["envelope"], abort.get("sig")
    if envelope.get("v") != 1 or envelope.get("ctx") != ABORT_CTX:
        return "submission/wrong_context", f"an abort envelope has v 1 and ctx {ABORT_CTX!r}"
    if envelope.get("game") != created.get("game"):
        return "submission/wrong_game", "the abort is for another game"
    if envelope.get("seq") != seq or envelope.get("prev") != prev:
        return "submission/stale", f"the abort is bound to seq {envelope.get('seq')!r}, not {seq}"
    organiser = created.get("organiser")
    allowed = [organiser] if organiser else [key for key in keys if key]
    if not isinstance(sig, str) or not any(verifier(key, envelope, sig) for key in allowed):
        who = "the organiser's" if organiser else "any seat's"
        return "submission/bad_signature", f"the abort signature is not {who}"
    if status is None:
        return None
    if created.get("tournament"):
        return "game/in_tournament", "a tournament game cannot be aborted"
    if not organiser and status != WAITING:
        return "abort/started", ABORT_STARTED
    return None


def revealed_seed(entries: list[dict[str, Any]]) -> bytes | None:
    """The server seed revealed in a log, if any (last ``revealed`` entry with valid hex)."""
    for entry in reversed(entries):
        if isinstance(entry, dict) and entry.get("type") == "revealed":
            try:
                return bytes.fromhex(entry.get("server_seed", ""))
            except (ValueError, TypeError):
                return None
    return None


HANDLERS: dict[str, Handler] = {"adjudicated": on_adjudicated, "revealed": on_revealed}
