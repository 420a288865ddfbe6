"""The tournament certificate (CONTRACT section 10) and its offline verifier.

Shape (``referee-tournament/1``)::

    {"format": "referee-tournament/1",
     "log": [every entry of the tournament log, as stored],
     "games": [{"id": "<game id>", "head": "<hex hash of the game log's last entry>"}, …],
     "merkle_root": "<hex>",
     "standings": [{"rank", "key", "name", "points", "tie_breaks": {id: value}}, …],
     "referee_key": "<base64url Ed25519 public key>",
     "referee_sig": "<base64url signature over the RFC 8785 bytes of all the other fields>"}

``games`` lists every game that has a result (``game_finished`` or ``adjudicated``), in round order and,
within a round, in the order of the ``paired`` entry's tables; ``head`` is the one that entry records.

Merkle tree over ``games`` (``‖`` concatenation, SHA-256 giving 32 raw bytes)::

    leaf  = SHA-256(0x00 ‖ UTF-8 game id ‖ 0x00 ‖ head (32 raw bytes, the hex decoded))
    node  = SHA-256(0x01 ‖ left ‖ right)

Leaves in ``games`` order. Each level pairs its nodes left to right; an odd last node is promoted to the
next level unchanged. The root of one leaf is that leaf; of no games, SHA-256 of the empty string.
``merkle_root`` is the root in lowercase hex. (Game ids never contain a NUL byte.)

:func:`verify_certificate` runs these checks in order (a :class:`referee.verify.Check` each, with the
log position of the first failure when there is one):

1. ``format`` — the shape above; an unusable certificate skips every other check.
2. ``referee_signature`` — the referee's signature (and, when given, that it is the expected key).
3. ``hash_chain`` — every entry's ``seq`` and ``hash`` (:func:`referee.protocol.logchain.first_broken_link`).
4. ``seed_commitment`` — the log ends in a ``revealed`` entry whose seed hashes to ``created``'s
   commitment.
5. ``replay`` — :class:`referee.tournaments.log.TournamentReplayer` folds the log with the revealed
   seed: every entry valid (joins signed and bound, every pairing equal to the recomputed one, every
   result on a table of an open round, organiser decisions signed, a player's new key (``rekeyed``) signed by
   the organiser and by the new key, rounds closed in turn) and the
   tournament finished.
6. ``games`` — ``games`` equals the list the log gives.
7. ``merkle_root`` — equals the root recomputed from ``games``.
8. ``standings`` — equal (RFC 8785 bytes) to the standings recomputed from the log, every tie-break
   value included; the first differing JSON path is named.
9. ``game_bundles`` — only when the games' bundles are given: each game of ``games`` has a bundle that
   ``referee verify`` accepts, whose last log hash is the recorded head, whose seats are the table's
   players in seat order and, for a game finished by play, whose result's ranks are the recorded ones.
   Skipped otherwise (the certificate is then verified without its games).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..protocol.canonical import canonical_bytes
from ..protocol.logchain import first_broken_link
from ..protocol.signing import public_key_b64, sign
from ..replay import LogError, revealed_seed
from ..verify import (
    FAILED,
    FAILED_STATUS,
    PASSED,
    SKIPPED,
    VERIFIED,
    Check,
    Report,
    check_referee_signature,
    differing_paths,
    verify_bundle,
)
from .log import TournamentReplayer, replay_tournament
from .state import CANCELLED, FINISHED

CERTIFICATE_FORMAT = "referee-tournament/1"
CHECK_ORDER = ("format", "referee_signature", "hash_chain", "seed_commitment", "replay", "games", "merkle_root",
               "standings", "game_bundles")
_HEX64 = re.compile(r"[0-9a-f]{64}")


# -- Merkle tree ---------------------------------------------------------------------------------
def merkle_leaf(game_id: str, head: str) -> bytes:
    if "\x00" in game_id:
        raise ValueError("a game id holds no NUL byte")
    return hashlib.sha256(b"\x00" + game_id.encode("utf-8") + b"\x00" + bytes.fromhex(head)).digest()


def merkle_root(games: list[dict[str, str]]) -> str:
    """Hex root over ``[{"id", "head"}]`` (module docstring).

    >>> merkle_root([]) == hashlib.sha256(b"").hexdigest()
    True
    """
    level = [merkle_leaf(g["id"], g["head"]) for g in games]
    if not level:
        return hashlib.sha256(b"").hexdigest()
    while len(level) > 1:
        nxt = [hashlib.sha256(b"\x01" + level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0].hex()


# -- building ------------------------------------------------------------------------------------
class CertificateError(ValueError):
    """The log cannot be certified (not a finished, revealed tournament)."""


def build_certificate(log: list[dict[str, Any]], key: Ed25519PrivateKey) -> dict[str, Any]:
    """The signed certificate of a finished tournament's ``log`` (its seed revealed)."""
    try:
        replayer = _replay(log)
    except LogError as exc:
        raise CertificateError(str(exc)) from exc
    if not replayer.revealed:
        raise CertificateError("a certificate needs the revealed seed (the tournament is not over)")
    games = replayer.games()
    unsigned = {"format": CERTIFICATE_FORMAT, "log": list(log), "games": games, "merkle_root": merkle_root(games),
                "standings": replayer.standings(), "referee_key": public_key_b64(key)}
    return {**unsigned, "referee_sig": sign(key, unsigned)}


