"""What the replay workers derive from the logs, on the work Redis: each game's projection (a hash) and
verdicts (a list), written by ``WRITE_PROJECTION``, the status sets (``referee_games{status}``), the ``?wait``
events streams a verdict is waited on (``WAIT_VERDICT``), and the marker that says the work Redis is intact.
Losing any of it loses nothing: it is rebuilt from the logs. An archived game's come from its document.
"""

from __future__ import annotations

import json
import time
from typing import Any, cast

from ..clock import now_ms
from . import codec, keys
from .base import decode_projection, encode_projection, open_listing_rows
from .connection import StoreConnection
from .replies import text_of

#: seconds a game's ``?wait`` events stream lives after the last wait's look (each look, at least every 5 s while
#: a wait lasts, renews it): a game nobody waits on keeps no stream (``WAIT_VERDICT``)
WAIT_STREAM_TTL = 30


class Projections(StoreConnection):
    """The projections and verdicts (a part of :class:`referee.store.RedisStore`)."""

    def read_projection(self, game_id: str, with_verdicts: bool = False) -> dict[str, Any] | None:
        k = keys.game_keys(game_id)
        if with_verdicts:
            pipe = self.work.pipeline(transaction=True)
            pipe.hgetall(k.projection)
            pipe.lrange(k.verdicts, 0, -1)
            raw, verdicts = pipe.execute()
        else:
            raw, verdicts = self.work.hgetall(k.projection), None
        if not raw:
            document = self.archived(game_id)
            if document is None or document.get("projection") is None:
                return None
            projection = dict(document["projection"])
            if with_verdicts:
                projection["verdicts"] = list(document.get("verdicts") or [])
            return projection
        projection = decode_projection({text_of(name): codec.unpack_value(value) for name, value in raw.items()})
        if verdicts is not None:
            projection["verdicts"] = [json.loads(v) for v in verdicts]
        return projection

    def read_projections(self, game_ids: list[str], fields: tuple[str, ...] | None = None
                         ) -> list[dict[str, Any] | None]:
        """One ``HGETALL`` (with ``fields``: ``HMGET`` of those and ``seq``) per game in one pipeline on the work
        Redis."""
        if not game_ids:
            return []
        names = None if fields is None else ["seq", *(name for name in fields if name != "seq")]
        pipe = self.work.pipeline(transaction=False)
        for game_id in game_ids:
            if names is None:
                pipe.hgetall(keys.game_keys(game_id).projection)
            else:
                pipe.hmget(keys.game_keys(game_id).projection, names)
        out: list[dict[str, Any] | None] = []
        for reply in pipe.execute():
            raw = reply if names is None else {} if reply[0] is None else {
                name: value for name, value in zip(names, reply, strict=True) if value is not None}
            out.append(decode_projection({text_of(name): codec.unpack_value(value) for name, value in raw.items()})
                       if raw else None)
        for index, found in enumerate(out):  # an archived game's projection is in its archived document
            if found is None and self.archive is not None:
                document = self.archived(game_ids[index])
                if document is not None and document.get("projection") is not None:
                    projection = dict(document["projection"])
                    out[index] = projection if fields is None else {
                        name: value for name, value in projection.items() if name in {"seq", *fields}}
        return out

    def read_verdicts(self, game_id: str, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        end = -1 if stop is None else stop - 1
        if stop is not None and stop <= start:
            return []
        stored = [json.loads(v) for v in self.work.lrange(keys.game_keys(game_id).verdicts, start, end)]
        if not stored:
            document = self.archived(game_id)
            if document is not None:
                return list(document.get("verdicts") or [])[start:stop]
        return stored

    def _projection_call(self, game_id: str, projection: dict[str, Any], verdicts: list[dict[str, Any]],
                         from_seq: int, replace: bool = False) -> tuple[list[str], list[Any]]:
        k = keys.game_keys(game_id)
        fields = encode_projection(projection)
        args: list[Any] = ["replace" if replace else "advance", from_seq, projection["seq"], len(fields)]
        for name, value in fields.items():  # long values deflated (``codec.pack_value``): the view, the clocks
            args += [name, codec.pack_value(value)]
        args += [json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in verdicts]
        statuses = [] if self.cluster else keys.status_sets(projection.get("status"))
        if statuses:  # the status sets in the same script (``referee_games{status}``)
            args.append(game_id)
        return [k.projection, k.verdicts, k.events, *statuses], args

    def write_projection(self, game_id: str, projection: dict[str, Any], verdicts: list[dict[str, Any]],
                         from_seq: int, replace: bool = False) -> int:
        return self.write_projections([(game_id, projection, verdicts, from_seq)], replace)[0]

    def write_projections(self, writes: list[tuple[str, dict[str, Any], list[dict[str, Any]], int]],
                          replace: bool = False) -> list[int]:
        replies = self._evalsha_many(self.work, self._write_projection,
                                     [self._projection_call(*w, replace=replace) for w in writes])
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        written = [int(reply[0]) for reply in replies]
        # the open games' listing after the projections it follows (one worker folds a game: in log order)
        self.list_open_games(open_listing_rows([(w[0], w[1]) for w, done in zip(writes, written, strict=True)
                                                if done == 1]))
        if self.cluster:  # the status sets are on other slots: one pipeline after the scripts
            self._set_statuses([(w[0], w[1].get("status"))
                                for w, done in zip(writes, written, strict=True) if done == 1])
        return written

    def _set_statuses(self, statuses: list[tuple[str, Any]]) -> None:
        """Put each game in the set of its status and take it out of the others (``None``: out of all)."""
        pipe = self.work.pipeline(transaction=False)
        for game_id, status in statuses:
            sets = keys.status_sets(status) or [keys.STATUS_SET.format(status=s) for s in keys.GAME_STATUSES]
            if status in keys.GAME_STATUSES:
                pipe.sadd(sets[0], game_id)
                sets = sets[1:]
            for other in sets:
                pipe.srem(other, game_id)
        if statuses:
            pipe.execute()

    # -- the open games (``GET /games?open=true``) -------------------------------------------------------------
    def list_open_games(self, rows: list[tuple[str, str | None, int | None]]) -> None:
        """``ZADD``/``ZREM`` on ``referee:open-games`` and the creator's set, in one pipeline on the work Redis."""
        named = [(game, None if creator is None else keys.creator_open_games_key(creator), ms)
                 for game, creator, ms in rows]
        if not named:
            return
        pipe = self.work.pipeline(transaction=False)
        for game, creator_key, ms in named:
            for key in (keys.OPEN_GAMES, *((creator_key,) if creator_key else ())):
                if ms is None:
                    pipe.zrem(key, game)
                else:
                    pipe.zadd(key, {game: ms})
        pipe.execute()

    def open_games(self, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        if limit == 0:
            return []
        stop = -1 if limit is None else offset + limit - 1
        rows = cast(list[tuple[bytes, float]], self.work.zrange(keys.OPEN_GAMES, offset, stop, withscores=True))
        return [(text_of(game), int(score)) for game, score in rows]

    def count_open_games(self, creator: str | None = None) -> int:
        key = keys.OPEN_GAMES if creator is None else keys.creator_open_games_key(creator)
        return int(self.work.zcard(key))

    def games_by_status(self) -> dict[str, int]:
        """How many games in Redis have each status (one ``SCARD`` per status, and ``ZCARD`` of the lobby's index:
        ``new`` counts the games not projected yet), and how many are archived: ``referee_games{status}``."""
        pipe = self.work.pipeline(transaction=False)
        for status in keys.GAME_STATUSES:
            pipe.scard(keys.STATUS_SET.format(status=status))
        counts = [int(n) for n in pipe.execute()]
        out = dict(zip(keys.GAME_STATUSES, counts, strict=True))
        out["new"] = max(0, int(self.redis.zcard(keys.GAMES_INDEX)) - sum(counts))
        out["archived"] = self.archive.count() if self.archive is not None else 0
        return out

    def wait_for_verdict(self, game_id: str, position: int, timeout: float) -> dict[str, Any] | None:
        k = keys.game_keys(game_id)
        deadline = time.monotonic() + timeout
        while True:
            # The verdict, or the events stream's tail, in one script (WAIT_VERDICT): a projection stored after
            # it XADDs to the stream it made sure of (WRITE_PROJECTION adds to an existing stream only), so
            # XREAD wakes up for it.
            found, value = self._wait_verdict(keys=[k.events, k.verdicts], args=[position, WAIT_STREAM_TTL])
            if int(found):
                return json.loads(value)  # type: ignore[no-any-return]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            last_id = value
            # at most 5 s per call: well under the connection's socket timeout and the stream's lifetime
            self.work.xread({k.events: last_id}, count=1, block=max(1, int(min(remaining, 5.0) * 1000)))

    def work_intact(self) -> bool:
        return bool(self.work.exists(keys.WORK_MARKER))

    def mark_work_intact(self) -> None:
        self.work.set(keys.WORK_MARKER, now_ms())
