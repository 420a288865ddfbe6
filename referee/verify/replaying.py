"""Checks 6 to 9, what replaying the log shows: ``seed_commitment``, ``ruleset_version``, ``replay`` (the
whole log folded by :class:`referee.replay.LogReplayer`, the referee's own entries held to the fold) and
``result`` (the recomputed result against the claimed one)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..games import Ruleset
from ..games import ruleset as load_ruleset
from ..protocol.canonical import canonical_bytes
from ..replay import (
    ABORTED,
    CANCELLED,
    DECISION_ENTRIES,
    EXPIRED,
    FINISHED,
    KEY_ENTRIES,
    REFEREE_ENTRIES,
    SEAT_ENTRIES,
    LogError,
    LogReplayer,
    keys_in_turn,
)
from .context import Context
from .report import FAILED, MAX_LISTED, PASSED, SKIPPED, Check

_HEX64 = re.compile(r"[0-9a-f]{64}")


# -- 6. seed commitment --------------------------------------------------------------------------
def check_seed_commitment(ctx: Context) -> Check:
    created, log = ctx.created, ctx.log
    mode = created.get("mode")
    if mode == "recorded":
        reveal = next((i for i, e in enumerate(log) if e.get("type") == "revealed"), None)
        if reveal is not None:
            return Check("seed_commitment", FAILED, "a recorded game has no server seed to reveal", reveal)
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
def check_ruleset_version(ctx: Context) -> Check:
    pinned = ctx.created.get("ruleset") or {}
    rules = _installed(pinned.get("name"))
    if rules is None:
        return Check("ruleset_version", FAILED, f"ruleset {pinned.get('name')!r} is not installed", 0)
    ctx.installed_version = rules.version
    if rules.version != pinned.get("version"):
        return Check("ruleset_version", FAILED,
                     f"the game is pinned to {rules.name} {pinned.get('version')} but {rules.name} {rules.version} "
                     "is installed; the replay and result checks used the installed engine",
                     0, {"pinned": pinned.get("version"), "installed": rules.version})
    return Check("ruleset_version", PASSED, f"installed {rules.name} {rules.version} is the pinned version")


# -- 8. replay -----------------------------------------------------------------------------------
def check_replay(ctx: Context) -> Check:
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
        details["rejected_entries"] = rejected[:MAX_LISTED]
    if ctx.ended_at is not None:
        details["ended_at"] = ctx.ended_at
    if replayer.key_history:  # a seat's new key (CONTRACT section 15): the seats' keys in turn
        details["keys"] = keys_in_turn(replayer)
    # The referee's own entries (timeouts, forfeits, auto moves, agreements, …), the vacations it granted, the
    # seats' decisions it took (resignations, offers, answers), the seats it gave to open-seat takers, their leaving
    # and the creator's cancel (CONTRACT section 14), and the moves it logged must all hold by the
    # fold: the service checks each one before it appends it, so a rejected one means the log is not what the
    # referee's rules would have written (CONTRACT sections 8 and 12); so must a seat's new key, by its holder or
    # recovered, and the recoveries asked and declined (CONTRACT section 15).
    wrong = next((v for v in verdicts if v.status == "rejected" and (
        v.type in REFEREE_ENTRIES or v.type == "vacation" or v.type in DECISION_ENTRIES or v.type in SEAT_ENTRIES
        or v.type in KEY_ENTRIES or (v.error or {}).get("code") == "time/expired")), None)
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
    if not ctx.interim and replayer.status not in (FINISHED, ABORTED, EXPIRED, CANCELLED):
        return Check("replay", FAILED, f"the bundle is final but the replayed game is {replayer.status} "
                     f"after the last entry (seat to move: {replayer.to_move()}){note}", len(log) - 1, details)
    summary = f"{applied} moves applied, {len(rejected)} rejected; game {replayer.status}"
    if replayer.key_history:
        summary += "; " + ", ".join(f"seat {seat}'s key moved at {position} ({reason})"
                                    for position, seat, _old, _new, reason in replayer.key_history)
    return Check("replay", PASSED, summary + note, details=details)


def _installed(name: Any) -> Ruleset | None:
    """The installed ruleset called ``name``, or None (for a name that is no string as well)."""
    if not isinstance(name, str):
        return None
    try:
        return load_ruleset(name)
    except (KeyError, TypeError):
        return None


def _revealed_seed(log: list[dict[str, Any]]) -> bytes | None:
    for entry in reversed(log):
        if entry.get("type") == "revealed":
            text = entry.get("server_seed")
            return bytes.fromhex(text) if isinstance(text, str) and _HEX64.fullmatch(text) else None
    return None


def _version_note(replayer: LogReplayer, ctx: Context) -> str:
    mismatch = replayer.version_mismatch
    if mismatch is None:
        return ""
    return f" (with the installed engine {mismatch['installed']}, not the pinned {mismatch['pinned']})"


# -- 9. result -----------------------------------------------------------------------------------
def check_result(ctx: Context) -> Check:
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
        details: dict[str, Any] = {"differences": paths[:MAX_LISTED], "recomputed": recomputed}
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
