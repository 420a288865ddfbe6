"""``referee tournament create|join|start|withdraw|rekey|adjudicate|show|export``: the tournament client commands
(CONTRACT sections 10 and 14), talking to a server like ``referee create``/``accept``. ``create --open`` or
``--invite`` opens the registration (``--invite`` prints the invitation link, its seed only in the fragment);
``join`` takes a tournament id or such a link; ``start`` is the organiser's. The offline check of a
certificate is ``referee verify-tournament`` (``verification.py``)."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import click

from ..protocol.signing import b64url_encode, generate_key, load_private_key, private_key_b64, public_key_b64, sign
from ..timecontrol.spec import parse_shorthand
from .client import _, echo_json, fail, http, load_key, post_at_tip, server_option

#: where an invitation link to a tournament's registration points: ``<server>/play/tournaments/<id>/join#<seed>``
JOIN_LINK = "/play/tournaments/{tournament}/join"


@click.group()
def tournament() -> None:
    """Tournaments: create one, join it, start it, withdraw, decide a game or move a player to a new key as organiser,
    show the standings."""


def _state(server: str, tournament_id: str) -> dict[str, Any]:
    status, state = http("GET", f"{server}/tournaments/{tournament_id}")
    if status != 200:
        fail(status, state)
    return state


def _signed_post(server: str, tournament_id: str, path: str, key: Any, envelope_of: Any) -> None:
    """Sign the envelope for the log's current position and post it, again if the log moved meanwhile."""
    post_at_tip(f"{server}/tournaments/{tournament_id}", f"{server}/tournaments/{tournament_id}/{path}", key,
                envelope_of)


@tournament.command("create")
@click.argument("ruleset_name", metavar="RULESET")
@click.option("--player", "players", multiple=True, help="NAME=PUBLIC_KEY, once per player (at least two, unless "
                                                           "the registration is open)")
@click.option("--open", "open_registration", is_flag=True,
              help="open registration: anyone may join until it is full, closes or the organiser starts it")
@click.option("--invite", "invite_registration", is_flag=True,
              help="registration by invitation link: prints the link (the seed stays in its fragment)")
@click.option("--closes", help="with --open/--invite: when the registration closes (RFC 3339 UTC)")
@click.option("--max-players", type=int, help="with --open/--invite: round 1 is paired when this many have joined")
@click.option("--bot-player", "bot_players", multiple=True, metavar="NAME",
              help="the player NAME (of a --player) is a program: written into the tournament as bot: true")
@click.option("--format", "kind", type=click.Choice(["swiss", "round_robin", "series"]), default="swiss",
              show_default=True)
@click.option("--rounds", type=int, help="rounds (default: per format, docs/tournaments.md)")
@click.option("--table-size", "table_sizes", type=int, multiple=True,
              help="allowed table size (one size N allows N down to the ruleset's minimum); repeatable")
@click.option("--pairing", type=click.IntRange(1, 2),
              help="Swiss at tables of 2: the pairing rule (default 2: of the least-cost pairings, the first in "
                   "the standings' order; 1: the rule before it), docs/tournaments.md")
@click.option("--tie-break", "tie_breaks", multiple=True, help="tie-break id, in order (lot is always last)")
@click.option("--points", help='points by table size, JSON: {"3": [12, 6, 0]}')
@click.option("--round-deadline", type=int, help="seconds from a round's pairing to its deadline")
@click.option("--adjudication", type=click.Choice(["provisional", "organiser"]),
              help="how games unfinished at a deadline end (provisional: the position's score)")
