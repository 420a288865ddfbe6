"""The players' own decisions from a terminal (CONTRACT section 12): ``referee resign``, ``referee offer`` and
``referee answer``, each signed at the log's tip like ``referee move`` (``client.post_at_tip``); with
``--armor`` each prints the signed block for a mail to the mail gateway instead (``client.armor_at_tip``)."""

from __future__ import annotations

from typing import Any

import click

from ..protocol.signing import ANSWER_CTX, OFFER_CTX, RESIGN_CTX, public_key_b64
from ..rulings.decisions import OFFER_KINDS
from .client import _, armor_at_tip, armor_option, fail, http, load_key, post_at_tip, seat_of, server_option

_key_option = click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
_seat_option = click.option("--seat", type=int, help="seat number (default: the seat of this key)")


@click.command()
@click.argument("game_id", metavar="GAME")
@_key_option
@_seat_option
@armor_option
@server_option
def resign(game_id: str, key_file: str, seat: int | None, armor: bool, server: str) -> None:
    """Resign GAME, whoever is to move: with two seats left the other wins; with more you rank below every
    seat still in the game and the referee plays your turns by default moves. Prints the signed receipt
    (with --armor: the block to mail to the referee instead)."""
    key = load_key(key_file)

    def envelope_of(game: dict[str, Any]) -> dict[str, Any]:
        return {"v": 1, "ctx": RESIGN_CTX, "game": game_id, "seat": seat_of(game, public_key_b64(key), seat),
                "seq": game["seq"], "prev": game["head"]}

    if armor:
        armor_at_tip(f"{server}/games/{game_id}", key, envelope_of)
        return
    post_at_tip(f"{server}/games/{game_id}", f"{server}/games/{game_id}/resign", key, envelope_of)


@click.command()
@click.argument("game_id", metavar="GAME")
@click.argument("kind", metavar="KIND", type=click.Choice(OFFER_KINDS))
@_key_option
@_seat_option
@armor_option
@server_option
def offer(game_id: str, kind: str, *, key_file: str, seat: int | None, armor: bool, server: str) -> None:
    """Offer the other seats of GAME a draw, an end (scored as it stands), an abort (before every seat has
    moved) or a take-back of your last move (when it revealed nothing). The answer's ``position`` is the
    offer's id, which the others answer with ``referee answer`` (with --armor: prints the block to mail to
    the referee instead)."""
    key = load_key(key_file)

    def envelope_of(game: dict[str, Any]) -> dict[str, Any]:
        return {"v": 1, "ctx": OFFER_CTX, "game": game_id, "seat": seat_of(game, public_key_b64(key), seat),
                "seq": game["seq"], "prev": game["head"], "offer": kind}

    if armor:
        armor_at_tip(f"{server}/games/{game_id}", key, envelope_of)
        return
    post_at_tip(f"{server}/games/{game_id}", f"{server}/games/{game_id}/offers", key, envelope_of)


@click.command()
@click.argument("game_id", metavar="GAME")
@click.argument("position", metavar="[OFFER]", type=int, required=False)
@click.option("--accept/--decline", "accept", default=None,
              help="accept the offer, or decline it (the offerer's own --decline withdraws it); one is required")
@_key_option
@_seat_option
@armor_option
@server_option
def answer(game_id: str, position: int | None, *, accept: bool | None, key_file: str, seat: int | None,
           armor: bool, server: str) -> None:
    """Answer the offer at log position OFFER of GAME (default: the pending offer, else the one pending recovery of a
    seat's key). When yours is the last acceptance an offer needs, the referee records the agreement at once; a
    recovery completes after its wait, and the seat's own key declining it keeps the seat (with --armor: prints
    the block to mail to the referee instead)."""
    if accept is None:
        raise click.UsageError(_("say --accept or --decline"))
    key = load_key(key_file)
    if position is None:
        status, game = http("GET", f"{server}/games/{game_id}")
        if status != 200:
            fail(status, game)
        decisions = game.get("decisions") or {}
        pending = decisions.get("pending")
        recoveries = decisions.get("recoveries") or []
        if pending is not None:
            position = int(pending["offer"])
        elif len(recoveries) == 1:  # a recovery of a seat's key (CONTRACT section 15) is answered the same way
            position = int(recoveries[0]["recovery"])
        else:
            raise click.ClickException(_("no offer is pending in game %(game)s", game=game_id))

    def envelope_of(game: dict[str, Any]) -> dict[str, Any]:
        return {"v": 1, "ctx": ANSWER_CTX, "game": game_id, "seat": seat_of(game, public_key_b64(key), seat),
                "seq": game["seq"], "prev": game["head"], "offer": position, "accept": accept}

    if armor:
        armor_at_tip(f"{server}/games/{game_id}", key, envelope_of)
        return
    post_at_tip(f"{server}/games/{game_id}", f"{server}/games/{game_id}/offers/{position}/answer", key, envelope_of)
