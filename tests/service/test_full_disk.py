"""A full disk (issue 50; CONTRACT section 13, "A full disk"): ``referee serve`` with its data on a small disk of
its own — a tmpfs the test mounts (root needed: where it cannot mount, the test is skipped and says why) — two
players under way, then the disk fills. Writes answer 503 ``log/disk_full`` (``Retry-After``, the reader's
language), reads and pages answer 200, ``/health`` says the disk is full, serve and its Redis keep running;
once space is back the next move is taken, with no restart. Then the log Redis is killed: serve starts it
again on its files and the game goes on. Every acknowledged move is in the log at its position and the
bundle verifies. One serve for all of it (a few seconds of CPU)."""

from __future__ import annotations

import errno
import logging
import os
import random
import re
import signal
import time

import pytest
import redis as redis_lib
import requests
from click.testing import CliRunner
from ports import free_port
from small_disk import fill, mounted
from svc_helpers import Http, accept_all, create_game, move_envelope, play_random, signed, wait_until
from test_serve_supervision import Serve, alive

from referee.cli.backup import backup
from referee.config import with_password
from referee.error_texts import DISK_FULL
from referee.games_service.archiving import archive_game
from referee.host.diskspace import LogDisk
from referee.i18n import gettext
from referee.protocol.signing import public_key_b64, read_or_create_key_file
from referee.running import backup as backup_module
from referee.running.backup import BackupError, restore_backup, write_backup
from referee.running.embedded_redis import EmbeddedRedis
from referee.store import keys
from referee.store.messages import messages_of
from referee.verify import verify_bundle
from workers.archiver import Archiver
from workers.deadlines import DeadlineScheduler

SIZE = 48 << 20  # the disk: room for the two Redis servers' files, the key, the logs
FLOOR = 8 << 20  # REFEREE_MIN_FREE_DISK of this serve


@pytest.fixture
def small_disk(tmp_path):
    with mounted(tmp_path / "disk", SIZE) as mount:
        yield mount


def next_move(http: Http, game, rng) -> tuple[int, dict]:
    status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    assert status == 200 and legal["to_move"] is not None, legal
    seat, move = legal["to_move"], rng.choice(legal["moves"])
    return seat, signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"], move))


def play(http: Http, game, rng, acknowledged: list) -> None:
    _seat, body = next_move(http, game, rng)
    status, receipt = http.post(f"/games/{game.game_id}/moves", body)
    assert status in (200, 202), receipt
    acknowledged.append((receipt["position"], body["envelope"]))


