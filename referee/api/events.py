"""``GET /games/{id}/events``: the game's log as Server-Sent Events (CONTRACT section 9).

One event per new log entry: ``id:`` its log position, ``data:`` the entry as stored (JSON, with its
``hash``). Without ``Last-Event-ID`` the stream starts at the end of the log; ``Last-Event-ID: n`` (or
``?last_event_id=n``, for clients that cannot set headers) resumes with the entry after position ``n``.

The stream opens with a block of ``retry:`` (the reconnection delay, ms) and ``id:`` (the position it
resumes after) and no ``data``: browsers dispatch no event for it but remember the id, so an
``EventSource`` that reconnects before any entry arrived still resumes at the right place. It is fed by
``XREAD BLOCK`` on the game's log stream (``RedisStore.follow_log``; no polling), sends a heartbeat
comment after ``REFEREE_SSE_HEARTBEAT`` seconds without entries so that proxies keep it open, and ends
after ``REFEREE_SSE_LIFETIME`` seconds: the client reconnects with ``Last-Event-ID`` and misses nothing,
and a restart or deploy never strands a client on an old process.

The game's public messages (CONTRACT section 12) come on the same stream, as they arrive, as events named
``chat`` (``event: chat``, ``data:`` the message as ``GET /games/{id}/messages`` shows it, ``position`` its
place in the message stream) and without ``id:``, so ``Last-Event-ID`` stays a log position and a page's
``onmessage`` sees log entries only (``addEventListener("chat", …)`` for the messages). They start at the
end of the message stream when the stream opens, or at ``?messages_from=k`` (message position k, e.g. one
past the last the page has; ``GET /games/{id}/messages?since=k`` gives those before). A private message
never comes on this stream (it has no reader's signature); its addressees get it by their signed read and
their contacts (the ``message`` event). The log's decisions entries (``offer``, ``answered``, ``agreed``,
``resigned``) are log entries like the others.

``GET /games/events?games=a,b,…`` (at most ``MAX_GAMES``) is the lobby's stream: one ``XREAD BLOCK`` over
those games' logs, and for each new entry an event ``data: {"game", "position", "type"}`` (no ``id``:
it starts at the end of every log; a lobby reloads when it (re)connects). Unknown games are skipped
(404 when none exists).

Streams per client (issue 37, item 9): one client address holds at most ``REFEREE_MAX_STREAMS_PER_CLIENT``
event streams (all three kinds together) over every web process; one more is answered 429 ``rate/limited`` with
``Retry-After`` (``stream_slots.py``). A browser needs one (its tabs share it); the default leaves room for a
few browsers behind one address and for a reloaded page whose old stream the server notices gone only at its
next heartbeat. The slots are kept in the work Redis, each with a lease its stream renews: a process that dies
holding streams frees their slots when the leases run out.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from flask import Blueprint, Response, current_app, request
from redis.exceptions import RedisError

from referee.errors import ServiceError, invalid
from referee.games_service.players import bad_key
from referee.i18n import Text
from referee.messages import message_view
from referee.store import GameNotFound
from referee.store.keys import valid_game_id
from referee.store.messages import MessageStore
from referee.store.redis_store import stored_json

from .stream_slots import stream_slots

log = logging.getLogger(__name__)

bp = Blueprint("events", __name__)

#: what a Last-Event-ID may be: a log position (non-negative integer)
_POSITION = re.compile(r"^[0-9]{1,15}$")
#: what ``?client=`` may be: a browser's own id (its streams share one slot)
_CLIENT_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
#: the reconnection delay proposed to clients (``retry:``), in ms
RETRY_MS = 1000
#: the most games one lobby stream follows
MAX_GAMES = 100
def event_response(kind: str, stream: Iterator[bytes], keys_: tuple[str, ...] = ()) -> Response:
    """The ``text/event-stream`` answer of a stream of ``kind``, holding one of its client's stream slots; 429
    ``rate/limited`` with ``Retry-After`` when the client holds ``REFEREE_MAX_STREAMS_PER_CLIENT`` already."""
    from .limits import client_address  # noqa: PLC0415 - the package imports this module

    client = request.args.get("client", "")
    if client and not _CLIENT_ID.match(client):
        raise invalid([{"path": "$query.client", "problem": "a client id is 8 to 64 characters of A-Z, a-z, 0-9, "
                                                            "_ and -"}])
    slots, address = stream_slots(), client_address()
    slot = slots.take(address, client)
    if slot is None:
        from . import localized  # noqa: PLC0415

        retry_after = max(1, math.ceil(float(current_app.config["REFEREE_SSE_HEARTBEAT"])))
        text = Text("too many event streams open from this client: at most %(cap)s at once (one per browser is "
                    "enough); close one or retry in %(seconds)s s", cap=slots.cap, seconds=retry_after)
        body = localized({"error": {"code": "rate/limited", "message": str(text),
                                    "details": {"limit": f"{slots.cap} open event streams",
                                                "setting": "REFEREE_MAX_STREAMS_PER_CLIENT",
                                                "retry_after": retry_after}}}, text)
        stream.close()  # type: ignore[attr-defined]
        return Response(json.dumps(body), status=429, mimetype="application/json",
                        headers={"Retry-After": str(retry_after)})
    response = Response(slots.held(address, slot, counted(kind, stream, keys_)), mimetype="text/event-stream",
                        direct_passthrough=True, headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    response.call_on_close(lambda: slots.release(address, slot))  # also when the stream never started
    return response


def _lifetime(config: Any) -> float:
    """``REFEREE_SSE_LIFETIME`` minus up to a quarter at random: streams opened together (after a deploy)
    do not all end, and reconnect, at the same moment."""
    return float(config["REFEREE_SSE_LIFETIME"]) * (1 - 0.25 * random.random())


#: what ends a stream early (the client reconnects): Redis went away, or the store's connections were
#: closed under a blocked read at shutdown (redis-py then raises ValueError/OSError on the closed socket)
_ENDED_BY = (RedisError, OSError, ValueError)


def _not_found(game_id: str) -> ServiceError:
    return ServiceError(404, "game/not_found", f"no game {game_id!r}")


def resume_after(header: str | None, query: str | None) -> int | None:
    """The position given by ``Last-Event-ID`` (header first, then ``?last_event_id=``); ``None`` when
    neither is there; 400 when it is not a log position.

    >>> resume_after("7", None), resume_after(None, "3"), resume_after(None, None)
    (7, 3, None)
    """
    return _last_event_id(header, query, "must be a log position (an integer ≥ 0)")


def _last_event_id(header: str | None, query: str | None, problem: str) -> int | None:
    """The integer of ``Last-Event-ID`` (header first, then ``?last_event_id=``); ``None`` when neither is there;
    400 saying ``problem`` when it is not one."""
    for path, value in (("$header.Last-Event-ID", header), ("$query.last_event_id", query)):
        if value is None or value == "":
            continue
        if not _POSITION.match(value.strip()):
            raise invalid([{"path": path, "problem": problem}])
        return int(value.strip())
    return None


def sse_stream(follow: Callable[[int, float], list[tuple[int, bytes]]], after: int, heartbeat: float,
               lifetime: float, clock: Callable[[], float] = time.monotonic) -> Iterator[bytes]:
    """The text of an event stream resuming after position ``after``: ``follow(after, timeout)`` returns
    the entries after ``after`` (waiting at most ``timeout`` seconds)."""
    return game_stream(lambda position, _message, timeout: (follow(position, timeout), []), after, 0,
                       heartbeat=heartbeat, lifetime=lifetime, clock=clock)


#: ``follow(after, message_from, timeout) -> (entries, messages)``: the log's entries after ``after`` and the
#: stored messages from ``message_from`` (``MessageStore.follow``)
FollowGame = Callable[[int, int, float], tuple[list[tuple[int, bytes]], list[dict[str, Any]]]]


def game_stream(follow: FollowGame, after: int, message_from: int, *, heartbeat: float, lifetime: float,
                clock: Callable[[], float] = time.monotonic) -> Iterator[bytes]:
    """The text of a game's event stream: its log's entries after position ``after`` (``id:`` the position),
    and its public messages from position ``message_from`` as ``chat`` events (no ``id:``; private ones are
    skipped), interleaved as they arrive."""
    yield f"retry: {RETRY_MS}\nid: {after}\n\n".encode()
    end = clock() + lifetime
    while True:
        left = end - clock()
        if left <= 0:
            return
        try:
            rows, messages = follow(after, message_from, min(heartbeat, left))
        except _ENDED_BY as exc:  # the client reconnects with its Last-Event-ID
            log.warning("event stream ended: %s", exc)
            return
        if not rows and not messages:
            yield b": heartbeat\n\n"
            continue
        chunk = []
        for position, raw in rows:
            chunk.append(b"id: %d\ndata: %s\n\n" % (position, raw))
            after = position
        for message in messages:
            message_from = max(message_from, int(message["seq"]) + 1)
            if message["submission"]["envelope"].get("to") is None:  # public: anyone may read it
                data = json.dumps(message_view(message), separators=(",", ":"), ensure_ascii=False)
                chunk.append(b"event: chat\ndata: %s\n\n" % data.encode())
        if chunk:
            yield b"".join(chunk)


def final_follow(log: list[dict[str, Any]], stored_messages: list[dict[str, Any]],
                 sleep: Callable[[float], None] = time.sleep) -> FollowGame:
    """The ``follow`` of an archived game's stream: its log's entries after ``after`` and its messages from
    ``message_from`` (as the live follow answers them), then nothing but the waits of its heartbeats, as a
    finished game's stream in Redis."""

    def follow(after: int, message_from: int, timeout: float) -> tuple[list[tuple[int, bytes]], list[dict[str, Any]]]:
        rows = [(position, stored_json(entry)) for position, entry in enumerate(log) if position > after]
        messages = stored_messages[max(message_from, 0):]
        if not rows and not messages:
            sleep(timeout)
        return rows, messages

    return follow


