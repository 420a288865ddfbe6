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

from ..i18n import DEFAULT, N_, translator

RULESET_NAMES = {"towerup": "Tower Up", "fivetowers": "5 Towers"}
#: what an offer would do, in words (CONTRACT section 12)
OFFER_WORDS = {"draw": N_("a draw: every seat still in the game would share first place"),
               "end": N_("to end the game now, scored as it stands (the ruleset's provisional result)"),
               "abort": N_("to abort the game: no result, not rated"),
               "takeback": N_("to take back their last move")}
#: an offer's kind as a noun (``draw``, ``end``, ``abort``, ``takeback``)
OFFER_NAMES = {"draw": N_("draw"), "end": N_("end"), "abort": N_("abort"), "takeback": N_("takeback")}
#: an offer in a subject: "… offers a draw in …"
OFFER_ARTICLES = {"draw": N_("a draw"), "end": N_("a end"), "abort": N_("a abort"), "takeback": N_("a takeback")}
AGREED_WORDS = {"draw": N_("the game is drawn."), "end": N_("the game ended, scored as it stood."),
                "abort": N_("the game is aborted (no result)."),
                "takeback": N_("the move is void and the game goes on from the position before it.")}


def _when(_: Any, deadline: str | None) -> str:
    if not deadline:
        return ""
    return " " + _("Your deadline: %(deadline)s.", deadline=deadline.replace("T", " ").replace("Z", " UTC"))


