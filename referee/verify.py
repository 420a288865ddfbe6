"""The verifier: re-check a verification bundle (CONTRACT section 7) without trusting the referee.

Pure: it reads a bundle (a dict), never Redis, Flask, a clock or the network, so the same function runs
offline (``referee verify bundle.json``), over HTTP (``POST /verify``) and in tests.

The checks run in this order; each one reports ``status`` (``passed``, ``failed`` or ``skipped``),
``ok`` (``True``, ``False``, or ``None`` when skipped), the log ``position`` of its first failure and a
``reason``:

1. ``format`` — the bundle's shape: ``format == "referee-bundle/1"``, ``ctx == "referee/bundle"``, a
   ``ruleset`` equal to the one pinned in the ``created`` entry, ``interim`` consistent with the log.
2. ``referee_signature`` — the referee's Ed25519 signature over the RFC 8785 bytes of the bundle without
   ``referee_sig`` (and, when the caller names the key it expects, that the bundle was signed by it).
3. ``hash_chain`` — every entry's ``seq`` and ``hash`` (:func:`referee.logchain.first_broken_link`).
4. ``organiser_signature`` — when ``created`` names an organiser: the organiser's Ed25519 signature
   (``created.organiser_sig``) over the creation request rebuilt from ``created``
   (:func:`creation_requests`), and the game id derived from that signature. Skipped, as not applicable,
   when the game has no organiser; the report's summary names the organiser key either way.
5. ``seat_signatures`` — every ``accepted``, ``move`` and ``vacation`` submission: its binding (ctx, game, seat, seq,
   prev = the previous entry's hash) and its seat's signature, against the keys in ``created``; and the
   signed abort an ``aborted`` reveal carries (the organiser's, or any seat's when there is none).
6. ``seed_commitment`` — ``sha256(revealed server seed) == commitment`` (seeded games).
7. ``ruleset_version`` — the installed engine's version equals the pinned one.
8. ``replay`` — the whole log folded by :class:`referee.replay.LogReplayer`, the same fold the service uses;
   with a clock, every ``timeout`` (at or after the deadline the fold computes from the entries' ``at``,
   for the seat to move, with the declared action and the engine's default move), every ``vacation``
   (signed by its seat, within its allowance), every ``forfeited`` and ``auto_move`` must hold, and no
   move may be logged after its seat's deadline; the first that does not is reported at its position.
9. ``result`` — the recomputed result (the engine's ``result()``, with forfeited seats ranked last:
   :meth:`referee.replay.LogReplayer.result`) has the same RFC 8785 bytes as the claimed ``result``.

A reported ``position`` is always the index of a real entry of the bundle's log, or ``None`` when the
failure concerns the bundle as a whole (a missing reveal, the claimed ``result``, the referee's signature).

Every check runs even when an earlier one failed (a verifier wants the whole picture), except that a
bundle whose basic shape is unusable skips the rest. When the installed engine's version differs from
the pinned one, ``ruleset_version`` fails and the replay and result checks still run with the installed
engine, saying so: the report then shows whether the difference matters for this game, but the bundle
is not ``verified``.

Interim bundles (running games) reveal no seed: ``seed_commitment`` and ``result`` are skipped, and the
replay of a seeded game stops at ``started`` (the deck order is unknown), so the moves' signatures and
bindings are checked but the moves are not applied; the report's status is then ``incomplete``.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .canonical import canonical_bytes
from .games import ruleset as load_ruleset
from .logchain import GENESIS, first_broken_link
from .replay import ABORTED, EXPIRED, FINISHED, REFEREE_ENTRIES, LogError, LogReplayer, check_submission
from .signing import ACCEPT_CTX, BUNDLE_CTX, MOVE_CTX, VACATION_CTX, b64url_decode, load_public_key, verify

BUNDLE_FORMAT = "referee-bundle/1"

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"

#: Report statuses and the exit status of ``referee verify`` for each.
VERIFIED, FAILED_STATUS, VERSION_MISMATCH, INCOMPLETE = "verified", "failed", "version_mismatch", "incomplete"
EXIT_CODES = {VERIFIED: 0, FAILED_STATUS: 1, INCOMPLETE: 3, VERSION_MISMATCH: 4}

CHECK_ORDER = ("format", "referee_signature", "hash_chain", "organiser_signature", "seat_signatures",
               "seed_commitment", "ruleset_version", "replay", "result")

#: ``progress(stage, done, total)``: called while the long checks run (seat signatures, replay).
Progress = Callable[[str, int, int], None]

#: entries that carry a seat's signed submission, and the ``ctx`` each must be signed with
SIGNED_CTX = {"accepted": ACCEPT_CTX, "move": MOVE_CTX, "vacation": VACATION_CTX}

#: ``ctx`` of a signed abort (the service's ``referee.games_service.ABORT_CTX``; kept here so that the
#: verifier imports nothing of the service).
ABORT_CTX = "referee/abort"
#: ``ctx`` of an organiser's signed creation request (``referee.games_service.CREATE_CTX``).
CREATE_CTX = "referee/create"
#: The fields of the creation request (``POST /games`` without ``organiser``) as ``created`` keeps them:
#: ``ruleset`` (its name: ``created.ruleset.name``), ``seats``, ``options``, ``deck``, ``nonce``. A field
#: added to the creation request must be kept verbatim in ``created`` and listed here, or organiser
#: signatures over requests that use it no longer re-check.
CREATION_REQUEST_FIELDS = ("ruleset", "seats", "options", "deck", "nonce")

_HEX64 = re.compile(r"[0-9a-f]{64}")
_MAX_LISTED = 20  # failures listed in a check's details; the first one is always the one reported


@dataclass
class Check:
    """The outcome of one check: ``position`` is the log index of its first failure (None: the bundle).

    ``applicable`` is False for a check skipped because it does not apply to this game (no organiser):
    such a skip leaves the bundle ``verified``, unlike the skips of an interim bundle."""

    name: str
    status: str
    reason: str | None = None
    position: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    applicable: bool = True

    @property
    def ok(self) -> bool | None:
        return None if self.status == SKIPPED else self.status == PASSED

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": self.status, "ok": self.ok,
                               "position": self.position, "reason": self.reason}
        if not self.applicable:
            out["applicable"] = False
        if self.details:
            out["details"] = self.details
        return out


@dataclass
class Report:
    """Every check, in order, and what they add up to."""

    checks: list[Check]
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def first_failure(self) -> Check | None:
        return next((c for c in self.checks if c.status == FAILED), None)

    @property
    def status(self) -> str:
        """``verified`` (every check passed), ``failed``, ``version_mismatch`` (only the engine version
        differs) or ``incomplete`` (nothing failed but something was skipped: an interim bundle)."""
        failed = [c.name for c in self.checks if c.status == FAILED]
        if failed:
            return VERSION_MISMATCH if failed == ["ruleset_version"] else FAILED_STATUS
        if any(c.status == SKIPPED and c.applicable for c in self.checks):
            return INCOMPLETE
        return VERIFIED

    @property
    def ok(self) -> bool:
        """True only when every check passed."""
        return self.status == VERIFIED

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failure
        return {
            "ok": self.ok,
            "status": self.status,
            **self.summary,
            "first_failure": None if first is None else {"check": first.name, "position": first.position,
                                                          "reason": first.reason},
            "checks": [c.to_dict() for c in self.checks],
        }


class _MemoVerifier:
    """``signing.verify`` that checks each signature once: the seat-signature check and the replay look at
    the very same envelope objects (the verifier never mutates them), so the result is memoised by
    identity, and the object is kept so that its id cannot be reused."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int, str], tuple[Any, bool]] = {}

    def __call__(self, key: str, value: Any, sig: str) -> bool:
        memo = (key, id(value), sig)
        hit = self._seen.get(memo)
        if hit is not None and hit[0] is value:
            return hit[1]
        ok = verify(key, value, sig)
        self._seen[memo] = (value, ok)
        return ok


