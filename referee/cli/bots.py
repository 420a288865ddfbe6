"""``referee bot``: a computer player that is an ordinary client (``docs/bots.md``).

It holds its own key and signs everything it submits, exactly like ``referee accept``, ``move`` and
``answer``: the referee gives it no privilege and cannot tell it from a person. It polls the lobby
(``GET /games``) for the games its key is seated in, with a backoff while nothing happens, and

* joins a waiting tournament its key is a player of (``GET /players/{key}/tournaments``; a signed join with
  32 fresh random bytes of entropy, as ``referee tournament join``), whose games then come to the lobby;
* accepts a game it is invited to (32 fresh random bytes of entropy, as ``referee accept``);
* plays its seat when it is to move: it rebuilds a game from the public state of ``GET /games/{id}``
  (:func:`referee.games.bots.from_view`: the hidden cards sampled, never read), chooses with the strategy
  and checks the choice against ``GET /games/{id}/legal-moves`` (the referee's word; if they disagree, for
  example after an engine upgrade, it plays a random move of that list);
* answers offers (``POLICY``): declines every take-back; accepts a draw, an end or an abort only when it is
  behind by the provisional result (its total below the best other total), else declines;
* survives the referee going away (connection errors and 5xx answers: it waits, up to 30 s, and retries);
* stops on Ctrl-C with exit status 0, after a last line.
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

import click

from ..games import ruleset
from ..games.bots import STRATEGIES, choose, from_view, standing
from ..protocol.signing import ACCEPT_CTX, ANSWER_CTX, MOVE_CTX, b64url_encode, public_key_b64, sign
from ..tournaments.log import JOIN_CTX
from .client import _, http, load_key, server_option

POLICY = {
    "takeback": "decline, always",
    "draw": "accept only when behind by the provisional result",
    "end": "accept only when behind by the provisional result",
    "abort": "accept only when behind by the provisional result",
}
MAX_BACKOFF = 30.0
LOBBY_PAGES = 10


class Unreachable(Exception):
    """The referee did not answer, or answered with a server error."""


def _get(url: str) -> Any:
    try:
        status, body = http("GET", url)
    except (click.ClickException, OSError) as exc:
        raise Unreachable(str(exc)) from exc
    if status >= 500:
        raise Unreachable(f"GET {url}: {status}")
    return status, body


def _post(url: str, key: Any, envelope: dict[str, Any]) -> tuple[int, Any]:
    try:
        status, body = http("POST", url, {"envelope": envelope, "sig": sign(key, envelope)})
    except (click.ClickException, OSError) as exc:
        raise Unreachable(str(exc)) from exc
    if status >= 500:
        raise Unreachable(f"POST {url}: {status}")
    return status, body


class Bot:
    """One key's bot against one server. :meth:`tick` does one round of work and says whether it did any."""

    def __init__(self, server: str, key: Any, strategy: str, think: float, *, say: Any = click.echo):
        self.server = server.rstrip("/")
        self.key = key
        self.public = public_key_b64(key)
        self.strategy = strategy
        self.think = think
        self.say = say
        self.finished: set[str] = set()
        self.entered: set[str] = set()  # tournaments joined, or past their waiting
        self.failed: set[tuple[str, int]] = set()  # (game, seq) where the referee refused our choice

    def _paged(self, path: str, field: str) -> list[dict[str, Any]]:
        """Every item of ``field`` over the pages of ``GET path`` (at most ``LOBBY_PAGES`` of 100)."""
        items: list[dict[str, Any]] = []
        offset: int | None = 0
        for _page in range(LOBBY_PAGES):
            if offset is None:
                break
            status, body = _get(f"{self.server}{path}?offset={offset}&limit=100")
            if status != 200:
                raise Unreachable(f"GET {path}: {status}")
            items += body[field]
            offset = body.get("next")
        return items

    def my_games(self) -> list[dict[str, Any]]:
        return [game for game in self._paged("/games", "games")
                if any(s["key"] == self.public for s in game["seats"])]

    def my_tournaments(self) -> list[dict[str, Any]]:
        return self._paged(f"/players/{self.public}/tournaments", "tournaments")

    def join_tournaments(self) -> bool:
        """Join every waiting tournament this key is a player of and has not joined yet."""
        worked = False
        for summary in self.my_tournaments():
            tournament_id = summary["tournament"]
            if tournament_id in self.entered:
                continue
            if summary["status"] != "waiting":
                self.entered.add(tournament_id)
                continue
            status, state = _get(f"{self.server}/tournaments/{tournament_id}")
            me = next((p for p in state.get("players", ()) if p["key"] == self.public), None) \
                if status == 200 else None
            if me is None or me["joined"]:
                self.entered.add(tournament_id)
                continue
            envelope = {"v": 1, "ctx": JOIN_CTX, "tournament": tournament_id, "key": self.public,
                        "seq": state["seq"], "prev": state["head"], "entropy": b64url_encode(os.urandom(32))}
            status, body = _post(f"{self.server}/tournaments/{tournament_id}/join", self.key, envelope)
            if status < 300:
                self.entered.add(tournament_id)
            self.say(f"tournament {tournament_id}: joins" + ("" if status < 300 else f" — refused: {_error(body)}"))
            worked = True
        return worked

    def tick(self) -> bool:
        worked = self.join_tournaments()
        for summary in self.my_games():
            game_id = summary["game"]
            if game_id in self.finished:
                continue
            if summary["status"] in ("finished", "aborted"):
                self.finished.add(game_id)
                self.say(f"{game_id}: {summary['status']}")
                continue
            worked = self.handle(game_id) or worked
        return worked

    def handle(self, game_id: str) -> bool:
        status, game = _get(f"{self.server}/games/{game_id}")
        if status != 200:
            return False
        mine = [s["seat"] for s in game["seats"] if s["key"] == self.public]
        if game["status"] == "waiting":
            for seat in mine:
                if not next(s for s in game["seats"] if s["seat"] == seat)["accepted"]:
                    return self.accept(game, seat)
            return False
        if game["status"] != "active":
            return False
        pending = (game.get("decisions") or {}).get("pending")
        if pending is not None:
            for seat in mine:
                if seat != pending["seat"] and seat not in pending["accepted"]:
                    return self.answer(game, seat, pending)
        if game["to_move"] in mine and not game.get("blocked"):
            return self.play(game, game["to_move"])
        return False

    def accept(self, game: dict[str, Any], seat: int) -> bool:
        envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game["game"], "seat": seat, "seq": game["seq"],
                    "prev": game["head"], "entropy": b64url_encode(os.urandom(32))}
        status, body = _post(f"{self.server}/games/{game['game']}/accept", self.key, envelope)
        self.say(f"{game['game']}: seat {seat} accepts" + ("" if status < 300 else f" — refused: {_error(body)}"))
        return True

    def answer(self, game: dict[str, Any], seat: int, pending: dict[str, Any]) -> bool:
        kind = pending["kind"]
        behind = False
        if kind != "takeback":
            rules = ruleset(game["ruleset"]["name"])
            rebuilt = from_view(rules, game["state"], random.Random(0))
            behind = standing(rebuilt.provisional_result(), seat) < 0
        accept = behind and kind != "takeback"
        envelope = {"v": 1, "ctx": ANSWER_CTX, "game": game["game"], "seat": seat, "seq": game["seq"],
                    "prev": game["head"], "offer": pending["offer"], "accept": accept}
        status, body = _post(f"{self.server}/games/{game['game']}/offers/{pending['offer']}/answer", self.key,
                             envelope)
        verdict = "accepts" if accept else "declines"
        self.say(f"{game['game']}: seat {seat} {verdict} seat {pending['seat']}'s {kind} offer"
                 + ("" if status < 300 else f" — refused: {_error(body)}"))
        return True

    def play(self, game: dict[str, Any], seat: int) -> bool:
        game_id = game["game"]
        status, legal = _get(f"{self.server}/games/{game_id}/legal-moves")
        if status != 200 or legal.get("seq") != game["seq"] or legal.get("to_move") != seat:
            return False  # the log moved meanwhile: next tick
        moves: list[dict[str, Any]] = legal["moves"]
        if not moves:
            return False
        started = time.monotonic()
        rng = random.Random(os.urandom(16))
        move: dict[str, Any] | None = None
        if (game_id, game["seq"]) not in self.failed:
            try:
                rebuilt = from_view(ruleset(game["ruleset"]["name"]), game["state"], rng)
                move = choose(rebuilt, seat, self.strategy, seed=rng.getrandbits(64),
                              budget_s=self.think if self.strategy == "mcts" else None, clock=time.monotonic)
            except (KeyError, ValueError, TypeError) as exc:  # a state this engine cannot rebuild
                self.say(f"{game_id}: cannot rebuild the position ({exc}); playing a listed move")
        if move is None or move not in moves:
            move = rng.choice(moves)
        envelope = {"v": 1, "ctx": MOVE_CTX, "game": game_id, "seat": seat, "seq": game["seq"], "prev": game["head"],
                    "move": move}
        status, body = _post(f"{self.server}/games/{game_id}/moves?wait=5", self.key, envelope)
        took = time.monotonic() - started
        if status >= 300 and _error(body) != "submission/stale":
            self.failed.add((game_id, game["seq"]))
        refused = ("" if status < 300 else " — the log moved first; again" if _error(body) == "submission/stale"
                   else f" — refused: {_error(body)}")
        self.say(f"{game_id}: seat {seat} plays {_short(move)} ({self.strategy}, {took:.1f} s){refused}")
        return True