def render_event(event: dict[str, Any], *, base_url: str, game: dict[str, Any] | None = None,
                 language: str = DEFAULT) -> tuple[str, str, str]:
    """``(subject, text, html)`` of the mail for ``event`` in ``language`` (the contact's: en, de, fr);
    ``game`` is ``GET /games/{id}`` when known."""
    _ = translator(language)
    kind = event.get("type")
    game_id = event.get("game", "")
    link = base_url.rstrip("/") + event.get("link", f"/play/games/{game_id}")
    name = RULESET_NAMES.get(((game or {}).get("ruleset") or {}).get("name", "")) or _("your game")
    seat = event.get("seat")
    seat_name = _seat_name(_, game, seat)
    where = {"name": name, "game": game_id}
    open_game = _("Open the game: %(link)s", link=link)
    lines: list[str]
    if kind == "turn":
        subject = _("Your turn in %(name)s %(game)s", **where)
        lines = [_("It is your turn in %(name)s game %(game)s (you are %(seat)s).", **where, seat=seat_name)
                 + _when(_, event.get("deadline")), "", open_game, ""]
        lines += ready_block(event, game, language)
        lines += pending_offer_block(event, game, language)
    elif kind == "reminder":
        hours = f"{round(event.get('before', 0) / 3600, 1):g}"
        subject = _("Reminder: your move in %(name)s %(game)s is due", **where)
        lines = [_("Your move in %(name)s game %(game)s is due in about %(hours)s hours.", **where, hours=hours)
                 + _when(_, event.get("deadline")),
                 _("If your time runs out the referee plays your default move (or you forfeit, as the game says)."),
                 "", open_game, ""]
        lines += ready_block(event, game, language)
        lines += pending_offer_block(event, game, language)
    elif kind == "timeout":
        subject = _("Time ran out in %(name)s %(game)s", **where)
        if event.get("action") == "auto_move":
            text = _("%(seat)s's time ran out in %(name)s game %(game)s (deadline %(deadline)s): the referee played "
                     "your default move.", **where, seat=seat_name, deadline=event.get("deadline"))
        else:
            text = _("%(seat)s's time ran out in %(name)s game %(game)s (deadline %(deadline)s): the referee "
                     "recorded your forfeit.", **where, seat=seat_name, deadline=event.get("deadline"))
        lines = [text, "", open_game]
    elif kind == "started":
        subject = _("%(name)s %(game)s has started", **where)
        players = ", ".join(s.get("name") or _("seat %(seat)s", seat=s.get("seat")) for s in event.get("seats", []))
        lines = [_("Every seat has accepted: %(name)s game %(game)s has started (%(players)s).", **where,
                   players=players), "", open_game]
    elif kind == "finished":
        subject = _("%(name)s %(game)s is over", **where)
        ranks = sorted(event.get("ranks", []), key=lambda r: (r.get("rank") or 0, r.get("seat") or 0))
        lines = [_("%(name)s game %(game)s is over. Ranks:", **where)]
        for row in ranks:
            note = " " + _("(forfeited)") if row.get("forfeited") else ""
            lines.append(f"  {row.get('rank')}. {_seat_name(_, game, row.get('seat'))}{note}")
        lines += ["", _("Result and replay: %(link)s", link=f"{link}/replay"),
                  _("Anyone can re-check the game offline: %(link)s, then referee verify.",
                    link=f"{base_url.rstrip('/')}/games/{game_id}/export")]
    elif kind == "tournament_round":
        tournament = event.get("tournament", "")
        standings = base_url.rstrip("/") + event.get("tournament_link", f"/tournaments/{tournament}")
        round_of = {"round": event.get("round"), "tournament": tournament}
        if event.get("bye"):
            subject = _("Round %(round)s of tournament %(tournament)s: you have a bye", **round_of)
            lines = [_("Round %(round)s of tournament %(tournament)s is paired; you have a bye this round.",
                       **round_of), "", _("Standings: %(link)s", link=standings)]
        else:
            subject = _("Round %(round)s of tournament %(tournament)s: your game %(game)s", **round_of, game=game_id)
            lines = [_("Round %(round)s of tournament %(tournament)s is paired: you play game %(game)s in seat "
                       "%(seat)s.", **round_of, game=game_id, seat=event.get("seat")),
                     _("Accept it with 32 bytes of your own entropy to start it:"), "",
                     f"    referee accept {game_id} --key " + _("<your key file>"), "", open_game,
                     _("Standings: %(link)s", link=standings)]
    elif kind in ("seated", "left", "cancelled", "rematch"):
        subject, lines = _seat_mail(_, event, where, open_game)
    elif kind in ("offer", "offer_answered", "resigned", "message"):
        subject, lines = _decision_mail(_, language, event, game, name, link)
    elif kind == "recovery":
        subject, lines = _recovery_mail(_, event, game, where, link)
    else:
        subject = f"{name} {game_id}: {kind}"
        lines = [_("Event %(kind)s in %(name)s game %(game)s.", **where, kind=kind), "", open_game]
    text = "\n".join(lines).rstrip() + "\n\n-- \n" + _(
        "the referee (you get this mail because your key registered this address; remove it with referee contact "
        "remove)") + "\n"
    return subject, text, text_to_html(text, language)


def _seat_mail(_: Any, event: dict[str, Any], where: dict[str, Any], open_game: str) -> tuple[str, list[str]]:
    """Subject and lines of an open seat's or a rematch's event (CONTRACT section 14)."""
    kind = event.get("type")
    seat = (event.get("seat") or 0) + 1
    if kind == "seated" and event.get("full"):
        subject = _("Every seat of %(name)s %(game)s is taken", **where)
        lines = [_("%(player)s took seat %(seat)s: every seat of %(name)s game %(game)s is taken now. It starts once "
                   "every seat has accepted.", **where, player=event.get("name") or "?", seat=seat)]
    elif kind == "seated":
        subject = _("%(player)s joined %(name)s %(game)s", **where, player=event.get("name") or "?")
        lines = [_("%(player)s took seat %(seat)s of %(name)s game %(game)s; %(open)s seat(s) still open.", **where,
                   player=event.get("name") or "?", seat=seat, open=event.get("open_seats"))]
    elif kind == "left":
        subject = _("A seat of %(name)s %(game)s is open again", **where)
        lines = [_("The player of seat %(seat)s left %(name)s game %(game)s before it started: the seat is open "
                   "again (%(open)s seat(s) open).", **where, seat=seat, open=event.get("open_seats"))]
    elif kind == "cancelled":
        subject = _("%(name)s %(game)s was cancelled", **where)
        lines = [_("The creator of %(name)s game %(game)s cancelled it before it started.", **where)]
    else:
        of = (event.get("rematch_of") or {}).get("game", "")
        subject = _("Rematch: %(name)s %(game)s", **where)
        lines = [_("Seat %(seat)s asked for a rematch of game %(other)s: %(name)s game %(game)s is made, with the "
                   "seats rotated by one. Accept it to play.", **where, seat=seat, other=of)]
    return subject, [*lines, "", open_game]


