"""Checks 2 to 5, the signatures and the chain: ``referee_signature`` (the referee's over the bundle),
``hash_chain``, ``organiser_signature`` (over the creation request rebuilt from ``created``, and the
game id derived from it) and ``seat_signatures`` (every signed submission's binding and signature, against the
seat's key as it stands at that position — given at creation, taken by ``seated``, moved by ``rekeyed`` — and the
signed abort of an ``aborted`` reveal)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any, TypeGuard

from ..protocol.logchain import GENESIS, first_broken_link
from ..protocol.signing import (
    ACCEPT_CTX,
    ANSWER_CTX,
    LEAVE_CTX,
    MOVE_CTX,
    OFFER_CTX,
    RESIGN_CTX,
    VACATION_CTX,
    b64url_decode,
    load_public_key,
    verify,
)
from ..replay import (
    LogError,
    LogReplayer,
    abort_problem,
    cancel_problem,
    check_submission,
    recover_problem,
    rekey_problem,
    seat_kind,
    seated_problem,
)
from ..rulings.rematch import rematch_problem, rotated
from .context import Context
from .report import FAILED, MAX_LISTED, PASSED, SKIPPED, Check

#: entries that carry a seat's signed submission, and the ``ctx`` each must be signed with
SIGNED_CTX = {"accepted": ACCEPT_CTX, "move": MOVE_CTX, "vacation": VACATION_CTX,
              # the players' own decisions (CONTRACT section 12)
              "resigned": RESIGN_CTX, "offer": OFFER_CTX, "answered": ANSWER_CTX,
              # an open seat given up by its holder (CONTRACT section 14)
              "left": LEAVE_CTX}

#: ``ctx`` of an organiser's signed creation request (``referee.games_service.CREATE_CTX``).
CREATE_CTX = "referee/create"
#: The fields of the creation request (``POST /games`` without ``organiser``) as ``created`` keeps them:
#: ``ruleset`` (its name: ``created.ruleset.name``), ``seats``, ``options``, ``deck``, ``nonce``. A field
#: added to the creation request must be kept verbatim in ``created`` and listed here, or organiser
#: signatures over requests that use it no longer re-check.
CREATION_REQUEST_FIELDS = ("ruleset", "seats", "options", "deck", "nonce")


def is_public_key(value: Any) -> TypeGuard[str]:
    """Whether ``value`` is a base64url Ed25519 public key (anything but a string is not)."""
    try:
        load_public_key(value)
    except (ValueError, TypeError):
        return False
    return True


# -- 2. referee signature ------------------------------------------------------------------------
def unsigned_part(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle without ``referee_sig``: what the referee signs (as RFC 8785 bytes)."""
    return {k: v for k, v in bundle.items() if k != "referee_sig"}


def check_bundle_signature(ctx: Context) -> Check:
    return check_referee_signature(ctx.bundle, ctx.expected_key, "bundle")


def check_referee_signature(document: dict[str, Any], expected_key: str | None, what: str) -> Check:
    """The ``referee_signature`` check of a signed document (a bundle, a tournament certificate): the
    signature of ``referee_key`` over the RFC 8785 bytes of the rest, and that key is ``expected_key`` when
    one is given."""
    key, sig = document.get("referee_key"), document.get("referee_sig")
    if not is_public_key(key):
        return Check("referee_signature", FAILED, "referee_key is not a base64url Ed25519 public key")
    if not isinstance(sig, str) or not verify(key, unsigned_part(document), sig):
        return Check("referee_signature", FAILED,
                     f"referee_sig is not the referee key's Ed25519 signature over the rest of the {what}")
    if expected_key is not None:
        try:
            same = b64url_decode(expected_key) == b64url_decode(key)
        except ValueError:
            return Check("referee_signature", FAILED, "the expected referee key is not base64url")
        if not same:
            return Check("referee_signature", FAILED,
                         f"signed by {key}, not by the expected referee key {expected_key}")
        return Check("referee_signature", PASSED, f"signed by the expected referee key {key}")
    return Check("referee_signature", PASSED, f"signed by referee key {key} (no expected key given)")


# -- 3. hash chain -------------------------------------------------------------------------------
def check_hash_chain(ctx: Context) -> Check:
    broken = first_broken_link(ctx.log)
    if broken is not None:
        position, reason = broken
        return Check("hash_chain", FAILED, reason, position)
    return Check("hash_chain", PASSED, f"{len(ctx.log)} entries chain from {GENESIS[:8]}… to {ctx.log[-1]['hash']}",
                 details={"head": ctx.log[-1]["hash"]})