def _replay(log: list[dict[str, Any]]) -> TournamentReplayer:
    return replay_tournament(log)


# -- verifying -----------------------------------------------------------------------------------
class TournamentReport(Report):
    """Every check, in order; as a game's :class:`~referee.verify.Report`, except that a certificate is
    ``verified`` whenever no check failed (``game_bundles`` may be skipped: the games are not required)."""

    @property
    def status(self) -> str:
        return FAILED_STATUS if self.first_failure is not None else VERIFIED


class _Context:
    def __init__(self, cert: Any, games: Mapping[str, Any] | None, referee_key: str | None):
        self.cert = cert
        self.bundles = games
        self.expected_key = referee_key
        self.log: list[dict[str, Any]] = []
        self.replayer: TournamentReplayer | None = None


def verify_certificate(cert: Any, games: Mapping[str, Any] | None = None, referee_key: str | None = None,
                       ) -> TournamentReport:
    """Run every check on a parsed certificate; never raises on a malformed one.

    ``games``: the games' verification bundles by game id (``referee/verify/bundle.py``), or None to skip the
    ``game_bundles`` check. ``referee_key``: the referee key the caller expects (base64url).
    """
    ctx = _Context(cert, games, referee_key)
    fmt = _guard("format", check_format, ctx)
    checks = [fmt]
    if fmt.details.get("unusable"):
        checks += [Check(name, SKIPPED, "the certificate's shape is unusable (see the format check)")
                   for name in CHECK_ORDER[1:]]
    else:
        for name, fn in (("referee_signature", _check_signature), ("hash_chain", _check_chain),
                         ("seed_commitment", _check_seed), ("replay", check_replay), ("games", _check_games),
                         ("merkle_root", _check_merkle), ("standings", _check_standings),
                         ("game_bundles", _check_bundles)):
            checks.append(_guard(name, fn, ctx))
    created = ctx.log[0] if ctx.log else {}
    summary = {"format": cert.get("format") if isinstance(cert, dict) else None,
               "tournament": created.get("tournament"), "entries": len(ctx.log),
               "games": len(cert.get("games") or []) if isinstance(cert, dict) else 0,
               "referee_key": cert.get("referee_key") if isinstance(cert, dict) else None}
    return TournamentReport(checks, summary)