def ready_block(event: dict[str, Any], game: dict[str, Any] | None, language: str = DEFAULT) -> list[str]:
    """The block for a turn mail: the unsigned envelope of the position and the command that signs it."""
    if not game or game.get("to_move") != event.get("seat"):
        return []
    _ = translator(language)
    envelope = {"v": 1, "ctx": "referee/move", "game": event["game"], "seat": event.get("seat"),
                "seq": game.get("seq"), "prev": game.get("head"), "move": "<MOVE>"}
    return [_("To play by mail: sign your move for this position and send the block it prints to the referee"),
            _("(reply to this mail, or to any address of the mail gateway):"), "",
            f"    referee move {event['game']} '<MOVE>' --key " + _("<your key file>") + " --armor", "",
            _("The position you sign for (unsigned envelope):"), "",
            "    " + json.dumps(envelope, separators=(", ", ": ")), "",
            _("Legal moves: %(url)s", url=f"GET /games/{event['game']}/legal-moves"), ""]


def _offer(_: Any, kind: str) -> str:
    return _(OFFER_NAMES[kind]) if kind in OFFER_NAMES else kind


def _recovery_mail(_: Any, event: dict[str, Any], game: dict[str, Any] | None, where: dict[str, Any],
                   link: str) -> tuple[str, list[str]]:
    """Subject and lines of the mail of a ``recovery`` event (CONTRACT section 15): to every seat; the holder of the
    seat's key keeps it by declining."""
    who = _seat_name(_, game, event.get("seat"))
    subject = _("Someone asks to take over %(who)s's seat in %(name)s %(game)s", **where, who=who)
    lines = [_("Someone asks to take over your seat in this game — if it is not you, press Decline."),
             _("The request (log position %(position)s) asks to move %(who)s's seat in %(name)s game %(game)s to the "
               "key %(key)s. It completes no earlier than %(when)s, and only if every other seat accepts it; any "
               "move or answer signed by the seat's present key ends it.", **where, who=who,
               position=event.get("position"), key=event.get("new_key"),
               when=str(event.get("not_before", "")).replace("T", " ").replace("Z", " UTC")),
             "", _("Decline or accept on the game's page: %(link)s", link=link), "",
             f"    referee answer {where['game']} {event.get('position')} --decline --key " + _("<your key file>")]
    return subject, lines


