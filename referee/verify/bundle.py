"""Verification bundles (CONTRACT section 7): a game's whole log, its result, signed by the referee.

Shape (format ``referee-bundle/1``)::

    {"format": "referee-bundle/1", "ctx": "referee/bundle", "game": "<id>",
     "ruleset": {"name", "version"},          # the version pinned in the created entry
     "interim": false,                         # true while the game runs: no seed revealed, no result
     "log": [every entry, as stored],
     "result": {...} | null,                   # the engine's result() of the finished game
     "messages": [...],                        # only when the game has messages: its message stream, the
                                               # public ones whole, the private ones by hash (verify.messages)
     "referee_key": "<base64url Ed25519 public key>",
     "referee_sig": "<base64url Ed25519 signature over the RFC 8785 bytes of all the other fields>"}

``ctx`` separates the referee's bundle signatures from any other use of its key; ``game`` is a
convenience copy of the created entry's game id. Both are covered by the signature and checked by the
verifier.

A bundle is *final* when a seeded game has revealed its server seed (finished or aborted), or when a
recorded-mode game (no seed) is over; otherwise it is *interim*.
"""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..protocol.canonical import parse_strict
from ..protocol.signing import BUNDLE_CTX, public_key_b64, sign
from ..replay import FINISHED, LogError, LogReplayer, replay_log
from .messages import exported_messages
from .shape import BUNDLE_FORMAT
from .signatures import unsigned_part

_UNSET: Any = object()


class BundleError(ValueError):
    """The log cannot be made into a bundle (empty, or not starting with ``created``)."""


def _replay(log: list[dict[str, Any]]) -> LogReplayer | None:
    """The log folded with the seed it reveals, or None when it cannot be folded (a corrupt log is still
    exported: the verifier is what shows where it breaks)."""
    try:
        return replay_log(log)
    except LogError:
        return None


def is_final(log: list[dict[str, Any]], replayer: LogReplayer | None = None) -> bool:
    """Whether ``log`` is complete: the seed is revealed (seeded games) or the game is over (recorded)."""
    if not log:
        return False
    if log[0].get("mode") == "recorded":
        replayer = replayer or _replay(log)
        return replayer is not None and replayer.status == FINISHED
    return any(entry.get("type") == "revealed" for entry in log)


def build_bundle(log: list[dict[str, Any]], key: Ed25519PrivateKey, *, result: Any = _UNSET,
                 messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The signed bundle of a game's ``log``.

    ``result`` is the result the referee published (e.g. from its projection); when omitted it is
    recomputed by replaying the log (with the seed the log reveals). An interim bundle always claims
    ``null``. ``messages``: the game's stored messages (read before ``log``, so that every ``log_seq`` is
    within it), carried as :func:`referee.verify.exported_messages` makes them; none: no ``messages`` field.
    """
    if not log or not isinstance(log[0], dict) or log[0].get("type") != "created":
        raise BundleError("a bundle needs a log that starts with its created entry")
    created = log[0]
    replayer = None
    if result is _UNSET or created.get("mode") == "recorded":
        replayer = _replay(log)
    final = is_final(log, replayer)
    if not final:
        claimed = None
    elif result is not _UNSET:
        claimed = result
    else:
        claimed = replayer.result() if replayer is not None else None
    unsigned = {
        "format": BUNDLE_FORMAT,
        "ctx": BUNDLE_CTX,
        "game": created.get("game"),
        "ruleset": {"name": created["ruleset"]["name"], "version": created["ruleset"]["version"]},
        "interim": not final,
        "log": list(log),
        "result": claimed,
        "referee_key": public_key_b64(key),
    }
    if messages:
        unsigned["messages"] = exported_messages(messages)
    return sign_bundle(unsigned, key)


def published_result(projection: dict[str, Any] | None, log: list[dict[str, Any]]) -> Any:
    """The result the referee published (its stored ``projection``'s), if that projection is at the end of
    ``log``; else ``None``."""
    if (projection and log and projection.get("seq") == len(log) and projection.get("head") == log[-1].get("hash")
            and projection.get("result") is not None):
        return projection["result"]
    return None


def export_bundle(log: list[dict[str, Any]], projection: dict[str, Any] | None, key: Ed25519PrivateKey,
                  messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The bundle ``GET /games/{id}/export`` answers (and the archive keeps): the published result when the
    stored projection is at the end of the log, else the result recomputed by replaying it."""
    published = published_result(projection, log)
    if published is None:
        return build_bundle(log, key, messages=messages)
    return build_bundle(log, key, result=published, messages=messages)


def sign_bundle(bundle: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """``bundle`` with ``referee_key`` set to ``key``'s public key and a fresh ``referee_sig``."""
    unsigned = unsigned_part(bundle)
    unsigned["referee_key"] = public_key_b64(key)
    return {**unsigned, "referee_sig": sign(key, unsigned)}


def load_bundle(data: bytes | str) -> Any:
    """Parse a bundle file strictly (no floats, duplicate keys or unsafe integers).

    Raises :class:`referee.protocol.canonical.StrictJSONError` listing every problem.
    """
    return parse_strict(data)