def resume_messages(query: str | None) -> int | None:
    """The message position given by ``?messages_from=``; ``None`` without it; 400 when it is not one.

    >>> resume_messages("4"), resume_messages(None)
    (4, None)
    """
    if query is None or query == "":
        return None
    if not _POSITION.match(query.strip()):
        raise invalid([{"path": "$query.messages_from", "problem": "must be a message position (an integer ≥ 0)"}])
    return int(query.strip())


@bp.get("/games/<game_id>/events")
def game_events(game_id: str) -> Response:
    """Server-Sent Events of ``game_id``'s log (see the module's docstring)."""
    after = resume_after(request.headers.get("Last-Event-ID"), request.args.get("last_event_id"))
    message_from = resume_messages(request.args.get("messages_from"))
    if not valid_game_id(game_id):
        raise _not_found(game_id)
    store: Any = current_app.extensions["referee.store"]
    try:
        tip = store.tip(game_id)
    except GameNotFound as exc:
        raise _not_found(game_id) from exc
    if after is None:
        after = tip.seq - 1
    elif after >= tip.seq:  # never given by this log: the stream would wait for positions that came before
        raise invalid([{"path": "$header.Last-Event-ID", "problem": f"beyond the log (its last position is "
                                                                    f"{tip.seq - 1})"}])
    messages: MessageStore = current_app.extensions["referee.messages"].store
    length = messages.tip(game_id).length
    if message_from is None:
        message_from = length
    elif message_from > length:
        raise invalid([{"path": "$query.messages_from", "problem": f"beyond the game's messages (there are "
                                                                   f"{length})"}])
    config = current_app.config
    follow: FollowGame = functools.partial(messages.follow, game_id)
    if not store.log_lengths([game_id]):  # archived (its log is gone from Redis): nothing more will come
        follow = final_follow(store.read_log(game_id), messages.read(game_id))
    stream = game_stream(follow, after, message_from, heartbeat=float(config["REFEREE_SSE_HEARTBEAT"]),
                         lifetime=_lifetime(config))
    return event_response("game", stream)