# -- 4. organiser signature -----------------------------------------------------------------------
def creation_requests(created: dict[str, Any]) -> list[dict[str, Any]]:
    """The creation requests an organiser may have signed, rebuilt from the ``created`` entry: the value
    signed is ``{"v": 1, "ctx": "referee/create", ...the POST /games body without organiser}``.

    ``created`` keeps every field of the request (:data:`CREATION_REQUEST_FIELDS`) verbatim, with one
    ambiguity: a request without ``options`` is stored with ``"options": {}``. When ``options`` is empty
    both forms are returned (with it first); they describe the same game, so accepting either lets no
    one change what the organiser signed.
    """
    pinned = created.get("ruleset")
    request: dict[str, Any] = {"v": 1, "ctx": CREATE_CTX,
                               "ruleset": pinned.get("name") if isinstance(pinned, dict) else pinned}
    for name in CREATION_REQUEST_FIELDS[1:]:
        if name in created:
            request[name] = created[name]
    if request.get("options") == {}:
        return [request, {k: v for k, v in request.items() if k != "options"}]
    return [request]


def signed_game_id(signature: str) -> str:
    """The id the referee gives an organiser-signed game: ``g_`` and the base32 of the first 10 bytes of
    ``sha256(signature as ASCII)``, lower case (so that posting a signed request twice makes one game)."""
    digest = hashlib.sha256(signature.encode("ascii")).digest()
    return "g_" + base64.b32encode(digest[:10]).decode("ascii").lower()


def check_organiser_signature(ctx: Context) -> Check:
    created = ctx.created
    if "rematch_of" in created or "rematch" in created:
        return _rematch_creation(created)
    if "creator" in created or "creator_sig" in created:
        return _signed_creation(created, "creator")
    open_seats = [i for i, seat in enumerate(created.get("seats") or []) if seat_kind(seat) != "key"]
    organiser, sig = created.get("organiser"), created.get("organiser_sig")
    if organiser is None and sig is None:
        if open_seats:  # who declared the seat open must have signed it: else the referee could seat itself
            return Check("organiser_signature", FAILED, f"seat {open_seats[0]} is open, but the game was created "
                         "without a signed request (no creator or organiser signature)", 0)
        return Check("organiser_signature", SKIPPED, "no organiser: the game was created without an organiser key",
                     applicable=False)
    return _signed_creation(created, "organiser")


def _signed_creation(created: dict[str, Any], role: str) -> Check:
    """The ``organiser_signature`` check of a game created by a signed request: ``created[role]``'s signature
    (``created[role + "_sig"]``) over the creation request rebuilt from ``created``, and the game id derived from
    it. ``role`` is ``organiser`` or ``creator`` (CONTRACT section 14: a game with open seats)."""
    organiser, sig = created.get(role), created.get(f"{role}_sig")
    if not is_public_key(organiser):
        return Check("organiser_signature", FAILED,
                     f"the created entry's {role} is not a base64url Ed25519 public key", 0)
    if not isinstance(sig, str):
        return Check("organiser_signature", FAILED,
                     f"the created entry names {role} {organiser} but carries no {role}_sig", 0)
    if not any(verify(organiser, request, sig) for request in creation_requests(created)):
        return Check("organiser_signature", FAILED,
                     f"{role}_sig is not {role} {organiser}'s signature over the creation request "
                     "rebuilt from the created entry (ruleset, seats, options, deck, nonce)", 0,
                     {role: organiser})
    if created.get("game") != signed_game_id(sig):
        return Check("organiser_signature", FAILED,
                     f"the game id {created.get('game')!r} is not the one derived from the {role}'s signature "
                     f"({signed_game_id(sig)})", 0, {role: organiser})
    return Check("organiser_signature", PASSED,
                 f"created by {role} {organiser}: its signature over the creation request checks",
                 details={role: organiser})


