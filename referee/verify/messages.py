"""Check 10, ``messages``: the game's public messages a bundle carries (CONTRACT section 12).

A game's messages are a hash-chained stream of their own beside its log (``referee.store.messages``). The
bundle carries that whole chain in order, as ``messages``: each public message (``to`` null) whole, as
stored, and each private one by ``{"seq", "prev", "hash", "private": true}`` only, so that the chain still
links and nothing of a private text leaves the referee (:func:`exported_messages`). The check, for every
item in order: ``seq`` is its position and ``prev`` the previous item's ``hash`` (64 zeros for the first);
for a public message also that its ``hash`` is its own (``referee.protocol.logchain``: a changed text is caught at
its position), that it is a message of this game by one of its seats, signed by that seat's key in
``created``, with a text within the rules (``schemas.text.message_text_problem``), and that its
``log_seq`` is a log length the bundle's log reached, never lower than an earlier message's. A private
message's own hash cannot be recomputed (its text is not there); the next message's ``prev`` pins it.

A bundle without ``messages`` (every bundle made before messages, or of a game without any) passes with
"no messages". The position a failure reports is the message's position in the message stream.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from schemas.text import message_text_problem

from ..protocol.logchain import GENESIS, entry_hash
from ..protocol.signing import MESSAGE_CTX
from ..timecontrol import parse_ms
from .context import Context
from .report import FAILED, MAX_LISTED, PASSED, Check

_HASH = re.compile(r"^[0-9a-f]{64}$")
_PRIVATE_FIELDS = {"seq", "prev", "hash", "private"}
_MESSAGE_FIELDS = {"v", "type", "seq", "prev", "at", "log_seq", "submission", "hash"}
_ENVELOPE_FIELDS = {"v", "ctx", "game", "seat", "text", "to", "at"}


def exported_messages(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A game's stored messages as a bundle carries them: the public ones whole, the private ones by their
    place in the chain only."""
    out = []
    for message in stored:
        if message["submission"]["envelope"].get("to") is None:
            out.append(message)
        else:
            out.append({"seq": message["seq"], "prev": message["prev"], "hash": message["hash"], "private": True})
    return out


def _public_problem(item: dict[str, Any], keys: list[str], game: str, log_length: int) -> str | None:
    if set(item) != _MESSAGE_FIELDS:
        return f"a public message has exactly the fields {sorted(_MESSAGE_FIELDS)}, not {sorted(item)}"
    if item["v"] != 1 or item["type"] != "message":
        return "not a message of format 1 (v 1, type 'message')"
    if entry_hash(item["prev"], item) != item["hash"]:
        return "its hash is not the hash of the message as carried: the message was changed"
    try:
        parse_ms(item["at"])
    except ValueError as exc:
        return f"at: {exc}"
    log_seq = item["log_seq"]
    if type(log_seq) is not int or not 1 <= log_seq <= log_length:
        return f"log_seq {log_seq!r} is no log length this bundle's log reached (1 to {log_length})"
    submission = item["submission"]
    if not (isinstance(submission, dict) and set(submission) == {"envelope", "sig"}
            and isinstance(submission["envelope"], dict) and isinstance(submission["sig"], str)):
        return "submission must be {envelope, sig}"
    envelope = submission["envelope"]
    if not set(envelope) <= _ENVELOPE_FIELDS or not {"v", "ctx", "game", "seat", "text", "at"} <= set(envelope):
        return f"the envelope has the fields {sorted(envelope)}; a message's are {sorted(_ENVELOPE_FIELDS)}"
    if envelope["v"] != 1 or envelope["ctx"] != MESSAGE_CTX:
        return f"the envelope is not a message's (v 1, ctx {MESSAGE_CTX!r})"
    if envelope["game"] != game:
        return f"the envelope is bound to game {envelope['game']!r}, not {game!r}"
    if envelope.get("to") is not None:
        return "a message to chosen seats is carried by its hash only, never whole"
    seat = envelope["seat"]
    if type(seat) is not int or not 0 <= seat < len(keys):
        return f"the game has no seat {seat!r}"
    problem = message_text_problem(envelope["text"])
    if problem:
        return f"text {problem}"
    return None


