"""Backup and restore of what cannot be rebuilt: the log Redis, the archive, the referee's signing key
(``referee backup`` / ``referee restore``, ``referee/cli/backup.py``; ``docs/operations.md``).

A backup is one plain tar file (mode 0600: it holds the referee's private key)::

    redis/dump.rdb     the log Redis at one instant (an RDB snapshot, taken by a fork of the server)
    referee-key        the referee's Ed25519 signing key (0600)
    archive/…          every file of the archive directory, when there is one
    manifest.json      last: format, versions, time, how the snapshot was taken, and the size and
                       sha256 of every other member, signed with the referee's key (``referee_sig``)

The snapshot of the log Redis is taken one of two ways, both a fork of the server at one instant, so
every write Redis acknowledged before the backup began (every 2xx of the referee) is in it:

* ``bgsave``: when the Redis runs on this machine (a loopback URL and its ``CONFIG GET dir`` readable
  here, as with ``referee serve``'s embedded one): ``BGSAVE``, wait for ``LASTSAVE`` to move past the
  instant the backup began, then copy ``dir/dbfilename`` (Redis writes it to a temporary file and
  renames it: the copy is of one whole snapshot).
* ``sync``: for any other Redis: the replication handshake (``SYNC``, as ``redis-cli --rdb`` does), which
  streams the snapshot a replica would get. A Redis that refuses ``SYNC`` (most hosted ones) is refused
  with a message: use the provider's own snapshots there.

The archive is copied *after* the snapshot: a game archived in between is in both (the archiver's own
"written but not yet deleted" case), never in neither; its index is measured before its documents are listed
(``_archive_files``), so the copied index lists no game without its document.

The manifest is signed (Ed25519, over its RFC 8785 bytes without ``referee_sig``, ``ctx``
``referee/backup``) with the referee's key it carries, and a restore checks it against the public key the
operator names (``referee restore --referee-key KEY``): a backup whose key, archive or snapshot was swapped
and whose manifest was re-hashed (and even re-signed with the swapped-in key) is refused, because the one
key that can sign a manifest the operator accepts is the operator's own (:func:`authenticate`). What that
proves and what it does not is in ``docs/operations.md`` ("What a restore proves").

Restore writes into an empty data directory only, checks the manifest's signature and then every member's
size and sha256 against the manifest before anything is put in place, turns the RDB into the append-only
file ``referee serve`` loads (a private ``redis-server`` loads the RDB, ``CONFIG SET appendonly yes``
rewrites it into an AOF), and checks that the log Redis started as ``serve`` starts it holds as many
keys. The projections are not in a backup: the first replay worker's full reconciler pass rebuilds them
from the logs.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import shutil
import socket
import ssl
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO
from urllib.parse import unquote, urlsplit

from ..host.durable import fsync_dir

FORMAT = "referee-backup"
FORMAT_VERSION = 2  # 2: the manifest is signed with the referee's key (``referee_sig``); 1 was not
#: what the manifest's signature is for (part of the signed bytes: no other signature of the referee's passes)
BACKUP_CTX = "referee/backup"
SIGNATURE = "referee_sig"
MANIFEST = "manifest.json"
RDB_MEMBER = "redis/dump.rdb"
KEY_MEMBER = "referee-key"
ARCHIVE_PREFIX = "archive/"
_CHUNK = 1 << 20
_LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}

#: ``progress(stage, done_bytes, total_bytes_or_None)``: what a terminal shows while a backup runs
Progress = Callable[[str, int, int | None], None]


class BackupError(RuntimeError):
    """The backup or the restore cannot be done; the message says why and what to do."""


def _no_progress(stage: str, done: int, total: int | None) -> None:
    pass


def no_space(error: BaseException) -> bool:
    """Whether ``error`` is a disk (or a quota) that is full."""
    return isinstance(error, OSError) and error.errno in {errno.ENOSPC, errno.EDQUOT}


# -- taking the snapshot of the log Redis -------------------------------------------------------------

def _redis_client(url: str) -> Any:
    import redis  # noqa: PLC0415

    return redis.Redis.from_url(url, socket_timeout=60, socket_connect_timeout=5)


def local_rdb_path(client: Any, url: str) -> Path | None:
    """Where the Redis at ``url`` writes its RDB, if that Redis runs on this machine and we may read its
    directory; else None (then the snapshot comes over the replication protocol)."""
    import redis  # noqa: PLC0415

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "unix" and host not in _LOOPBACK and not host.startswith("127."):
        return None
    try:
        directory = client.config_get("dir").get("dir")
        filename = client.config_get("dbfilename").get("dbfilename")
    except redis.ResponseError:  # CONFIG renamed or forbidden
        return None
    if not directory or not filename:
        return None
    path = Path(directory) / filename
    if not os.access(directory, os.R_OK | os.X_OK):
        return None
    return path


def _in_progress(error: Exception) -> bool:
    text = str(error).lower()
    return "in progress" in text or "rewriting" in text


def bgsave_snapshot(client: Any, rdb_path: Path, out: BinaryIO, progress: Progress = _no_progress,
                    timeout: float = 3600.0) -> dict[str, Any]:
    """``BGSAVE`` on a Redis of this machine, wait for it, copy its RDB into ``out``.

    A save (or AOF rewrite) already under way when we ask began before the backup did: we wait for it
    to end and ask again, so the snapshot copied is one forked after the backup began."""
    import redis  # noqa: PLC0415

    def last_save() -> int:
        return int(client.info("persistence")["rdb_last_save_time"])  # LASTSAVE, in the server's seconds

    while int(client.time()[0]) <= last_save():
        time.sleep(0.05)  # LASTSAVE has one-second steps: ours must end in a later second than the last one
    before = last_save()
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.bgsave()
            break
        except redis.ResponseError as error:
            if not _in_progress(error) or time.monotonic() > deadline:
                raise BackupError(f"the log Redis refused BGSAVE: {error}") from error
            progress("waiting for a save already under way", 0, None)
            time.sleep(0.2)
    progress("BGSAVE", 0, None)
    while True:
        info = client.info("persistence")
        if not info.get("rdb_bgsave_in_progress"):  # ours has ended (Redis marks it under way as it forks)
            if int(info["rdb_last_save_time"]) > before:
                break
            # a save that failed leaves LASTSAVE where it was: say so now, not after ``timeout`` (issue 50)
            raise BackupError("the log Redis could not save its snapshot (rdb_last_bgsave_status="
                              f"{info.get('rdb_last_bgsave_status')}): no space on its disk? see its log; "
                              "nothing was written")
        if time.monotonic() > deadline:
            raise BackupError(f"BGSAVE did not finish within {timeout:.0f}s")
        time.sleep(0.05)
    if info.get("rdb_last_bgsave_status") != "ok":
        status = info.get("rdb_last_bgsave_status")
        raise BackupError(f"BGSAVE failed on the log Redis (rdb_last_bgsave_status={status}); see its log (disk full?)")
    with open(rdb_path, "rb") as rdb:  # Redis renames a complete file into place: this is one snapshot
        total = os.fstat(rdb.fileno()).st_size
        done = 0
        while chunk := rdb.read(_CHUNK):
            out.write(chunk)
            done += len(chunk)
            progress("copying the RDB", done, total)
    return {"method": "bgsave", "rdb_file": str(rdb_path), "lastsave": int(info["rdb_last_save_time"])}


def _command(*parts: str | bytes) -> bytes:
    encoded = [part.encode() if isinstance(part, str) else part for part in parts]
    return b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(part), part) for part in encoded)


def _reply_line(stream: IO[bytes]) -> bytes:
    line = stream.readline()
    if not line:
        raise BackupError("the log Redis closed the connection")
    return line.rstrip(b"\r\n")


def sync_snapshot(url: str, out: BinaryIO, progress: Progress = _no_progress, timeout: float = 60.0) -> dict[str, Any]:
    """The snapshot a new replica would get (``SYNC``, what ``redis-cli --rdb`` does), written to ``out``.

    The server forks at the ``SYNC``: the RDB holds every write acknowledged before it."""
    parts = urlsplit(url)
    if parts.scheme not in {"redis", "rediss"}:
        raise BackupError(f"a snapshot over the replication protocol needs a redis:// or rediss:// URL, not {parts.scheme}://")
    host, port = parts.hostname or "127.0.0.1", parts.port or 6379
    raw = socket.create_connection((host, port), timeout=timeout)
    sock: socket.socket = raw
    if parts.scheme == "rediss":
        sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host)
    with sock, sock.makefile("rb") as stream:
        if parts.password:
            user = unquote(parts.username) if parts.username else None
            auth = ("AUTH", user, unquote(parts.password)) if user else ("AUTH", unquote(parts.password))
            sock.sendall(_command(*auth))
            answer = _reply_line(stream)
            if not answer.startswith(b"+"):
                raise BackupError(f"the log Redis refused the password: {answer.decode(errors='replace')}")
        # we read the diskless form too (no RDB written on the server where repl-diskless-sync is on, the
        # default from Redis 7), and from Redis 7 on ask for the snapshot alone; an older Redis answers an
        # error to what it does not know: harmless
        sock.sendall(_command("REPLCONF", "capa", "eof") + _command("REPLCONF", "rdb-only", "1"))
        _reply_line(stream)
        _reply_line(stream)
        sock.sendall(_command("SYNC"))
        while True:
            line = _reply_line(stream)
            if line:  # empty lines: the server's keep-alives while it forks and saves
                break
            progress("waiting for the snapshot", 0, None)
        if line.startswith(b"-"):
            raise BackupError(f"the log Redis refused SYNC ({line[1:].decode(errors='replace')}): a hosted Redis "
                              "usually does; back it up with the provider's snapshots (docs/operations.md)")
        if not line.startswith(b"$"):
            raise BackupError(f"unexpected answer to SYNC: {line[:80]!r}")
        done = 0
        if line.startswith(b"$EOF:"):  # diskless: the payload ends with a 40-byte mark
            mark = line[5:]
            tail = b""
            while True:
                chunk = stream.read1(_CHUNK)
                if not chunk:
                    raise BackupError("the snapshot stream ended early")
                data = tail + chunk
                end = data.find(mark)
                if end >= 0:  # what follows the mark is the replication stream: not ours
                    out.write(data[:end])
                    done += end
                    break
                keep = len(mark) - 1
                body, tail = data[:-keep], data[-keep:]
                out.write(body)
                done += len(body)
                progress("receiving the RDB", done, None)
        else:
            total = int(line[1:])
            while done < total:
                chunk = stream.read(min(_CHUNK, total - done))
                if not chunk:
                    raise BackupError("the snapshot stream ended early")
                out.write(chunk)
                done += len(chunk)
                progress("receiving the RDB", done, total)
    return {"method": "sync"}


# -- writing the backup file ---------------------------------------------------------------------------

class _Hashing:
    """A file read through, counting and hashing what passes."""

    def __init__(self, raw: BinaryIO, on_read: Callable[[int], None] | None = None):
        self.raw, self.sha256, self.size, self.on_read = raw, hashlib.sha256(), 0, on_read

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.sha256.update(data)
        self.size += len(data)
        if self.on_read and data:
            self.on_read(len(data))
        return data



def _archive_files(archive_dir: Path | None) -> list[tuple[Path, int | None]]:
    """The archive's files to copy, each with how much of it (``None``: all). An archiver may be at work: the
    files at the archive's top (its index, ``index.jsonl``, one line appended per game archived once the game's
    document is written and fsync'd) are measured *before* the documents are listed, and copied only up to that
    size, so every game the copied index lists has its document in the copy (a game archived meanwhile may have
    its document copied without its line: the snapshot, taken before, holds it whole, and the next archiving pass
    lists it again). Files whose name begins with a dot are the archive's temporary files (written, then renamed
    into place or removed): never copied."""
    if archive_dir is None or not archive_dir.is_dir():
        return []

    def kept(path: Path) -> bool:
        return path.is_file() and not path.is_symlink() and not path.name.startswith(".")

    tops = [(path, path.stat().st_size) for path in sorted(archive_dir.iterdir()) if kept(path)]
    documents = sorted(path for path in archive_dir.rglob("*") if path.parent != archive_dir and kept(path))
    return [*tops, *((path, None) for path in documents)]


def _public_key(key_bytes: bytes) -> str | None:
    from ..protocol.signing import load_private_key, public_key_b64  # noqa: PLC0415

    try:
        return public_key_b64(load_private_key(key_bytes.decode("ascii")))
    except (ValueError, UnicodeDecodeError):
        return None


def _private_key(key_bytes: bytes, key_path: Path) -> Any:
    from ..protocol.signing import load_private_key  # noqa: PLC0415

    try:
        return load_private_key(key_bytes.decode("ascii"))
    except (ValueError, UnicodeDecodeError) as error:
        raise BackupError(f"{key_path} is not a referee key (base64url of 32 bytes): the backup's manifest "
                          "is signed with it, so there is nothing to sign with") from error


def sign_manifest(manifest: dict[str, Any], key: Any) -> dict[str, Any]:
    """``manifest`` with ``ctx`` and ``referee_sig``: the referee's Ed25519 signature over the RFC 8785 bytes of
    the manifest without ``referee_sig``."""
    from ..protocol.signing import sign  # noqa: PLC0415

    body = {**{k: v for k, v in manifest.items() if k != SIGNATURE}, "ctx": BACKUP_CTX}
    return {**body, SIGNATURE: sign(key, body)}


def authenticate(manifest: dict[str, Any], referee_key: str | None, *, unauthenticated: bool = False,
                 backup: str | Path = "the backup") -> str | None:
    """Check that ``manifest`` was signed with ``referee_key`` (the public key the operator names, base64url),
    and that it names that key as the one it carries; :class:`BackupError` saying why not. Returns the key
    checked, or None when the operator chose ``unauthenticated`` (nothing is proved then)."""
    from ..protocol.signing import b64url_decode, load_public_key, verify  # noqa: PLC0415

    if unauthenticated:
        return None
    if not referee_key:
        raise BackupError("name the referee key this backup must be signed with: --referee-key KEY (the public "
                          "key `referee backup` printed, or GET /referee-key of the service it came from; or "
                          "$REFEREE_RESTORE_KEY). Without it nothing shows the backup is yours and unaltered "
                          "(--unauthenticated restores it anyway)")
    try:
        b64url_decode(referee_key)  # canonical, unpadded base64url only: a key has one written form (issue 37)
        load_public_key(referee_key)
    except ValueError as error:
        raise BackupError(f"--referee-key {referee_key!r} is not an Ed25519 public key (base64url of 32 "
                          f"bytes): {error}") from None
    if manifest.get("format_version") == 1 or SIGNATURE not in manifest:
        raise BackupError(f"{backup} has an unsigned manifest (format 1, written before backups were signed): "
                          "nothing shows it is unaltered; restore it with --unauthenticated if you trust the "
                          "file, then take a new backup")
    body = {k: v for k, v in manifest.items() if k != SIGNATURE}
    signature = manifest[SIGNATURE]
    if body.get("ctx") != BACKUP_CTX or not isinstance(signature, str) or not verify(referee_key, body, signature):
        raise BackupError(f"{backup}: its manifest is not signed by the referee key you named ({referee_key}): the "
                          "backup was altered, or is another referee's — nothing restored")
    if body.get("referee_public_key") != referee_key:
        raise BackupError(f"{backup}: its manifest is signed by {referee_key} but carries the key "
                          f"{body.get('referee_public_key')}: nothing restored")
    return referee_key


@dataclass
class BackupSummary:
    path: Path
    manifest: dict[str, Any]
    size: int = 0
    members: list[dict[str, Any]] = field(default_factory=list)


def _method_for(url: str, client: Any, method: str) -> Path | None:
    if method == "sync":
        return None
    rdb_path = local_rdb_path(client, url)
    if method == "bgsave" and rdb_path is None:
        raise BackupError("--method bgsave needs a Redis on this machine (a loopback URL) whose directory "
                          "(CONFIG GET dir) we may read")
    return rdb_path


def write_backup(out_path: str | Path, redis_url: str, key_file: str | Path, archive_dir: str | Path | None,
                 *, method: str = "auto", referee_version: str = "", progress: Progress = _no_progress
                 ) -> BackupSummary:
    """Write the backup file ``out_path`` (a new file, 0600; written beside it and renamed into place)."""
    import redis  # noqa: PLC0415

    out_path = Path(out_path)
    if out_path.exists():
        raise BackupError(f"{out_path} exists: not overwriting it")
    key_path = Path(key_file)
    try:
        key_bytes = key_path.read_bytes()
    except OSError as error:
        raise BackupError(f"cannot read the referee's key {key_path}: {error.strerror}") from error
    signing_key = _private_key(key_bytes, key_path)
    started = time.time()
    client = _redis_client(redis_url)
    try:
        info = client.info("server")
        persistence = client.info("persistence")
        dbsize = client.dbsize()
    except redis.RedisError as error:
        raise BackupError(f"cannot reach the log Redis: {error}") from error
    rdb_path = _method_for(redis_url, client, method)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".partial", dir=out_path.parent)
    os.close(fd)  # mkstemp's file is 0600; the tar is written into it below
    try:
        rdb_fd, rdb_temporary = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".rdb", dir=out_path.parent)
        try:
            with os.fdopen(rdb_fd, "w+b") as rdb_out:
                try:
                    if rdb_path is not None:
                        snapshot = bgsave_snapshot(client, rdb_path, rdb_out, progress)
                    else:
                        snapshot = sync_snapshot(redis_url, rdb_out, progress)
                except (redis.RedisError, OSError) as error:
                    if no_space(error):
                        raise
                    raise BackupError(f"the snapshot of the log Redis failed: {error}") from error
                rdb_out.flush()
                rdb_out.seek(0)
                magic = rdb_out.read(5)
                if magic != b"REDIS":
                    raise BackupError("the snapshot is not an RDB file (no REDIS header)")
            summary = _write_tar(Path(temporary), Path(rdb_temporary), key_bytes, archive_dir, progress)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(rdb_temporary)
        parts = urlsplit(redis_url)
        manifest = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "referee_version": referee_version,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), "created_ms": int(started * 1000),
            "log_redis": {"redis_version": info.get("redis_version"), "host": parts.hostname, "port": parts.port,
                          "keys_at_start": dbsize, "aof_enabled": persistence.get("aof_enabled"),
                          "redis_mode": info.get("redis_mode"), **snapshot},
            "referee_public_key": _public_key(key_bytes),
            "archive_dir": str(archive_dir) if archive_dir is not None and Path(archive_dir).is_dir() else None,
            "members": summary,
        }
        manifest = sign_manifest(manifest, signing_key)
        with tarfile.open(temporary, "a") as tar:
            data = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
            tar.addfile(_info(MANIFEST, len(data), 0o600), io.BytesIO(data))
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
        try:
            os.link(temporary, out_path)  # never over a file that appeared meanwhile
        except FileExistsError:
            raise BackupError(f"{out_path} exists: not overwriting it") from None
        fsync_dir(out_path.parent)
    except OSError as error:
        if no_space(error):
            raise BackupError(f"no space left on the disk of {out_path.parent} ({error.strerror}): the backup was "
                              "not written and no partial file is left; free space there or write it elsewhere "
                              "(--out)") from error
        raise
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
    return BackupSummary(out_path, manifest, out_path.stat().st_size, summary)


def _info(name: str, size: int, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, mode, int(time.time())
    info.type = tarfile.REGTYPE
    return info


def _write_tar(temporary: Path, rdb: Path, key_bytes: bytes, archive_dir: str | Path | None,
               progress: Progress) -> list[dict[str, Any]]:
    archive = Path(archive_dir) if archive_dir is not None else None
    files = _archive_files(archive)
    members: list[dict[str, Any]] = []
    sources: list[tuple[str, Path | bytes, int, str, int | None]] = [
        (RDB_MEMBER, rdb, 0o600, "log-redis", None), (KEY_MEMBER, key_bytes, 0o600, "referee-key", None)]
    assert archive is not None or not files
    sources += [(ARCHIVE_PREFIX + path.relative_to(archive).as_posix(), path, 0o600, "archive", upto)  # type: ignore[arg-type]
                for path, upto in files]
    total = sum(len(src) if isinstance(src, bytes) else upto if upto is not None else src.stat().st_size
                for _n, src, _m, _k, upto in sources)
    done = 0

    def moved(count: int) -> None:
        nonlocal done
        done += count
        progress("writing the backup", done, total)

    with tarfile.open(temporary, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, source, mode, kind, upto in sources:
            if isinstance(source, bytes):
                reader = _Hashing(io.BytesIO(source), moved)
                tar.addfile(_info(name, len(source), mode), reader)  # type: ignore[arg-type]
            else:
                with open(source, "rb") as raw:
                    size = os.fstat(raw.fileno()).st_size
                    size = size if upto is None else min(size, upto)
                    reader = _Hashing(raw, moved)  # type: ignore[arg-type]
                    tar.addfile(_info(name, size, mode), reader)  # type: ignore[arg-type]
            members.append({"name": name, "kind": kind, "size": reader.size, "sha256": reader.sha256.hexdigest()})
    return members


# -- reading and checking a backup file ------------------------------------------------------------------

def _safe_name(name: str) -> bool:
    path = Path(name)
    return not path.is_absolute() and ".." not in path.parts and name == path.as_posix() and bool(name)


def read_manifest(backup: str | Path) -> dict[str, Any]:
    """The manifest of a backup file (not yet checked against the members)."""
    try:
        with tarfile.open(backup, "r:*") as tar:
            member = tar.getmember(MANIFEST)
            raw = tar.extractfile(member)
            assert raw is not None
            manifest = json.loads(raw.read())
    except (OSError, tarfile.TarError, KeyError, ValueError) as error:
        raise BackupError(f"{backup} is not a readable referee backup: {error}") from error
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{backup} is not a referee backup (no '{FORMAT}' manifest)")
    if manifest.get("format_version") not in (1, FORMAT_VERSION):
        raise BackupError(f"{backup} is a backup of format {manifest.get('format_version')}; this referee reads "
                          f"formats 1 and {FORMAT_VERSION}")
    return manifest


def extract_checked(backup: str | Path, into: Path, progress: Progress = _no_progress, *,
                    referee_key: str | None = None, unauthenticated: bool = False) -> dict[str, Any]:
    """Every member of ``backup`` into ``into`` (a new directory), each checked against the manifest's size
    and sha256, once the manifest's signature holds for ``referee_key`` (:func:`authenticate`); a damaged,
    truncated, altered or another referee's file raises :class:`BackupError` (``into`` is then removed)."""
    manifest = read_manifest(backup)
    checked_key = authenticate(manifest, referee_key, unauthenticated=unauthenticated, backup=backup)
    expected = {member["name"]: member for member in manifest.get("members", [])}
    if RDB_MEMBER not in expected or KEY_MEMBER not in expected:
        raise BackupError(f"{backup}: the manifest lists no {RDB_MEMBER} or no {KEY_MEMBER}")
    total = sum(int(member["size"]) for member in expected.values())
    into.mkdir(mode=0o700, parents=True)
    done = 0
    seen: set[str] = set()
    try:
        with tarfile.open(backup, "r:*") as tar:
            for info in tar:
                if info.name == MANIFEST:
                    continue
                if info.name not in expected or info.name in seen or not info.isreg() or not _safe_name(info.name):
                    raise BackupError(f"{backup}: member {info.name!r} is not in the manifest (altered file)")
                seen.add(info.name)
                target = into / info.name
                target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                source = tar.extractfile(info)
                assert source is not None
                digest = hashlib.sha256()
                size = 0
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as out:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
                        done += len(chunk)
                        progress("checking the backup", done, total)
                want = expected[info.name]
                if size != int(want["size"]) or digest.hexdigest() != want["sha256"]:
                    raise BackupError(f"{backup}: {info.name} does not match its sha256 in the manifest "
                                      "(damaged or altered): nothing restored")
        missing = sorted(set(expected) - seen)
        if missing:
            raise BackupError(f"{backup}: missing member(s) {', '.join(missing[:5])} (truncated file?)")
        if checked_key is not None and _public_key((into / KEY_MEMBER).read_bytes()) != checked_key:
            raise BackupError(f"{backup}: its {KEY_MEMBER} is not the private key of {checked_key}: nothing "
                              "restored")
    except (OSError, tarfile.TarError, EOFError) as error:
        shutil.rmtree(into, ignore_errors=True)
        if no_space(error):  # the disk it is unpacked on, not the backup (restore_backup says so)
            raise
        raise BackupError(f"{backup} is damaged: {error}") from error
    except BackupError:
        shutil.rmtree(into, ignore_errors=True)
        raise
    return manifest