def _decision_mail(_: Any, language: str, event: dict[str, Any], game: dict[str, Any] | None, name: str,
                   link: str) -> tuple[str, list[str]]:
    """Subject and lines of the mail of an ``offer``, ``offer_answered``, ``resigned`` or ``message`` event."""
    kind, game_id = event.get("type"), event.get("game", "")
    who = _seat_name(_, game, event.get("seat"))
    where = {"who": who, "name": name, "game": game_id}
    open_game = _("Open the game: %(link)s", link=link)
    if kind == "offer":
        offer = event.get("offer", "")
        what = _(OFFER_WORDS[offer]) if offer in OFFER_WORDS else offer
        if offer == "takeback" and event.get("move") is not None:
            what += " " + _("(the move at log position %(position)s)", position=event["move"])
        article = _(OFFER_ARTICLES[offer]) if offer in OFFER_ARTICLES else offer
        subject = _("%(who)s offers %(offer)s in %(name)s %(game)s", **where, offer=article)
        lines = [_("%(who)s offers %(what)s in %(name)s game %(game)s.", **where, what=what),
                 _("It passes when every other seat still in the game accepts it, and lapses at a decline or the "
                   "next move."), "", _("Answer on the game's page: %(link)s", link=link), ""]
        lines += answer_block(game_id, event.get("position"), language)
    elif kind == "offer_answered":
        offer, outcome = _offer(_, event.get("offer", "")), event.get("outcome", "")
        position = event.get("position")
        if event.get("by") is not None:
            offered = _("%(by)s's %(offer)s offer (log position %(position)s)", by=_seat_name(_, game, event["by"]),
                        offer=offer, position=position)
        else:
            offered = _("the %(offer)s offer (log position %(position)s)", offer=offer, position=position)
        if outcome == "accepted":
            subject = _("%(who)s accepted the %(offer)s offer in %(name)s %(game)s", **where, offer=offer)
            text = _("%(who)s accepted %(offered)s in %(name)s game %(game)s.", **where, offered=offered) + " " + _(
                "It is still pending: the other seats still in the game must accept it too.")
        elif outcome == "declined":
            subject = _("%(who)s declined the %(offer)s offer in %(name)s %(game)s", **where, offer=offer)
            text = _("%(who)s declined %(offered)s in %(name)s game %(game)s.", **where, offered=offered)
        elif outcome == "withdrawn":
            subject = _("%(who)s withdrew the %(offer)s offer in %(name)s %(game)s", **where, offer=offer)
            text = _("%(who)s withdrew their %(offer)s offer (log position %(position)s) in %(name)s game %(game)s.",
                     **where, offer=offer, position=position)
        elif outcome == "agreed":
            raw = event.get("offer", "")
            subject = _("The %(offer)s offer in %(name)s %(game)s was agreed", name=name, game=game_id, offer=offer)
            text = _("Every seat accepted %(offered)s in %(name)s game %(game)s:", name=name, game=game_id,
                     offered=offered) + " " + (_(AGREED_WORDS[raw]) if raw in AGREED_WORDS else _("done."))
        else:
            subject = _("The %(offer)s offer in %(name)s %(game)s lapsed", name=name, game=game_id, offer=offer)
            text = _("%(offered)s in %(name)s game %(game)s lapsed: a move or a resignation came before every seat "
                     "had accepted it.", name=name, game=game_id, offered=offered)
            text = text[:1].upper() + text[1:]
        lines = [text, "", open_game]
    elif kind == "resigned":
        subject = _("%(who)s resigned in %(name)s %(game)s", **where)
        then = (_("The game goes on without them: the referee plays their turns by default moves.")
                if event.get("goes_on") else _("The game is over."))
        lines = [_("%(who)s resigned in %(name)s game %(game)s.", **where) + " " + then, "", open_game]
    else:
        private = event.get("to") is not None
        if private:
            subject = _("A private message from %(who)s in %(name)s %(game)s", **where)
            first = _("%(who)s wrote to you (a private message) in %(name)s game %(game)s:", **where)
        else:
            subject = _("A message from %(who)s in %(name)s %(game)s", **where)
            first = _("%(who)s wrote to everyone in %(name)s game %(game)s:", **where)
        lines = [first, ""]
        lines += ["    " + line for line in str(event.get("text", "")).splitlines()]
        back = f" --to {event.get('seat')}" if private else ""
        lines += ["", open_game, "", _("To answer by mail: sign a message and send the block it prints to the "
                                       "referee (reply to this mail):"), "",
                  f"    referee say {game_id} '" + _("<TEXT>") + f"'{back} --key " + _("<your key file>")
                  + " --armor"]
    return subject, lines


