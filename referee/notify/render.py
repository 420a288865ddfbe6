"""What a notification mail says, in words (pure: from an event and the game's public state).

Every mail has a plain-text part and an HTML part (the same words, escaped), names the game, says what
happened and what is expected of the reader, links to the game's page, and — for the reader's turn — holds
a ready block to sign: the unsigned envelope of the position (game, seat, seq, prev) and the command line
that signs a move for it (``referee move <game> '<MOVE>' --key <file> --armor``), and the pending offer when
there is one, with the command that answers it by mail.

The players' own decisions (CONTRACT section 12) are mailed in words too: an offer (what it would do, and how
to answer it: the page, ``referee answer``, or a block by mail), what became of it (accepted by one seat,
declined, withdrawn, lapsed, agreed), a resignation, and a message (its text, whether it was for everyone or
for the reader only, and how to answer it by mail with ``referee say … --armor``).
"""

from __future__ import annotations

import html
import json
from typing import Any

RULESET_NAMES = {"towerup": "Tower Up", "fivetowers": "5 Towers"}
#: what an offer would do, in words (CONTRACT section 12)
OFFER_WORDS = {"draw": "a draw: every seat still in the game would share first place",
               "end": "to end the game now, scored as it stands (the ruleset's provisional result)",
               "abort": "to abort the game: no result, not rated",
               "takeback": "to take back their last move"}
OUTCOME_WORDS = {"accepted": "accepted", "declined": "declined", "withdrawn": "withdrew",
                 "lapsed": "lapsed", "agreed": "was agreed by every seat"}


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
        lines += pending_offer_block(event, game)
    elif kind == "reminder":
        hours = round(event.get("before", 0) / 3600, 1)
        subject = f"Reminder: your move in {name} {game_id} is due"
        lines = [f"Your move in {name} game {game_id} is due in about {hours:g} hours." + _when(event.get("deadline")),
                 "If your time runs out the referee plays your default move (or you forfeit, as the game says).",
                 "", f"Open the game: {link}", ""]
        lines += ready_block(event, game)
        lines += pending_offer_block(event, game)
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
    elif kind in ("offer", "offer_answered", "resigned", "message"):
        subject, lines = _decision_mail(event, game, name, link)
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


def _decision_mail(event: dict[str, Any], game: dict[str, Any] | None, name: str, link: str
                   ) -> tuple[str, list[str]]:
    """Subject and lines of the mail of an ``offer``, ``offer_answered``, ``resigned`` or ``message`` event."""
    kind, game_id = event.get("type"), event.get("game", "")
    who = _seat_name(game, event.get("seat"))
    if kind == "offer":
        offer = event.get("offer", "")
        what = OFFER_WORDS.get(offer, offer)
        if offer == "takeback" and event.get("move") is not None:
            what += f" (the move at log position {event['move']})"
        subject = f"{who} offers {'a draw' if offer == 'draw' else 'a ' + offer} in {name} {game_id}"
        lines = [f"{who} offers {what} in {name} game {game_id}.",
                 "It passes when every other seat still in the game accepts it, and lapses at a decline or the next "
                 "move.", "", f"Answer on the game's page: {link}", ""]
        lines += answer_block(game_id, event.get("position"))
    elif kind == "offer_answered":
        offer, outcome = event.get("offer", ""), event.get("outcome", "")
        offered = f"{_seat_name(game, event.get('by'))}'s {offer} offer" if event.get("by") is not None \
            else f"the {offer} offer"
        offered += f" (log position {event.get('position')})"
        if outcome in ("accepted", "declined", "withdrawn"):
            subject = f"{who} {OUTCOME_WORDS[outcome]} the {offer} offer in {name} {game_id}"
            text = f"{who} {OUTCOME_WORDS[outcome]} {offered} in {name} game {game_id}."
            if outcome == "accepted":
                text += " It is still pending: the other seats still in the game must accept it too."
            elif outcome == "withdrawn":
                text = f"{who} withdrew their {offer} offer (log position {event.get('position')}) in {name} game " \
                       f"{game_id}."
        elif outcome == "agreed":
            subject = f"The {offer} offer in {name} {game_id} was agreed"
            text = f"Every seat accepted {offered} in {name} game {game_id}: " + {
                "draw": "the game is drawn.", "end": "the game ended, scored as it stood.",
                "abort": "the game is aborted (no result).",
                "takeback": "the move is void and the game goes on from the position before it."}.get(offer, "done.")
        else:
            subject = f"The {offer} offer in {name} {game_id} lapsed"
            text = f"{offered[0].upper() + offered[1:]} in {name} game {game_id} lapsed: a move or a resignation " \
                   "came before every seat had accepted it."
        lines = [text, "", f"Open the game: {link}"]
    elif kind == "resigned":
        subject = f"{who} resigned in {name} {game_id}"
        then = ("The game goes on without them: the referee plays their turns by default moves."
                if event.get("goes_on") else "The game is over.")
        lines = [f"{who} resigned in {name} game {game_id}. {then}", "", f"Open the game: {link}"]
    else:
        private = event.get("to") is not None
        subject = f"{'A private message' if private else 'A message'} from {who} in {name} {game_id}"
        lines = [f"{who} wrote {'to you (a private message)' if private else 'to everyone'} in {name} game "
                 f"{game_id}:", ""]
        lines += ["    " + line for line in str(event.get("text", "")).splitlines()]
        back = f" --to {event.get('seat')}" if private else ""
        lines += ["", f"Open the game: {link}", "", "To answer by mail: sign a message and send the block it prints to "
                  "the referee (reply to this mail):", "",
                  f"    referee say {game_id} '<TEXT>'{back} --key <your key file> --armor"]
    return subject, lines


def answer_block(game_id: str, position: Any) -> list[str]:
    """How to answer the offer at ``position`` by mail: the command that signs the answer as a block."""
    return ["To answer by mail: sign your answer and send the block it prints to the referee (reply to this mail):",
            "", f"    referee answer {game_id} {position} --accept --key <your key file> --armor",
            f"    referee answer {game_id} {position} --decline --key <your key file> --armor", ""]


def pending_offer_block(event: dict[str, Any], game: dict[str, Any] | None) -> list[str]:
    """For a turn mail: the pending offer of the game, and how to answer it by mail (nothing when none is)."""
    pending = ((game or {}).get("decisions") or {}).get("pending")
    if not pending:
        return []
    kind = pending.get("kind", "")
    if pending.get("seat") == event.get("seat"):
        return [f"Your {kind} offer (log position {pending.get('offer')}) is pending; a move lapses it.", ""]
    return [f"Pending: {_seat_name(game, pending.get('seat'))} offers {OFFER_WORDS.get(kind, kind)} (log position "
            f"{pending.get('offer')}). Your move lapses it; or answer it first.", "",
            *answer_block(event.get("game", ""), pending.get("offer"))]


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
