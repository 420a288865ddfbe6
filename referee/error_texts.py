"""The human part of errors in the reader's language (issue 24): what the API, the mail gateway's replies and
the CLI show. An error's ``code``, ``rule``, ``details`` and the field paths in it never change; only its
``message`` is translated.

Messages come three ways:

* a :class:`referee.i18n.Text` (the services' own errors where they are built as ``Text(msgid, **params)``):
  translated from its msgid and parameters;
* a constant English message: its own msgid;
* a message built elsewhere with its values in it — the engines' refusals (``referee/games`` stays as it is:
  its ruleset version is a hash of its files), the fold's and the services' verdicts: matched against
  :data:`TEMPLATES`, the English with ``%(name)s`` where a value goes, and translated with the same values.

A message that matches nothing stays English (``docs/languages.md`` lists what is covered). Values are
kept as they are — seat numbers, positions, site, card, colour and suit ids are what a move's JSON says —
but a game's status (``finished``, …) is translated.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from .i18n import DEFAULT, N_, Text, gettext

#: the words of a game's status, translated where a message names one (``%(status)s``)
STATUS_WORDS = (N_("waiting"), N_("active"), N_("finished"), N_("aborted"), N_("expired"), N_("cancelled"))

#: 503 ``log/disk_full``: a write below the disk floor (``referee/observability.py``, ``referee/host/diskspace.py``)
DISK_FULL = "the log's disk is nearly full: writes are refused until space is freed (reads go on); try again later"

#: English messages with the values taken out (``%(name)s``), as the engines, the fold and the services build
#: them: the errors players meet (moves refused, signatures and keys, turns, finished games, stale
#: submissions, offers and answers, contacts, bad JSON).
TEMPLATES = (
    # -- the write path: binding, signature, turn, state (referee/games_service, referee/replay/)
    N_("the game is %(status)s; it takes no moves"),
    N_("the game is %(status)s; no vacation to take"),
    N_("the game is %(status)s; it takes no offers"),
    N_("the game is %(status)s; no offer is pending"),
    N_("the game is %(status)s; there is nothing to resign (an unstarted game is aborted, not resigned)"),
    N_("the game is %(status)s, not waiting for acceptances"),
    N_("the game is %(status)s; no result yet"),
    N_("the game is already %(status)s"),
    N_("the game is %(status)s"),
    N_("seat %(seat)s is to move, not seat %(other)s"),
    N_("this game has no clock: there is no vacation to take"),
    N_("the envelope is bound to game %(game)s, not %(other)s"),
    N_("this game has no seat %(seat)s (%(count)s seats)"),
    N_("the signature is not seat %(seat)s's key over this envelope"),
    N_("signed with seat %(other)s's key, not seat %(seat)s's"),
    N_("seat %(seat)s's time ran out at %(time)s; the timeout is logged at position %(position)s"),
    N_("seat %(seat)s's time ran out at %(time)s"),
    N_("this submission is already in the log at position %(position)s"),
    N_("stale seq: the envelope is for seq %(seq)s, but the log is at seq %(tip)s with head %(head)s"),
    N_("stale prev: the envelope's prev %(prev)s is not the log's head; the log is at seq %(tip)s with head "
       "%(head)s"),
    N_("the game is not waiting for acceptances"),
    N_("seat %(seat)s has already accepted"),
    N_("entropy must be 32 bytes of base64url"),
    N_("the game had to be accepted by %(time)s"),
    N_("the game has already started"),
    N_("not every seat has accepted"),
    N_("seat %(seat)s has resigned; the referee moves for it"),
    N_("seat %(seat)s has forfeited; the referee moves for it"),
    N_("a vacation is a positive whole number of seconds"),
    N_("seat %(seat)s has %(left)s s of vacation left, not %(seconds)s"),
    N_("no game %(game)s"),
    N_("the game is over; no more moves are accepted"),
    # -- the players' own decisions (referee/rulings/decisions.py, CONTRACT section 12)
    N_("no offer at position %(offer)s is pending (the pending offer is at position %(pending)s)"),
    N_("no offer at position %(offer)s is pending"),
    N_("no offer at position %(offer)s is pending: it lapsed at position %(position)s, an entry that changed the "
       "position"),
    N_("an offer is one of %(kinds)s, not %(kind)s"),
    N_("seat %(seat)s is no longer in the game"),
    N_("seat %(seat)s's %(kind)s offer (position %(position)s) is pending: one offer at a time"),
    N_("a tournament game cannot be aborted"),
    N_("the game has started: a seat alone may abort it only before it starts; now an abort is an offer the other "
       "seats accept (DC-A1)"),
    N_("every seat has moved: the game can no longer be aborted"),
    N_("only the seat whose move is the last applied one may ask to take it back, and seat %(seat)s's is not"),
    N_("the move at position %(position)s revealed something hidden (%(rule)s): it cannot be taken back"),
    N_("accept is true or false"),
    N_("the offerer does not accept its own offer (accept: false withdraws it)"),
    N_("seat %(seat)s has accepted this offer already"),
    # -- open seats and invitations (referee/games_service/seats.py, referee/replay/lifecycle.py; CONTRACT 14)
    N_("the game was cancelled by its creator"),
    N_("the game is %(status)s, not waiting for its seats"),
    N_("this key holds seat %(seat)s of this game already"),
    N_("this key holds a seat of this game already"),
    N_("seat %(seat)s was given to a key at creation; it is not open"),
    N_("seat %(seat)s is taken already"),
    N_("another seat of this game is called %(name)s"),
    N_("seat %(seat)s was given to a key at creation; it cannot be left (the creator may cancel the game)"),
    N_("the signature is not the joining key's over this envelope"),
    N_("seat %(seat)s is taken with its invitation: invite_sig is not the invitation key's signature over this "
       "envelope"),
    N_("this game was created without a signed request: it has no creator to cancel it"),
    N_("a game is cancelled by its creator: the signature is not the creator's"),
    N_("nobody holds seat %(seat)s"),
    N_("seat %(seat)s is open: it is accepted by taking it"),
    N_("a seat is taken with a name"),
    N_("a game with an open seat is created by a signed request: sign it (field 'creator')"),
    N_("the creator signature is not over {v: 1, ctx: 'referee/create', ...this body}"),
    N_("the game is %(status)s; only a finished game has a rematch"),
    N_("the game is finished but its seed is not revealed yet; ask again in a moment"),
    N_("this key has %(count)s open games waiting for players already (at most %(limit)s): cancel one, or wait "
       "until its seats are taken"),
    # -- tournaments: what a player meets joining or withdrawing (referee/tournaments; the organisers' stay English)
    N_("no tournament %(tournament)s"),
    N_("the envelope is bound to tournament %(tournament)s, not %(other)s"),
    N_("this key is no player of the tournament"),
    N_("this player has joined already"),
    N_("this player has withdrawn already"),
    N_("the registration has closed (the tournament is %(status)s)"),
    N_("the registration has closed"),
    N_("the registration closed at %(time)s"),
    N_("the tournament is not waiting for players"),
    N_("the tournament is %(status)s"),
    N_("the tournament is %(status)s; its certificate comes once it is finished and its seed revealed"),
    N_("max_players (%(count)s) have joined"),
    N_("a join to an open registration carries the player's name (1-64 characters)"),
    N_("another player is called %(name)s; names must differ"),
    N_("the invitation's signature (invite_sig) is missing or not over this envelope by the invitation key"),
    # -- messages
    N_("this signed message is in the game's messages already at position %(position)s; sign a new one (a new "
       "at)"),
    N_("this key holds no seat of the game"),
    N_("game %(game)s is over and archived: it takes no more messages or mutes (its messages are still read)"),
    # -- Tower Up (referee/games/towerup)
    N_("it is seat %(seat)s's turn, not seat %(other)s's"),
    N_("a move must be a JSON object"),
    N_("a build has exactly the fields type, site, color and roof"),
    N_("site, color and roof must be strings"),
    N_("unknown colour %(colour)s; colours are %(colours)s"),
    N_("the start floors must be placed first"),
    N_("there is no site %(site)s on this board"),
    N_("you have no roof left, so you cannot build"),
    N_("site %(site)s is not empty"),
    N_("site %(site)s is not adjacent to any building"),
    N_("a %(colour)s building at %(site)s would be next to the %(same)s building at %(other)s"),
    N_("you have no %(colour)s floor to start a building"),
    N_("cannot pay the %(colour)s building at %(site)s"),
    N_("the roof must go on the new building at %(site)s or on an adjacent building you just raised, not on "
       "%(roof)s"),
    N_("a take has the fields type and slot, and optionally choose and discard"),
    N_("slot must be an integer (0, 1 or 2)"),
    N_("slot must be 0, 1 or 2, not %(slot)s"),
    N_("market slot %(slot)s is empty"),
    N_("card %(card)s has no wildcard and the box supplies every floor: omit choose"),
    N_("card %(card)s needs choose with exactly %(picks)s colour(s) (%(wild)s wildcard(s), %(shortage)s floor(s) "
       "the box cannot supply)"),
    N_("the box has not enough %(colour)s floors left for your choice"),
    N_("you will hold %(total)s floors, at most %(limit)s: omit discard"),
    N_("you would hold %(total)s floors: discard exactly %(excess)s to get down to %(limit)s"),
    N_("discard only positive numbers of floors"),
    N_("you cannot return %(count)s %(colour)s floors; you would hold %(held)s"),
    N_("choose must be a list of colours (%(colours)s)"),
    N_("discard must map colours to whole numbers of floors"),
    N_("a place_start has exactly the fields type and placements"),
    N_("placements must be a non-empty list of {site, color}"),
    N_("each placement has exactly the fields site and color"),
    N_("a placement needs a site id and a colour (%(colours)s)"),
    N_("the start floors are already placed"),
    N_("only %(count)s start floor(s) are left to place"),
    N_("no start floor left is %(colour)s; left: %(left)s"),
    N_("a %(colour)s start floor at %(site)s would be next to the %(same)s building at %(other)s"),
    N_("you may pass only when you can neither build nor take"),
    N_("you have no extra turn to decline"),
    N_("in this game extra turns are mandatory (option extra_turn: \"mandatory\"): take a card or build"),
    N_("a pass has no other field than type"),
    N_("a decline_extra has no other field than type"),
    N_("unknown move type %(type)s; expected place_start, take, build, pass or decline_extra"),
    # -- 5 Towers (referee/games/fivetowers)
    N_("it is seat %(seat)s's turn, not seat %(other)s's"),
    N_("seat must be an integer"),
    N_("bidding is over: the highest bidder builds now"),
    N_("a bid is a number from 0 to %(max)s, the number of cards in the display"),
    N_("a bid must be higher than the current highest bid %(high)s"),
    N_("seat %(seat)s could build at most %(count)s of the display's cards, even with a demolition"),
    N_("the start player must bid (0 is allowed), not pass"),
    N_("no one has won the bidding yet: bid or pass"),
    N_("take exactly %(bid)s cards (your bid), not %(count)s"),
    N_("%(card)s is not in the display"),
    N_("%(card)s is named twice"),
    N_("you have no %(suit)s tower to demolish from"),
    N_("the top of your %(suit)s tower is a spire (0), which may never be demolished"),
    N_("%(value)s cannot go on %(top)s in the %(suit)s tower"),
    N_("nothing can go on the spire (0) of the %(suit)s tower, not even a 9"),
    N_("a bid is {'type': 'bid', 'amount': n} and nothing else"),
    N_("'amount' must be an integer"),
    N_("a pass is {'type': 'pass'} and nothing else"),
    N_("a build is {'type': 'build', 'cards': [...], 'demolish': suit or null}"),
    N_("'cards' must be a list of card ids"),
    N_("'demolish' must be null or a suit id (%(suits)s)"),
    N_("'type' must be 'bid', 'pass' or 'build'"),
    # -- contacts and signed requests bound to no log position (referee/notify/contacts.py)
    N_("the signature is not this key's over the envelope"),
    N_("this signed request was taken already; sign a new one"),
    N_("no contact %(contact)s"),
    N_("this contact belongs to another key"),
    N_("that is not this contact's confirmation code"),
    N_("the signed time is %(skew)s s away from the server's time; sign a fresh request (at most %(fresh)s s off)"),
    # -- a seat's new key (CONTRACT section 15; referee/games_service/keys.py, referee/replay/keys.py)
    N_("new_sig is not the new key's signature over this envelope"),
    N_("the signature is not the new key's over this envelope"),
    N_("a recovery of seat %(seat)s is pending (log position %(position)s)"),
    N_("the game is %(status)s: its seats' keys stay as they are"),
    N_("no offer or recovery at position %(position)s is pending"),
    N_("the seat's own key keeps the seat by declining (accept: false); it does not accept"),
    # -- a tournament player's new key, by the organiser (referee/tournaments/service/submissions.py)
    N_("no player of the tournament has this key now"),
    N_("this tournament has no organiser to move a player's key"),
    N_("the signature is not the organiser's over this envelope"),
    N_("the new key is, or was, a player's key in this tournament"),
    N_("this player has withdrawn: there are no rounds to come"),
    # -- the HTTP layer (werkzeug's own descriptions, the rate limits)
    N_("The requested URL was not found on the server. If you entered the URL manually please check your "
       "spelling and try again."),
    N_("The method is not allowed for the requested URL."),
    N_("send the body as Content-Type: application/json (UTF-8), not %(declared)s"),
    N_("too many requests: at most %(limit)s from one client; retry in %(seconds)s s"),
    # -- a full disk (referee/observability.py; CONTRACT section 13, "A full disk")
    N_("the log's disk is nearly full: writes are refused until space is freed (reads go on); try again later"),
)

#: the problems of a 400 ``request/invalid`` (strict JSON, the body, marshmallow's messages, the schemas')
PROBLEMS = (
    N_("Missing data for required field."),
    N_("Unknown field."),
    N_("Not a valid integer."),
    N_("Not a valid string."),
    N_("Not a valid boolean."),
    N_("Not a valid list."),
    N_("Not a valid email address."),
    N_("Field may not be null."),
    N_("Invalid input type."),
    N_("Invalid value."),
    N_("Must be one of: %(choices)s."),
    N_("String does not match expected pattern."),
    N_("must be 1"),
    N_("must be %(value)s"),
    N_("floats are not allowed"),
    N_("integer outside ±(2**53 - 1)"),
    N_("duplicate key %(key)s"),
    N_("nested deeper than %(depth)s levels"),
    N_("not valid JSON: %(reason)s"),
    N_("the body is empty; send a JSON object"),
    N_("the body starts with a byte-order mark; send UTF-8 without one"),
    # the schemas' problems of open seats (schemas/games.py, schemas/common.py)
    N_("a seat has exactly one of key, invite or open: true"),
    N_("must be true (a seat open to anyone)"),
    N_("only a seat given to a key is a bot"),
    N_("sign with organiser or creator, not both"),
    N_("a recorded game (deck) gives every seat to a key: open seats are for seeded games"),
    N_("must be NFC-normalised (it is signed as sent)"),
)

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


@functools.lru_cache(maxsize=1)
def _patterns() -> tuple[dict[str, str], list[tuple[re.Pattern[str], str]]]:
    """Constant templates by their text, and the others as regular expressions (longest first)."""
    constants: dict[str, str] = {}
    patterns: list[tuple[re.Pattern[str], str]] = []
    for template in dict.fromkeys(TEMPLATES + PROBLEMS):
        if not _PLACEHOLDER.search(template):
            constants[template] = template
            continue
        regex, last, seen = "", 0, set()
        for match in _PLACEHOLDER.finditer(template):
            regex += re.escape(template[last:match.start()])
            name = match.group(1)
            regex += f"(?P={name})" if name in seen else f"(?P<{name}>.+?)"
            seen.add(name)
            last = match.end()
        regex += re.escape(template[last:])
        patterns.append((re.compile(regex, re.S), template))
    patterns.sort(key=lambda item: -len(item[1]))
    return constants, patterns


def _value(name: str, value: str, language: str) -> str:
    return gettext(language, value) if name == "status" and value in STATUS_WORDS else value


def translate_message(message: Any, language: str) -> str:
    """``message`` (English, or a :class:`Text`) in ``language``; English when no template matches it."""
    if language == DEFAULT or not isinstance(message, str):
        return str(message)
    if isinstance(message, Text):
        return message.in_language(language)
    constants, patterns = _patterns()
    if message in constants:
        return gettext(language, message)
    for regex, template in patterns:
        found = regex.fullmatch(message)
        if found:
            values = {name: _value(name, value, language) for name, value in found.groupdict().items()}
            return gettext(language, template) % values
    return gettext(language, message)  # a constant message marked where it is made, else itself


def translate_error(error: dict[str, Any], language: str, message: Any = None) -> dict[str, Any]:
    """The error body ``{"code", "message", "rule"?, "details"?}`` with its message in ``language`` (``message``:
    the original message object, a :class:`Text`, when the caller has it). Only ``message`` changes."""
    if language == DEFAULT:
        return error
    out = dict(error)
    original = message if message is not None else error.get("message")
    problems = (error.get("details") or {}).get("problems")
    if error.get("code") == "request/invalid" and isinstance(problems, list) and str(original) == malformed(problems):
        out["message"] = malformed(problems, language)
    else:
        out["message"] = translate_message(original, language)
    return out


def malformed(problems: list[dict[str, str]], language: str = DEFAULT) -> str:
    """The message of a 400 ``request/invalid`` listing every problem (paths as they are)."""
    listed = "; ".join(f"{p.get('path')}: {translate_message(p.get('problem', ''), language)}" for p in problems)
    text = Text("the request is malformed: %(problems)s", problems=listed)
    return text.in_language(language) if language != DEFAULT else str(text)
