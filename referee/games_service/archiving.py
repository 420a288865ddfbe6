"""Archiving finished games out of Redis (CONTRACT section 13, "Archive"): :func:`archive_game`.

A game is archived when it is over (finished, aborted, expired or cancelled), its bundle is final (the seed revealed,
or a recorded game over), its replay worker's projection is at the end of its log, and its ``revealed``
entry (a recorded game: its last entry) is at least ``older_than`` seconds old (``REFEREE_ARCHIVE_AFTER``).

The steps, each safe to interrupt (``RedisStore.drop_archived``):

1. ``WATCH`` the game's keys on the log's Redis;
2. read the game (log, projection and verdicts, messages, mutes, seed, signatures) and make its document
   (``referee.store.archive``: the bundle exactly as ``GET /games/{id}/export`` answers it, and the rest);
3. write it to the archive (fsync'd file, fsync'd folder) unless the same document is there already, and
   read it back: it must equal what was read;
4. delete every key of the game in one ``MULTI`` (refused if a watched key changed since 1: nothing is
   deleted, and the next run writes the document again from the newer data).

A crash after 3 leaves the game whole in Redis (it is still served from there) with a document beside it:
the next run finds the document, checks it against Redis, and deletes the keys. A crash after 4 on a
separate work Redis leaves only derived keys (projection, verdicts), which the next run deletes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..clock import now_ms
from ..host.metrics import ARCHIVED
from ..replay import ABORTED, CANCELLED, EXPIRED, FINISHED
from ..store import GameNotFound, RedisStore
from ..store.archive import ARCHIVE_FORMAT, Archive, listing_of
from ..store.keys import GAMES_INDEX, OUTBOX_SEEN, game_keys, message_keys, player_games_key
from ..store.messages import MessageStore
from ..timecontrol import parse_ms
from ..verify.bundle import export_bundle, is_final
from .players import player_rows

#: the statuses of a game that takes nothing more
OVER = frozenset({FINISHED, ABORTED, EXPIRED, CANCELLED})
#: ``REFEREE_ARCHIVE_AFTER``'s default: a week after the seed is revealed
ARCHIVE_AFTER = 7 * 24 * 3600.0


@dataclass
class Outcome:
    """What :func:`archive_game` did with one game: ``action`` is ``archived`` (moved now, or would be with
    ``dry_run``), ``cleaned`` (it was archived already; leftover keys deleted), ``kept`` (not eligible:
    ``reason`` says why) or ``retry`` (the game changed while it was being archived: nothing deleted)."""

    game: str
    action: str
    reason: str = ""
    size: int = 0


def over_since(log: list[dict[str, Any]]) -> int | None:
    """When the game's ``revealed`` entry was logged (ms; a recorded game: its last entry), or ``None``."""
    if not log:
        return None
    if log[0].get("mode") == "recorded":
        return parse_ms(log[-1].get("at"))
    for entry in reversed(log):
        if entry.get("type") == "revealed":
            return parse_ms(entry.get("at"))
    return None


def _raw_hash(store: RedisStore, key: str) -> dict[str, str]:
    raw: Any = store.redis.hgetall(key)
    return {_text(name): _text(value) for name, value in raw.items()}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def listed_in(store: RedisStore, game_id: str, created: dict[str, Any]) -> dict[str, Any]:
    """The game's scores in the lobby's index and in its seated keys' indexes (``None``/left out: not listed
    there), which the archive keeps so that the game is listed at the same place once its rows leave Redis."""
    seated = sorted({key for key, _game, _at in player_rows(game_id, created)})
    pipe = store.redis.pipeline(transaction=False)
    pipe.zscore(GAMES_INDEX, game_id)
    for key in seated:
        pipe.zscore(player_games_key(key), game_id)
    lobby, *scores = pipe.execute()
    return {"games": int(lobby) if lobby is not None else None,
            "players": {key: int(score) for key, score in zip(seated, scores, strict=True) if score is not None}}


def document_of(store: RedisStore, messages: MessageStore, game_id: str, key: Ed25519PrivateKey
                ) -> tuple[dict[str, Any] | None, str]:
    """The archive document of a live game, or ``(None, why not)`` when it may not be archived yet."""
    early = store.read_projection(game_id)  # a cheap look first: most games in a scan are still running
    if early is not None and early.get("status") not in OVER:
        return None, f"it is {early.get('status')}"
    stored_messages = messages.read(game_id)  # before the log, as the export reads them
    log = store.read_log(game_id)
    projection = store.read_projection(game_id, with_verdicts=True)
    if not is_final(log):
        return None, "not over (the seed is not revealed)"
    if projection is None or projection["seq"] != len(log) or projection["head"] != log[-1]["hash"]:
        return None, "its projection is behind its log (a replay worker has not caught up)"
    if projection.get("status") not in OVER:
        return None, f"it is {projection.get('status')}"
    verdicts = projection.pop("verdicts")
    secret = store.read_secret(game_id)
    document = {
        "format": ARCHIVE_FORMAT,
        "game": game_id,
        "bundle": export_bundle(log, projection, key, stored_messages),
        "secret": secret.hex() if secret else None,
        "projection": projection,
        "verdicts": verdicts,
        "messages": stored_messages,
        "mutes": _raw_hash(store, message_keys(game_id).mutes),
        "sigs": _raw_hash(store, game_keys(game_id).sigs),
        "message_sigs": _raw_hash(store, message_keys(game_id).sigs),
        "listed": listed_in(store, game_id, log[0]),
    }
    return document, ""