@click.option("--options", default="{}", help="the games' options as a JSON object")
@click.option("--time-control", help="the games' clock: none, per_move:3d, bank:10d+1d:20d or JSON")
@click.option("--organiser-key", type=click.Path(exists=True, dir_okay=False), help="sign as organiser")
@server_option
def create(*, ruleset_name: str, players: tuple[str, ...], bot_players: tuple[str, ...], kind: str, rounds: int | None,
           table_sizes: tuple[int, ...], pairing: int | None, tie_breaks: tuple[str, ...], points: str | None,
           round_deadline: int | None, adjudication: str | None, options: str, time_control: str | None,
           organiser_key: str | None, server: str, open_registration: bool = False,
           invite_registration: bool = False, closes: str | None = None, max_players: int | None = None) -> None:
    """Create a tournament and print its id, commitment and status (and, with --invite, the invitation link)."""
    body: dict[str, Any] = {"ruleset": ruleset_name, "players": [], "format": {"kind": kind},
                            "options": json.loads(options)}
    invitation = None
    if open_registration and invite_registration:
        raise click.BadParameter(_("choose --open or --invite, not both"), param_hint="--invite")
    if open_registration or invite_registration:
        if not organiser_key:
            raise click.BadParameter(_("an open registration is signed by its organiser: pass --organiser-key"),
                                     param_hint="--organiser-key")
        invitation = generate_key() if invite_registration else None
        body["registration"] = {"invite": public_key_b64(invitation)} if invitation else {"open": True}
        if closes:
            body["closes"] = closes
        if max_players is not None:
            body["max_players"] = max_players
    elif closes or max_players is not None:
        raise click.BadParameter(_("--closes and --max-players need --open or --invite"), param_hint="--open")
    for player in players:
        name, _sep, key = player.partition("=")
        if not key:
            raise click.BadParameter(_("--player %(player)s: use NAME=PUBLIC_KEY", player=repr(player)))
        body["players"].append({"name": unicodedata.normalize("NFC", name), "key": key})
    names = [player["name"] for player in body["players"]]
    for bot in bot_players:
        if unicodedata.normalize("NFC", bot) not in names:
            raise click.BadParameter(_("%(bot)s is not the NAME of a --player", bot=repr(bot)),
                                     param_hint="--bot-player")
        body["players"][names.index(unicodedata.normalize("NFC", bot))]["bot"] = True
    if rounds is not None:
        body["format"]["rounds"] = rounds
    if table_sizes:
        body["format"]["table_sizes"] = list(table_sizes)
    if pairing is not None:
        body["format"]["pairing"] = pairing
    if tie_breaks:
        body["tie_breaks"] = list(tie_breaks)
    if points:
        body["points"] = json.loads(points)
    if round_deadline is not None:
        body["round_deadline"] = round_deadline
    if adjudication:
        body["adjudication"] = adjudication
    if time_control:
        try:
            body["options"]["time_control"] = parse_shorthand(time_control)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--time-control") from exc
    if organiser_key:
        key = load_key(organiser_key)
        body["organiser"] = {"key": public_key_b64(key),
                             "sig": sign(key, {"v": 1, "ctx": "referee/tournament", **body})}
    status, answer = http("POST", f"{server}/tournaments", body)
    if status != 201:
        fail(status, answer)
    if invitation is not None:
        # the invitation's seed travels in the link's fragment only: the server never sees it
        answer = {**answer, "link": f"{server}{JOIN_LINK.format(tournament=answer['tournament'])}"
                                    f"#{private_key_b64(invitation)}"}
    echo_json(answer)


def parse_join_link(link: str) -> tuple[str, str, str]:
    """``(server, tournament, seed)`` of a tournament's join link; ``seed`` is ``""`` without a fragment.

    >>> parse_join_link("https://referee.example/play/tournaments/t_abc/join#c2VlZA")
    ('https://referee.example', 't_abc', 'c2VlZA')
    """
    parts = urlsplit(link)
    head, sep, rest = parts.path.rpartition("/play/tournaments/")
    tournament_id, slash, tail = rest.partition("/")
    if not sep or not tournament_id or (slash and tail != "join") or not parts.scheme or not parts.netloc:
        raise click.BadParameter(_("%(link)s is not a tournament's join link (<server>/play/tournaments/<id>/join#"
                                   "<seed>)", link=link), param_hint="TOURNAMENT")
    return f"{parts.scheme}://{parts.netloc}{head}", unquote(tournament_id), unquote(parts.fragment)


