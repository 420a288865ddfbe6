"""Open seats from a terminal (CONTRACT section 14): ``referee join LINK`` takes a seat by an invitation link
(``<server>/play/join/<game>#<seed>``) or the first seat open to anyone; ``leave`` gives a taken seat up before
the start, ``cancel`` is the creator's, ``rematch`` asks a finished game's rematch for a key's seat.
``referee create --invite/--open`` (``games.py``) makes such games and prints their links."""

from __future__ import annotations

import os
import time
import unicodedata
from typing import Any
from urllib.parse import unquote, urlsplit

import click

from ..clock import now
from ..protocol.signing import CANCEL_CTX, LEAVE_CTX, SEAT_CTX, b64url_encode, load_private_key, public_key_b64, sign
from ..rulings.rematch import REMATCH_CTX
from .client import _, echo_json, http, load_key, post_at_tip, seat_of, server_option

JOIN_PATH = "/play/join/"


def parse_link(link: str) -> tuple[str, str, str]:
    """``(server, game, seed)`` of an invitation link; ``seed`` is ``""`` for a link without a fragment.

    >>> parse_link("https://referee.example/play/join/g1#c2VlZA")
    ('https://referee.example', 'g1', 'c2VlZA')
    """
    parts = urlsplit(link)
    head, sep, game = parts.path.rpartition(JOIN_PATH)
    if not sep or not game or "/" in game or not parts.scheme or not parts.netloc:
        raise click.BadParameter(_("%(link)s is not a join link (<server>/play/join/<game>#<seed>)", link=link),
                                 param_hint="LINK")
    return f"{parts.scheme}://{parts.netloc}{head}", unquote(game), unquote(parts.fragment)


def refused(status: int, body: Any) -> None:
    """Say in words why the server refused (its message is in the terminal's language) and exit non-zero."""
    error = body.get("error", {}) if isinstance(body, dict) else {}
    click.echo(_("refused: %(message)s (%(code)s)", message=error.get("message", status),
                 code=error.get("code", f"http/{status}")), err=True)
    raise click.exceptions.Exit(1 if status < 500 else 2)


def chosen_seat(game: dict[str, Any], created: dict[str, Any], seed: str) -> int:
    """The seat a join link offers: the invitation's whose key is the seed's, else the first open to anyone."""
    if seed:
        try:
            invite = public_key_b64(load_private_key(seed))
        except ValueError:
            invite = None
        for index, seat in enumerate(created.get("seats") or []):
            if invite and isinstance(seat, dict) and seat.get("invite") == invite:
                return index
        raise click.ClickException(_("this invitation link is not valid for this game: was it copied whole?"))
    for seat in game["seats"]:
        if seat.get("open") == "anyone" and not seat.get("taken"):
            return int(seat["seat"])
    if any(seat.get("open") == "anyone" for seat in game["seats"]):
        raise click.ClickException(_("every seat open to anyone is taken"))
    raise click.ClickException(_("this game's seats are by invitation: use the link you were sent"))