def notice_stream(follow: Callable[[dict[str, int], float], list[tuple[str, int, bytes]]], afters: dict[str, int],
                  heartbeat: float, lifetime: float, clock: Callable[[], float] = time.monotonic) -> Iterator[bytes]:
    """The lobby's stream: ``{"game", "position", "type"}`` for each new entry of the games in ``afters``."""
    afters = dict(afters)
    yield f"retry: {RETRY_MS}\n\n".encode()
    end = clock() + lifetime
    while afters:
        left = end - clock()
        if left <= 0:
            return
        try:
            rows = follow(afters, min(heartbeat, left))
        except _ENDED_BY as exc:
            log.warning("lobby stream ended: %s", exc)
            return
        if not rows:
            yield b": heartbeat\n\n"
            continue
        chunk = []
        for game, position, raw in rows:
            notice = {"game": game, "position": position, "type": json.loads(raw).get("type")}
            chunk.append(b"data: %s\n\n" % json.dumps(notice, separators=(",", ":")).encode())
            afters[game] = max(afters[game], position)
        yield b"".join(chunk)


@bp.get("/games/events")
def lobby_events() -> Response:
    """Notices of new entries in several games (``?games=a,b,…``), for the lobby's "My games"."""
    raw = request.args.get("games", "")
    games = list(dict.fromkeys(g for g in raw.split(",") if g))
    problems = []
    if not games:
        problems.append({"path": "$query.games", "problem": "give one or more game ids, comma-separated"})
    elif len(games) > MAX_GAMES:
        problems.append({"path": "$query.games", "problem": f"at most {MAX_GAMES} games"})
    problems += [{"path": "$query.games", "problem": f"{g!r} is not a game id"} for g in games if not valid_game_id(g)]
    if problems:
        raise invalid(problems)
    store: Any = current_app.extensions["referee.store"]
    live = store.log_lengths(games)
    afters = {game: length - 1 for game, length in live.items()}
    for game in games:  # an archived game is followed as a finished one: nothing more comes of it
        if game not in live:
            try:
                afters[game] = store.tip(game).seq - 1
            except GameNotFound:
                continue
    if not afters:
        raise ServiceError(404, "game/not_found", "none of these games exists")

    def follow(followed: dict[str, int], timeout: float) -> list[tuple[str, int, bytes]]:
        in_redis = {game: after for game, after in followed.items() if game in live}
        if in_redis:
            return store.follow_logs(in_redis, timeout)  # type: ignore[no-any-return]
        time.sleep(timeout)
        return []

    config = current_app.config
    stream = notice_stream(follow, afters,
                           float(config["REFEREE_SSE_HEARTBEAT"]), _lifetime(config))
    return event_response("lobby", stream)


