"""The store's indexes on the log's Redis: the lobby's list of games (``referee:games``), each key's games and
tournaments (``player:{<key>}:…``), and the writes that keep an index beside a log write — a replicated ``ZADD``
(:meth:`Indexes._index`), the pending index apart from the flags on a cluster (:meth:`Indexes._index_pending`).
With an archive, the lobby's and a key's lists merge the archive's own listing in (``referee.store.archive``).
"""

from __future__ import annotations

import logging
import time
from typing import Any, cast

from redis.exceptions import RedisError

from . import keys
from .connection import ELSEWHERE, StoreConnection
from .errors import StoreUnavailable
from .replies import text_of

log = logging.getLogger(__name__)


def _merged(live: list[tuple[str, int]], archived: list[tuple[str, int]], offset: int, limit: int | None
            ) -> list[tuple[str, int]]:
    """One page of two lists of ``(id, score)``, each newest first (by score, then the greater id, as
    ``ZREVRANGE``): the index of the games in Redis and the archive's. A game in both (archived, but a crash or
    a fail-over came before its keys were deleted) is counted once. Each list need only hold its first
    ``offset + limit`` rows."""
    rows = sorted({(score, game) for game, score in live} | {(score, game) for game, score in archived},
                  reverse=True)
    seen: set[str] = set()
    out = []
    for score, game in rows:
        if game not in seen:
            seen.add(game)
            out.append((game, score))
    return out[offset:None if limit is None else offset + limit]