@click.command()
@click.argument("link")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--name", help="your name in the game (default: the seat's name given at creation)")
def join(link: str, key_file: str, name: str | None) -> None:
    """Take the seat a join LINK offers (its invitation, else the first seat open to anyone), with 32 fresh random
    bytes of entropy, and print the referee's receipt."""
    server, game_id, seed = parse_link(link)
    key = load_key(key_file)
    status, game = http("GET", f"{server}/games/{game_id}")
    if status != 200:
        refused(status, game)
    status, page = http("GET", f"{server}/games/{game_id}/log?from=0&limit=1")
    if status != 200:
        refused(status, page)
    created = (page.get("entries") or [{}])[0]
    if game["status"] != "waiting":
        refused(409, {"error": {"code": f"game/{game['status']}" if game["status"] in ("cancelled", "expired")
                                else "game/not_waiting",
                                "message": _("the game is %(status)s", status=_(game["status"]))}})
    seat = chosen_seat(game, created, seed)
    declared = (created.get("seats") or [{}] * (seat + 1))[seat]
    name = unicodedata.normalize("NFC", name or declared.get("name") or "")
    if not name:
        raise click.BadParameter(_("your name, please (--name): the other players see it"), param_hint="--name")
    invite = load_private_key(seed) if seed else None
    for _attempt in range(10):
        status, state = http("GET", f"{server}/games/{game_id}")
        if status != 200:
            refused(status, state)
        envelope = {"v": 1, "ctx": SEAT_CTX, "game": game_id, "seat": seat, "key": public_key_b64(key), "name": name,
                    "entropy": b64url_encode(os.urandom(32)), "seq": state["seq"], "prev": state["head"], "at": now()}
        body = {"envelope": envelope, "sig": sign(key, envelope)}
        if invite is not None:
            body["invite_sig"] = sign(invite, envelope)
        status, answer = http("POST", f"{server}/games/{game_id}/seat", body)
        if status == 409 and answer.get("error", {}).get("code") == "submission/stale":
            continue
        if status >= 300:
            refused(status, answer)
        click.echo(_("seat %(seat)s of game %(game)s is yours, %(name)s", seat=seat, game=game_id, name=name),
                   err=True)
        echo_json(answer)
        return
    raise click.ClickException(_("the log kept moving; try again"))


@click.command()
@click.argument("game_id", metavar="GAME")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--seat", type=int, help="seat number (default: the seat of this key)")
@server_option
def rematch(game_id: str, key_file: str, seat: int | None, server: str) -> None:
    """Ask the rematch of a finished GAME for the seat of this key; print the new game (a second ask, by any
    seat, gets the same game)."""
    key = load_key(key_file)
    status, game = http("GET", f"{server}/games/{game_id}")
    if status != 200:
        refused(status, game)
    envelope = {"v": 1, "ctx": REMATCH_CTX, "game": game_id, "seat": seat_of(game, public_key_b64(key), seat),
                "at": now()}
    ask = {"envelope": envelope, "sig": sign(key, envelope)}
    for attempt in range(6):
        status, answer = http("POST", f"{server}/games/{game_id}/rematch", ask)
        # a game just finished by a move has its seed revealed by the replay worker a moment later
        if attempt == 5 or status != 409 or answer.get("error", {}).get("code") != "game/not_revealed":
            break
        time.sleep(1)
    if status >= 300:
        refused(status, answer)
    if status == 200:
        click.echo(_("the rematch %(game)s existed already", game=answer["game"]), err=True)
    else:
        click.echo(_("the rematch is %(game)s", game=answer["game"]), err=True)
    echo_json(answer)


@click.command()
@click.argument("game_id", metavar="GAME")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--seat", type=int, help="seat number (default: the seat of this key)")
@server_option
def leave(game_id: str, key_file: str, seat: int | None, server: str) -> None:
    """Give up an open seat this key took, before the game starts."""
    key = load_key(key_file)

    def envelope_of(game: dict[str, Any]) -> dict[str, Any]:
        return {"v": 1, "ctx": LEAVE_CTX, "game": game_id, "seat": seat_of(game, public_key_b64(key), seat),
                "seq": game["seq"], "prev": game["head"], "at": now()}

    post_at_tip(f"{server}/games/{game_id}", f"{server}/games/{game_id}/leave", key, envelope_of)


@click.command()
@click.argument("game_id", metavar="GAME")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the creator's key file")
@server_option
def cancel(game_id: str, key_file: str, server: str) -> None:
    """Cancel a game this key created (with open seats) that has not started."""
    key = load_key(key_file)

    def envelope_of(game: dict[str, Any]) -> dict[str, Any]:
        return {"v": 1, "ctx": CANCEL_CTX, "game": game_id, "seq": game["seq"], "prev": game["head"], "at": now()}

    post_at_tip(f"{server}/games/{game_id}", f"{server}/games/{game_id}/cancel", key, envelope_of)