def answer_block(game_id: str, position: Any, language: str = DEFAULT) -> list[str]:
    """How to answer the offer at ``position`` by mail: the command that signs the answer as a block."""
    _ = translator(language)
    key = _("<your key file>")
    return [_("To answer by mail: sign your answer and send the block it prints to the referee (reply to this "
              "mail):"),
            "", f"    referee answer {game_id} {position} --accept --key {key} --armor",
            f"    referee answer {game_id} {position} --decline --key {key} --armor", ""]


def pending_offer_block(event: dict[str, Any], game: dict[str, Any] | None, language: str = DEFAULT) -> list[str]:
    """For a turn mail: the pending offer of the game, and how to answer it by mail (nothing when none is)."""
    pending = ((game or {}).get("decisions") or {}).get("pending")
    if not pending:
        return []
    _ = translator(language)
    kind = pending.get("kind", "")
    if pending.get("seat") == event.get("seat"):
        return [_("Your %(offer)s offer (log position %(position)s) is pending; a move lapses it.",
                  offer=_offer(_, kind), position=pending.get("offer")), ""]
    what = _(OFFER_WORDS[kind]) if kind in OFFER_WORDS else kind
    return [_("Pending: %(who)s offers %(what)s (log position %(position)s). Your move lapses it; or answer it "
              "first.", who=_seat_name(_, game, pending.get("seat")), what=what, position=pending.get("offer")), "",
            *answer_block(event.get("game", ""), pending.get("offer"), language)]


def _seat_name(_: Any, game: dict[str, Any] | None, seat: Any) -> str:
    for row in (game or {}).get("seats", []):
        if row.get("seat") == seat:
            return _("%(name)s (seat %(seat)s)", name=row.get("name"), seat=seat)
    return _("seat %(seat)s", seat=seat)


def render_confirmation(*, key: str, contact_id: str, code: str, link: str, language: str = DEFAULT
                        ) -> tuple[str, str]:
    """``(subject, text)`` of the mail that asks an address to confirm itself (CONTRACT section 11). The line
    ``Confirmation code: …`` stays English in every language: a reply through the mail gateway is read by it."""
    _ = translator(language)
    text = (_("Someone (we hope you) asked the referee to send notices for key %(key)s to this address.", key=key)
            + f"\n\nConfirmation code: {code}\n\n"
            + _("To confirm, open %(link)s and press the button with the code above, or reply to this mail keeping "
                "the code line, or run:", link=link) + "\n\n"
            + f"    referee contact confirm {contact_id} {code} --key " + _("<your key file>") + "\n\n"
            + _("If it was not you, ignore this mail: the address gets nothing more.") + "\n")
    return _("Confirm your address for the referee"), text


def render_webhook_disabled(*, webhook: str, failures: int, contact_id: str, language: str = DEFAULT
                            ) -> tuple[str, str]:
    """``(subject, text)`` of the notice that a webhook was disabled after failing deliveries."""
    _ = translator(language)
    text = (_("The referee disabled your webhook %(webhook)s after %(failures)s failed deliveries in a row.",
              webhook=webhook, failures=failures) + "\n\n"
            + _("See its delivery log (GET /contacts/%(contact)s/deliveries), fix the endpoint, and re-send an event "
                "or register it again to enable it.", contact=contact_id) + "\n")
    return _("Your referee webhook was disabled"), text


def text_to_html(text: str, language: str = DEFAULT) -> str:
    """The text part as HTML: escaped, links clickable, in a monospaced block for the envelopes."""
    body = []
    for line in text.splitlines():
        escaped = html.escape(line)
        if "http://" in line or "https://" in line:
            url = line[line.find("http"):].split()[0]
            escaped = escaped.replace(html.escape(url), f'<a href="{html.escape(url)}">{html.escape(url)}</a>')
        body.append(escaped)
    return (f"<!doctype html><html lang=\"{html.escape(language)}\"><body>"
            "<pre style=\"font-family: ui-monospace, monospace; white-space: pre-wrap\">"
            + "\n".join(body) + "</pre></body></html>\n")
