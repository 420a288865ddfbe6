"""The hash chain of a game's log (CONTRACT section 5).

Every log entry is a JSON object with ``v`` (entry format version, 1), ``type``, ``seq`` (its
0-based position in the log), ``at`` (server time, RFC 3339 UTC with ``Z``), its payload, and
``hash``::

    hash = hex(SHA-256(prev_hash_hex(64 ASCII chars) ‖ RFC 8785 bytes of the entry without "hash")))

The first entry chains from ``"0" * 64``. Because the previous hash is taken as its 64-character hex
text, the chain can be recomputed by hand: ``(printf %s "$prev"; cat entry.jcs) | sha256sum``.

Entry payloads (``v`` 1):

* ``created``: ``game``, ``ruleset`` {name, version}, ``seats`` [{name, key}], ``options`` (as requested),
  ``time_control`` (resolved, CONTRACT section 8; absent in games created before clocks),
  ``mode`` ("seeded" or "recorded"), and ``commitment`` (hex SHA-256 of the server seed) in seeded
  mode or ``deck`` (card ids, top first) in recorded mode; ``organiser`` (key or null). A seat may be open
  (CONTRACT section 14: ``{"name"?, "invite": key}`` or ``{"open": true, "name"?}``); such a game carries
  ``creator`` and ``creator_sig`` (its signed creation request), unless its organiser signed it.
* ``accepted``: ``seat``, ``submission`` (the signed acceptance exactly as received).
* ``started``: nothing more (the game seed stays secret until ``revealed``).
* ``move``: ``seat``, ``submission`` (the signed move exactly as received).
* ``revealed``: ``server_seed`` (hex), ``reason`` ("finished", "aborted", "expired" or "cancelled").
* time control (``docs/timecontrol.md``): ``vacation`` (``seat``, ``submission``), ``timeout`` (``seat``,
  ``deadline``, ``action``, ``move``), ``forfeited`` (``seat``, ``reason``, ``timeout``), ``auto_move``
  (``seat``, ``move``).
* ``adjudicated``: ``method`` ("provisional" or "organiser"), ``reason``, and for an organiser's decision
  ``ranks`` and the signed ``decision`` (``docs/tournaments.md``).
* ``expired``: a seeded game not accepted by every seat by ``created.accept_by``.
* open seats (CONTRACT section 14, ``docs/service.md``): ``seated`` (``seat``, ``submission``: the signed take
  ``{envelope, sig, invite_sig?}`` exactly as received; also the seat's acceptance), ``left`` (``seat``,
  ``submission``), ``cancelled`` (``submission``: the creator's signed cancel).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from .canonical import canonical_bytes

GENESIS = "0" * 64
ENTRY_VERSION = 1


def entry_hash(prev_hash: str, entry: dict[str, Any]) -> str:
    """The ``hash`` of ``entry`` (its ``hash`` field, if any, is left out) chained from ``prev_hash``."""
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_bytes(body)).hexdigest()


def seal(entry: dict[str, Any], prev_hash: str) -> dict[str, Any]:
    """A copy of ``entry`` with its ``hash`` chained from ``prev_hash``."""
    sealed = {k: v for k, v in entry.items() if k != "hash"}
    sealed["hash"] = entry_hash(prev_hash, sealed)
    return sealed


def first_broken_link(entries: Iterable[dict[str, Any]]) -> tuple[int, str] | None:
    """``(position, reason)`` of the first entry whose ``seq`` or ``hash`` is wrong, or ``None``."""
    prev = GENESIS
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            return position, "entry is not a JSON object"
        if entry.get("seq") != position:
            return position, f"entry has seq {entry.get('seq')!r} at position {position}"
        expected = entry_hash(prev, entry)
        if entry.get("hash") != expected:
            return position, "hash does not chain from the previous entry"
        prev = expected
    return None