def _same(a: dict[str, Any] | None, b: dict[str, Any]) -> bool:
    return a is not None and {k: v for k, v in a.items() if k != "archived_at"} == {
        k: v for k, v in b.items() if k != "archived_at"}


def archive_game(store: RedisStore, messages: MessageStore, archive: Archive, game_id: str, key: Ed25519PrivateKey,
                 *, older_than: float = ARCHIVE_AFTER, now: int | None = None, dry_run: bool = False) -> Outcome:
    """Move ``game_id`` out of Redis into ``archive`` if it may go (see the module's text)."""
    now = now_ms() if now is None else now
    if game_id not in store.log_lengths([game_id]):
        document = archive.get(game_id)
        if document is not None:
            if not dry_run:  # what a crash after the log's deletion left (derived keys, index rows on a cluster)
                store.drop_archived(game_id, now, players=listing_of(document)[1])
            return Outcome(game_id, "cleaned")
        raise GameNotFound(game_id)
    outcome = Outcome(game_id, "kept")
    players: list[str] = []

    def write_first() -> bool:
        document, why = document_of(store, messages, game_id, key)
        if document is None:
            outcome.reason = why
            return False
        since = over_since(document["bundle"]["log"])
        if since is None or since > now - older_than * 1000:
            outcome.reason = f"over for less than {older_than:g} s"
            return False
        outcome.action = "archived"
        if dry_run:
            return False
        existing = archive.get(game_id)
        if not _same(existing, document):
            archive.put(game_id, {**document, "archived_at": now})
            existing = archive.get(game_id)
            if not _same(existing, document):
                raise OSError(f"the archived document of {game_id} does not read back as written")
        outcome.size = len(document["bundle"]["log"])
        players[:] = document["listed"]["players"]
        return True

    if store.drop_archived(game_id, now, write_first, players):
        if outcome.action == "archived" and not dry_run:
            ARCHIVED.inc()  # referee_archived_games_total (docs/operations.md, "Metrics and alerts")
    elif outcome.action == "archived" and not dry_run:
        outcome.action, outcome.reason = "retry", "the game changed while it was archived; nothing deleted"
    return outcome


def archive_games(store: RedisStore, messages: MessageStore, archive: Archive, key: Ed25519PrivateKey, *,
                  older_than: float = ARCHIVE_AFTER, dry_run: bool = False, games: list[str] | None = None,
                  progress: Callable[[int, int], None] | None = None) -> list[Outcome]:
    """:func:`archive_game` of every listed game still in Redis (or of ``games``), and the cleaning of every
    game archived before whose keys a crash left behind."""
    now = now_ms()
    if games is None:  # the games in Redis, and those archived whose index rows a crash left (on a cluster)
        listed = store.live_games()
        live = store.log_lengths(listed)
        games = [g for g in listed if g in live or archive.has(g)]
    targets = games
    out = []
    for game_id in targets:
        try:
            out.append(archive_game(store, messages, archive, game_id, key, older_than=older_than, now=now,
                                    dry_run=dry_run))
        except GameNotFound:
            out.append(Outcome(game_id, "kept", "no such game"))
        if progress is not None:
            progress(len(out), len(targets))
    if not dry_run:
        drop_outbox_marks(store, {o.game for o in out if o.action in ("archived", "cleaned")})
    return out


def drop_outbox_marks(store: RedisStore, games: set[str], batch: int = 500) -> int:
    """Delete the outbox's marks of the events of ``games`` (``{outbox}:seen:<game>:…``, which keep an event
    from being sent twice when a game's log is folded again, and expire by themselves after
    ``keys.OUTBOX_SEEN_TTL``): an archived game is never folded again, so its marks are only memory (about a
    hundred bytes an event: one a move). One ``SCAN`` of the marks for a whole pass (not one a game), so a pass
    costs a walk over the keyspace once; returns how many were deleted. A crash before it leaves the marks to
    expire."""
    if not games:
        return 0
    prefix = OUTBOX_SEEN.format(event="")
    doomed: list[Any] = []
    deleted = 0
    for raw in store.redis.scan_iter(match=OUTBOX_SEEN.format(event="*"), count=1000):
        if _text(raw)[len(prefix):].split(":", 1)[0] in games:
            doomed.append(raw)
            if len(doomed) >= batch:
                deleted += int(store.redis.delete(*doomed))
                doomed = []
    if doomed:
        deleted += int(store.redis.delete(*doomed))
    return deleted


def due_games(store: RedisStore, older_than: float, now: int | None = None, chunk: int = 500) -> list[str]:
    """The listed games that may be due for the archive: still in Redis, their projection over and last
    written at least ``older_than`` seconds ago (it is written after the ``revealed`` entry, so this never
    misses a due game whose projection was not rebuilt since). One pipelined ``HMGET`` per game, in chunks;
    :func:`archive_game` checks each exactly."""
    cutoff = (now_ms() if now is None else now) - older_than * 1000
    due: list[str] = []
    offset = 0
    while True:
        games = store.live_games(offset, chunk)
        if not games:
            return due
        offset += len(games)
        pipe = store.work.pipeline(transaction=False)
        for game_id in games:
            pipe.hmget(game_keys(game_id).projection, ["status", "updated_at"])
        for game_id, (status, updated) in zip(games, pipe.execute(), strict=True):
            if status is None or updated is None or json.loads(status) not in OVER:
                continue
            if parse_ms(json.loads(updated)) <= cutoff:
                due.append(game_id)
