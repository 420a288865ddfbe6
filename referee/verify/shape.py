"""Check 1, ``format``: the bundle's shape (its format and ctx, the log's first entry, the pinned ruleset,
``interim`` consistent with the log). A bundle whose shape is unusable skips every other check."""

from __future__ import annotations

from typing import Any

from ..protocol.signing import BUNDLE_CTX
from ..replay import seat_kind
from .context import Context
from .report import FAILED, PASSED, Check

BUNDLE_FORMAT = "referee-bundle/1"


def check_format(ctx: Context) -> Check:
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
            isinstance(s, dict) and (isinstance(s.get("key"), str) or seat_kind(s) != "key") for s in seats):
        problems.append((0, "the created entry must list the seats with their keys (or open: invite or open)"))
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