def _holders_by_log_length(ctx: Context) -> Callable[[int], list[str]]:
    """The keys that held the seats when the log was ``n`` entries long (``""`` for a seat nobody held), as the
    replay judged the ``seated``, ``left`` (CONTRACT section 14) and ``rekeyed`` entries (section 15): a message is
    signed by its seat's holder at its ``log_seq``."""
    keys = [seat.get("key") or "" if isinstance(seat, dict) else "" for seat in ctx.created.get("seats") or []]
    verdicts = ctx.replayer.verdicts if ctx.replayer is not None else []
    after = [list(keys)]  # after[n]: the holders once the first n entries are folded
    for position, entry in enumerate(ctx.log[1:], start=1):
        ok = position < len(verdicts) and verdicts[position].status == "ok"
        seat = entry.get("seat") if isinstance(entry, dict) else None
        if ok and isinstance(seat, int) and 0 <= seat < len(keys) and entry.get("type") in ("seated", "left"):
            keys[seat] = entry["submission"]["envelope"]["key"] if entry["type"] == "seated" else ""
        elif ok and isinstance(seat, int) and 0 <= seat < len(keys) and entry.get("type") == "rekeyed":
            keys[seat] = entry["key"]  # a seat's new key (CONTRACT section 15)
        after.append(list(keys))
    return lambda length: after[min(max(length, 1), len(after)) - 1]


def _declines_problems(declines: list[tuple[int, dict[str, Any]]], carried: list[Any]) -> list[tuple[int, str]]:
    """A recovery ended by a message (CONTRACT section 15, ``recovery_declined`` with ``message``): the message is
    the stream's at that position, with that hash and ``log_seq``, and a public one was sent by the recovered seat
    (a private one is pinned by its hash only)."""
    out: list[tuple[int, str]] = []
    for at, entry in declines:
        named = entry["message"]
        position = named.get("position")
        item = carried[position] if isinstance(position, int) and 0 <= position < len(carried) else None
        if not isinstance(item, dict) or item.get("hash") != named.get("hash"):
            out.append((position if isinstance(position, int) else 0,
                        f"the recovery_declined entry at log position {at} names a message that is not this one"))
        elif item.get("private") is not True and (item.get("log_seq") != named.get("log_seq") or (
                (item.get("submission") or {}).get("envelope") or {}).get("seat") != entry.get("seat")):
            out.append((position, f"the recovery_declined entry at log position {at} names a message not of seat "
                                  f"{entry.get('seat')} at that log length"))
    return out


def check_messages(ctx: Context) -> Check:
    bundle = ctx.bundle
    carried = bundle.get("messages") if isinstance(bundle, dict) else None
    declines = [(i, e) for i, e in enumerate(ctx.log)
                if isinstance(e, dict) and e.get("type") == "recovery_declined" and isinstance(e.get("message"), dict)]
    if (carried is None or carried == []) and declines:
        return Check("messages", FAILED, f"the recovery_declined entry at log position {declines[0][0]} names a "
                     "message the bundle does not carry", details={"stream": "messages"})
    if carried is None or carried == []:
        return Check("messages", PASSED, "no messages")
    if not isinstance(carried, list):
        return Check("messages", FAILED, "messages must be a list", details={"stream": "messages"})
    keys = [seat.get("key") or "" if isinstance(seat, dict) else "" for seat in ctx.created["seats"]]
    holders = _holders_by_log_length(ctx)
    game = ctx.created["game"]
    failures: list[tuple[int, str]] = []
    prev: Any = GENESIS
    public = 0
    last_log_seq = 0
    for position, item in enumerate(carried):
        problem = None
        if not isinstance(item, dict):
            problem = "not a JSON object"
        elif item.get("seq") != position:
            problem = f"the message has seq {item.get('seq')!r} at position {position} (one missing or added?)"
        elif item.get("prev") != prev:
            problem = "prev is not the previous message's hash: the chain is broken here"
        elif not isinstance(item.get("hash"), str) or not _HASH.match(item["hash"]):
            problem = "hash must be 64 lowercase hex characters"
        elif item.get("private") is True:
            if set(item) != _PRIVATE_FIELDS:
                problem = f"a private message is carried as {sorted(_PRIVATE_FIELDS)} only"
        else:
            public += 1
            problem = _public_problem(item, keys, game, len(ctx.log))
            if problem is None:
                envelope, sig = item["submission"]["envelope"], item["submission"]["sig"]
                if not ctx.verifier(holders(item["log_seq"])[envelope["seat"]] or "", envelope, sig):
                    problem = f"the signature is not seat {envelope['seat']}'s over the envelope"
                elif item["log_seq"] < last_log_seq:
                    problem = f"log_seq {item['log_seq']} is lower than an earlier message's ({last_log_seq})"
                else:
                    last_log_seq = item["log_seq"]
        if problem is not None:
            failures.append((position, problem))
        prev = item.get("hash") if isinstance(item, dict) else None
        ctx.tick("messages", position + 1, len(carried))
    failures += _declines_problems(declines, carried)
    if failures:
        first, reason = failures[0]
        return Check("messages", FAILED, f"message {first}: {reason}", first,
                     details={"stream": "messages",
                              "failures": [{"position": p, "problem": m} for p, m in failures[:MAX_LISTED]]})
    return Check("messages", PASSED, f"{len(carried)} messages chained ({public} public, checked: text, game, seat and "
                                     f"signature; {len(carried) - public} private, by hash)")