def _guard(name: str, fn: Any, ctx: _Context) -> Check:
    try:
        return fn(ctx)
    except Exception as exc:  # hostile input is a failed check, never a crash
        return Check(name, FAILED, f"malformed certificate: {type(exc).__name__}: {exc}")


def check_format(ctx: _Context) -> Check:
    cert = ctx.cert
    if not isinstance(cert, dict):
        return Check("format", FAILED, "a certificate is a JSON object", details={"unusable": True})
    log = cert.get("log")
    if not isinstance(log, list) or not log or not all(isinstance(e, dict) for e in log):
        return Check("format", FAILED, "log must be a non-empty list of entries", details={"unusable": True})
    if log[0].get("type") != "created" or not isinstance(log[0].get("tournament"), str):
        return Check("format", FAILED, "the first log entry must be a tournament's created entry", 0,
                     {"unusable": True})
    ctx.log = log
    problems = []
    if cert.get("format") != CERTIFICATE_FORMAT:
        problems.append(f"format must be {CERTIFICATE_FORMAT!r}, not {cert.get('format')!r}")
    games = cert.get("games")
    if not isinstance(games, list) or not all(
            isinstance(g, dict) and set(g) == {"id", "head"} and isinstance(g["id"], str)
            and isinstance(g["head"], str) and _HEX64.fullmatch(g["head"]) for g in games):
        problems.append("games must be a list of {id, head (64 hex digits)}")
    if not isinstance(cert.get("merkle_root"), str) or not _HEX64.fullmatch(cert["merkle_root"]):
        problems.append("merkle_root must be 64 hex digits")
    if not isinstance(cert.get("standings"), list):
        problems.append("standings must be a list of rows")
    for key in ("referee_key", "referee_sig"):
        if not isinstance(cert.get(key), str):
            problems.append(f"{key} must be a base64url string")
    extra = set(cert) - {"format", "log", "games", "merkle_root", "standings", "referee_key", "referee_sig"}
    if extra:
        problems.append(f"unknown fields {sorted(extra)}")
    if problems:
        return Check("format", FAILED, "; ".join(problems), details={"problems": problems})
    assert isinstance(games, list)  # else a problem above
    return Check("format", PASSED, f"{CERTIFICATE_FORMAT}, {len(log)} log entries, {len(games)} games")


def _check_signature(ctx: _Context) -> Check:
    return check_referee_signature(ctx.cert, ctx.expected_key, "certificate")


def _check_chain(ctx: _Context) -> Check:
    broken = first_broken_link(ctx.log)
    if broken is not None:
        return Check("hash_chain", FAILED, broken[1], broken[0])
    return Check("hash_chain", PASSED, f"{len(ctx.log)} entries chain to {ctx.log[-1]['hash']}")


def _check_seed(ctx: _Context) -> Check:
    last = len(ctx.log) - 1
    entry = ctx.log[-1]
    if entry.get("type") != "revealed":
        return Check("seed_commitment", FAILED, "the log does not end with the revealed seed", last)
    seed = revealed_seed(ctx.log) or b""
    if hashlib.sha256(seed).hexdigest() != ctx.log[0].get("commitment"):
        return Check("seed_commitment", FAILED, "the revealed seed does not hash to the commitment in created", last)
    return Check("seed_commitment", PASSED, "sha256(revealed server seed) equals the commitment")


def check_replay(ctx: _Context) -> Check:
    replayer = TournamentReplayer(server_seed=revealed_seed(ctx.log))
    try:
        for entry in ctx.log:
            verdict = replayer.feed(entry)
            if verdict.status != "ok":
                error = verdict.error or {"code": "replay/unknown", "message": "could not be recomputed"}
                return Check("replay", FAILED, f"{verdict.type}: {error['message']} ({error['code']})", verdict.seq,
                             {"error": error})
    except LogError as exc:
        return Check("replay", FAILED, exc.message, exc.position)
    ctx.replayer = replayer
    # a cancelled tournament (an open registration closed with too few players) is over too: its seed revealed
    if replayer.status not in (FINISHED, CANCELLED):
        return Check("replay", FAILED, f"the tournament is {replayer.status}, not finished", len(ctx.log) - 1)
    return Check("replay", PASSED, f"{len(ctx.log)} entries valid: {len(replayer.rounds)} rounds recomputed, "
                                   f"{len(replayer.games())} results")


