"""How a log entry is kept in its Redis stream: compactly, and read back byte for byte (issue 28, item 2).

The log entries are the signed record, so what is stored may be smaller than their JSON only if what is served
and verified is identical. An entry's *stored JSON* is :func:`stored_json` (compact, sorted keys, UTF-8: what
``GET /games/{id}/events`` streams and what every read parses); the stream keeps either that text itself (the
only form before this module, still read as it is) or its packed form, which :func:`unpack` turns back into
exactly those bytes. :func:`pack` checks that before it gives a packed form; when the check fails (a value the
format cannot carry exactly) it gives the JSON unchanged.

Packed form, version 1 (first byte ``0x01``; a JSON text begins with ``{``, so the two never clash)::

    0x01, flags, [32 B hash] [32 B envelope's prev] [64 B signature] [6 B at], deflate(rest)

* ``flags`` says which of the four fields were taken out of the JSON (bit 0: ``hash``, 64 lowercase hex
  digits; bit 1: ``submission.envelope.prev``, the same; bit 2: ``submission.sig``, 86 base64url characters of
  an Ed25519 signature; bit 3: ``at``, ``YYYY-MM-DDTHH:MM:SS.mmmZ`` as big-endian milliseconds since 1970) and
  written as their bytes: deflate codes hex and base64 at ~6 bits a character, their bytes take 4 and 6;
* ``rest``: the stored JSON of the entry without those fields, raw deflate (``wbits`` -12, a 4 KB window)
  with a preset dictionary: :data:`ZDICT_V1` (the keys and common values of every kind of entry) followed by
  the log's own id (a game's or a tournament's: the entries repeat it), so the JSON left costs a few dozen
  bytes.

A move of 5 Towers (~440 B of JSON) is kept in ~170 B. :data:`ZDICT_V1` must never change (stored entries
need it to be read): another dictionary gets another first byte.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import json
import re
import time
import zlib
from typing import Any

#: the first byte of an entry packed with :data:`ZDICT_V1`
PACKED_V1 = 1
_WBITS = -12
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_AT = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z$")
_HASH, _PREV, _SIG, _AT_BIT = 1, 2, 4, 8

#: the preset dictionary of version 1 (never to be changed): the shapes of the entries, the most common last
ZDICT_V1 = (
    b'{"agreed":"offer","reason":"timeout","timeout":0,"type":"forfeited","v":1}'
    b'{"type":"expired"}{"type":"adjudicated"}{"kind":"bank","initial":604800,"increment":86400,"max":1209600}'
    b'"ctx":"referee/vacation","seconds":86400,"ctx":"referee/resign","ctx":"referee/offer","ctx":"referee/answer"'
    b'{"type":"timeout","v":1}{"move":{"type":"pass"},"seat":0,"seq":1,"type":"auto_move","v":1}'
    b'{"commitment":"","game":"","mode":"seeded","options":{"time_control":{"kind":"per_move","per_move":259200}},'
    b'"organiser":null,"ruleset":{"name":"towerup","version":""},"ruleset":{"name":"fivetowers","version":""},'
    b'"seats":[{"key":"","name":""},{"key":"","name":""}],"seq":0,"time_control":{"kind":"per_move",'
    b'"max_auto_moves":3,"on_timeout":"auto_move","per_move":259200,"reminders":[86400,3600],"vacation":604800},'
    b'"type":"created","v":1}'
    b'{"reason":"finished","seq":1,"server_seed":"","type":"revealed","v":1}{"seq":1,"type":"started","v":1}'
    b'{"seat":0,"seq":1,"submission":{"envelope":{"ctx":"referee/accept","entropy":"","game":"","seat":0,"seq":1,'
    b'"v":1}},"type":"accepted","v":1}'
    b'{"placements":[{"color":"black","site":"A7"}],"type":"place_start"}{"slot":2,"type":"take"}'
    b'{"color":"white","roof":"C9","site":"C9","type":"build"}'
    b'{"amount":5,"type":"bid"}{"cards":["stone-4","lava-14","sand-11","moss-12","ice-5"],"demolish":"ice",'
    b'"type":"build"}'
    b'{"seat":1,"seq":2,"submission":{"envelope":{"ctx":"referee/move","game":"","move":{"type":"pass"},"seat":1,'
    b'"seq":2,"v":1}},"type":"move","v":1}"game":"'
)


def stored_json(entry: dict[str, Any]) -> bytes:
    """An entry's stored JSON: compact, sorted keys, UTF-8 (not necessarily RFC 8785: the chain is checked by
    re-canonicalising the parsed entry, so the stored text needs only to round-trip)."""
    return json.dumps(entry, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")


def _zdict(log_id: str) -> bytes:
    return ZDICT_V1 + log_id.encode()


def _ms_of(at: Any) -> int | None:
    found = _AT.match(at) if isinstance(at, str) else None
    if found is None:
        return None
    year, month, day, hour, minute, second, milli = (int(part) for part in found.groups())
    if not 1970 <= year <= 9999:
        return None
    return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)) * 1000 + milli


def _at_of(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _sig_bytes(sig: Any) -> bytes | None:
    if not isinstance(sig, str) or len(sig) != 86:
        return None
    try:
        raw = base64.urlsafe_b64decode(sig + "==")
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 64 else None


def pack(entry: dict[str, Any], log_id: str) -> bytes:
    """What the stream keeps of ``entry`` (of the log ``log_id``): the packed form, or the stored JSON itself
    when packing would not give it back exactly (or would not be smaller)."""
    raw = stored_json(entry)
    rest = dict(entry)
    flags, parts = 0, []
    if isinstance(rest.get("hash"), str) and _HEX64.match(rest["hash"]):
        flags |= _HASH
        parts.append(bytes.fromhex(rest.pop("hash")))
    submission = rest.get("submission")
    if isinstance(submission, dict):
        submission = rest["submission"] = dict(submission)
        envelope = submission.get("envelope")
        if isinstance(envelope, dict) and isinstance(envelope.get("prev"), str) and _HEX64.match(envelope["prev"]):
            envelope = submission["envelope"] = dict(envelope)
            flags |= _PREV
            parts.append(bytes.fromhex(envelope.pop("prev")))
        sig = _sig_bytes(submission.get("sig"))
        if sig is not None:
            flags |= _SIG
            parts.append(sig)
            del submission["sig"]
    ms = _ms_of(rest.get("at"))
    if ms is not None:
        flags |= _AT_BIT
        parts.append(ms.to_bytes(6, "big"))
        del rest["at"]
    compressor = zlib.compressobj(9, zlib.DEFLATED, _WBITS, 2, zlib.Z_DEFAULT_STRATEGY, _zdict(log_id))
    packed = bytes((PACKED_V1, flags)) + b"".join(parts) + compressor.compress(stored_json(rest)) + compressor.flush()
    try:
        same = unpack_json(packed, log_id) == raw
    except (ValueError, zlib.error):
        same = False
    return packed if same and len(packed) < len(raw) else raw


def unpack(stored: bytes, log_id: str) -> dict[str, Any]:
    """The entry the stream keeps as ``stored`` (packed or JSON), parsed."""
    if not stored or stored[0] != PACKED_V1:
        return json.loads(stored)  # type: ignore[no-any-return]
    flags, offset = stored[1], 2
    fields: dict[int, bytes] = {}
    for bit, size in ((_HASH, 32), (_PREV, 32), (_SIG, 64), (_AT_BIT, 6)):
        if flags & bit:
            fields[bit] = stored[offset:offset + size]
            offset += size
    inflater = zlib.decompressobj(_WBITS, zdict=_zdict(log_id))
    entry: dict[str, Any] = json.loads(inflater.decompress(stored[offset:]) + inflater.flush())
    if _HASH in fields:
        entry["hash"] = fields[_HASH].hex()
    if _AT_BIT in fields:
        entry["at"] = _at_of(int.from_bytes(fields[_AT_BIT], "big"))
    if _PREV in fields or _SIG in fields:
        submission = entry["submission"]
        if _PREV in fields:
            submission["envelope"]["prev"] = fields[_PREV].hex()
            submission["envelope"] = dict(sorted(submission["envelope"].items()))
        if _SIG in fields:
            submission["sig"] = base64.urlsafe_b64encode(fields[_SIG]).rstrip(b"=").decode()
        entry["submission"] = dict(sorted(submission.items()))
    return dict(sorted(entry.items()))


def unpack_json(stored: bytes, log_id: str) -> bytes:
    """The stored JSON of the entry kept as ``stored``: byte for byte what :func:`stored_json` gave when it was
    written (what an event stream serves)."""
    if not stored or stored[0] != PACKED_V1:
        return stored
    return stored_json(unpack(stored, log_id))


#: the first byte of a projection's value packed with :data:`ZDICT_PROJ_V1` (a JSON text never begins with it)
PACKED_PROJ_V1 = 2
#: a projection's value shorter than this stays JSON text
PACK_VALUE_FROM = 96
_PROJ_WBITS = -13
#: the preset dictionary of the projections' values, version 1 (never to be changed): a view of each game, a clock
ZDICT_PROJ_V1 = (
    b'{"ruleset":"towerup","players":2,"options":{"objectives":[1,2,3],"start_floors":"last_player","extra_sta'
    b'rt_floors":0},"recorded":false,"board_side":"back","phase":"play","to_move":1,"actions":16,"extra_turn":'
    b'false,"start_floors":{"mode":"last_player","placer":1,"pending":[]},"buildings":{"A2":{"color":"white","'
    b'height":1,"stack":["white",{"owner":1}],"roofs":[{"level":1,"owner":1}],"top_roof":1},"A4":{"color":"bro'
    b'wn","height":1,"stack":["brown",{"owner":0}],"roofs":[{"level":1,"owner":0}],"top_roof":0},"A5":{"color"'
    b':"black","height":3,"stack":["black","black","black"],"roofs":[],"top_roof":null},"B6":{"color":"white",'
    b'"height":1,"stack":["white"],"roofs":[],"top_roof":null},"D6":{"color":"brown","height":1,"stack":["brow'
    b'n",{"owner":0}],"roofs":[{"level":1,"owner":0}],"top_roof":0},"E2":{"color":"brown","height":3,"stack":['
    b'"brown","brown","brown",{"owner":0}],"roofs":[{"level":3,"owner":0}],"top_roof":0},"E3":{"color":"white"'
    b',"height":3,"stack":["white","white","white"],"roofs":[],"top_roof":null},"E4":{"color":"grey","height":'
    b'2,"stack":["grey",{"owner":1},"grey"],"roofs":[{"level":1,"owner":1}],"top_roof":null},"E5":{"color":"gr'
    b'ey","height":3,"stack":["grey",{"owner":0},"grey","grey"],"roofs":[{"level":1,"owner":0}],"top_roof":nul'
    b'l},"E6":{"color":"black","height":1,"stack":["black",{"owner":1}],"roofs":[{"level":1,"owner":1}],"top_r'
    b'oof":1}},"box":{"black":24,"grey":23,"white":23,"brown":24},"market":["c41","c42","c34"],"deck_count":35'
    b',"discard":["c22","c13","c35","c07","c31","c05"],"reshuffles":0,"objectives":[{"slot":0,"number":1,"text'
    b'":"presence in buildings of all 4 colours","chips_left":[7,3]},{"slot":1,"number":2,"text":"presence in '
    b'4 different buildings in one park","chips_left":[7,3]},{"slot":2,"number":3,"text":"presence in all 5 di'
    b'stricts","chips_left":[7,3]}],"seats":[{"seat":0,"supply":{"black":1,"grey":2,"white":0,"brown":0},"supp'
    b'ly_total":3,"roofs_left":6,"roofs_on_board":4,"visible_roofs":3,"locomotives":{"black":0,"grey":1,"white'
    b'":0,"brown":5},"stars_reached":0,"cone":null,"chips":[],"objectives_met":[],"last_turn_done":false},{"se'
    b'at":1,"supply":{"black":1,"grey":0,"white":2,"brown":1},"supply_total":4,"roofs_left":7,"roofs_on_board"'
    b':3,"visible_roofs":2,"locomotives":{"black":1,"grey":2,"white":1,"brown":0},"stars_reached":0,"cone":nul'
    b'l,"chips":[],"objectives_met":[],"last_turn_done":false}],"end":{"trigger":null,"last_round":false,"curr'
    b'ent_turn_is_last":false,"last_turns_to_come":[]},"is_over":false}{"ruleset":"fivetowers","players":2,"ph'
    b'ase":"bidding","round":6,"start_player":1,"to_move":0,"is_over":false,"display":["stone-3","sand-14","mo'
    b'ss-5","lava-3","ice-10"],"max_bid":5,"high_bid":3,"high_bidder":1,"bidding":[{"seat":1,"type":"bid","amo'
    b'unt":3}],"has_bid":[1],"passed":[],"awaiting":[0],"seats":[{"seat":0,"towers":{"sand":["sand-3"],"lava":'
    b'["lava-5"],"stone":["stone-13","stone-2"]},"demolished":["sand-11"]},{"seat":1,"towers":{"sand":["sand-9'
    b'"],"ice":["ice-11","ice-4"],"moss":["moss-15","moss-14","moss-10","moss-6","moss-2"],"lava":["lava-13"],'
    b'"stone":["stone-9","stone-6"]},"demolished":["lava-1"]}],"deck_count":50,"discard":["ice-9","moss-1","st'
    b'one-14","stone-10","sand-13","stone-7","lava-14","lava-2"],"exhaustions":0,"reshuffled":false,"last_roun'
    b'd":{"round":5,"outcome":"built","start_player":1,"builder":0,"cards":["sand-3"],"demolished":"sand-11","'
    b'discarded":["sand-13","stone-7","lava-14","lava-2"]}}{"spec":{"kind":"per_move","per_move":259200,"vacat'
    b'ion":604800,"on_timeout":"auto_move","max_auto_moves":3,"reminders":[86400,3600]},"seat":1,"since":17956'
    b'22793721,"allowance":259200000,"bank":[0,0],"vacation_left":[604800000,604800000],"vacations":[[],[]],"f'
    b'orfeited_at":[null,null],"timeouts_in_row":[0,0]}'
)


def pack_value(text: str) -> bytes:
    """A projection field's JSON ``text`` as the work Redis keeps it: deflated (:data:`ZDICT_PROJ_V1`) when it is
    long and that is smaller; else the text itself. :func:`unpack_value` gives the text back."""
    raw = text.encode("utf-8")
    if len(raw) < PACK_VALUE_FROM:
        return raw
    compressor = zlib.compressobj(9, zlib.DEFLATED, _PROJ_WBITS, 2, zlib.Z_DEFAULT_STRATEGY, ZDICT_PROJ_V1)
    packed = bytes((PACKED_PROJ_V1,)) + compressor.compress(raw) + compressor.flush()
    return packed if len(packed) < len(raw) else raw


def unpack_value(stored: bytes | str) -> str:
    """The JSON text of a projection field kept as ``stored`` (packed or not)."""
    if isinstance(stored, str):
        return stored
    if stored[:1] != bytes((PACKED_PROJ_V1,)):
        return stored.decode("utf-8")
    inflater = zlib.decompressobj(_PROJ_WBITS, zdict=ZDICT_PROJ_V1)
    return (inflater.decompress(stored[1:]) + inflater.flush()).decode("utf-8")
