"""The archive of finished games (CONTRACT section 13): where a game goes when it leaves Redis.

One small interface, :class:`Archive` (a directory today, an object store tomorrow: ``docs/operations.md``,
"Archive"), holding one *document* per game, named by the game's id and written once:

``{"format": "referee-archive/1", "game": "<id>", "archived_at": <ms>,
   "bundle": {...},            # the game's verification bundle, exactly as GET /games/{id}/export answered it
   "secret": "<hex>" | null,   # the server seed (revealed in the log anyway; kept as the store kept it)
   "projection": {...} | null, # the replay worker's stored projection (PROJECTION_FIELDS, decoded)
   "verdicts": [...],          # its stored verdicts, one per log entry
   "messages": [...],          # the game's message stream as stored (public and private: nothing is lost)
   "mutes": {"<seat>": "<stored JSON>"}}``

The log is the bundle's ``log`` (not repeated). The store (:class:`referee.store.RedisStore` with an
``archive``) answers a game's reads from this document once the game's keys are gone from Redis, so every
read answers the same before and after archiving.

:class:`DirectoryArchive` keeps ``<dir>/<id[:2]>/<id>.json``: written to a temporary file in the same folder,
fsync'd, renamed over, and the folder fsync'd, so a crash leaves either no file or the whole file.
"""

from __future__ import annotations

import json
import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .keys import valid_game_id

ARCHIVE_FORMAT = "referee-archive/1"


class Archive(ABC):
    """Where archived games are kept: one document (a JSON object) per game id, written once."""

    @abstractmethod
    def put(self, game_id: str, document: dict[str, Any]) -> None:
        """Store ``document`` as ``game_id``'s, durably (on disk, or acknowledged by the object store) before
        returning; replaces a document already there (the same game archived again after a crash)."""

    @abstractmethod
    def get(self, game_id: str) -> dict[str, Any] | None:
        """The game's document, or ``None`` when the game is not archived (or ``game_id`` is not a valid id)."""

    def has(self, game_id: str) -> bool:
        """Whether the game is archived."""
        return self.get(game_id) is not None

    @abstractmethod
    def list(self) -> Iterator[str]:
        """The ids of every archived game (in no particular order)."""


def encode_document(document: dict[str, Any]) -> bytes:
    # keys in their order (not sorted): the reads answer the projection's objects as they were stored
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class DirectoryArchive(Archive):
    """An :class:`Archive` in a folder: ``<path>/<first two characters of the id>/<id>.json``."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def file_of(self, game_id: str) -> Path:
        if not valid_game_id(game_id):
            raise ValueError(f"not a valid game id: {game_id!r}")
        return self.path / game_id[:2] / f"{game_id}.json"

    def put(self, game_id: str, document: dict[str, Any]) -> None:
        target = self.file_of(game_id)
        folder = target.parent
        created = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        data = encode_document(document)
        fd, temp = tempfile.mkstemp(prefix=f".{game_id}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, 0o600)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        _fsync_dir(folder)
        if created:
            _fsync_dir(self.path)

    def get(self, game_id: str) -> dict[str, Any] | None:
        if not valid_game_id(game_id):
            return None
        try:
            data = self.file_of(game_id).read_bytes()
        except FileNotFoundError:
            return None
        document = json.loads(data)
        if not isinstance(document, dict) or document.get("format") != ARCHIVE_FORMAT:
            raise ValueError(f"{self.file_of(game_id)} is not a {ARCHIVE_FORMAT} document")
        return document

    def has(self, game_id: str) -> bool:
        return valid_game_id(game_id) and self.file_of(game_id).is_file()

    def list(self) -> Iterator[str]:
        if not self.path.is_dir():
            return
        for folder in sorted(self.path.iterdir()):
            if folder.is_dir():
                for file in sorted(folder.glob("*.json")):
                    if valid_game_id(file.stem):
                        yield file.stem


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
