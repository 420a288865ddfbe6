"""The replay workers' archiver (CONTRACT section 13, "Archive"): every ``REFEREE_ARCHIVE_EVERY`` seconds, one
worker at a time (a lock in the log's Redis) moves the games over for ``REFEREE_ARCHIVE_AFTER`` seconds into
the archive (``referee.games_service.archiving``), as ``referee archive`` does by hand. It signs the archived
bundles with the referee's key, so it runs only where the key file (``REFEREE_KEY_FILE``) is there already:
a worker never makes a key of its own."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from referee.games_service.archiving import archive_game, drop_outbox_marks, due_games
from referee.host.diskspace import LogDisk, log_disk
from referee.protocol.signing import read_or_create_key_file
from referee.store import GameNotFound, RedisStore
from referee.store.archive import DirectoryArchive
from referee.store.messages import messages_of

from .looping import PassLoop

log = logging.getLogger(__name__)

#: the lock one archiving pass holds (a string key on the log's Redis, with an expiry)
LOCK = "referee:archiver"


class Archiver(PassLoop):
    """One archiving pass every ``every`` seconds, in a daemon thread."""

    def __init__(self, store: RedisStore, archive: DirectoryArchive, key: Any, after: float, every: float,
                 *, disk: LogDisk | None = None):
        super().__init__("archiver", self.run_once, pause=every, retry=max(every, 1.0))
        self.store, self.archive, self.key, self.after, self.every = store, archive, key, after, every
        #: the log Redis's disk: below its floor no pass runs (its lock and deletions are writes there)
        self.disk = disk
        #: the last pass met a file it could not write (said once, until a game is archived again)
        self.failing = False
        self.messages = messages_of(store)
        self.token = f"{os.getpid()}-{id(self)}"

    def run_once(self) -> int:
        """One pass (skipped while another worker's holds the lock); returns how many games it archived."""
        if self.disk is not None and self.disk.full():
            log.warning("not archiving this pass: the log's disk is below REFEREE_MIN_FREE_DISK")
            return 0
        if not self.store.redis.set(LOCK, self.token, nx=True, ex=max(60, int(self.every * 2))):
            return 0
        moved = 0
        gone: set[str] = set()
        try:
            for game_id in due_games(self.store, self.after):
                if self.stopping.is_set():
                    break
                try:
                    outcome = archive_game(self.store, self.messages, self.archive, game_id, self.key,
                                           older_than=self.after)
                except GameNotFound:
                    continue
                except OSError as exc:  # its file could not be written whole: nothing deleted, no file left
                    if not self.failing:
                        log.warning("archiving stopped for this pass: %s could not be written (%s); its keys stay "
                                    "in Redis and the next pass tries again", game_id, exc)
                    self.failing = True
                    break
                self.failing = False
                if outcome.action == "archived":
                    moved += 1
                if outcome.action in ("archived", "cleaned"):
                    gone.add(game_id)
            drop_outbox_marks(self.store, gone)  # one walk over the keys a pass
            if moved:
                log.info("archived %d game(s) into %s", moved, self.archive.path)
        finally:
            if self.store.redis.get(LOCK) == self.token.encode():
                self.store.redis.delete(LOCK)
        return moved


def archiver_of(store: RedisStore, config: dict[str, Any]) -> Archiver | None:
    """The worker's archiver from the settings, or ``None``: ``REFEREE_ARCHIVE_EVERY`` is 0 or the referee's key
    file is not there. (On a Redis Cluster as on one Redis: each game's keys are on one master.)"""
    every = config["REFEREE_ARCHIVE_EVERY"]
    if not every or every <= 0:
        return None
    key_file = Path(config["REFEREE_KEY_FILE"])
    if not key_file.is_file():
        log.warning("not archiving finished games: the referee's key file %s is not here (REFEREE_KEY_FILE)",
                    key_file)
        return None
    archive = DirectoryArchive(config["REFEREE_ARCHIVE_DIR"])
    store.use_archive(archive)
    return Archiver(store, archive, read_or_create_key_file(str(key_file)), config["REFEREE_ARCHIVE_AFTER"], every,
                    disk=log_disk(config, store.redis))