class _Context:
    """What the checks share: the bundle, its log, and what the replay found."""

    def __init__(self, bundle: Any, progress: Progress | None, referee_key: str | None):
        self.bundle = bundle
        self.progress = progress
        self.expected_key = referee_key
        self.log: list[dict[str, Any]] = []
        self.created: dict[str, Any] = {}
        self.interim = False
        self.replayer: LogReplayer | None = None
        self.ended_at: int | None = None
        self.installed_version: str | None = None
        self.verifier = _MemoVerifier()

    def tick(self, stage: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(stage, done, total)


def verify_bundle(bundle: Any, progress: Progress | None = None, *, referee_key: str | None = None) -> Report:
    """Run every check on ``bundle`` (a parsed JSON value) and return the :class:`Report`.

    ``referee_key`` (base64url), when given, is the referee key the caller expects the bundle to be
    signed with. ``progress`` is called as ``progress(stage, done, total)`` during the long checks.
    Never raises on a malformed bundle: every problem is a failed check.
    """
    ctx = _Context(bundle, progress, referee_key)
    checks: list[Check] = []
    fmt = _guard("format", _check_format, ctx)
    checks.append(fmt)
    if fmt.details.get("unusable"):
        reason = "the bundle's shape is unusable (see the format check)"
        checks += [Check(name, SKIPPED, reason) for name in CHECK_ORDER[1:]]
    else:
        for name, fn in (("referee_signature", _check_referee_signature), ("hash_chain", _check_hash_chain),
                         ("organiser_signature", _check_organiser_signature),
                         ("seat_signatures", _check_seat_signatures), ("seed_commitment", _check_seed_commitment),
                         ("ruleset_version", _check_ruleset_version), ("replay", _check_replay),
                         ("result", _check_result)):
            checks.append(_guard(name, fn, ctx))
    summary = {
        "format": bundle.get("format") if isinstance(bundle, dict) else None,
        "game": ctx.created.get("game"),
        "ruleset": _ruleset_summary(ctx),
        "interim": ctx.interim,
        "entries": len(ctx.log),
        "referee_key": bundle.get("referee_key") if isinstance(bundle, dict) else None,
        "organiser": _organiser_of(ctx.created),
    }
    return Report(checks, summary)


def unreadable_report(reason: str, problems: list[dict[str, str]] | None = None) -> Report:
    """The report for input that is not even a JSON bundle (e.g. a file that is not strict JSON)."""
    details: dict[str, Any] = {"unusable": True}
    if problems:
        details["problems"] = problems
    checks = [Check("format", FAILED, reason, details=details)]
    checks += [Check(name, SKIPPED, "the bundle could not be read") for name in CHECK_ORDER[1:]]
    return Report(checks, {"format": None, "game": None, "ruleset": None, "interim": False, "entries": 0,
                           "referee_key": None, "organiser": None})


def _ruleset_summary(ctx: _Context) -> dict[str, Any] | None:
    pinned = ctx.created.get("ruleset")
    if not isinstance(pinned, dict):
        return None
    return {"name": pinned.get("name"), "pinned_version": pinned.get("version"),
            "installed_version": ctx.installed_version}


def _guard(name: str, fn: Callable[[_Context], Check], ctx: _Context) -> Check:
    """Run one check; a malformed bundle that trips it up is that check's failure, never a crash."""
    try:
        return fn(ctx)
    except Exception as exc:  # any crash on hostile input is reported, not raised
        return Check(name, FAILED, f"malformed bundle: {type(exc).__name__}: {exc}")


# -- 1. format -----------------------------------------------------------------------------------
def _check_format(ctx: _Context) -> Check:
    bundle = ctx.bundle
    if not isinstance(bundle, dict):
        return Check("format", FAILED, "a bundle is a JSON object", details={"unusable": True})
    problems: list[tuple[int | None, str]] = []
    if bundle.get("format") != BUNDLE_FORMAT:
        problems.append((None, f"format must be {BUNDLE_FORMAT!r}, not {bundle.get('format')!r}"))
    if bundle.get("ctx") != BUNDLE_CTX:
        problems.append((None, f"ctx must be {BUNDLE_CTX!r}, not {bundle.get('ctx')!r}"))
    for key in ("referee_key", "referee_sig"):
        if not isinstance(bundle.get(key), str):
            problems.append((None, f"{key} must be a base64url string"))
    if not isinstance(bundle.get("interim"), bool):
        problems.append((None, "interim must be true or false"))
    if bundle.get("result") is not None and not isinstance(bundle.get("result"), dict):
        problems.append((None, "result must be an object or null"))
    log = bundle.get("log")
    if not isinstance(log, list) or not log:
        problems.append((None, "log must be a non-empty list of entries"))
        return _format_failure(problems, unusable=True)
    bad = next((i for i, e in enumerate(log) if not isinstance(e, dict)), None)
    if bad is not None:
        problems.append((bad, "every log entry must be a JSON object"))
        return _format_failure(problems, unusable=True)
    created = log[0]
    if created.get("type") != "created" or not isinstance(created.get("game"), str):
        problems.append((0, "the first log entry must be the 'created' entry of a game"))
        return _format_failure(problems, unusable=True)
    ctx.log, ctx.created = log, created
    ctx.interim = bundle.get("interim") is True
    pinned = created.get("ruleset")
    if not (isinstance(pinned, dict) and isinstance(pinned.get("name"), str)
            and isinstance(pinned.get("version"), str)):
        problems.append((0, "the created entry must pin a ruleset {name, version}"))
    elif bundle.get("ruleset") != {"name": pinned["name"], "version": pinned["version"]}:
        problems.append((0, f"bundle ruleset {bundle.get('ruleset')!r} differs from the pinned {pinned!r}"))
    if "game" in bundle and bundle["game"] != created["game"]:
        problems.append((0, f"bundle game {bundle['game']!r} differs from the created entry's {created['game']!r}"))
    seats = created.get("seats")
    if not isinstance(seats, list) or not seats or not all(
            isinstance(s, dict) and isinstance(s.get("key"), str) for s in seats):
        problems.append((0, "the created entry must list the seats with their keys"))
    if ctx.interim:
        revealed = next((i for i, e in enumerate(log) if e.get("type") == "revealed"), None)
        if revealed is not None:
            problems.append((revealed, "an interim bundle must not contain a revealed seed"))
        if bundle.get("result") is not None:
            problems.append((None, "an interim bundle claims no result (result must be null)"))
    if problems:
        return _format_failure(problems, unusable=False)
    return Check("format", PASSED, f"{BUNDLE_FORMAT}, {len(log)} log entries"
                 + (", interim (game still running)" if ctx.interim else ""))


def _format_failure(problems: list[tuple[int | None, str]], *, unusable: bool) -> Check:
    positions = [p for p, _ in problems if p is not None]
    details: dict[str, Any] = {"problems": [{"position": p, "problem": m} for p, m in problems]}
    if unusable:
        details["unusable"] = True
    return Check("format", FAILED, "; ".join(m for _, m in problems), min(positions) if positions else None, details)


# -- 2. referee signature ------------------------------------------------------------------------
def unsigned_part(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle without ``referee_sig``: what the referee signs (as RFC 8785 bytes)."""
    return {k: v for k, v in bundle.items() if k != "referee_sig"}


def _check_referee_signature(ctx: _Context) -> Check:
    return check_referee_signature(ctx.bundle, ctx.expected_key, "bundle")


def check_referee_signature(document: dict[str, Any], expected_key: str | None, what: str) -> Check:
    """The ``referee_signature`` check of a signed document (a bundle, a tournament certificate): the
    signature of ``referee_key`` over the RFC 8785 bytes of the rest, and that key is ``expected_key`` when
    one is given."""
    key, sig = document.get("referee_key"), document.get("referee_sig")
    try:
        load_public_key(key)
    except (ValueError, TypeError):
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
def _check_hash_chain(ctx: _Context) -> Check:
    broken = first_broken_link(ctx.log)
    if broken is not None:
        position, reason = broken
        return Check("hash_chain", FAILED, reason, position)
    return Check("hash_chain", PASSED, f"{len(ctx.log)} entries chain from {GENESIS[:8]}… to {ctx.log[-1]['hash']}",
                 details={"head": ctx.log[-1]["hash"]})


# -- 4. organiser signature -----------------------------------------------------------------------
def _organiser_of(created: dict[str, Any]) -> str | None:
    organiser = created.get("organiser")
    return organiser if isinstance(organiser, str) else None


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


def _check_organiser_signature(ctx: _Context) -> Check:
    created = ctx.created
    organiser, sig = created.get("organiser"), created.get("organiser_sig")
    if organiser is None and sig is None:
        return Check("organiser_signature", SKIPPED, "no organiser: the game was created without an organiser key",
                     applicable=False)
    try:
        load_public_key(organiser)
    except (ValueError, TypeError):
        return Check("organiser_signature", FAILED,
                     "the created entry's organiser is not a base64url Ed25519 public key", 0)
    if not isinstance(sig, str):
        return Check("organiser_signature", FAILED,
                     f"the created entry names organiser {organiser} but carries no organiser_sig", 0)
    if not any(verify(organiser, request, sig) for request in creation_requests(created)):
        return Check("organiser_signature", FAILED,
                     f"organiser_sig is not organiser {organiser}'s signature over the creation request "
                     "rebuilt from the created entry (ruleset, seats, options, deck, nonce)", 0,
                     {"organiser": organiser})
    if created.get("game") != signed_game_id(sig):
        return Check("organiser_signature", FAILED,
                     f"the game id {created.get('game')!r} is not the one derived from the organiser's signature "
                     f"({signed_game_id(sig)})", 0, {"organiser": organiser})
    return Check("organiser_signature", PASSED,
                 f"created by organiser {organiser}: its signature over the creation request checks",
                 details={"organiser": organiser})


# -- 5. seat signatures --------------------------------------------------------------------------
def _check_seat_signatures(ctx: _Context) -> Check:
    log, created = ctx.log, ctx.created
    keys = [seat.get("key") for seat in created.get("seats", [])]
    for seat, key in enumerate(keys):
        try:
            load_public_key(key)
        except (ValueError, TypeError):
            return Check("seat_signatures", FAILED, f"seat {seat}'s key in the created entry is not an Ed25519 key", 0)
    failures: list[dict[str, Any]] = []
    checked = 0
    total = len(log)
    for position, entry in enumerate(log):
        kind = entry.get("type")
        prev = log[position - 1].get("hash") if position else GENESIS
        if kind in SIGNED_CTX:
            checked += 1
            seat = entry.get("seat")
            if not isinstance(seat, int) or isinstance(seat, bool):
                problem: tuple[str, str] | None = ("submission/wrong_seat", f"the {kind} entry names no seat")
            else:
                problem = check_submission(entry.get("submission"), ctx=SIGNED_CTX[kind],
                                           game_id=created["game"], seat=seat, seq=position, prev=prev, keys=keys,
                                           verifier=ctx.verifier)
            if problem:
                failures.append({"position": position, "seat": seat, "code": problem[0], "message": problem[1]})
        elif kind == "revealed" and entry.get("reason") == "aborted":
            checked += 1
            problem = _abort_problem(entry.get("abort"), created, position, prev, keys)
            if problem:
                failures.append({"position": position, "seat": None, "code": problem[0], "message": problem[1]})
        if position % 16 == 0 or position == total - 1:
            ctx.tick("signatures", position + 1, total)
    if failures:
        first = failures[0]
        who = f" of seat {first['seat']}" if first["seat"] is not None else ""
        return Check("seat_signatures", FAILED, f"{kind_at(log, first['position'])}{who}: "
                     f"{first['message']} ({first['code']})", first["position"],
                     {"checked": checked, "failed": len(failures), "failures": failures[:_MAX_LISTED]})
    return Check("seat_signatures", PASSED, f"{checked} signed submissions, each bound to its game, seat and position",
                 details={"checked": checked})


def _abort_problem(abort: Any, created: dict[str, Any], position: int, prev: Any,
                   keys: list[str]) -> tuple[str, str] | None:
    """What is wrong with the signed abort carried by an ``aborted`` reveal, or None.

    An abort is signed (``ctx`` ``referee/abort``) by the organiser named in ``created`` or, when the game
    has no organiser, by any seat; it is bound to the game and to the reveal's position like a move.
    """
    if not isinstance(abort, dict) or not isinstance(abort.get("envelope"), dict):
        return "abort/unsigned", "the game was aborted without a signed abort (organiser's or a seat's)"
    envelope, sig = abort["envelope"], abort.get("sig")
    if envelope.get("v") != 1 or envelope.get("ctx") != ABORT_CTX:
        return "submission/wrong_context", f"an abort envelope has v 1 and ctx {ABORT_CTX!r}"
    if envelope.get("game") != created.get("game"):
        return "submission/wrong_game", "the abort is for another game"
    if envelope.get("seq") != position or envelope.get("prev") != prev:
        return "submission/stale", f"the abort is bound to seq {envelope.get('seq')!r}, not {position}"
    organiser = created.get("organiser")
    allowed = [organiser] if organiser else keys
    if not isinstance(sig, str) or not any(verify(key, envelope, sig) for key in allowed):
        who = "the organiser's" if organiser else "any seat's"
        return "submission/bad_signature", f"the abort signature is not {who}"
    return None


def kind_at(log: list[dict[str, Any]], position: int) -> str:
    return str(log[position].get("type")) if 0 <= position < len(log) else "entry"


# -- 6. seed commitment --------------------------------------------------------------------------
def _check_seed_commitment(ctx: _Context) -> Check:
    created, log = ctx.created, ctx.log
    mode = created.get("mode")
    if mode == "recorded":
        revealed = next((i for i, e in enumerate(log) if e.get("type") == "revealed"), None)
        if revealed is not None:
            return Check("seed_commitment", FAILED, "a recorded game has no server seed to reveal", revealed)
        return Check("seed_commitment", PASSED, "recorded game: the deck is given in the created entry, no commitment")
    if mode != "seeded":
        return Check("seed_commitment", FAILED, f"mode must be 'seeded' or 'recorded', not {mode!r}", 0)
    commitment = created.get("commitment")
    if not isinstance(commitment, str) or not _HEX64.fullmatch(commitment):
        return Check("seed_commitment", FAILED, "the commitment must be 64 lowercase hex digits", 0)
    if ctx.interim:
        return Check("seed_commitment", SKIPPED, "skipped (interim): the server seed is revealed when the game ends")
    revealed = [i for i, e in enumerate(log) if e.get("type") == "revealed"]
    if not revealed:
        return Check("seed_commitment", FAILED, "the bundle is final (not interim) but reveals no server seed: "
                     f"no 'revealed' entry among its {len(log)} entries")
    if len(revealed) > 1:
        return Check("seed_commitment", FAILED, "the server seed is revealed more than once", revealed[1])
    position = revealed[0]
    text = log[position].get("server_seed")
    if not isinstance(text, str) or not _HEX64.fullmatch(text):
        return Check("seed_commitment", FAILED, "the revealed server seed must be 64 lowercase hex digits", position)
    digest = hashlib.sha256(bytes.fromhex(text)).hexdigest()
    if digest != commitment:
        return Check("seed_commitment", FAILED, f"sha256 of the revealed seed is {digest}, "
                     f"but the created entry committed to {commitment}", position)
    return Check("seed_commitment", PASSED, f"sha256(revealed seed) = {commitment}, the commitment in created")


# -- 7. ruleset version --------------------------------------------------------------------------
def _check_ruleset_version(ctx: _Context) -> Check:
    pinned = ctx.created.get("ruleset") or {}
    try:
        rules = load_ruleset(pinned.get("name"))
    except (KeyError, TypeError):
        return Check("ruleset_version", FAILED, f"ruleset {pinned.get('name')!r} is not installed", 0)
    ctx.installed_version = rules.version
    if rules.version != pinned.get("version"):
        return Check("ruleset_version", FAILED,
                     f"the game is pinned to {rules.name} {pinned.get('version')} but {rules.name} {rules.version} "
                     "is installed; the replay and result checks used the installed engine",
                     0, {"pinned": pinned.get("version"), "installed": rules.version})
    return Check("ruleset_version", PASSED, f"installed {rules.name} {rules.version} is the pinned version")


# -- 8. replay -----------------------------------------------------------------------------------
def _check_replay(ctx: _Context) -> Check:
    log = ctx.log
    seed = None if ctx.interim else _revealed_seed(log)
    replayer = LogReplayer(server_seed=seed, verifier=ctx.verifier)
    ctx.replayer = replayer
    total = len(log)
    note = _version_note(replayer, ctx)
    for position, entry in enumerate(log):
        try:
            replayer.feed(entry)
        except LogError as exc:
            return Check("replay", FAILED, exc.message + note, exc.position)
        except Exception as exc:  # an engine crash on this log is a failed replay
            return Check("replay", FAILED, f"the engine raised {type(exc).__name__}: {exc}{note}", position)
        if ctx.ended_at is None and replayer.status == FINISHED:
            ctx.ended_at = position
        if position % 8 == 0 or position == total - 1:
            ctx.tick("replay", position + 1, total)
    note = _version_note(replayer, ctx)
    verdicts = replayer.verdicts
    applied = sum(1 for v in verdicts if v.status == "applied")
    rejected = [{"position": v.seq, **(v.error or {})} for v in verdicts if v.status == "rejected"]
    details: dict[str, Any] = {"applied": applied, "rejected": len(rejected), "final_status": replayer.status}
    if rejected:
        details["rejected_entries"] = rejected[:_MAX_LISTED]
    if ctx.ended_at is not None:
        details["ended_at"] = ctx.ended_at
    # The referee's own entries (timeouts, forfeits, auto moves, …), the vacations it granted and the moves it
    # logged must all hold by the fold: the service checks each one before it appends it, so a rejected one
    # means the log is not what the referee's rules would have written (CONTRACT section 8).
    wrong = next((v for v in verdicts if v.status == "rejected" and (
        v.type in REFEREE_ENTRIES or v.type == "vacation" or (v.error or {}).get("code") == "time/expired")), None)
    if wrong is not None:
        error = wrong.error or {}
        rule = f" ({error['rule']})" if error.get("rule") else ""
        return Check("replay", FAILED, f"the referee logged a {wrong.type} entry that does not hold: "
                     f"{error.get('code')}: {error.get('message')}{rule}{note}", wrong.seq, details)
    if replayer.blocked is not None:
        started = next((v.seq for v in verdicts if v.type == "started"), None)
        unknown = sum(1 for v in verdicts if v.status == "unknown")
        if ctx.interim:
            return Check("replay", SKIPPED, "skipped (interim): the deck order is unknown until the seed is revealed; "
                         f"{unknown} moves were checked for signature and binding but not applied",
                         details={**details, "not_applied": unknown, "started_at": started})
        return Check("replay", FAILED, "a seeded game cannot be replayed without its revealed server seed" + note,
                     started, details)
    if not ctx.interim and replayer.status not in (FINISHED, ABORTED, EXPIRED):
        return Check("replay", FAILED, f"the bundle is final but the replayed game is {replayer.status} "
                     f"after the last entry (seat to move: {replayer.to_move()}){note}", len(log) - 1, details)
    summary = f"{applied} moves applied, {len(rejected)} rejected; game {replayer.status}"
    return Check("replay", PASSED, summary + note, details=details)


def _revealed_seed(log: list[dict[str, Any]]) -> bytes | None:
    for entry in reversed(log):
        if entry.get("type") == "revealed":
            text = entry.get("server_seed")
            return bytes.fromhex(text) if isinstance(text, str) and _HEX64.fullmatch(text) else None
    return None


def _version_note(replayer: LogReplayer, ctx: _Context) -> str:
    mismatch = replayer.version_mismatch
    if mismatch is None:
        return ""
    return f" (with the installed engine {mismatch['installed']}, not the pinned {mismatch['pinned']})"


# -- 9. result -----------------------------------------------------------------------------------
def _check_result(ctx: _Context) -> Check:
    if ctx.interim:
        return Check("result", SKIPPED, "skipped (interim): the game has no result yet")
    replayer = ctx.replayer
    if replayer is None or replayer.created is None or (replayer.game is None and replayer.blocked):
        return Check("result", SKIPPED, "skipped: the log could not be replayed")
    recomputed = replayer.result()
    claimed = ctx.bundle.get("result")
    note = _version_note(replayer, ctx)
    if canonical_bytes(claimed) != canonical_bytes(recomputed):
        # the claimed result is a field of the bundle, not a log entry: position None (the game's last
        # move, when it ended, is in details.ended_at)
        paths = differing_paths(claimed, recomputed)
        details: dict[str, Any] = {"differences": paths[:_MAX_LISTED], "recomputed": recomputed}
        if ctx.ended_at is not None:
            details["ended_at"] = ctx.ended_at
        return Check("result", FAILED, "the claimed result differs from the recomputed one at "
                     + ", ".join(paths[:5]) + (" …" if len(paths) > 5 else "") + note, None, details)
    if recomputed is None:
        return Check("result", PASSED, f"no result claimed, none recomputed (game {replayer.status}){note}")
    return Check("result", PASSED, "the recomputed result has the same RFC 8785 bytes as the claimed one" + note)


def differing_paths(a: Any, b: Any, path: str = "$") -> list[str]:
    """JSON paths where ``a`` and ``b`` differ (``$.scores[1].total``).

    >>> differing_paths({"x": [1, 2], "y": 3}, {"x": [1, 5], "z": 3})
    ['$.x[1]', '$.y', '$.z']
    """
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{path}.{key}")
            else:
                out += differing_paths(a[key], b[key], f"{path}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += differing_paths(x, y, f"{path}[{i}]")
        return out
    same = type(a) is type(b) and a == b
    return [] if same else [path]
