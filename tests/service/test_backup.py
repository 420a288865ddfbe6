"""``referee backup`` and ``referee restore`` against the real thing (issue 23, item 4; CONTRACT section 13):
``referee serve`` with its embedded Redis, moves acknowledged over HTTP, a backup while it runs, more
moves, a restore into a fresh data directory and ``referee serve`` on it: every move acknowledged before
the backup is there, nothing after it, every game verifies with the referee's key. A non-empty directory
and a damaged backup are refused."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import redis
import requests
from ports import free_port
from svc_helpers import REPO, Http, accept_all, create_game, play_random, wait_until

from referee.protocol.signing import public_key_b64, read_or_create_key_file
from referee.running.backup import ARCHIVE_PREFIX, RDB_MEMBER, BackupError, _write_tar, sync_snapshot, write_backup
from referee.running.embedded_redis import EmbeddedRedis
from referee.store.archive import ARCHIVE_FORMAT, DirectoryArchive
from referee.verify import verify_bundle

_UNSET = ("REDIS_URL", "REFEREE_WORK_REDIS_URL", "REFEREE_REDIS_PASSWORD_FILE", "REFEREE_KEY_FILE",
          "REFEREE_ARCHIVE_DIR", "REFEREE_VAR")


def _env(var: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _UNSET}
    env.update(PYTHONPATH=REPO, REFEREE_VAR=str(var), REFEREE_RECONCILE_EVERY="0.5")
    return env


def _cli(*args: str, var: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], check=False, cwd=REPO, env=_env(var),
                          text=True, capture_output=True, timeout=120)


class _Serve:
    """``referee serve`` on a free port for ``var``, stopped as Ctrl-C stops it."""

    def __init__(self, var: Path, log: Path):
        self.port, self.log = free_port(), log
        self.out = open(log, "w+")
        self.process = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--port", str(self.port),
                                         "--web-workers", "1"], cwd=REPO, env=_env(var), stdout=self.out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> _Serve:
        wait_until(lambda: "referee serving on" in self.log.read_text() or self.process.poll() is not None,
                   timeout=60, every=0.2)
        assert self.process.poll() is None, self.log.read_text()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.out.close()


def _embedded_url(var: Path, name: str) -> str:
    """The URL of the Redis ``referee serve`` embeds for ``var`` as ``name`` (``redis``: the log's;
    ``redis-work``)."""
    conf = (var / name / "redis.conf").read_text().splitlines()
    port = next(line.split()[1] for line in conf if line.startswith("port "))
    password = (var / "redis-password").read_text().strip()
    return f"redis://:{password}@127.0.0.1:{port}/0"


def _export(http: Http, game_id: str) -> dict:
    status, bundle = http.get(f"/games/{game_id}/export")
    assert status == 200, bundle
    return bundle


def test_backup_while_serving_then_restore_on_a_fresh_directory(tmp_path):
    var, restored = tmp_path / "var", tmp_path / "restored"
    backup_file = tmp_path / "referee.backup"
    rng = random.Random(23)
    with _Serve(var, tmp_path / "serve1.log") as serve:
        http = Http(requests.Session(), serve.url)
        finished = create_game(http, "towerup", 2)  # played to its end: a final bundle, seed revealed
        accept_all(http, finished, rng)
        play_random(http, finished, rng)  # every move acknowledged (200/202) or the helper fails
        running = create_game(http, "fivetowers", 2)  # still running at the backup
        accept_all(http, running, rng)
        play_random(http, running, rng, max_moves=6)
        before = {game.game_id: _export(http, game.game_id)["log"] for game in (finished, running)}
        # the finished game leaves Redis for the archive (its document, and its line in the archive's index)
        urls = ["--url", _embedded_url(var, "redis"), "--work-url", _embedded_url(var, "redis-work")]
        wait_until(lambda: "archived 1 game(s)" in _cli("archive", "--older-than", "0", finished.game_id, *urls,
                                                          var=var).stdout, timeout=30, every=0.5)
        assert DirectoryArchive(var / "archive").archived_order() == [finished.game_id]
        archived_ids = [game["game"] for game in http.get("/games?limit=10")[1]["games"]]
        assert finished.game_id in archived_ids

        done = _cli("backup", "--out", str(backup_file), var=var)  # found through var/redis/redis.conf
        assert done.returncode == 0, done.stderr + done.stdout
        assert f"backup written to {backup_file}" in done.stdout and "archive: 2 file(s)" in done.stdout
        assert oct(backup_file.stat().st_mode & 0o777) == "0o600"

        play_random(http, running, rng, max_moves=4)  # after the backup: not in it
        later = create_game(http, "fivetowers", 2)
        accept_all(http, later, rng)
        again = _cli("backup", "--out", str(backup_file), var=var)
        assert again.returncode != 0 and "not overwriting" in again.stderr

    # the operator names the referee key the backup must be signed with (`referee backup` printed it)
    referee_key = public_key_b64(read_or_create_key_file(var / "referee-key"))
    assert f"--referee-key {referee_key}" in done.stdout
    authenticated = ("--referee-key", referee_key)
    # a damaged backup restores nothing: one byte of the RDB flipped
    damaged = tmp_path / "damaged.backup"
    damaged.write_bytes(backup_file.read_bytes())
    with tarfile.open(backup_file) as tar:
        offset = tar.getmember(RDB_MEMBER).offset_data + 40
    with open(damaged, "r+b") as file:
        file.seek(offset)
        byte = file.read(1)
        file.seek(offset)
        file.write(bytes([byte[0] ^ 0xFF]))
    refused = _cli("restore", str(damaged), "--var", str(restored), *authenticated, var=var)
    assert refused.returncode != 0 and "does not match its sha256" in refused.stderr, refused.stderr
    assert not restored.exists() or not any(restored.iterdir())
    truncated = tmp_path / "truncated.backup"
    truncated.write_bytes(backup_file.read_bytes()[: backup_file.stat().st_size // 2])
    refused = _cli("restore", str(truncated), "--var", str(restored), *authenticated, var=var)
    assert refused.returncode != 0 and "not a readable referee backup" in refused.stderr, refused.stderr

    # a data directory in use is never written into
    refused = _cli("restore", str(backup_file), *authenticated, var=var)  # $REFEREE_VAR: the running service's own
    assert refused.returncode != 0 and "is not empty (" in refused.stderr and "redis" in refused.stderr
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine")
    refused = _cli("restore", str(backup_file), "--var", str(occupied), *authenticated, var=var)
    assert refused.returncode != 0 and "notes.txt" in refused.stderr
    assert sorted(p.name for p in occupied.iterdir()) == ["notes.txt"]

    done = _cli("restore", str(backup_file), "--var", str(restored), *authenticated, var=tmp_path / "elsewhere")
    assert done.returncode == 0, done.stderr + done.stdout
    assert f"restored {backup_file}" in done.stdout
    assert (restored / "referee-key").read_bytes() == (var / "referee-key").read_bytes()
    assert oct((restored / "referee-key").stat().st_mode & 0o777) == "0o600"
    assert DirectoryArchive(restored / "archive").archived_order() == [finished.game_id]  # the archived list

    with _Serve(restored, tmp_path / "serve2.log") as serve:
        http = Http(requests.Session(), serve.url)
        for game_id, log in before.items():  # every entry acknowledged before the backup, and only those
            length = len(log)
            wait_until(lambda game_id=game_id, n=length: http.get(f"/games/{game_id}")[1].get("seq") == n,
                       timeout=20, every=0.2)  # the projection, rebuilt from the log by the workers
            bundle = _export(http, game_id)
            assert bundle["log"] == log
            report = verify_bundle(bundle, referee_key=referee_key)
            assert report.first_failure is None, report.to_dict()
        assert verify_bundle(_export(http, finished.game_id), referee_key=referee_key).status == "verified"
        # the archived game is listed where it was, and served from the archive (nothing of it in the log Redis)
        assert [game["game"] for game in http.get("/games?limit=10")[1]["games"]] == archived_ids
        assert redis.Redis.from_url(_embedded_url(restored, "redis")).keys(f"*{finished.game_id}*") == []
        assert http.get(f"/games/{later.game_id}")[0] == 404
        status, legal = http.get(f"/games/{running.game_id}/legal-moves")
        assert status == 200 and legal["seq"] == len(before[running.game_id])  # play goes on from there
        play_random(http, running, rng, max_moves=2)


def test_sync_snapshot_equals_the_data_and_refusals(tmp_path):
    """The snapshot a replica gets (the method for a Redis not on this machine), taken from a real server
    under writes, loads as the same keys; a wrong password and an unwritable target are refused."""
    key = tmp_path / "key"
    read_or_create_key_file(key)
    with EmbeddedRedis(port=free_port(), directory=tmp_path / "r", durable=True) as server:
        client = redis.Redis.from_url(server.url)
        for i in range(200):
            client.xadd(f"game:{{g{i}}}:log", {"entry": "x" * 200})
        summary = write_backup(tmp_path / "b.tar", server.url, key, None, method="sync")
        assert summary.manifest["log_redis"]["method"] == "sync"
        with open(tmp_path / "raw.rdb", "wb") as out:
            sync_snapshot(server.url, out)
        assert (tmp_path / "raw.rdb").read_bytes()[:5] == b"REDIS"
        client.config_set("repl-diskless-sync", "yes")  # the default from Redis 7: streamed, ends with a mark
        client.config_set("repl-diskless-sync-delay", "0")
        with open(tmp_path / "diskless.rdb", "wb") as out:
            sync_snapshot(server.url, out)
        with pytest.raises(BackupError, match="password"):
            sync_snapshot(server.url.replace(server.password, "wrong"), open(os.devnull, "wb"))
        with pytest.raises(BackupError, match="not overwriting"):
            write_backup(tmp_path / "b.tar", server.url, key, None)
    for name in ("raw.rdb", "diskless.rdb"):  # each loads as the same 200 logs
        loaded = tmp_path / f"loaded-{name}"
        loaded.mkdir()
        (tmp_path / name).rename(loaded / "dump.rdb")
        with EmbeddedRedis(port=free_port(), directory=loaded, durable=False) as copy:
            restored = redis.Redis.from_url(copy.url)
            assert restored.dbsize() == 200 and restored.xlen("game:{g7}:log") == 1


def _listed_document(game_id: str, at: int) -> dict:
    return {"format": ARCHIVE_FORMAT, "game": game_id, "bundle": {"log": []}, "listed": {"games": at, "players": {}}}


def test_an_archiver_at_work_during_a_backup_never_leaves_a_listed_game_without_its_document(tmp_path):
    """The archive is copied while an archiver may add to it: its index is measured before its documents are
    listed and copied up to that size, so a game archived during the copy is never listed in the backup
    without its document; a temporary file of the archive gone before its turn is not copied (nor missed)."""
    archive = DirectoryArchive(tmp_path / "archive")
    archive.put("g-first", _listed_document("g-first", 1))
    temporary = archive.file_of("g-second").parent / ".g-second.x.tmp"  # an archiver's file, being written
    temporary.parent.mkdir(parents=True, exist_ok=True)
    temporary.write_bytes(b"{")
    rdb = tmp_path / "dump.rdb"
    rdb.write_bytes(b"REDIS0009" + bytes(4096))

    def archiver_at_work(*_progress: object) -> None:  # while the backup copies its first member
        if not archive.has("g-second"):
            temporary.unlink()
            archive.put("g-second", _listed_document("g-second", 2))

    _write_tar(tmp_path / "backup.tar", rdb, b"key", archive.path, archiver_at_work)
    assert archive.archived_order() == ["g-first", "g-second"]
    with tarfile.open(tmp_path / "backup.tar") as tar:
        copied = [member for member in tar.getmembers() if member.name.startswith(ARCHIVE_PREFIX)]
        # the "data" filter where the Python has it (3.11.4 and later); the members are the backup's own
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(tmp_path / "copy", members=copied, **safe)
    restored = DirectoryArchive(tmp_path / "copy" / "archive")
    assert restored.archived_order() == ["g-first"] and restored.has("g-first")
    assert all(restored.has(game) for game in restored.archived_order())
    assert not any(member.name.endswith(".tmp") for member in copied)