def _rematch_creation(created: dict[str, Any]) -> Check:
    """The ``organiser_signature`` check of a rematch (CONTRACT section 14), created by the referee on a seat's signed
    ask: the ask's shape and binding to ``rematch_of.game``, the game id derived from ``rematch_of``
    (:func:`referee.rulings.rematch.rematch_game_id`: one rematch per finished game and head), and the ask's signature
    by a key that holds a seat of this game (a rematch keeps the finished game's keys). What the bundle alone cannot
    show is that ``rematch_of`` names a finished game with that head: that is the finished game's own bundle's to
    show (:func:`check_rematch_of`)."""
    problem = rematch_problem(created)
    if problem:
        return Check("organiser_signature", FAILED, problem, 0)
    if created.get("creator") is not None or created.get("organiser") is not None or any(
            seat_kind(seat) != "key" for seat in created.get("seats") or []):
        return Check("organiser_signature", FAILED, "a rematch is the referee's: no creator, no organiser, no open "
                     "seat", 0)
    envelope, sig = created["rematch"]["envelope"], created["rematch"]["sig"]
    keys = [seat.get("key") for seat in created.get("seats") or []]
    signer = next((key for key in keys if is_public_key(key) and verify(key, envelope, sig)), None)
    if signer is None:
        return Check("organiser_signature", FAILED, "the rematch was asked by no seat of this game: its signature is "
                     "none of the seats' keys over the ask", 0)
    return Check("organiser_signature", PASSED,
                 f"a rematch of game {created['rematch_of']['game']}, asked by the key {signer} (a seat of it and of "
                 "this game), its id bound to that game's head",
                 details={"rematch_of": created["rematch_of"], "asked_by": signer})


def check_rematch_of(rematch_bundle: dict[str, Any], finished_bundle: dict[str, Any]) -> str | None:
    """What is wrong with a rematch's claim about the game it rematches, given that game's bundle (both verified on
    their own): ``rematch_of.head`` is that bundle's last entry's hash, the game was finished there (not aborted),
    and the rematch has its ruleset, options and time control, and its keys with the seats rotated by one; or
    None."""
    new, old = rematch_bundle["log"][0], finished_bundle["log"][0]
    of = new.get("rematch_of") or {}
    log = finished_bundle["log"]
    if of.get("game") != old.get("game") or of.get("head") != log[-1].get("hash"):
        return "rematch_of does not name this game's last entry"
    if not isinstance(finished_bundle.get("result"), dict) or not finished_bundle["result"]:
        return "the game rematched has no result: it was not finished"
    for field in ("options", "time_control"):
        if new.get(field) != old.get(field):
            return f"the rematch's {field} are not the game's"
    if (new.get("ruleset") or {}).get("name") != (old.get("ruleset") or {}).get("name"):
        return "the rematch's ruleset is not the game's"
    fold = LogReplayer()  # the keys that held the seats at the end (open seats as the fold judged them)
    try:
        for entry in log:
            fold.feed(entry)
    except LogError as exc:
        return f"the game rematched does not fold: {exc}"
    held = fold.keys
    if [seat.get("key") for seat in new.get("seats") or []] != rotated(held):
        return "the rematch's keys are not the game's, rotated by one seat"
    return None


