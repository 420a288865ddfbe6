"""Playing from a terminal, against any server (``--server``, default ``$REFEREE_SERVER`` or
http://127.0.0.1:8000): ``referee keygen``, ``create``, ``accept``, ``legal-moves`` and ``move``."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import click

from ..protocol.keyfile import encrypt_key
from ..protocol.signing import (
    ACCEPT_CTX,
    CREATE_CTX,
    MOVE_CTX,
    b64url_encode,
    generate_key,
    private_key_b64,
    public_key_b64,
    read_or_create_key_file,
    sign,
)
from ..timecontrol.spec import parse_shorthand
from .client import PASSPHRASE_ENV, _, echo_json, fail, http, load_key, post_at_tip, seat_of, server_option


@click.command()
@click.option("--out", "out", default="player.key", show_default=True, type=click.Path(dir_okay=False))
@click.option("--encrypt", is_flag=True,
              help=f"write a passphrase-encrypted key file (passphrase from ${PASSPHRASE_ENV}, else asked twice); "
                   "the My keys page imports it")
@click.option("--name", help="a label stored in an encrypted key file (the My keys page shows it)")
def keygen(out: str, encrypt: bool, name: str | None) -> None:
    """Write a new Ed25519 private key file (mode 0600) and print its public key."""
    if Path(out).exists():
        raise click.ClickException(_("%(file)s exists; not overwriting a key", file=out))
    if not encrypt:
        key = read_or_create_key_file(out)
        click.echo(public_key_b64(key))
        return
    passphrase = os.environ.get(PASSPHRASE_ENV)
    if passphrase is None:
        passphrase = click.prompt(_("Passphrase for the new key file"), hide_input=True, confirmation_prompt=True,
                                  err=True)
    if not passphrase:
        raise click.ClickException(_("the passphrase is empty"))
    key = generate_key()
    text = encrypt_key(key, passphrase, name=name)
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise click.ClickException(_("%(file)s exists; not overwriting a key", file=out)) from exc
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(text)
    click.echo(public_key_b64(key))


@click.command()
@click.argument("ruleset_name", metavar="RULESET")
@click.option("--seat", "seats", multiple=True, help="NAME=PUBLIC_KEY, in seat order")
@click.option("--invite", "invites", multiple=True, metavar="NAME",
              help="a seat after the --seat ones taken by invitation: prints its link (the seed stays in the link); "
                   "NAME may be empty")
@click.option("--open", "open_seats", multiple=True, metavar="NAME",
              help="a seat after the --seat and --invite ones that anyone may take; NAME may be empty")
@click.option("--key", "key_file", type=click.Path(exists=True, dir_okay=False),
              help="the creator's key file: signs a game with --invite or --open seats")
@click.option("--bot-seat", "bot_seats", multiple=True, metavar="NAME",
              help="the seat NAME (of a --seat) is played by a program: written into the game as bot: true")
@click.option("--options", default="{}", help="options as a JSON object")
@click.option("--deck", help="recorded mode: a JSON list of card ids, top first")
@click.option("--organiser-key", type=click.Path(exists=True, dir_okay=False), help="sign as organiser")
@click.option("--time-control", help="the clock: none, per_move:3d, bank:10d+1d:20d (initial+increment:max) or a "
                                     "JSON object (CONTRACT section 8)")
@click.option("--vacation-days", type=float, help="vacation each seat may take in this game (default 7 with a clock)")
@click.option("--on-timeout", type=click.Choice(["auto_move", "forfeit"]), help="what a timeout does (auto_move)")
@click.option("--max-auto-moves", type=int, help="with auto_move: timeouts in a row that forfeit (default 3)")
@server_option
def create(*, ruleset_name: str, seats: tuple[str, ...], invites: tuple[str, ...], open_seats: tuple[str, ...],
           key_file: str | None, bot_seats: tuple[str, ...], options: str, deck: str | None,
           organiser_key: str | None,
           time_control: str | None, vacation_days: float | None, on_timeout: str | None,
           max_auto_moves: int | None, server: str) -> None:
    """Create a game and print it."""
    spec: dict[str, Any] = {"ruleset": ruleset_name, "seats": [], "options": json.loads(options)}
    if time_control or vacation_days is not None or on_timeout or max_auto_moves is not None:
        try:
            clock = parse_shorthand(time_control) if time_control else dict(spec["options"].get("time_control") or {})
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--time-control") from exc
        if vacation_days is not None:
            clock["vacation"] = round(vacation_days * 86400)
        if on_timeout:
            clock["on_timeout"] = on_timeout
        if max_auto_moves is not None:
            clock["max_auto_moves"] = max_auto_moves
        spec["options"]["time_control"] = clock
    for seat in seats:
        name, _sep, key = seat.partition("=")
        if not key:
            raise click.BadParameter(_("--seat %(seat)s: use NAME=PUBLIC_KEY", seat=repr(seat)))
        spec["seats"].append({"name": unicodedata.normalize("NFC", name), "key": key})  # as the referee stores it
    names = [seat["name"] for seat in spec["seats"]]
    for bot in bot_seats:
        if unicodedata.normalize("NFC", bot) not in names:
            raise click.BadParameter(_("%(bot)s is not the NAME of a --seat", bot=repr(bot)), param_hint="--bot-seat")
        spec["seats"][names.index(unicodedata.normalize("NFC", bot))]["bot"] = True
    invitations = {}
    for kind, names_given in (("invite", invites), ("open", open_seats)):
        for name in names_given:
            seat_spec: dict[str, Any] = {"name": unicodedata.normalize("NFC", name)} if name else {}
            if kind == "invite":
                invitations[len(spec["seats"])] = generate_key()
                seat_spec["invite"] = public_key_b64(invitations[len(spec["seats"])])
            else:
                seat_spec["open"] = True
            spec["seats"].append(seat_spec)
    if not spec["seats"]:
        raise click.MissingParameter(param_type="option", param_hint="'--seat'")
    if (invites or open_seats) and not (key_file or organiser_key):
        raise click.BadParameter(_("a game with open seats is signed by its creator: pass --key"), param_hint="--key")
    if deck:
        spec["deck"] = json.loads(deck)
    if key_file and not organiser_key:
        key = load_key(key_file)
        spec["creator"] = {"key": public_key_b64(key), "sig": sign(key, {"v": 1, "ctx": CREATE_CTX, **spec})}
    if organiser_key:
        key = load_key(organiser_key)
        spec["organiser"] = {"key": public_key_b64(key), "sig": sign(key, {"v": 1, "ctx": "referee/create", **spec})}
    status, body = http("POST", f"{server}/games", spec)
    if status != 201:
        fail(status, body)
    if invites or open_seats:
        # the seed of an invitation travels in the link's fragment only: the server never sees it
        body = {**body, "links": [
            {"seat": index, "open": "invite" if index in invitations else "anyone",
             "link": f"{server}/play/join/{body['game']}"
                     + (f"#{private_key_b64(invitations[index])}" if index in invitations else "")}
            for index, seat_spec in enumerate(spec["seats"]) if "key" not in seat_spec]}
    echo_json(body)


@click.command()
@click.argument("game_id", metavar="GAME")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--seat", type=int, help="seat number (default: the seat of this key)")
@server_option
def accept(game_id: str, key_file: str, seat: int | None, server: str) -> None:
    """Accept a game for a seat, with 32 fresh random bytes of entropy (retries if the log moved)."""
    key = load_key(key_file)

    def envelope_of(game: dict[str, Any]) -> dict[str, Any]:
        return {"v": 1, "ctx": ACCEPT_CTX, "game": game_id, "seat": seat_of(game, public_key_b64(key), seat),
                "seq": game["seq"], "prev": game["head"], "entropy": b64url_encode(os.urandom(32))}

    # another seat may accept meanwhile; an acceptance does not depend on the position
    post_at_tip(f"{server}/games/{game_id}", f"{server}/games/{game_id}/accept", key, envelope_of)


@click.command()
@click.argument("game_id", metavar="GAME")
@click.argument("move_json", metavar="MOVE")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--seat", type=int, help="seat number (default: the seat of this key)")
@click.option("--wait", type=float, default=5.0, show_default=True, help="seconds to wait for the verdict")
@click.option("--armor", is_flag=True, help="print the signed move as an armored block for a mail; do not submit")
@server_option
def move(*, game_id: str, move_json: str, key_file: str, seat: int | None, wait: float, armor: bool,
         server: str) -> None:
    """Sign MOVE (a JSON object) for the current position of GAME, submit it and print the verdict (with
    --armor: print the block to paste into a mail to the referee's mail gateway instead)."""
    try:
        the_move = json.loads(move_json)
    except ValueError as exc:
        raise click.BadParameter(_("MOVE is not JSON: %(error)s", error=exc)) from exc
    key = load_key(key_file)
    status, game = http("GET", f"{server}/games/{game_id}")
    if status != 200:
        fail(status, game)
    chosen = seat_of(game, public_key_b64(key), seat)
    envelope = {"v": 1, "ctx": MOVE_CTX, "game": game_id, "seat": chosen, "seq": game["seq"], "prev": game["head"],
                "move": the_move}
    query = f"?wait={wait}" if wait else ""
    submission = {"envelope": envelope, "sig": sign(key, envelope)}
    if armor:
        from ..notify.armor import armor as armored  # noqa: PLC0415

        click.echo(armored(submission), nl=False)
        return
    status, body = http("POST", f"{server}/games/{game_id}/moves{query}", submission)
    if status >= 300:
        fail(status, body)
    echo_json(body)


@click.command("legal-moves")
@click.argument("game_id", metavar="GAME")
@server_option
def legal_moves(game_id: str, server: str) -> None:
    """Print the legal moves of the seat to move."""
    status, body = http("GET", f"{server}/games/{game_id}/legal-moves")
    if status != 200:
        fail(status, body)
    echo_json(body)