@tournament.command("join")
@click.argument("tournament_id", metavar="TOURNAMENT")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--name", help="your name: needed to join an open registration you are not listed in")
@server_option
def join(tournament_id: str, key_file: str, server: str, name: str | None = None) -> None:
    """Join TOURNAMENT (an id, or a join link <server>/play/tournaments/<id>/join#<seed>) as the player of this key,
    with 32 fresh random bytes of entropy; a link's seed signs the invitation (invite_sig)."""
    key = load_key(key_file)
    invitation = None
    if "://" in tournament_id:
        server, tournament_id, seed = parse_join_link(tournament_id)
        if seed:
            try:
                invitation = load_private_key(seed)
            except ValueError as exc:
                raise click.BadParameter(_("this invitation link is not valid: was it copied whole?"),
                                         param_hint="TOURNAMENT") from exc
    extra = {"name": unicodedata.normalize("NFC", name)} if name else {}
    base = f"{server}/tournaments/{tournament_id}"
    for _attempt in range(10):
        state = _state(server, tournament_id)
        envelope = {"v": 1, "ctx": "referee/join", "tournament": tournament_id, "key": public_key_b64(key),
                    "seq": state["seq"], "prev": state["head"], "entropy": b64url_encode(os.urandom(32)), **extra}
        body: dict[str, Any] = {"envelope": envelope, "sig": sign(key, envelope)}
        if invitation is not None:
            body["invite_sig"] = sign(invitation, envelope)
        status, answer = http("POST", f"{base}/join", body)
        if status == 409 and answer.get("error", {}).get("code") == "submission/stale":
            continue
        if status >= 300:
            fail(status, answer)
        echo_json(answer)
        return
    raise click.ClickException(_("the log kept moving; try again"))


@tournament.command("start")
@click.argument("tournament_id", metavar="TOURNAMENT")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the organiser's key")
@server_option
def start(tournament_id: str, key_file: str, server: str) -> None:
    """The organiser closes TOURNAMENT's open registration now: round 1 is paired with whoever has joined."""
    key = load_key(key_file)
    _signed_post(server, tournament_id, "start", key, lambda state: {
        "v": 1, "ctx": "referee/start", "tournament": tournament_id, "seq": state["seq"], "prev": state["head"]})


@tournament.command("withdraw")
@click.argument("tournament_id", metavar="TOURNAMENT")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the player's key, or the organiser's with --player")
@click.option("--player", help="the withdrawing player's public key (when the organiser signs)")
@server_option
def withdraw(tournament_id: str, key_file: str, player: str | None, server: str) -> None:
    """Withdraw a player from TOURNAMENT: paired no more (games already running go on)."""
    key = load_key(key_file)
    who = player or public_key_b64(key)
    _signed_post(server, tournament_id, "withdraw", key, lambda state: {
        "v": 1, "ctx": "referee/withdraw", "tournament": tournament_id, "key": who, "seq": state["seq"],
        "prev": state["head"]})


@tournament.command("rekey")
@click.argument("tournament_id", metavar="TOURNAMENT")
@click.option("--player", required=True, help="the player's public key now")
@click.option("--new-key", "new_key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the key the player moves to (it signs too: the player's new key file)")
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the organiser's key")
@server_option
def rekey(*, tournament_id: str, player: str, new_key_file: str, key_file: str, server: str) -> None:
    """The organiser moves a player of TOURNAMENT to a new key for the rounds to come, signed by the organiser and
    by the new key. Games already paired keep their seats' keys (move those with `referee rekey` or a recovery)."""
    organiser, new = load_key(key_file), load_key(new_key_file)
    post_at_tip(f"{server}/tournaments/{tournament_id}", f"{server}/tournaments/{tournament_id}/rekey", organiser,
                lambda state: {"v": 1, "ctx": "referee/rekey", "tournament": tournament_id, "player": player,
                               "key": public_key_b64(new), "seq": state["seq"], "prev": state["head"]},
                also={"new_sig": new})