# -- restoring -------------------------------------------------------------------------------------------

def describe_contents(directory: Path, limit: int = 5) -> str:
    names = sorted(path.name for path in directory.iterdir())
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _fsync_tree(root: Path) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_file():
            with open(path, "rb") as file:
                os.fsync(file.fileno())
    for path in sorted([root, *(p for p in root.rglob("*") if p.is_dir())], reverse=True):
        fsync_dir(path)


@contextmanager
def _embedded(directory: Path, durable: bool) -> Iterator[Any]:
    from .embedded_redis import EmbeddedRedis  # noqa: PLC0415

    server = EmbeddedRedis(directory=directory, durable=durable)
    server.start(timeout=120)
    try:
        yield server
    finally:
        server.stop()


def rdb_to_aof(redis_dir: Path, progress: Progress = _no_progress, timeout: float = 3600.0) -> int:
    """Turn ``redis_dir/dump.rdb`` into the append-only file that ``referee serve``'s log Redis loads
    (with ``appendonly yes`` Redis reads only its AOF, never an RDB). Returns the number of keys, checked
    by starting the directory as ``serve`` does."""
    rdb = redis_dir / "dump.rdb"
    with _embedded(redis_dir, durable=False) as server:  # appendonly no: loads dump.rdb
        client = _redis_client(server.url)
        keys = int(client.dbsize())
        progress("writing the append-only file", 0, None)
        client.config_set("appendonly", "yes")  # an AOF rewrite of the loaded data
        deadline = time.monotonic() + timeout
        while True:
            info = client.info("persistence")
            if (info.get("aof_enabled") and not info.get("aof_rewrite_in_progress")
                    and not info.get("aof_rewrite_scheduled")):
                break
            if time.monotonic() > deadline:
                raise BackupError(f"the append-only file was not written within {timeout:.0f}s")
            time.sleep(0.05)
        if info.get("aof_last_bgrewrite_status") != "ok":
            raise BackupError("writing the append-only file failed (disk full?)")
        client.close()
    rdb.unlink()
    with _embedded(redis_dir, durable=True) as server:  # as `referee serve` starts it: from the AOF only
        found = int(_redis_client(server.url).dbsize())
    if found != keys:
        raise BackupError(f"the restored log Redis holds {found} keys, the snapshot {keys}")
    return keys