# -- one stream per browser: every game of some keys, some more games, and the lobby's new games -------------

#: the most keys one browser stream follows
MAX_KEYS = 10
#: the most games followed for the keys (their running games, newest first) and given by ``?games=``
MAX_KEY_GAMES = 200
#: how often (s) a browser stream looks for new games of its keys and of the lobby (two cheap reads)
INDEX_EVERY = 2.0
#: on resuming, entries up to this long (ms) before the Last-Event-ID's time are announced again: an entry's
#: ``at`` is taken a little before its append, so a late append is never lost (a notice twice is harmless)
RESUME_SLACK_MS = 10_000


class OpenStreams:
    """The event streams an app holds open now, by kind (``game``, ``lobby``, ``players``), and the keys of each
    open ``players`` stream: what the tests read to see that a browser holds one stream
    (``app.extensions["referee.streams"]``; one per app, for the streams of its process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.kinds = {"game": 0, "lobby": 0, "players": 0}
        self.player_keys: list[tuple[str, ...]] = []

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {**self.kinds, "player_keys": [list(k) for k in self.player_keys]}

    def counted(self, kind: str, stream: Iterator[bytes], keys_: tuple[str, ...] = ()) -> Iterator[bytes]:
        """``stream``, counted from its first byte until it ends or its client goes away (the server closes
        the iterator at its next write: a heartbeat at the latest)."""
        with self.lock:
            self.kinds[kind] += 1
            if kind == "players":
                self.player_keys.append(keys_)
        try:
            yield from stream
        finally:
            with self.lock:
                self.kinds[kind] -= 1
                if kind == "players":
                    self.player_keys.remove(keys_)


def open_streams(app: Any = None) -> OpenStreams:
    """The :class:`OpenStreams` of ``app`` (the current app by default), made on first use."""
    app = app or current_app
    found = app.extensions.get("referee.streams")
    if found is None:
        found = app.extensions.setdefault("referee.streams", OpenStreams())
    return found  # type: ignore[no-any-return]


def counted(kind: str, stream: Iterator[bytes], keys_: tuple[str, ...] = ()) -> Iterator[bytes]:
    return open_streams().counted(kind, stream, keys_)


def resume_time(header: str | None, query: str | None) -> int | None:
    """The time (ms) of a browser stream's ``Last-Event-ID`` (header first, then ``?last_event_id=``); 400 when
    it is not one.

    >>> resume_time("1700000000000", None), resume_time(None, None)
    (1700000000000, None)
    """
    return _last_event_id(header, query, "must be the id of an event of this stream (a time in ms)")


def _id_list(raw: str, path: str, most: int, valid: Callable[[str], bool], what: str) -> tuple[list[str], list[Any]]:
    items = list(dict.fromkeys(item.strip() for item in raw.split(",") if item.strip()))
    problems: list[Any] = []
    if len(items) > most:
        problems.append({"path": path, "problem": f"at most {most} {what}s"})
    problems += [{"path": path, "problem": f"{item!r} is not a {what}"} for item in items if not valid(item)]
    return items, problems


class BrowserFeed:
    """What one browser stream follows: the running games of its keys (re-read from the keys' indexes every
    :data:`INDEX_EVERY` s), the games it names, and the newest game of the lobby's index."""

    def __init__(self, store: Any, player_keys: list[str], games: list[str]):
        self.store = store
        self.keys = player_keys
        self.named = games
        self.afters: dict[str, int] = {}
        self.newest_of: dict[str, str | None] = {}
        self.lobby_newest: str | None = None

    def _running(self, game_ids: list[str]) -> list[str]:
        """The games among ``game_ids`` whose log is in Redis and that are not finished (one pipeline each)."""
        live = self.store.log_lengths(game_ids)
        ids = [g for g in game_ids if g in live]
        states = self.store.read_projections(ids, fields=("status",)) if ids else []
        return [g for g, p in zip(ids, states, strict=True) if p is None or p.get("status") in ("waiting", "active")]

    def start(self) -> None:
        """The games to follow now, each from the end of its log."""
        mine: list[str] = []
        for key in self.keys:
            listed = [game for game, _ms in self.store.player_games(key)]
            self.newest_of[key] = listed[0] if listed else None
            mine += listed
        followed = list(dict.fromkeys(self._running(list(dict.fromkeys(mine)))[:MAX_KEY_GAMES] + self.named))
        live = self.store.log_lengths(followed)
        self.afters = {game: live[game] - 1 for game in followed if game in live}
        newest = self.store.list_games(0, 1)
        self.lobby_newest = newest[0] if newest else None

    def missed_since(self, since_ms: int) -> list[dict[str, Any]]:
        """Resuming: a notice for each followed game whose last entry came after ``since_ms`` (less the slack)."""
        games = list(self.afters)
        out = []
        for game, entry in zip(games, self.store.read_last_entries(games), strict=True):
            if entry is None or not entry.get("at"):
                continue
            if _at_ms(entry["at"]) >= since_ms - RESUME_SLACK_MS:
                out.append({"game": game, "position": entry.get("seq"), "type": entry.get("type"), "entry": entry})
        return out

    def look_for_new(self) -> list[dict[str, Any]]:
        """New games of the keys (followed from their first entry) and a new game in the lobby: their notices."""
        out: list[dict[str, Any]] = []
        for key in self.keys:
            top = self.store.player_games(key, 0, 1)
            newest = top[0][0] if top else None
            if newest == self.newest_of.get(key):
                continue
            self.newest_of[key] = newest
            fresh = [game for game, _ms in self.store.player_games(key, 0, 20) if game not in self.afters]
            for game in self._running(fresh):
                if len(self.afters) < MAX_KEY_GAMES + len(self.named):
                    self.afters[game] = -1  # its entries so far come with the next read
        newest_games = self.store.list_games(0, 1)
        newest_game = newest_games[0] if newest_games else None
        if newest_game != self.lobby_newest:
            self.lobby_newest = newest_game
            out.append({"game": newest_game, "position": None, "type": "listed"})
        return out

    def follow(self, timeout: float) -> list[tuple[str, int, bytes]]:
        if self.afters:
            return self.store.follow_logs(self.afters, timeout)  # type: ignore[no-any-return]
        time.sleep(timeout)
        return []