# -- 5. seat signatures --------------------------------------------------------------------------
def check_seat_signatures(ctx: Context) -> Check:
    log, created = ctx.log, ctx.created
    specs = created.get("seats", [])
    # each seat's key as the log goes: given at creation, or taken by a ``seated`` entry ("" while nobody holds it)
    keys = [seat.get("key") if seat_kind(seat) == "key" else "" for seat in specs]
    for index, key in enumerate(keys):
        if key != "" and not is_public_key(key):
            return Check("seat_signatures", FAILED, f"seat {index}'s key in the created entry is not an Ed25519 key", 0)
    failures: list[dict[str, Any]] = []
    checked = 0
    total = len(log)
    recoveries: dict[int, str] = {}  # a recovery's position -> the key it asks for (CONTRACT section 15)
    for position, entry in enumerate(log):
        kind = entry.get("type")
        prev: Any = log[position - 1].get("hash") if position else GENESIS  # as written: hash_chain checks it
        if kind in SIGNED_CTX:
            checked += 1
            seat = entry.get("seat")
            if not isinstance(seat, int) or isinstance(seat, bool):
                problem: tuple[str, str] | None = ("submission/wrong_seat", f"the {kind} entry names no seat")
            else:
                signers = keys
                if kind == "answered" and entry.get("by") == "organiser" and 0 <= seat < len(keys):
                    # a tournament game's organiser answers a recovery for the seats (CONTRACT section 15)
                    signers = [created.get("adjudicator") if i == seat else key for i, key in enumerate(keys)]
                problem = check_submission(entry.get("submission"), ctx=SIGNED_CTX[kind],
                                           game_id=created["game"], seat=seat, seq=position, prev=prev, keys=signers,
                                           verifier=ctx.verifier)
            if problem:
                failures.append({"position": position, "seat": seat, "code": problem[0], "message": problem[1]})
            elif kind == "left" and isinstance(seat, int):
                keys[seat] = ""
        elif kind == "seated":
            checked += 1
            problem = _seated(entry, keys, position, prev, ctx)
            if problem:
                failures.append({"position": position, "seat": entry.get("seat"), "code": problem[0],
                                 "message": problem[1]})
        elif kind in ("rekeyed", "recovery"):
            checked += 1
            problem = _new_key(entry, keys, position, prev, ctx, recoveries=recoveries)
            if problem:
                failures.append({"position": position, "seat": entry.get("seat"), "code": problem[0],
                                 "message": problem[1]})
        elif kind == "cancelled":
            checked += 1
            creator = next((created[role] for role in ("creator", "organiser") if isinstance(created.get(role), str)),
                           None)
            problem = cancel_problem(entry.get("submission"), created, creator, seq=position, prev=prev,
                                     verifier=ctx.verifier)
            if problem:
                failures.append({"position": position, "seat": None, "code": problem[0], "message": problem[1]})
        elif kind == "revealed" and entry.get("reason") == "aborted":
            checked += 1
            problem = abort_problem(entry.get("abort"), created, status=None, seq=position, prev=prev, keys=keys,
                                    verifier=ctx.verifier)
            if problem:
                failures.append({"position": position, "seat": None, "code": problem[0], "message": problem[1]})
        if position % 16 == 0 or position == total - 1:
            ctx.tick("signatures", position + 1, total)
    if failures:
        first = failures[0]
        who = f" of seat {first['seat']}" if first["seat"] is not None else ""
        return Check("seat_signatures", FAILED, f"{kind_at(log, first['position'])}{who}: "
                     f"{first['message']} ({first['code']})", first["position"],
                     {"checked": checked, "failed": len(failures), "failures": failures[:MAX_LISTED]})
    return Check("seat_signatures", PASSED, f"{checked} signed submissions, each bound to its game, seat and position",
                 details={"checked": checked})


def _seated(entry: dict[str, Any], keys: list[Any], position: int, prev: Any, ctx: Context) -> tuple[str, str] | None:
    """What is wrong with a ``seated`` entry's signatures and binding (:func:`referee.replay.seated_problem`), or
    that its seat was held already; else None, and the seat's key is the one that took it from here on."""
    seat = entry.get("seat")
    problem = seated_problem(entry.get("submission"), created=ctx.created, seat=seat, seq=position, prev=prev,
                             verifier=ctx.verifier)
    if problem is not None or not isinstance(seat, int):
        return problem
    if keys[seat] != "":
        return "seat/taken", f"seat {seat} was held already"
    keys[seat] = entry["submission"]["envelope"]["key"]
    return None


def _new_key(entry: dict[str, Any], keys: list[Any], position: int, prev: Any, ctx: Context, *,
             recoveries: dict[int, str]) -> tuple[str, str] | None:
    """What is wrong with the signatures of a seat's new key (CONTRACT section 15), or None: a holder's ``rekeyed``
    signed by the seat's key and by the new key (RK-H1), a ``recovery`` signed by the new key (RK-R1); a
    ``rekeyed`` with reason ``recovered`` names a recovery of the same key. From a ``rekeyed`` on, the seat's key is
    the new one; whether a recovery was accepted, declined or early is the replay's to say."""
    seat = entry.get("seat")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(keys):
        return "submission/wrong_seat", f"the {entry.get('type')} entry names no seat of this game"
    game = str(ctx.created.get("game"))
    if entry.get("type") == "recovery":
        problem = recover_problem(entry.get("submission"), game_id=game, seat=seat, seq=position, prev=prev,
                                  verifier=ctx.verifier)
        if problem is None:
            recoveries[position] = entry["submission"]["envelope"]["key"]
        return problem
    if entry.get("reason") == "recovered":
        asked = recoveries.get(entry.get("recovery"))  # type: ignore[arg-type]
        if asked is None or asked != entry.get("key"):
            return ("recovery/none_pending",
                    f"no signed recovery at position {entry.get('recovery')!r} asked for this key")
        keys[seat] = asked
        return None
    problem = rekey_problem(entry.get("submission"), game_id=game, seat=seat, seq=position, prev=prev, keys=keys,
                            verifier=ctx.verifier)
    if problem is None:
        keys[seat] = entry["submission"]["envelope"]["key"]
    return problem


def kind_at(log: list[dict[str, Any]], position: int) -> str:
    return str(log[position].get("type")) if 0 <= position < len(log) else "entry"