@dataclass
class RestoreSummary:
    manifest: dict[str, Any]
    keys: int
    key_file: Path
    archive_dir: Path
    archived_files: int
    #: the public key the manifest's signature was checked against, or None (restored ``unauthenticated``)
    authenticated_by: str | None = None


#: what a restore needs beside the backup's size: the staging copy, the RDB and the append-only file made of it
RESTORE_ROOM_FACTOR = 3


def _room_to_restore(backup: Path, var: Path) -> None:
    """Refuse at once, changing nothing, a restore into a disk without room for it: about
    :data:`RESTORE_ROOM_FACTOR` times the backup's size (the members unpacked, then the log turned into an
    append-only file beside its RDB)."""
    from ..host.diskspace import free_bytes  # noqa: PLC0415

    existing = next((path for path in (var, *var.parents) if path.exists()), None)
    free = free_bytes(existing) if existing is not None else None
    needed = RESTORE_ROOM_FACTOR * backup.stat().st_size
    if free is not None and free < needed:
        raise BackupError(f"no space for the restore on the disk of {var}: about {needed} bytes needed, {free} free; "
                          "nothing was changed; free space there or restore elsewhere (--var)")


def restore_backup(backup: str | Path, var: str | Path, key_file: str | Path, archive_dir: str | Path,
                   progress: Progress = _no_progress, *, referee_key: str | None = None,
                   unauthenticated: bool = False) -> RestoreSummary:
    """Restore ``backup`` into the data directory ``var`` (absent or empty), the key to ``key_file`` and the
    archive to ``archive_dir`` (neither may exist yet). Nothing is put in place before the manifest's signature
    has been checked against ``referee_key`` (the public key the operator names; ``unauthenticated`` skips
    that check, proving nothing) and every member against the manifest."""
    var, key_path, archive = Path(var), Path(key_file), Path(archive_dir)
    if var.exists() and not var.is_dir():
        raise BackupError(f"{var} is not a directory")
    if var.is_dir() and any(var.iterdir()):
        raise BackupError(f"{var} is not empty ({describe_contents(var)}): restore only into an empty data "
                          "directory, so that nothing of another service is overwritten or mixed in")
    for path, what in ((key_path, "the referee's key"), (archive, "the archive directory")):
        if path.exists() and not (path.is_dir() and not any(path.iterdir())):
            raise BackupError(f"{path} ({what}) exists: not overwriting it")
    _room_to_restore(Path(backup), var)
    made = [path for path in (var, key_path, archive) if not path.exists()]
    var.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = var / ".restoring"
    try:
        manifest = extract_checked(backup, staging, progress, referee_key=referee_key,
                                   unauthenticated=unauthenticated)
        redis_dir = var / "redis"
        redis_dir.mkdir(mode=0o700)
        os.replace(staging / RDB_MEMBER, redis_dir / "dump.rdb")
        keys = rdb_to_aof(redis_dir, progress)
        _fsync_tree(redis_dir)
        key_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # fails if a key appeared meanwhile
        with os.fdopen(fd, "wb") as out:
            out.write((staging / KEY_MEMBER).read_bytes())
            out.flush()
            os.fsync(out.fileno())
        fsync_dir(key_path.parent)
        archived = 0
        if (staging / "archive").is_dir():
            archive.parent.mkdir(parents=True, exist_ok=True)
            with suppress(OSError):
                archive.rmdir()  # an empty one, checked above
            shutil.move(str(staging / "archive"), str(archive))
            archived = sum(1 for path in archive.rglob("*") if path.is_file())
            _fsync_tree(archive)
            fsync_dir(archive.parent)
    except BaseException as error:
        # leave the data directory as empty as it was: the next attempt must not be refused; and the key and
        # the archive, where they are outside it, as absent as they were
        for path in list(var.iterdir()) if var.is_dir() else []:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        for path in reversed(made):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        if isinstance(error, OSError) and no_space(error):
            raise BackupError(f"no space left on the disk of {var} ({error.strerror}): nothing was restored, and "
                              "nothing was changed; free space there and try again") from error
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    fsync_dir(var)
    return RestoreSummary(manifest, keys, key_path, archive, archived,  # authenticate() checked it is the key named
                          authenticated_by=None if unauthenticated else manifest.get("referee_public_key"))
