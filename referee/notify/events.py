"""Outgoing events (CONTRACT sections 8 and 9), derived from a game's log. Pure: no Redis, no clock.

Every event is a JSON object ``{"id", "type", "game", "seq", "link", ...}``; ``seq`` is the log length
at which the event holds and ``id`` is stable (the same log always gives the same ids), so whoever puts
events into the outbox, and whoever later delivers them, can do it more than once without duplicates:

========== ================================== ==================================================
type       id                                 extra fields
========== ================================== ==================================================
started    ``<game>:<position>:started``      ``seats`` [{seat, name, key}]
turn       ``<game>:<position>:turn``         ``seat``, ``key``, ``deadline`` (null: no clock)
reminder   ``<game>:<position>:reminder:<s>`` ``seat``, ``key``, ``deadline``, ``before`` (s);
                                              ``<position>`` is the entry that began the decision
timeout    ``<game>:<position>:timeout``      ``seat``, ``key``, ``deadline``, ``action``
finished   ``<game>:<position>:finished``     ``ranks`` [{seat, key, rank, forfeited}]
tournament ``<tournament>:<position>:round:<k>`` one per player of a ``paired`` entry of a tournament's
_round                                        log (k: the player's index in the round): ``tournament``,
                                              ``round``, ``key``, ``seat`` (null: a bye), ``players``
                                              (keys in seat order), ``bye``, ``tournament_link``;
                                              ``game``/``link`` are the player's game (null on a bye)
offer      ``<game>:<position>:offer``        ``seat`` (who offers), ``offer`` (draw, end, abort,
                                              takeback), ``position`` (the offer's id), ``move``
                                              (takeback: the move it would void), ``recipients``
offer      ``<game>:<position>:offer_answered`` ``offer``, ``position`` (the offer's), ``by`` (who
_answered                                     offered), ``seat`` (who answered; null when the referee
                                              recorded it), ``outcome``: ``accepted`` (still pending:
                                              other seats must accept), ``declined``, ``withdrawn``,
                                              ``lapsed`` (a move or a resignation came first) or
                                              ``agreed`` (it passed; from the ``agreed`` entry — the
                                              last acceptance gives no ``accepted`` event of its own),
                                              ``recipients``
resigned   ``<game>:<position>:resigned``     ``seat``, ``goes_on`` (more than one seat still in the
                                              game), ``recipients``
seated     ``<game>:<position>:seated``       an open seat taken (CONTRACT section 14): ``seat``, ``name``,
                                              ``joiner`` (its key), ``open_seats`` (seats still open),
                                              ``full`` (none left), ``recipients`` (the other holders and
                                              the creator; ``seat`` null for a creator holding no seat)
left       ``<game>:<position>:left``         ``seat`` (open again), ``open_seats``, ``recipients`` (the
                                              holders and the creator)
cancelled  ``<game>:<position>:cancelled``    ``recipients``: the seats' holders but the creator
rematch    ``<game>:0:rematch``               the ``created`` entry of a rematch: ``rematch_of`` {game,
                                              head}, ``seat`` (who asked, in the finished game's seats),
                                              ``recipients`` (the other seats); ``game``/``link`` are the
                                              new game's
recovery   ``<game>:<position>:recovery``     a recovery of a seat's key asked (CONTRACT section 15): ``seat``,
                                              ``new_key``, ``position`` (the recovery's id, answered like
                                              an offer), ``not_before``, ``recipients`` (every seat, the
                                              recovered one's key included)
message    ``<game>:m<position>:message``     from the message stream, not the log
                                              (:func:`message_event`; ``<position>`` is the message's):
                                              ``seat`` (sender), ``to`` (seats, null: everyone),
                                              ``text``, ``at``, ``position``, ``recipients``
========== ================================== ==================================================

``<position>`` is the log position of the entry the event follows from; ``link`` is the game page's path.
``recipients`` (``[{seat, key}]``) are the seats an event of the players' own decisions goes to: every seat
of the game but the one that acted (its own request's answer told it already); for a private message only
its addressees, and never a seat that muted the sender.
"""

from __future__ import annotations

from typing import Any

from ..protocol.signing import verify
from ..replay import FINISHED, LogReplayer, Verdict, entry_time, pending_recovery, recovery_alarm


def game_link(game_id: str) -> str:
    return f"/play/games/{game_id}"