def _at_ms(at: str) -> int:
    return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)


def browser_stream(feed: BrowserFeed, since_ms: int | None, *, heartbeat: float, lifetime: float,
                   clock: Callable[[], float] = time.monotonic,
                   wall_ms: Callable[[], int] = lambda: int(time.time() * 1000)) -> Iterator[bytes]:
    """A browser's one stream: ``data: {"game", "position", "type", "entry"}`` for each new entry of a followed
    game (``type`` the entry's, ``entry`` the entry as ``GET /games/{id}/log`` gives it) and ``data: {"game",
    "position": null, "type": "listed"}`` for a new game in the lobby; every
    event's ``id:`` is the server's time (ms) before the read that found it, which a reconnection gives back."""
    def event(notices: list[dict[str, Any]], stamp: int) -> bytes:
        return b"".join(b"id: %d\ndata: %s\n\n" % (stamp, json.dumps(n, separators=(",", ":")).encode())
                        for n in notices)

    stamp = wall_ms()
    opening = f"retry: {RETRY_MS}\nid: {stamp}\n\n".encode()
    if since_ms is not None:
        opening += event(feed.missed_since(since_ms), stamp)
    yield opening
    end = clock() + lifetime
    quiet_since = clock()
    next_look = clock() + INDEX_EVERY
    while True:
        now = clock()
        left = end - now
        if left <= 0:
            return
        stamp = wall_ms()
        try:
            notices = feed.look_for_new() if now >= next_look else []
            if now >= next_look:
                next_look = now + INDEX_EVERY
            rows = [] if notices else feed.follow(max(0.001, min(INDEX_EVERY, left, next_look - clock())))
        except _ENDED_BY as exc:
            log.warning("browser stream ended: %s", exc)
            return
        for game, position, raw in rows:
            # the entry itself too: a page keeps the log it shows up to date without asking for it (GET …/log)
            entry = json.loads(raw)
            notices.append({"game": game, "position": position, "type": entry.get("type"), "entry": entry})
            feed.afters[game] = max(feed.afters.get(game, -1), position)
        if notices:
            quiet_since = clock()
            yield event(notices, stamp)
        elif clock() - quiet_since >= heartbeat:
            quiet_since = clock()
            yield b": heartbeat\n\n"


