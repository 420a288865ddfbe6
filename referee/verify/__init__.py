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
3. ``hash_chain`` — every entry's ``seq`` and ``hash`` (:func:`referee.protocol.logchain.first_broken_link`).
4. ``organiser_signature`` — when ``created`` names an organiser: the organiser's Ed25519 signature
   (``created.organiser_sig``) over the creation request rebuilt from ``created``
   (:func:`creation_requests`), and the game id derived from that signature. Skipped, as not applicable,
   when the game has no organiser; the report's summary names the organiser key either way.
5. ``seat_signatures`` — every ``accepted``, ``move``, ``vacation``, ``resigned``, ``offer`` and ``answered``
   submission: its binding (ctx, game, seat, seq,
   prev = the previous entry's hash) and its seat's signature, against the keys in ``created``; and the
   signed abort an ``aborted`` reveal carries (the organiser's, or any seat's when there is none).
6. ``seed_commitment`` — ``sha256(revealed server seed) == commitment`` (seeded games).
7. ``ruleset_version`` — the installed engine's version equals the pinned one.
8. ``replay`` — the whole log folded by :class:`referee.replay.LogReplayer`, the same fold the service uses;
   with a clock, every ``timeout`` (at or after the deadline the fold computes from the entries' ``at``,
   for the seat to move, with the declared action and the engine's default move), every ``vacation``
   (signed by its seat, within its allowance), every ``forfeited`` and ``auto_move`` must hold, and no
   move may be logged after its seat's deadline; every ``resigned``, ``offer``, ``answered`` and ``agreed``
   (CONTRACT section 12: who could offer what at that position, that an agreement had every needed
   answer, that a voided move is skipped) must hold; the first that does not is reported at its position.
9. ``result`` — the recomputed result (the engine's ``result()``, with forfeited seats ranked last:
   :meth:`referee.replay.LogReplayer.result`) has the same RFC 8785 bytes as the claimed ``result``.
10. ``messages`` — the game's public messages the bundle carries (``referee.verify.messages``): the chain
   of the game's message stream (private messages by their hash only), and each public message's hash,
   binding to the game, seat signature against the keys in ``created`` and text rules; its ``position`` is
   the message's position in that stream. A bundle without messages passes ("no messages").

A reported ``position`` is always the index of a real entry of the bundle's log (of its ``messages`` for
the ``messages`` check), or ``None`` when the
failure concerns the bundle as a whole (a missing reveal, the claimed ``result``, the referee's signature).

Every check runs even when an earlier one failed (a verifier wants the whole picture), except that a
bundle whose basic shape is unusable skips the rest. When the installed engine's version differs from
the pinned one, ``ruleset_version`` fails and the replay and result checks still run with the installed
engine, saying so: the report then shows whether the difference matters for this game, but the bundle
is not ``verified``.

Interim bundles (running games) reveal no seed: ``seed_commitment`` and ``result`` are skipped, and the
replay of a seeded game stops at ``started`` (the deck order is unknown), so the moves' signatures and
bindings are checked but the moves are not applied; the report's status is then ``incomplete``.

The package: ``report`` (:class:`Check`, :class:`Report`, the statuses), ``context`` (what the checks of
a run share), ``shape`` (check 1), ``signatures`` (checks 2-5), ``replaying`` (checks 6-9), ``messages``
(check 10); this module
runs them (:func:`verify_bundle`) and is where every public name is imported from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..replay import ABORT_CTX
from .context import Context
from .messages import check_messages, exported_messages
from .replaying import (
    check_replay,
    check_result,
    check_ruleset_version,
    check_seed_commitment,
    differing_paths,
)
from .report import (
    CHECK_ORDER,
    EXIT_CODES,
    FAILED,
    FAILED_STATUS,
    INCOMPLETE,
    PASSED,
    SKIPPED,
    VERIFIED,
    VERSION_MISMATCH,
    Check,
    Progress,
    Report,
    unreadable_report,
)
from .shape import BUNDLE_FORMAT, check_format
from .signatures import (
    CREATE_CTX,
    CREATION_REQUEST_FIELDS,
    SIGNED_CTX,
    check_bundle_signature,
    check_hash_chain,
    check_organiser_signature,
    check_referee_signature,
    check_rematch_of,
    check_seat_signatures,
    creation_requests,
    kind_at,
    signed_game_id,
    unsigned_part,
)


def verify_bundle(bundle: Any, progress: Progress | None = None, *, referee_key: str | None = None) -> Report:
    """Run every check on ``bundle`` (a parsed JSON value) and return the :class:`Report`.

    ``referee_key`` (base64url), when given, is the referee key the caller expects the bundle to be
    signed with. ``progress`` is called as ``progress(stage, done, total)`` during the long checks.
    Never raises on a malformed bundle: every problem is a failed check.
    """
    ctx = Context(bundle, progress, referee_key)
    checks: list[Check] = []
    fmt = _guard("format", check_format, ctx)
    checks.append(fmt)
    if fmt.details.get("unusable"):
        reason = "the bundle's shape is unusable (see the format check)"
        checks += [Check(name, SKIPPED, reason) for name in CHECK_ORDER[1:]]
    else:
        for name, fn in (("referee_signature", check_bundle_signature), ("hash_chain", check_hash_chain),
                         ("organiser_signature", check_organiser_signature),
                         ("seat_signatures", check_seat_signatures), ("seed_commitment", check_seed_commitment),
                         ("ruleset_version", check_ruleset_version), ("replay", check_replay),
                         ("result", check_result), ("messages", check_messages)):
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


def _ruleset_summary(ctx: Context) -> dict[str, Any] | None:
    pinned = ctx.created.get("ruleset")
    if not isinstance(pinned, dict):
        return None
    return {"name": pinned.get("name"), "pinned_version": pinned.get("version"),
            "installed_version": ctx.installed_version}


def _guard(name: str, fn: Callable[[Context], Check], ctx: Context) -> Check:
    """Run one check; a malformed bundle that trips it up is that check's failure, never a crash."""
    try:
        return fn(ctx)
    except Exception as exc:  # any crash on hostile input is reported, not raised
        return Check(name, FAILED, f"malformed bundle: {type(exc).__name__}: {exc}")


def _organiser_of(created: dict[str, Any]) -> str | None:
    organiser = created.get("organiser")
    return organiser if isinstance(organiser, str) else None


__all__ = [
    "ABORT_CTX", "BUNDLE_FORMAT", "CHECK_ORDER", "CREATE_CTX", "CREATION_REQUEST_FIELDS", "EXIT_CODES", "FAILED",
    "FAILED_STATUS", "INCOMPLETE", "PASSED", "SIGNED_CTX", "SKIPPED", "VERIFIED", "VERSION_MISMATCH", "Check",
    "Progress", "Report", "check_referee_signature", "check_rematch_of", "creation_requests", "differing_paths",
    "exported_messages",
    "kind_at",
    "signed_game_id", "unreadable_report", "unsigned_part", "verify_bundle",
]