def _base(replayer: LogReplayer, position: int, kind: str, suffix: str = "") -> dict[str, Any]:
    assert replayer.created is not None
    game = replayer.created["game"]
    return {"id": f"{game}:{position}:{kind}{suffix}", "type": kind, "game": game, "seq": replayer.seq,
            "link": game_link(game)}


def tournament_link(tournament_id: str) -> str:
    return f"/tournaments/{tournament_id}"


def tournament_round_events(tournament_id: str, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tournament_round`` events of a tournament's ``paired`` entry: one per player, with the player's
    game (seat, players, link) or the bye."""
    position = entry["seq"]
    base = {"type": "tournament_round", "tournament": tournament_id, "round": entry["round"], "seq": position + 1,
            "tournament_link": tournament_link(tournament_id)}
    out: list[dict[str, Any]] = []
    for table in entry.get("tables", []):
        for seat, key in enumerate(table["players"]):
            out.append({"id": f"{tournament_id}:{position}:round:{len(out)}", **base, "key": key,
                        "game": table["game"], "seat": seat, "players": list(table["players"]), "bye": False,
                        "link": game_link(table["game"])})
    for key in entry.get("byes", []):
        out.append({"id": f"{tournament_id}:{position}:round:{len(out)}", **base, "key": key, "game": None,
                    "seat": None, "players": [], "bye": True, "link": tournament_link(tournament_id)})
    return out


def _recipients(keys: list[str], seats: Any, actor: int | None) -> list[dict[str, Any]]:
    return [{"seat": seat, "key": keys[seat]} for seat in seats if seat != actor and 0 <= seat < len(keys)]


def decision_events(replayer: LogReplayer, entry: dict[str, Any], verdict: Verdict) -> list[dict[str, Any]]:
    """The events of the players' own decisions (CONTRACT section 12) that ``entry`` gives rise to:
    ``offer``, ``offer_answered`` and ``resigned``."""
    decisions = replayer.decisions
    if decisions is None or verdict.status == "rejected":
        return []
    position = entry.get("seq", replayer.seq - 1)
    keys = replayer.keys
    seats = range(len(keys))
    out: list[dict[str, Any]] = []
    actor = verdict.seat
    if verdict.type == "resigned":
        standing = replayer.clocks.standing() if replayer.clocks is not None else []
        out.append({**_base(replayer, position, "resigned"), "seat": actor, "goes_on": len(standing) > 1,
                    "recipients": _recipients(keys, seats, actor)})
    elif verdict.type == "offer" and decisions.pending is not None and decisions.pending.position == position:
        pending = decisions.pending
        event = {**_base(replayer, position, "offer"), "seat": pending.seat, "offer": pending.kind,
                 "position": position, "recipients": _recipients(keys, seats, pending.seat)}
        if pending.target is not None:
            event["move"] = pending.target
        out.append(event)
    elif verdict.type == "answered":
        if decisions.pending is not None:
            if replayer.agreement_due() is None:  # the last acceptance: the agreed entry's event says it
                pending = decisions.pending
                out.append({**_base(replayer, position, "offer_answered"), "offer": pending.kind,
                            "position": pending.position, "by": pending.seat, "seat": actor, "outcome": "accepted",
                            "recipients": _recipients(keys, seats, actor)})
        elif decisions.last is not None:  # declined, or withdrawn by the offerer
            settled = decisions.last
            out.append({**_base(replayer, position, "offer_answered"), "offer": settled["kind"],
                        "position": settled["offer"], "by": _offerer(replayer, settled["offer"]), "seat": actor,
                        "outcome": settled["outcome"], "recipients": _recipients(keys, seats, actor)})
    last = decisions.last
    if last is not None and last.get("position") == position and last.get("outcome") in ("agreed", "lapsed"):
        out.append({**_base(replayer, position, "offer_answered"), "offer": last["kind"], "position": last["offer"],
                    "by": _offerer(replayer, last["offer"]), "seat": None, "outcome": last["outcome"],
                    "recipients": _recipients(keys, seats, None)})
    return out


def _offerer(replayer: LogReplayer, offer: int) -> int | None:
    """The seat that made the offer at ``offer`` (from its verdict, when the fold still holds it: an offer
    lapses at the next move, so it is a few entries back at most; None when a trimmed fold dropped it)."""
    try:
        verdicts = replayer.verdicts_since(offer)
    except ValueError:
        return None
    return verdicts[0].seat if verdicts and verdicts[0].seq == offer else None


def message_event(game_id: str, message: dict[str, Any], keys: list[str],
                  mutes: dict[int, list[int]] | None = None) -> dict[str, Any]:
    """The ``message`` event of a stored message (``referee/store/messages.py``): for everyone but the sender
    when it is public, for its addressees only when it is private, and never for a seat that muted the
    sender. The only event that comes from the message stream rather than the log (the message service
    emits it where it appends the message).

    >>> m = {"seq": 3, "at": "t", "log_seq": 9, "submission": {"envelope": {"seat": 0, "to": [2], "text": "hi"}}}
    >>> event = message_event("g_x", m, ["k0", "k1", "k2"])
    >>> event["id"], event["recipients"]
    ('g_x:m3:message', [{'seat': 2, 'key': 'k2'}])
    >>> [r["seat"] for r in message_event("g_x", {**m, "submission": {"envelope": {"seat": 0, "to": None,
    ...     "text": "hi"}}}, ["k0", "k1", "k2"], {1: [0]})["recipients"]]
    [2]
    """
    envelope = message["submission"]["envelope"]
    sender, to = envelope["seat"], envelope.get("to")
    wanted = range(len(keys)) if to is None else sorted(set(to))
    muting = {seat for seat, muted in (mutes or {}).items() if sender in muted}
    return {"id": f"{game_id}:m{message['seq']}:message", "type": "message", "game": game_id,
            "seq": message["log_seq"], "link": game_link(game_id), "position": message["seq"], "seat": sender,
            "to": to, "text": envelope["text"], "at": message["at"],
            "recipients": [r for r in _recipients(keys, wanted, sender) if r["seat"] not in muting]}


def _holders_and_creator(replayer: LogReplayer, but: str | None) -> list[dict[str, Any]]:
    """Every seat's holder and the game's creator (once, ``seat`` null when it holds no seat), but the key ``but``."""
    rows = [{"seat": i, "key": holder[0]} for i, holder in enumerate(replayer.holders)
            if holder is not None and holder[0] and holder[0] != but]
    creator = replayer.creator_key()
    if creator and creator != but and all(row["key"] != creator for row in rows) and all(
            holder is None or holder[0] != creator for holder in replayer.holders):
        rows.append({"seat": None, "key": creator})
    return rows


def seat_events(replayer: LogReplayer, entry: dict[str, Any], verdict: Verdict) -> list[dict[str, Any]]:
    """The events of open seats and rematches (CONTRACT section 14): ``seated``, ``left``, ``cancelled``, and a
    rematch's ``created`` (``rematch``). The creator hears of every seat taken or left, so also of the last one
    (``full``)."""
    position = entry.get("seq", replayer.seq - 1)
    open_seats = sum(holder is None for holder in replayer.holders)
    if verdict.type == "seated":
        envelope = (entry.get("submission") or {}).get("envelope") or {}
        return [{**_base(replayer, position, "seated"), "seat": verdict.seat, "name": envelope.get("name"),
                 "joiner": envelope.get("key"), "open_seats": open_seats, "full": open_seats == 0,
                 "recipients": _holders_and_creator(replayer, envelope.get("key"))}]
    if verdict.type == "left":
        return [{**_base(replayer, position, "left"), "seat": verdict.seat, "open_seats": open_seats,
                 "recipients": _holders_and_creator(replayer, None)}]
    if verdict.type == "cancelled":
        return [{**_base(replayer, position, "cancelled"),
                 "recipients": _holders_and_creator(replayer, replayer.creator_key() or "")}]
    created = replayer.created or {}
    if verdict.type == "created" and isinstance(created.get("rematch_of"), dict):
        ask = created.get("rematch") or {}
        envelope = ask.get("envelope") or {}
        asker = next((key for key in replayer.keys if key and _signed_by(key, envelope, ask.get("sig"))), None)
        return [{**_base(replayer, position, "rematch"), "rematch_of": created["rematch_of"],
                 "seat": envelope.get("seat"), "recipients": _holders_and_creator(replayer, asker)}]
    return []


def _signed_by(key: str, envelope: dict[str, Any], sig: Any) -> bool:
    return isinstance(sig, str) and verify(key, envelope, sig)


def entry_events(replayer: LogReplayer, entry: dict[str, Any], verdict: Verdict, was: str) -> list[dict[str, Any]]:
    """The events that ``entry`` (just folded into ``replayer``, with ``verdict``) gives rise to; ``was`` is
    the game's status before it."""
    if replayer.created is None or verdict.status == "rejected":
        return []
    position = entry.get("seq", replayer.seq - 1)
    keys = replayer.keys
    out: list[dict[str, Any]] = []
    if verdict.type == "started":
        out.append({**_base(replayer, position, "started"),
                    "seats": [{"seat": i, "name": holder[1] if holder else None, "key": holder[0] if holder else None}
                              for i, holder in enumerate(replayer.holders)]})  # who holds each seat now
    if verdict.type == "timeout":
        out.append({**_base(replayer, position, "timeout"), "seat": entry.get("seat"),
                    "key": keys[entry["seat"]], "deadline": entry.get("deadline"), "action": entry.get("action")})
    if verdict.type in ("started", "agreed") or verdict.status == "applied":  # agreed: a take-back's seat moves again
        seat = replayer.to_move()
        clocks = replayer.clocks
        if seat is not None and not (clocks is not None and clocks.forfeited(seat)):
            deadline = replayer.deadline_ms()
            out.append({**_base(replayer, position, "turn"), "seat": seat, "key": keys[seat],
                        "deadline": entry_time(deadline) if deadline is not None else None})
    if was != FINISHED and replayer.status == FINISHED:
        result = replayer.result() or {}
        ranks = [{"seat": s["seat"], "key": keys[s["seat"]], "rank": s.get("rank"),
                  "forfeited": s.get("forfeited", False)} for s in result.get("seats", [])]
        out.append({**_base(replayer, position, "finished"), "ranks": ranks})
    if verdict.type == "answered" and pending_recovery(replayer, position=entry.get("offer")) is not None:
        return out  # an answer to a recovery of a seat's key (CONTRACT section 15), not to an offer
    out += decision_events(replayer, entry, verdict)
    out += seat_events(replayer, entry, verdict)
    out += key_events(replayer, entry, verdict)
    return out


def key_events(replayer: LogReplayer, entry: dict[str, Any], verdict: Verdict) -> list[dict[str, Any]]:
    """The ``recovery`` event of a recovery asked for a seat's key (CONTRACT section 15): to every seat, the
    recovered one first of all (whoever still holds its key keeps the seat by declining)."""
    if verdict.type != "recovery" or verdict.status == "rejected":
        return []
    position = entry.get("seq", replayer.seq - 1)
    recovery = pending_recovery(replayer, position=position)
    if recovery is None:
        return []
    keys = replayer.keys
    return [{**_base(replayer, position, "recovery"), "seat": recovery.seat, "new_key": recovery.key,
             "position": position, "not_before": entry_time(recovery.not_before),
             "recipients": _recipients(keys, range(len(keys)), None)}]


def due_reminders(replayer: LogReplayer, now: int) -> list[dict[str, Any]]:
    """Reminder events of the current decision whose time has come at ``now`` (ms) and whose deadline has
    not passed yet."""
    clocks = replayer.clocks
    deadline = replayer.deadline_ms()
    if clocks is None or deadline is None or now >= deadline or clocks.seat is None or clocks.since_position is None:
        return []
    seat = clocks.seat
    return [{**_base(replayer, clocks.since_position, "reminder", f":{before}"), "seat": seat,
             "key": replayer.keys[seat], "deadline": entry_time(deadline), "before": before}
            for before, when in clocks.reminder_times() if when <= now]


def next_alarm(replayer: LogReplayer, now: int) -> int | None:
    """When the deadline scheduler must next look at this game (ms): a waiting game's acceptance deadline,
    else its next reminder after ``now``, or its deadline; None when nothing is due."""
    recovery = recovery_alarm(replayer)  # an accepted recovery of a seat's key completes then (CONTRACT section 15)
    return _earliest(_clock_alarm(replayer, now), recovery)


def _earliest(*times: int | None) -> int | None:
    known = [when for when in times if when is not None]
    return min(known) if known else None


def _clock_alarm(replayer: LogReplayer, now: int) -> int | None:
    accept_by = replayer.accept_by_ms()
    if accept_by is not None:
        return accept_by  # a waiting game: it expires then unless every seat has accepted
    deadline = replayer.deadline_ms()
    if deadline is None or replayer.clocks is None:
        return None
    later = [when for _before, when in replayer.clocks.reminder_times() if when > now]
    return min([*later, deadline])
