"""Talking from a terminal (CONTRACT section 12): ``referee say GAME TEXT [--to SEAT …] --key K`` signs a
message for the seat of the key and posts it (printing the referee's receipt); ``referee messages GAME
[--key K]`` prints the game's public messages, and with a key the signed read that adds the private ones
to or from that key's seats."""

from __future__ import annotations

import unicodedata
import urllib.parse

import click

from ..clock import now
from ..protocol.signing import MESSAGE_CTX, MESSAGES_READ_CTX, public_key_b64, sign
from .client import armor_option, echo_armored, echo_json, fail, http, load_key, seat_of, server_option


@click.command()
@click.argument("game_id", metavar="GAME")
@click.argument("text")
@click.option("--to", "to", multiple=True, type=int, metavar="SEAT",
              help="a seat the message is for (repeat for several); without it, everyone reads it")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--seat", type=int, help="seat number (default: the seat of this key)")
@armor_option
@server_option
def say(*, game_id: str, text: str, to: tuple[int, ...], key_file: str, seat: int | None, armor: bool,
        server: str) -> None:
    """Sign TEXT as a message of your seat in GAME and post it: it goes to the game's message stream, not
    its log, so it never makes a move stale. Prints the referee's receipt (with --armor: the block to mail
    to the referee instead)."""
    key = load_key(key_file)
    status, game = http("GET", f"{server}/games/{game_id}")
    if status != 200:
        fail(status, game)
    text = unicodedata.normalize("NFC", text)  # the referee takes the text NFC-normalised, as signed
    envelope = {"v": 1, "ctx": MESSAGE_CTX, "game": game_id, "seat": seat_of(game, public_key_b64(key), seat),
                "text": text, "to": sorted(set(to)) or None, "at": now()}
    submission = {"envelope": envelope, "sig": sign(key, envelope)}
    if armor:
        echo_armored(submission)
        return
    status, body = http("POST", f"{server}/games/{game_id}/messages", submission)
    if status >= 300:
        fail(status, body)
    echo_json(body)


@click.command()
@click.argument("game_id", metavar="GAME")
@click.option("--key", "key_file", type=click.Path(exists=True, dir_okay=False),
              help="read as the seat of this key: also the private messages to it or from it (a signed read)")
@click.option("--since", type=int, default=0, show_default=True, help="messages from this position on")
@server_option
def messages(game_id: str, key_file: str | None, since: int, server: str) -> None:
    """Print the messages of GAME: the public ones, and with --key also your private ones."""
    query: dict[str, str | int] = {"since": since}
    if key_file:
        key = load_key(key_file)
        public, at = public_key_b64(key), now()
        query.update(key=public, at=at, sig=sign(key, {"v": 1, "ctx": MESSAGES_READ_CTX, "game": game_id,
                                                        "key": public, "at": at}))
    status, body = http("GET", f"{server}/games/{game_id}/messages?{urllib.parse.urlencode(query)}")
    if status != 200:
        fail(status, body)
    while body.get("next") is not None:  # every page (the referee gives 100 positions a page): one list
        query.pop("since", None)
        status, page = http("GET", f"{server}/games/{game_id}/messages?"
                                   f"{urllib.parse.urlencode({**query, 'from': body['next']})}")
        if status != 200:
            fail(status, page)
        body = {**page, "messages": body["messages"] + page["messages"], "from": body["from"]}
    echo_json(body)