@bp.get("/players/events")
def browser_events() -> Response:
    """One stream for a browser (``?keys=a,b&games=c,d``): see :func:`browser_stream` and docs/service.md."""
    since = resume_time(request.headers.get("Last-Event-ID"), request.args.get("last_event_id"))
    player_keys, problems = _id_list(request.args.get("keys", ""), "$query.keys", MAX_KEYS,
                                     lambda k: bad_key(k) is None, "public key")
    games, more = _id_list(request.args.get("games", ""), "$query.games", MAX_GAMES, valid_game_id, "game id")
    problems += more
    if not player_keys and not games and not problems:
        problems.append({"path": "$query", "problem": "give keys (public keys) or games (game ids), comma-separated"})
    if problems:
        raise invalid(problems)
    store: Any = current_app.extensions["referee.store"]
    feed = BrowserFeed(store, player_keys, games)
    feed.start()
    config = current_app.config
    stream = browser_stream(feed, since, heartbeat=float(config["REFEREE_SSE_HEARTBEAT"]), lifetime=_lifetime(config))
    return event_response("players", stream, tuple(player_keys))


#: ``?client=``, taken by every stream
_CLIENT = {"name": "client", "in": "query", "required": False,
           "schema": {"type": "string", "pattern": _CLIENT_ID.pattern},
           "description": "the client's own id (a browser's, kept across its reconnections): its streams share one "
                          "of the REFEREE_MAX_STREAMS_PER_CLIENT slots of its address, a new one taking over the "
                          "slot of the one before"}