def _need_replay(ctx: _Context, name: str) -> Check | None:
    if ctx.replayer is None:
        return Check(name, SKIPPED, "the log does not replay (see the replay check)")
    return None


def _check_games(ctx: _Context) -> Check:
    skipped = _need_replay(ctx, "games")
    if skipped:
        return skipped
    assert ctx.replayer is not None
    expected, claimed = ctx.replayer.games(), ctx.cert["games"]
    for i, (a, b) in enumerate(zip(expected, claimed, strict=False)):
        if a != b:
            return Check("games", FAILED, f"games[{i}] is {b}, the log records {a}", details={"index": i})
    if len(expected) != len(claimed):
        return Check("games", FAILED, f"the certificate lists {len(claimed)} games, the log {len(expected)}")
    return Check("games", PASSED, f"{len(claimed)} games, as the log records them")


def _check_merkle(ctx: _Context) -> Check:
    root = merkle_root(ctx.cert["games"])
    if root != ctx.cert["merkle_root"]:
        return Check("merkle_root", FAILED, f"the Merkle root of games is {root}, not {ctx.cert['merkle_root']}")
    return Check("merkle_root", PASSED, f"Merkle root {root} over {len(ctx.cert['games'])} games")


def _check_standings(ctx: _Context) -> Check:
    skipped = _need_replay(ctx, "standings")
    if skipped:
        return skipped
    assert ctx.replayer is not None
    recomputed, claimed = ctx.replayer.recomputed_standings(), ctx.cert["standings"]
    if canonical_bytes(recomputed) != canonical_bytes(claimed):
        paths = differing_paths(claimed, recomputed)
        return Check("standings", FAILED, f"the standings differ from the recomputed ones at {paths[0]}",
                     details={"differences": paths[:20], "recomputed": recomputed})
    return Check("standings", PASSED, f"{len(claimed)} rows recomputed, every tie-break value equal")


def _check_bundles(ctx: _Context) -> Check:
    if ctx.bundles is None:
        return Check("game_bundles", SKIPPED, "no game bundles given (--games)")
    skipped = _need_replay(ctx, "game_bundles")
    if skipped:
        return skipped
    assert ctx.replayer is not None
    for rnd in ctx.replayer.rounds:
        for table in rnd.tables:
            game = table["game"]
            result = rnd.results.get(game)
            if result is None:
                continue
            position = result["seq"]
            bundle = ctx.bundles.get(game)
            if bundle is None:
                return Check("game_bundles", FAILED, f"no bundle for game {game}", position)
            report = verify_bundle(bundle)
            if not report.ok:
                first = report.first_failure
                why = f"{first.name}: {first.reason}" if first else report.status
                return Check("game_bundles", FAILED, f"game {game} does not verify ({why})", position)
            log = bundle["log"]
            if log[-1].get("hash") != result["head"]:
                return Check("game_bundles", FAILED, f"game {game}'s last hash is not the recorded head", position)
            seats = [s.get("key") for s in log[0].get("seats", [])]
            if seats != table["players"]:
                return Check("game_bundles", FAILED, f"game {game}'s seats are not the table's players", position)
            if result["method"] == "played":
                ranks = [s.get("rank") for s in (bundle.get("result") or {}).get("seats", [])]
                if ranks != result["ranks"]:
                    return Check("game_bundles", FAILED,
                                 f"game {game}'s result ranks {ranks} are not the recorded {result['ranks']}", position)
    return Check("game_bundles", PASSED, f"{len(ctx.replayer.games())} game bundles verified against their heads")