class Indexes(StoreConnection):
    """The sorted-set indexes of games, players and pending flags (a part of :class:`referee.store.RedisStore`)."""

    def _index(self, key: str, member: str, score: int, *, nx: bool) -> None:
        """List ``member`` in the index ``key`` (the games', the tournaments'); with ``min_replicas``, on its
        master's connection followed by ``WAIT`` (a shortfall is only logged: the log is what counts, and
        ``referee rebuild --all`` re-indexes from the logs)."""
        if not self.min_replicas:
            self.redis.zadd(key, {member: score}, nx=nx)
            return
        for attempt in range(4):
            client, node = self._master_of(key)
            pipe = client.pipeline(transaction=False)
            pipe.zadd(key, {member: score}, nx=nx)
            pipe.execute_command(*self._wait_command(client, node))
            added, acked = pipe.execute(raise_on_error=False)
            if isinstance(added, ELSEWHERE):
                self._refresh_cluster(force=attempt > 0)
                time.sleep(0.05 * attempt)
                continue
            if isinstance(added, Exception):
                raise added
            if self._replicas_of(acked) < self.min_replicas:
                log.warning("%s is listed in %s, but not confirmed by %d replica(s)", member, key, self.min_replicas)
            return
        raise StoreUnavailable(f"the cluster kept moving the slot of {key} (a fail-over under way?)")

    def _flag_keys(self, game_id: str) -> list[str]:
        """The optional keys of a game's flag-raising script: the pending index and the game's shard of the ready
        list (plain Redis only; on a cluster they live on other slots, written by :meth:`_index_pending` and the
        dispatcher)."""
        if self.cluster:
            return []
        if self.ready_key:
            return [keys.PENDING_INDEX, keys.ready_shard_key(self.ready_key, game_id)]
        return [keys.PENDING_INDEX]

    def _index_pending(self, flags: list[tuple[str, int | None]]) -> None:
        """On a cluster, the pending index apart from the flags (best effort: the reconciler's periodic scan of
        every game covers what a failure here misses). ``None``: the flag was released."""
        try:
            self._score_members(keys.PENDING_INDEX, flags)
        except RedisError:
            log.warning("could not index the pending flags of %s", [g for g, _ in flags], exc_info=True)

    def _score_members(self, key: str, scores: list[tuple[str, int | None]]) -> None:
        """Set each member's score in the sorted set ``key`` (``None``: remove it), in one round trip."""
        if not scores:
            return
        pipe = self.redis.pipeline(transaction=False)
        for member, score in scores:
            if score is None:
                pipe.zrem(key, member)
            else:
                pipe.zadd(key, {member: score})
        pipe.execute()

    # -- the lobby's games ------------------------------------------------------------------------------
    def list_games(self, offset: int = 0, limit: int | None = None) -> list[str]:
        """The lobby's games, newest first: those of ``referee:games`` (the games in Redis) and, with an archive,
        the archived ones at the place their score gives them (:meth:`Archive.games`), as one list."""
        if self.archive is None:
            return self.live_games(offset, limit)
        wanted = None if limit is None else offset + limit
        stop = -1 if wanted is None else wanted - 1
        live = cast(list[tuple[bytes, float]], self.redis.zrevrange(keys.GAMES_INDEX, 0, stop, withscores=True))
        rows = [(text_of(game), int(score)) for game, score in live]
        return [game for game, _score in _merged(rows, self.archive.games(0, wanted), offset, limit)]

    def live_games(self, offset: int = 0, limit: int | None = None) -> list[str]:
        """The games still in Redis (``referee:games``), newest first: what the replay workers, the reconciler and
        the archiver go over."""
        stop = -1 if limit is None else offset + limit - 1
        return [text_of(game) for game in self.redis.zrevrange(keys.GAMES_INDEX, offset, stop)]

    def count_games(self) -> int:
        """How many games the lobby holds: in Redis and in the archive (one ``ZCARD``; the archive counts its own)."""
        return int(self.redis.zcard(keys.GAMES_INDEX)) + (self.archive.count() if self.archive is not None else 0)

    def scan_games(self) -> list[str]:
        found = {keys.game_id_of_log_key(key) for key in self.redis.scan_iter(match=keys.LOG_SCAN_PATTERN, count=500)}
        return sorted(game for game in found if keys.valid_game_id(game))

    def index_game(self, game_id: str, created_ms: int) -> None:
        """(Re-)list a game in the index (used by ``rebuild --all`` for games found by scanning)."""
        self.redis.zadd(keys.GAMES_INDEX, {game_id: created_ms}, nx=True)

    # -- the games of a player's key --------------------------------------------------------------------
    def _index_rows(self, key_of: Any, rows: list[tuple[str, str, int]]) -> None:
        """One ``ZADD`` per row in one pipeline (on a cluster, redis-py's pipeline sends each to its key's node)."""
        if not rows:
            return
        pipe = self.redis.pipeline(transaction=False)
        for public_key, item, created_ms in rows:
            pipe.zadd(key_of(public_key), {item: int(created_ms)})
        pipe.execute()

    def _listed(self, key: str, offset: int, limit: int | None) -> list[tuple[str, int]]:
        if limit == 0:
            return []
        stop = -1 if limit is None else offset + limit - 1
        rows = cast(list[tuple[bytes, float]], self.redis.zrevrange(key, offset, stop, withscores=True))
        return [(text_of(item), int(score)) for item, score in rows]

    def index_player_games(self, rows: list[tuple[str, str, int]]) -> None:
        self._index_rows(keys.player_games_key, rows)

    def player_games(self, public_key: str, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        """The key's games in Redis and, with an archive, its archived ones, newest first, as one list."""
        key = keys.player_games_key(public_key)
        if self.archive is None:
            return self._listed(key, offset, limit)
        wanted = None if limit is None else offset + limit
        return _merged(self._listed(key, 0, wanted), self.archive.player_games(public_key), offset, limit)

    def unindex_player_games(self, rows: list[tuple[str, str]]) -> None:
        """One ``ZREM`` per row in one pipeline (each key's list is its own hash tag)."""
        names = [(keys.player_games_key(public_key), game) for public_key, game in rows]
        if not names:
            return
        pipe = self.redis.pipeline(transaction=False)
        for key, game in names:
            pipe.zrem(key, game)
        pipe.execute()

    def index_player_tournaments(self, rows: list[tuple[str, str, int]]) -> None:
        self._index_rows(keys.player_tournaments_key, rows)

    def player_tournaments(self, public_key: str, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        return self._listed(keys.player_tournaments_key(public_key), offset, limit)