#: every stream's answer when its client holds the most streams it may (issue 37, item 9)
_TOO_MANY = ("this client holds REFEREE_MAX_STREAMS_PER_CLIENT event streams already (rate/limited; see "
             "Retry-After)")


def _stream_answers(what: str, errors: dict[str, str]) -> dict[str, Any]:
    errors = {**errors, "429": _TOO_MANY}
    answers: dict[str, Any] = {"200": {"description": what, "content": {"text/event-stream": {"schema": {
        "type": "string", "description": "Server-Sent Events (text/event-stream): `id:`, `event:`, `data:` lines"}}}}}
    for status, description in errors.items():
        answers[status] = {"description": description,
                           "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    return answers


def _param(name: str, where: str, description: str, **schema: Any) -> dict[str, Any]:
    return {"name": name, "in": where, "required": where == "path", "description": description,
            "schema": {"type": "string", **schema}}


_LAST_EVENT_ID = _param("Last-Event-ID", "header", "resume after this event id (an EventSource sends it by itself)")


def document(spec: Any, app: Any) -> None:
    """Put the event streams into the OpenAPI document (they are a plain blueprint, not flask-smorest's):
    what they answer and take; the events themselves are described in docs/service.md, "Event streams"."""
    rules = {rule.endpoint: rule for rule in app.url_map.iter_rules()}
    spec.tag({"name": "events", "description": "Server-Sent Events: a game's log as it grows, and the notices "
                                               "of a browser's one stream (docs/service.md, \"Event streams\")"})
    spec.path(rule=rules["events.game_events"], operations={"get": {
        "tags": ["events"], "summary": "A game's log entries (id: the position) and public messages (event: chat) "
                                       "as they are appended; resumable with Last-Event-ID.",
        "parameters": [_param("game_id", "path", "the game"), _LAST_EVENT_ID,
                       _param("last_event_id", "query", "the same as the header, for clients that cannot set it"),
                       _param("messages_from", "query", "the first message position to send (default: the end)"),
                       _CLIENT],
        "responses": _stream_answers("the stream", {"400": "a Last-Event-ID or messages_from that is not a position "
                                                           "of this game", "404": "no such game"})}})
    spec.path(rule=rules["events.lobby_events"], operations={"get": {
        "tags": ["events"], "summary": f"Notices {{game, position, type}} of new entries in up to {MAX_GAMES} games.",
        "parameters": [_param("games", "query", "game ids, comma-separated"), _CLIENT],
        "responses": _stream_answers("the stream", {"400": "no ids, a malformed id or too many",
                                                    "404": "none of these games exists"})}})
    spec.path(rule=rules["events.browser_events"], operations={"get": {
        "tags": ["events"],
        "summary": "A browser's one stream: notices {game, position, type, entry} of new entries in every running "
                   f"game of up to {MAX_KEYS} keys and of up to {MAX_GAMES} more games, and "
                   "{game, position: null, type: listed} when the lobby lists a new game; each event's id is the "
                   "server's time (ms), and Last-Event-ID announces again every followed game that changed since.",
        "parameters": [_param("keys", "query", f"public keys (base64url), comma-separated, at most {MAX_KEYS}"),
                       _param("games", "query", f"more game ids, comma-separated, at most {MAX_GAMES}"),
                       _LAST_EVENT_ID,
                       _param("last_event_id", "query", "the same as the header, for clients that cannot set it"),
                       _CLIENT],
        "responses": _stream_answers("the stream", {"400": "neither keys nor games, a malformed key or id, too many, "
                                                           "or a Last-Event-ID that is not a time in ms"})}})