def test_a_full_disk_refuses_writes_keeps_reads_and_writes_resume_and_a_killed_log_redis_comes_back(
        tmp_path, small_disk):
    server = Serve(tmp_path, env={"REFEREE_VAR": str(small_disk / "var"), "REFEREE_MIN_FREE_DISK": str(FLOOR)})
    try:
        wait_until(lambda: "referee serving on" in server.log or server.process.poll() is not None, timeout=60)
        assert server.process.poll() is None, server.log
        base = f"http://127.0.0.1:{server.port}"
        http, rng, acknowledged = Http(requests, base), random.Random(50), []
        game = create_game(http, "fivetowers", 2)
        accept_all(http, game)
        for _ in range(2):
            play(http, game, rng, acknowledged)
        redis_pid = server.pid_of("embedded Redis (redis)")
        assert requests.get(f"{base}/health", timeout=5).json()["disk"] == "ok"

        log_url = re.findall(r"embedded Redis on (redis://\S+) \(logs", server.log)[0]
        log_redis = redis_lib.Redis.from_url(with_password(log_url, (small_disk / "var" / "redis-password")
                                                           .read_text().strip()))

        def aof_size() -> int:
            return int(log_redis.info("persistence")["aof_current_size"])

        filler = fill(small_disk, FLOOR // 2)  # below the floor; Redis itself still has room
        wait_until(lambda: requests.get(f"{base}/health", timeout=5).json()["disk"] == "full", timeout=10)
        aof_when_full = aof_size()
        _seat, body = next_move(http, game, rng)  # (a read: answered)
        refused = requests.post(f"{base}/games/{game.game_id}/moves", json=body, timeout=5,
                                headers={"Accept-Language": "de"})
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "log/disk_full"
        assert refused.json()["error"]["message"] == gettext("de", DISK_FULL) != DISK_FULL
        assert int(refused.headers["Retry-After"]) > 0
        created = requests.post(f"{base}/games", json={"ruleset": "towerup", "seats": []}, timeout=5)
        assert (created.status_code, created.json()["error"]["code"]) == (503, "log/disk_full")
        health = requests.get(f"{base}/health", timeout=5)
        assert health.status_code == 200 and health.json()["disk"] == "full" and health.json()["writes"] is False
        for path in (f"/games/{game.game_id}", f"/games/{game.game_id}/log", f"/games/{game.game_id}/export",
                     f"/play/games/{game.game_id}", f"/play/games/{game.game_id}/replay", "/play/"):
            assert requests.get(base + path, timeout=5).status_code == 200, path
        bundle = requests.get(f"{base}/games/{game.game_id}/export", timeout=5).json()
        assert requests.post(f"{base}/verify", json=bundle, timeout=10).status_code == 200  # checking writes nothing
        metrics = requests.get(f"{base}/metrics", timeout=5).text
        free = float(re.search(r'^referee_disk_free_bytes\{disk="log"\} (\S+)$', metrics, re.M).group(1))
        assert free < FLOOR

        # nothing reached the log Redis's disk meanwhile: no refused write, no timer's claim, and no heartbeat of
        # the replay loop (it beats once a second, on the work Redis: wait for one made while the disk is full)
        work_url = re.findall(r"embedded Redis on (redis://\S+) \(queue", server.log)[0]
        work_redis = redis_lib.Redis.from_url(with_password(work_url, log_redis.connection_pool.connection_kwargs[
            "password"]))
        since = int(time.time() * 1000)
        wait_until(lambda: any(score > since for _name, score in work_redis.zrange(
            "referee:replayers:referee", 0, -1, withscores=True)), timeout=10)
        assert aof_size() == aof_when_full

        filler.unlink()  # space is back: the same move is taken now, with no restart
        taken = requests.post(f"{base}/games/{game.game_id}/moves", json=body, timeout=5)
        assert taken.status_code in (200, 202), taken.text
        acknowledged.append((taken.json()["position"], body["envelope"]))
        assert requests.get(f"{base}/health", timeout=5).json()["disk"] == "ok"
        assert server.process.poll() is None and server.pid_of("embedded Redis (redis)") == redis_pid
        assert "restarted" not in server.log and "stopping" not in server.log, server.log

        os.kill(redis_pid, signal.SIGKILL)  # the log Redis dies all the same: serve starts it again, same files
        wait_until(lambda: server.pid_of("embedded Redis (redis)", "restarted"), timeout=20)
        assert not alive(redis_pid) and server.process.poll() is None
        wait_until(lambda: requests.get(f"{base}/health", timeout=5).status_code == 200, timeout=20)
        for _ in range(2):
            wait_until(lambda: requests.get(f"{base}/games/{game.game_id}/legal-moves", timeout=5).ok, timeout=20)
            play(http, game, rng, acknowledged)

        status, log = http.get(f"/games/{game.game_id}/log")
        assert status == 200, log
        entries = log["entries"]  # from position 0
        for position, envelope in acknowledged:
            assert entries[position]["type"] == "move", entries[position]
            assert entries[position]["submission"]["envelope"] == envelope, position
        report = verify_bundle(requests.get(f"{base}/games/{game.game_id}/export", timeout=5).json())
        # the game goes on: what only its end can show (the seed's reveal) is not checked yet, all else passes
        assert report.status == "incomplete", [check for check in report.checks if check.status == "failed"]
        assert not [check for check in report.checks if check.status == "failed"]
        assert "stopping" not in server.log, server.log
    finally:
        server.stop()


def test_the_archive_deletes_no_key_and_leaves_no_file_when_its_disk_is_full_and_tries_again(
        make_app, tmp_path, run_worker, caplog):
    with mounted(tmp_path / "archive-disk", 1 << 20) as mount:
        app = make_app(REFEREE_ARCHIVE_DIR=str(mount / "archive"))
        http = Http(app.test_client())
        game = create_game(http, "towerup", 2)
        accept_all(http, game)
        play_random(http, game, random.Random(3))
        run_worker(app.extensions["referee.queue"])  # (this app's queue, not the app fixture's)
        store, key = app.extensions["referee.store"], app.extensions["referee.key"]
        archive = store.archive
        keys_before = sorted(store.redis.scan_iter(match=f"game:{{{game.game_id}}}:*"))
        assert keys_before
        filler = fill(mount)

        with pytest.raises(OSError) as failed:
            archive_game(store, messages_of(store), archive, game.game_id, key, older_than=0)
        assert failed.value.errno == errno.ENOSPC
        assert sorted(store.redis.scan_iter(match=f"game:{{{game.game_id}}}:*")) == keys_before
        assert not archive.has(game.game_id)
        assert [p for p in (mount / "archive").rglob("*") if p.is_file()] == []  # no partial file, no torn index

        archiver = Archiver(store, archive, key, after=0, every=3600)
        with caplog.at_level(logging.WARNING, logger="workers.archiver"):
            assert archiver.run_once() == 0 and archiver.run_once() == 0
        said = [r for r in caplog.records if r.name == "workers.archiver" and "could not be written" in r.message]
        assert len(said) == 1, caplog.text  # once, not at every pass
        assert sorted(store.redis.scan_iter(match=f"game:{{{game.game_id}}}:*")) == keys_before

        filler.unlink()  # space is back: the next pass moves it
        assert archiver.run_once() == 1 and not archiver.failing
        assert list(store.redis.scan_iter(match=f"game:{{{game.game_id}}}:*")) == []
        assert verify_bundle(archive.get(game.game_id)["bundle"]).ok
        assert http.get(f"/games/{game.game_id}/export")[0] == 200


def test_a_backup_onto_a_full_disk_or_of_a_redis_that_cannot_save_fails_at_once_and_a_restore_changes_nothing(
        tmp_path, monkeypatch):
    key = tmp_path / "key"
    public = public_key_b64(read_or_create_key_file(key))
    with mounted(tmp_path / "small", 4 << 20) as mount, \
            EmbeddedRedis(port=free_port(), directory=tmp_path / "r", durable=True) as server, \
            EmbeddedRedis(port=free_port(), directory=mount / "r", durable=False) as on_small:
        for client in (redis_lib.Redis.from_url(server.url), redis_lib.Redis.from_url(on_small.url)):
            for i in range(100):
                client.xadd(f"game:{{g{i}}}:log", {"entry": "x" * 200})
        good = write_backup(tmp_path / "good.backup", server.url, key, None).path
        filler = fill(mount)
        on_disk = sorted(mount.rglob("*"))

        # onto a full disk: "no space", a non-zero exit, nothing left behind
        monkeypatch.setenv("REFEREE_KEY_FILE", str(key))
        monkeypatch.setenv("REFEREE_VAR", str(tmp_path / "var"))
        result = CliRunner().invoke(backup, ["--out", str(mount / "b.backup"), "--url", server.url])
        assert result.exit_code != 0 and "no space" in result.output, result.output
        assert sorted(mount.rglob("*")) == on_disk

        # of a log Redis whose own disk is full: it cannot save its snapshot; said at once, not after an hour
        with pytest.raises(BackupError, match=r"could not save its snapshot .*no space"):
            write_backup(tmp_path / "c.backup", on_small.url, key, None, method="bgsave")
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith((".c.backup", "c.backup"))] == []
        assert redis_lib.Redis.from_url(on_small.url).set("still", "writable")  # a failed save stops no write

        # a restore into a full disk changes nothing: refused before it starts, or undone when the disk fills
        target = mount / "var"
        with pytest.raises(BackupError, match="no space"):
            restore_backup(good, target, target / "referee-key", target / "archive", referee_key=public)
        assert not target.exists()
        monkeypatch.setattr(backup_module, "RESTORE_ROOM_FACTOR", 0)  # (past the check: the disk fills midway)
        with pytest.raises(BackupError, match="no space"):
            restore_backup(good, target, target / "referee-key", target / "archive", referee_key=public)
        assert not target.exists() and sorted(mount.rglob("*")) == on_disk
        filler.unlink()
        restored = restore_backup(good, target, target / "referee-key", target / "archive", referee_key=public)
        assert restored.keys == 100


def test_below_the_floor_the_deadline_scheduler_claims_no_timer_and_goes_on_once_there_is_room(store, tmp_path):
    """The scheduler's claims and timeouts are writes on the log Redis: below the floor a pass does none."""
    disk = LogDisk(floor=1 << 62, directory=str(tmp_path))  # more than any disk has: below the floor
    store.redis.zadd(keys.TIMERS, {"g_nosuchgame0000": 0})
    scheduler = DeadlineScheduler(store, disk=disk)
    assert disk.state() == "full" and scheduler.run_once() == []
    assert store.redis.zscore(keys.TIMERS, "g_nosuchgame0000") == 0  # not claimed
    disk.floor = 0  # room again
    scheduler.run_once()
    assert store.redis.zscore(keys.TIMERS, "g_nosuchgame0000") != 0  # claimed (and dropped: no such game)