def _error(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("code"))
    return str(body)[:80]


def _short(move: dict[str, Any]) -> str:
    return json.dumps(move, separators=(",", ":"), ensure_ascii=False)


@click.command()
@click.option("--key", "key_file", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--strategy", type=click.Choice(STRATEGIES), default="mcts", show_default=True)
@click.option("--think", type=float, default=2.0, show_default=True,
              help="seconds of thought per move (mcts; the others answer at once)")
@click.option("--poll", type=float, default=2.0, show_default=True,
              help="seconds between looks at the lobby while nothing happens (less right after an action)")
@server_option
def bot(key_file: str, strategy: str, think: float, poll: float, server: str) -> None:
    """Play every game this key is seated in: join its waiting tournaments, accept invitations, move when to
    move, answer offers (declines take-backs; accepts a draw, end or abort only when behind). Ctrl-C stops it."""
    key = load_key(key_file)
    player = Bot(server, key, strategy, think)
    click.echo(_("bot %(key)s… (%(strategy)s) watching %(server)s; Ctrl-C stops", key=player.public[:12],
                 strategy=strategy, server=server))
    idle = 0.0
    backoff = 0.0
    try:
        while True:
            try:
                worked = player.tick()
            except Unreachable as exc:
                backoff = min(MAX_BACKOFF, backoff * 2 or 0.5)
                click.echo(_("referee unreachable (%(error)s); again in %(seconds)s s", error=exc,
                             seconds=f"{backoff:.1f}"))
                time.sleep(backoff)
                continue
            if backoff:
                click.echo(_("referee reachable again"))
                backoff = 0.0
            idle = 0.0 if worked else min(poll, idle * 2 or poll / 8)
            time.sleep(idle)
    except KeyboardInterrupt:
        click.echo(_("bot stopped"))
