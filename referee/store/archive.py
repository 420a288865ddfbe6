"""The archive of finished games (CONTRACT section 13): where a game goes when it leaves Redis.

One small interface, :class:`Archive` (a directory today, an object store tomorrow: ``docs/operations.md``,
"Archive"), holding one *document* per game, named by the game's id and written once:

``{"format": "referee-archive/1", "game": "<id>", "archived_at": <ms>,
   "bundle": {...},            # the game's verification bundle, exactly as GET /games/{id}/export answered it
   "secret": "<hex>" | null,   # the server seed (revealed in the log anyway; kept as the store kept it)
   "projection": {...} | null, # the replay worker's stored projection (PROJECTION_FIELDS, decoded)
   "verdicts": [...],          # its stored verdicts, one per log entry
   "messages": [...],          # the game's message stream as stored (public and private: nothing is lost)
   "mutes": {"<seat>": "<stored JSON>"},
   "listed": {"games": <ms> | null,          # the game's score in the lobby's index (referee:games)
              "players": {"<key>": <ms>}}}``  # and in each seated key's index (player:{<key>}:games)

The log is the bundle's ``log`` (not repeated). The store (:class:`referee.store.RedisStore` with an
``archive``) answers a game's reads from this document once the game's keys are gone from Redis, so every
read answers the same before and after archiving.

:class:`DirectoryArchive` keeps ``<dir>/<id[:2]>/<id>.json``: written to a temporary file in the same folder,
fsync'd, renamed over, and the folder fsync'd, so a crash leaves either no file or the whole file.

The archive also *lists* its games (:meth:`Archive.games`, :meth:`Archive.player_games`), so that an archived
game leaves nothing in Redis — not even its row in the lobby's index or in its players' indexes — while the
lobby and a player's games still answer it in the same place: each document's ``listed`` scores are recorded
when it is put. :class:`DirectoryArchive` keeps them in ``<dir>/index.jsonl``, one JSON line per put, appended
and fsync'd after the document (so a listed game's document is always there), and read by every process
incrementally (the lines appended since it last looked: one ``stat`` a read when nothing changed).
"""

from __future__ import annotations

import bisect
import errno
import json
import os
import tempfile
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..host.durable import fsync_dir
from ..timecontrol import parse_ms
from .keys import valid_game_id

ARCHIVE_FORMAT = "referee-archive/1"
#: ``(game, score)`` rows of a listing, and a list of ids (named here: ``Archive.list`` shadows ``list`` in the class)
Rows = list[tuple[str, int]]
Ids = list[str]
#: how many parsed documents a :class:`DirectoryArchive` keeps (the most recently read)
CACHED = 64
#: the file of :class:`DirectoryArchive`'s listing (one JSON object a line, appended)
INDEX_FILE = "index.jsonl"


def listing_of(document: dict[str, Any]) -> tuple[int | None, dict[str, int]]:
    """``(score in the lobby's index or None, {key: score in the key's index})`` of a document; a document
    without ``listed`` (written before it existed) is listed by its ``created`` entry's time."""
    listed = document.get("listed")
    if isinstance(listed, dict):
        games = listed.get("games")
        players = listed.get("players") or {}
        return (int(games) if games is not None else None), {str(k): int(v) for k, v in players.items()}
    created = (document.get("bundle") or {}).get("log", [{}])[0]
    at = parse_ms(created.get("at"))
    keys = {seat.get("key") for seat in created.get("seats") or [] if isinstance(seat, dict)}
    return at, {key: at for key in keys if isinstance(key, str)}


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

    @abstractmethod
    def games(self, offset: int = 0, limit: int | None = None) -> Rows:
        """``(game, score)`` of the archived games listed in the lobby, by their score in the lobby's index as it
        was in Redis, newest first (ties: the greater id first, as Redis's ``ZREVRANGE``)."""

    @abstractmethod
    def count(self) -> int:
        """How many games are archived (listed or not)."""

    @abstractmethod
    def player_games(self, public_key: str) -> Rows:
        """``(game, score)`` of the archived games seated by ``public_key``, newest first (as :meth:`games`)."""

    @abstractmethod
    def archived_order(self) -> Ids:
        """The ids of the archived games, oldest archived first."""


def encode_document(document: dict[str, Any]) -> bytes:
    # keys in their order (not sorted): the reads answer the projection's objects as they were stored
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class _Listing:
    """The archive's lists in memory, from the index lines: the lobby's (ascending ``(score, id)``), each key's,
    and the order of archiving. A game listed again (archived again after a refused deletion) replaces its
    earlier rows."""

    def __init__(self) -> None:
        self.lobby: list[tuple[int, str]] = []
        self.players: dict[str, list[tuple[int, str]]] = {}
        self.rows: dict[str, tuple[int | None, dict[str, int]]] = {}
        self.order: dict[str, None] = {}

    def add(self, game: str, listed: int | None, players: dict[str, int]) -> None:
        old = self.rows.get(game)
        if old == (listed, players):
            return
        if old is not None:
            if old[0] is not None:
                _remove(self.lobby, (old[0], game))
            for key, score in old[1].items():
                _remove(self.players.get(key, []), (score, game))
        self.rows[game] = (listed, players)
        self.order.pop(game, None)
        self.order[game] = None
        if listed is not None:
            bisect.insort(self.lobby, (listed, game))
        for key, score in players.items():
            bisect.insort(self.players.setdefault(key, []), (score, game))


def _remove(rows: list[tuple[int, str]], row: tuple[int, str]) -> None:
    at = bisect.bisect_left(rows, row)
    if at < len(rows) and rows[at] == row:
        del rows[at]