@tournament.command("adjudicate")
@click.argument("tournament_id", metavar="TOURNAMENT")
@click.argument("game_id", metavar="GAME")
@click.option("--ranks", required=True, help="each seat's rank, in seat order: 2,1,3")
@click.option("--reason", required=True)
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="the organiser's key")
@server_option
def adjudicate(*, tournament_id: str, game_id: str, ranks: str, reason: str, key_file: str, server: str) -> None:
    """The organiser's decision on GAME of the open round (a tournament adjudicated by the organiser)."""
    key = load_key(key_file)
    try:
        ranked = [int(r) for r in ranks.split(",")]
    except ValueError as exc:
        raise click.BadParameter(_("use comma-separated integers: 2,1,3"), param_hint="--ranks") from exc
    _signed_post(server, tournament_id, "adjudicate", key, lambda state: {
        "v": 1, "ctx": "referee/adjudicate", "tournament": tournament_id, "game": game_id, "ranks": ranked,
        "reason": reason, "seq": state["seq"], "prev": state["head"]})


@tournament.command("show")
@click.argument("tournament_id", metavar="TOURNAMENT")
@click.option("--json", "as_json", is_flag=True, help="print GET /tournaments/{id} as it comes")
@server_option
def show(tournament_id: str, as_json: bool, server: str) -> None:
    """Print the tournament's status, rounds and standings (every tie-break value)."""
    state = _state(server, tournament_id)
    if as_json:
        echo_json(state)
        return
    click.echo(render_state(state))


tournament.add_command(show, name="status")  # the name for it


@tournament.command("export")
@click.argument("tournament_id", metavar="TOURNAMENT")
@click.option("--out", type=click.Path(dir_okay=False), help="write the certificate here (default: stdout)")
@server_option
def export(tournament_id: str, out: str | None, server: str) -> None:
    """Fetch the certificate of a finished tournament (check it with referee verify-tournament)."""
    status, body = http("GET", f"{server}/tournaments/{tournament_id}/export")
    if status != 200:
        fail(status, body)
    if out:
        Path(out).write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
        click.echo(_("wrote %(file)s", file=out))
    else:
        echo_json(body)


def render_state(state: dict[str, Any]) -> str:
    """A tournament as text: header, each round's tables with their ranks, the standings."""
    names = {p["key"]: p["name"] for p in state.get("players", [])}
    fmt = state.get("format") or {}
    lines = [f"Tournament {state['tournament']}: {(state.get('ruleset') or {}).get('name')}, {fmt.get('kind')} of "
             f"{fmt.get('rounds')} rounds, {state['status']} (log seq {state['seq']})"]
    for rnd in state.get("rounds", []):
        lines.append(f"Round {rnd['round']}{' (closed)' if rnd.get('closed') else ''}:")
        for table in rnd["tables"]:
            result = table.get("result")
            seats = ", ".join(f"{names.get(k, k[:8])}" + (f" #{result['ranks'][i]}" if result else "")
                              for i, k in enumerate(table["players"]))
            lines.append(f"  {table['game']}: {seats}" + (f" [{result['method']}]" if result else ""))
        if rnd.get("byes"):
            lines.append("  byes: " + ", ".join(names.get(k, k[:8]) for k in rnd["byes"]))
    lines.append("Standings:")
    for row in state.get("standings", []):
        breaks = ", ".join(f"{k} {v}" for k, v in row["tie_breaks"].items())
        lines.append(f"  {row['rank']}. {row['name']}  {row['points']} points  ({breaks})")
    return "\n".join(lines)
