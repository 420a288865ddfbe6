"""What a notification mail says, in words (pure: from an event and the game's public state).

Every mail has a plain-text part and an HTML part (the same words, escaped), names the game, says what
happened and what is expected of the reader, links to the game's page, and — for the reader's turn — holds
a ready block to sign: the unsigned envelope of the position (game, seat, seq, prev) and the command line
that signs a move for it (``referee move <game> '<MOVE>' --key <file> --armor``).
"""

from __future__ import annotations

import html
import json
from typing import Any

RULESET_NAMES = {"towerup": "Tower Up", "fivetowers": "5 Towers"}


def _when(deadline: str | None) -> str:
    return f" Your deadline: {deadline.replace('T', ' ').replace('Z', ' UTC')}." if deadline else ""


def render_event(event: dict[str, Any], *, base_url: str, game: dict[str, Any] | None = None
                 ) -> tuple[str, str, str]:
    """``(subject, text, html)`` of the mail for ``event``; ``game`` is ``GET /games/{id}`` when known."""
    kind = event.get("type")
    game_id = event.get("game", "")
    link = base_url.rstrip("/") + event.get("link", f"/play/games/{game_id}")
    name = RULESET_NAMES.get(((game or {}).get("ruleset") or {}).get("name", ""), "your game")
    seat = event.get("seat")
    seat_name = _seat_name(game, seat)
    lines: list[str]
    if kind == "turn":
        subject = f"Your turn in {name} {game_id}"
        lines = [f"It is your turn in {name} game {game_id} (you are {seat_name})." + _when(event.get("deadline")),
                 "", f"Open the game: {link}", ""]
        lines += ready_block(event, game)
    elif kind == "reminder":
        hours = round(event.get("before", 0) / 3600, 1)
        subject = f"Reminder: your move in {name} {game_id} is due"
        lines = [f"Your move in {name} game {game_id} is due in about {hours:g} hours." + _when(event.get("deadline")),
                 "If your time runs out the referee plays your default move (or you forfeit, as the game says).",
                 "", f"Open the game: {link}", ""]
        lines += ready_block(event, game)
    elif kind == "timeout":
        action = "played your default move" if event.get("action") == "auto_move" else "recorded your forfeit"
        subject = f"Time ran out in {name} {game_id}"
        lines = [f"{seat_name}'s time ran out in {name} game {game_id} (deadline {event.get('deadline')}): "
                 f"the referee {action}.", "", f"Open the game: {link}"]
    elif kind == "started":
        subject = f"{name} {game_id} has started"
        players = ", ".join(s.get("name") or f"seat {s.get('seat')}" for s in event.get("seats", []))
        lines = [f"Every seat has accepted: {name} game {game_id} has started ({players}).", "",
                 f"Open the game: {link}"]
    elif kind == "finished":
        subject = f"{name} {game_id} is over"
        ranks = sorted(event.get("ranks", []), key=lambda r: (r.get("rank") or 0, r.get("seat") or 0))
        lines = [f"{name} game {game_id} is over. Ranks:"]
        for row in ranks:
            note = " (forfeited)" if row.get("forfeited") else ""
            lines.append(f"  {row.get('rank')}. {_seat_name(game, row.get('seat'))}{note}")
        lines += ["", f"Result and replay: {link}/replay", "Anyone can re-check the game offline: "
                  f"{base_url.rstrip('/')}/games/{game_id}/export, then referee verify."]
    elif kind == "tournament_round":
        tournament = event.get("tournament", "")
        where = base_url.rstrip("/") + event.get("tournament_link", f"/tournaments/{tournament}")
        if event.get("bye"):
            subject = f"Round {event.get('round')} of tournament {tournament}: you have a bye"
            lines = [f"Round {event.get('round')} of tournament {tournament} is paired; you have a bye this round.",
                     "", f"Standings: {where}"]
        else:
            subject = f"Round {event.get('round')} of tournament {tournament}: your game {game_id}"
            lines = [f"Round {event.get('round')} of tournament {tournament} is paired: you play game {game_id} in "
                     f"seat {event.get('seat')}.", "Accept it with 32 bytes of your own entropy to start it:", "",
                     f"    referee accept {game_id} --key <your key file>", "", f"Open the game: {link}",
                     f"Standings: {where}"]
    else:
        subject = f"{name} {game_id}: {kind}"
        lines = [f"Event {kind} in {name} game {game_id}.", "", f"Open the game: {link}"]
    text = "\n".join(lines).rstrip() + "\n\n-- \nthe referee (you get this mail because your key registered this " \
                                       "address; remove it with referee contact remove)\n"
    return subject, text, text_to_html(text)


def ready_block(event: dict[str, Any], game: dict[str, Any] | None) -> list[str]:
    """The block for a turn mail: the unsigned envelope of the position and the command that signs it."""
    if not game or game.get("to_move") != event.get("seat"):
        return []
    envelope = {"v": 1, "ctx": "referee/move", "game": event["game"], "seat": event.get("seat"),
                "seq": game.get("seq"), "prev": game.get("head"), "move": "<MOVE>"}
    return ["To play by mail: sign your move for this position and send the block it prints to the referee",
            "(reply to this mail, or to any address of the mail gateway):", "",
            f"    referee move {event['game']} '<MOVE>' --key <your key file> --armor", "",
            "The position you sign for (unsigned envelope):", "",
            "    " + json.dumps(envelope, separators=(", ", ": ")), "",
            "Legal moves: " + f"GET /games/{event['game']}/legal-moves", ""]


def _seat_name(game: dict[str, Any] | None, seat: Any) -> str:
    for row in (game or {}).get("seats", []):
        if row.get("seat") == seat:
            return f"{row.get('name')} (seat {seat})"
    return f"seat {seat}"


def text_to_html(text: str) -> str:
    """The text part as HTML: escaped, links clickable, in a monospaced block for the envelopes."""
    body = []
    for line in text.splitlines():
        escaped = html.escape(line)
        if "http://" in line or "https://" in line:
            url = line[line.find("http"):].split()[0]
            escaped = escaped.replace(html.escape(url), f'<a href="{html.escape(url)}">{html.escape(url)}</a>')
        body.append(escaped)
    return ("<!doctype html><html><body><pre style=\"font-family: ui-monospace, monospace; white-space: pre-wrap\">"
            + "\n".join(body) + "</pre></body></html>\n")
