"""A seat's new key from a terminal (CONTRACT section 15): ``referee rekey`` moves the seats of a key to a new key
(one game, or ``--all`` the key's games not finished), each by a rekey signed by both keys at the log's tip;
``referee recover`` asks, signed by a new key, to take over a seat whose key is lost (the other seats answer it
with ``referee answer GAME RECOVERY --accept|--decline``)."""

from __future__ import annotations

from typing import Any

import click

from ..protocol.signing import RECOVER_CTX, REKEY_CTX, public_key_b64, sign
from .client import _, fail, http, load_key, post_at_tip, server_option

_ATTEMPTS = 10


def _seats_of(game: dict[str, Any], public: str) -> list[int]:
    return [int(row["seat"]) for row in game.get("seats") or [] if row.get("key") == public]


def _rekey_seat(server: str, game_id: str, seat: int, old: Any, new: Any) -> dict[str, Any]:
    """Post one seat's rekey at the log's tip (again when the log moved meanwhile); the receipt, or the error body
    with its status under ``_status``."""
    for _attempt in range(_ATTEMPTS):
        status, game = http("GET", f"{server}/games/{game_id}")
        if status != 200:
            return {**game, "_status": status}
        envelope = {"v": 1, "ctx": REKEY_CTX, "game": game_id, "seat": seat, "key": public_key_b64(new),
                    "seq": game["seq"], "prev": game["head"]}
        status, body = http("POST", f"{server}/games/{game_id}/rekey",
                            {"envelope": envelope, "sig": sign(old, envelope), "new_sig": sign(new, envelope)})
        if status == 409 and body.get("error", {}).get("code") == "submission/stale":
            continue
        return body if status < 300 else {**body, "_status": status}
    return {"error": {"code": "submission/stale", "message": _("the log kept moving; try again")}, "_status": 409}


def _open_games(server: str, public: str) -> list[str]:
    """The games of ``public`` that are not finished (waiting or active), every page of them."""
    games: list[str] = []
    offset: int | None = 0
    while offset is not None:
        status, page = http("GET", f"{server}/players/{public}/games?status=open&offset={offset}&limit=100")
        if status != 200:
            fail(status, page)
        games += [row["game"] for row in page["games"]]
        offset = page.get("next")
    return games


@click.command()
@click.argument("game_id", metavar="[GAME]", required=False)
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the key that holds the seats now")
@click.option("--new-key", "new_key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the key the seats move to (it signs too)")
@click.option("--all", "every", is_flag=True, help="every game of --key that is not finished, instead of GAME")
@click.option("--seat", type=int, help="only this seat of GAME (default: every seat of --key in it)")
@server_option
def rekey(game_id: str | None, *, key_file: str, new_key_file: str, every: bool, seat: int | None,
          server: str) -> None:
    """Move your seats of GAME (or, with --all, of every game of --key not finished) to the key of --new-key:
    one rekey per seat, signed by both keys. From then on only the new key moves for those seats. Prints one line
    per seat as it goes, then a summary; exits 1 if any seat could not be moved."""
    if (game_id is None) == (not every):
        raise click.UsageError(_("name a GAME or say --all"))
    old, new = load_key(key_file), load_key(new_key_file)
    public = public_key_b64(old)
    games = _open_games(server, public) if every else [str(game_id)]
    moved, failed = 0, 0
    for index, game in enumerate(games, start=1):
        status, state = http("GET", f"{server}/games/{game}")
        if status != 200:
            fail(status, state)
        seats = [seat] if seat is not None else _seats_of(state, public)
        if not seats:
            click.echo(_("[%(i)s/%(n)s] %(game)s: this key holds no seat there", i=index, n=len(games), game=game))
            failed += 0 if every else 1
            continue
        for number in seats:
            body = _rekey_seat(server, game, number, old, new)
            if "_status" in body:
                failed += 1
                error = body.get("error") or {}
                click.echo(_("[%(i)s/%(n)s] %(game)s seat %(seat)s: refused: %(code)s %(message)s", i=index,
                             n=len(games), game=game, seat=number, code=error.get("code"),
                             message=error.get("message")))
            else:
                moved += 1
                click.echo(_("[%(i)s/%(n)s] %(game)s seat %(seat)s: moved (log position %(position)s)", i=index,
                             n=len(games), game=game, seat=number, position=body.get("position")))
    click.echo(_("%(moved)s seat(s) moved to %(key)s, %(failed)s refused", moved=moved, key=public_key_b64(new),
                 failed=failed))
    if failed:
        raise click.exceptions.Exit(1)


@click.command()
@click.argument("game_id", metavar="GAME")
@click.option("--seat", type=int, required=True, help="the seat whose key is lost")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the new key, that asks for the seat (it signs)")
@server_option
def recover(game_id: str, *, seat: int, key_file: str, server: str) -> None:
    """Ask to take over SEAT of GAME with a new key, when its key is lost. The other seats still in the game must
    accept (referee answer GAME RECOVERY --accept), and it completes only after the referee's wait
    (REFEREE_RECOVERY_WAIT); any move or answer signed by the seat's old key meanwhile ends it. Prints the
    receipt, with the recovery's position (its id) and not_before."""
    key = load_key(key_file)
    post_at_tip(f"{server}/games/{game_id}", f"{server}/games/{game_id}/recover", key, lambda game: {
        "v": 1, "ctx": RECOVER_CTX, "game": game_id, "seat": seat, "key": public_key_b64(key), "seq": game["seq"],
        "prev": game["head"]}, _ATTEMPTS)
