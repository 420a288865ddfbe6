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
========== ================================== ==================================================

``<position>`` is the log position of the entry the event follows from; ``link`` is the game page's path.
"""

from __future__ import annotations

from typing import Any

from ..replay import FINISHED, LogReplayer, Verdict, entry_time


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
                    "seats": [{"seat": i, "name": s.get("name"), "key": s.get("key")}
                              for i, s in enumerate(replayer.created.get("seats", []))]})
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
    return out


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
    accept_by = replayer.accept_by_ms()
    if accept_by is not None:
        return accept_by  # a waiting game: it expires then unless every seat has accepted
    deadline = replayer.deadline_ms()
    if deadline is None or replayer.clocks is None:
        return None
    later = [when for _before, when in replayer.clocks.reminder_times() if when > now]
    return min([*later, deadline])