def _newest(rows: list[tuple[int, str]], offset: int, limit: int | None) -> list[tuple[str, int]]:
    stop = len(rows) - offset
    start = 0 if limit is None else max(stop - limit, 0)
    return [(game, score) for score, game in reversed(rows[start:max(stop, 0)])]


class DirectoryArchive(Archive):
    """An :class:`Archive` in a folder: ``<path>/<first two characters of the id>/<id>.json``, and its listing in
    ``<path>/index.jsonl``."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._listing = _Listing()
        self._read_to = 0  # bytes of the index file already read
        self._identity: tuple[int, int] | None = None  # (device, inode) of the index file read
        self._documents: OrderedDict[str, tuple[tuple[int, int, int], dict[str, Any]]] = OrderedDict()

    @property
    def index_file(self) -> Path:
        return self.path / INDEX_FILE

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
        renamed = False
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, 0o600)
            os.replace(temp, target)
            renamed = True
            fsync_dir(folder)
            if created:
                fsync_dir(self.path)
            listed, players = listing_of(document)
            self._append_index({"game": game_id, "listed": listed, "players": players})
        except BaseException:
            # a file that could not be written whole (ENOSPC at the write, the fsync, the index's line) is not
            # left: the game's keys stay in Redis and a later pass writes it again (issue 50)
            Path(temp).unlink(missing_ok=True)
            if renamed:
                target.unlink(missing_ok=True)
            raise

    def _append_index(self, row: dict[str, Any]) -> None:
        """Append one line to the index and fsync it (and the folder when the file is new). A line torn by a
        crash is ended first (and skipped by the readers)."""
        line = json.dumps(row, separators=(",", ":")).encode() + b"\n"
        new = not self.index_file.exists()
        fd = os.open(self.index_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size:
                with open(self.index_file, "rb") as tail:
                    tail.seek(size - 1)
                    if tail.read(1) != b"\n":
                        line = b"\n" + line
            try:
                if os.write(fd, line) != len(line):
                    raise OSError(errno.ENOSPC, f"a short write to {self.index_file}")
                os.fsync(fd)
            except OSError:
                os.ftruncate(fd, size)  # no torn line left behind
                raise
        finally:
            os.close(fd)
        if new:
            fsync_dir(self.path)

    def _refresh(self) -> _Listing:
        """The listing with every line appended since the last look (one ``stat`` when nothing changed; the
        whole file again if it was replaced, e.g. by a restore)."""
        with self._lock:
            try:
                stat = self.index_file.stat()
            except FileNotFoundError:
                if self._identity is not None:
                    self._listing, self._read_to, self._identity = _Listing(), 0, None
                return self._listing
            identity = (stat.st_dev, stat.st_ino)
            if identity != self._identity or stat.st_size < self._read_to:
                self._listing, self._read_to, self._identity = _Listing(), 0, identity
            if stat.st_size > self._read_to:
                with open(self.index_file, "rb") as index:
                    index.seek(self._read_to)
                    data = index.read(stat.st_size - self._read_to)
                end = data.rfind(b"\n") + 1  # a line still being written waits for the next look
                for raw in data[:end].splitlines():
                    try:
                        row = json.loads(raw)
                        game = row["game"]
                        listed = row.get("listed")
                        players = {str(k): int(v) for k, v in (row.get("players") or {}).items()}
                    except (ValueError, KeyError, TypeError, AttributeError):
                        continue  # a line torn by a crash
                    if valid_game_id(game):
                        self._listing.add(game, int(listed) if listed is not None else None, players)
                self._read_to += end
            return self._listing

    def games(self, offset: int = 0, limit: int | None = None) -> Rows:
        listing = self._refresh()
        with self._lock:
            return _newest(listing.lobby, offset, limit)

    def count(self) -> int:
        return len(self._refresh().rows)

    def player_games(self, public_key: str) -> Rows:
        listing = self._refresh()
        with self._lock:
            return _newest(listing.players.get(public_key, []), 0, None)

    def archived_order(self) -> Ids:
        listing = self._refresh()
        with self._lock:
            return list(listing.order)

    def rebuild_index(self) -> int:
        """Write the index again from the documents (if it was lost or damaged): a new file beside it, fsync'd,
        renamed over. Returns how many games it lists."""
        rows = []
        for game_id in self.list():
            document = self.get(game_id)
            if document is not None:
                listed, players = listing_of(document)
                rows.append({"game": game_id, "listed": listed, "players": players})
        self.path.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".index.", suffix=".tmp", dir=self.path)
        with os.fdopen(fd, "wb") as out:
            for row in rows:
                out.write(json.dumps(row, separators=(",", ":")).encode() + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, 0o600)
        os.replace(temp, self.index_file)
        fsync_dir(self.path)
        return len(rows)

    def get(self, game_id: str) -> dict[str, Any] | None:
        """The document, parsed once and kept (the last :data:`CACHED` read) while its file is the same (one
        ``stat`` a read): a read of an archived game asks for it several times (log, tip, projection, seed).
        The same object is answered each time: callers copy what they change."""
        if not valid_game_id(game_id):
            return None
        path = self.file_of(game_id)
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        identity = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        with self._lock:
            cached = self._documents.get(game_id)
            if cached is not None and cached[0] == identity:
                self._documents.move_to_end(game_id)
                return cached[1]
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        document = json.loads(data)
        if not isinstance(document, dict) or document.get("format") != ARCHIVE_FORMAT:
            raise ValueError(f"{path} is not a {ARCHIVE_FORMAT} document")
        with self._lock:
            self._documents[game_id] = (identity, document)
            while len(self._documents) > CACHED:
                self._documents.popitem(last=False)
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

