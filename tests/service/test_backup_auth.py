"""A restore authenticates the backup (issue 37, item 7; CONTRACT section 13; ``docs/operations.md``, "What a
restore proves"): a real backup of a real Redis, then the attack — the referee key and the archive swapped, the
manifest re-hashed (and re-signed with the swapped-in key, or left unsigned as an old format) — restored with
``referee restore --referee-key`` naming the genuine key: refused with a clear message and a non-zero exit,
nothing written. The unaltered backup restores."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import redis
from ports import free_port
from svc_helpers import REPO

from referee.protocol.signing import generate_key, private_key_b64, public_key_b64, read_or_create_key_file, sign
from referee.running.backup import KEY_MEMBER, MANIFEST, write_backup
from referee.running.embedded_redis import EmbeddedRedis

_UNSET = ("REDIS_URL", "REFEREE_WORK_REDIS_URL", "REFEREE_REDIS_PASSWORD_FILE", "REFEREE_KEY_FILE",
          "REFEREE_ARCHIVE_DIR", "REFEREE_VAR", "REFEREE_RESTORE_KEY")


def _restore(backup: Path, var: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in _UNSET}
    env.update(PYTHONPATH=REPO, REFEREE_VAR=str(var.parent / "unused"))
    return subprocess.run([sys.executable, "-m", "referee.cli", "restore", str(backup), "--var", str(var), *args],
                          check=False, cwd=REPO, env=env, text=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> tuple[Path, str]:
    """A backup of a real Redis with 50 logs, the referee's key and a one-file archive; and its public key."""
    root = tmp_path_factory.mktemp("genuine")
    key = read_or_create_key_file(root / "referee-key")
    archive = root / "archive"
    archive.mkdir()
    (archive / "g_kept.json").write_text(json.dumps({"game": "g_kept", "bundle": "the real one"}))
    with EmbeddedRedis(port=free_port(), directory=root / "redis", durable=True) as server:
        client = redis.Redis.from_url(server.url)
        for i in range(50):
            client.xadd(f"game:{{g{i}}}:log", {"entry": "x" * 100})
        write_backup(root / "referee.backup", server.url, root / "referee-key", archive)
    return root / "referee.backup", public_key_b64(key)


def _members(backup: Path) -> dict[str, bytes]:
    with tarfile.open(backup) as tar:
        return {info.name: tar.extractfile(info).read() for info in tar}  # type: ignore[union-attr]


def _rewrite(backup: Path, out: Path, how: str) -> Path:
    """The attack: another referee key and a forged archived game in place of the real ones, the manifest's
    sizes and sha256 recomputed; then the manifest re-signed with the swapped-in key (``resigned``), left with
    the genuine key's old signature (``rehashed``), or turned into an unsigned format-1 one (``downgraded``)."""
    members = _members(backup)
    manifest = json.loads(members.pop(MANIFEST))
    attacker = generate_key()
    members[KEY_MEMBER] = (private_key_b64(attacker) + "\n").encode()
    members["archive/g_kept.json"] = json.dumps({"game": "g_kept", "bundle": "a forged one"}).encode()
    for member in manifest["members"]:
        data = members[member["name"]]
        member["size"], member["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    manifest["referee_public_key"] = public_key_b64(attacker)
    manifest.pop("referee_sig", None)
    if how == "resigned":  # signed as `referee backup` signs it (docs/operations.md), with the swapped-in key
        manifest = {**manifest, "ctx": "referee/backup"}
        manifest["referee_sig"] = sign(attacker, manifest)
    elif how == "rehashed":
        manifest["referee_sig"] = json.loads(_members(backup)[MANIFEST]).get("referee_sig")
    else:
        manifest.pop("ctx", None)
        manifest["format_version"] = 1
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in [*members.items(), (MANIFEST, json.dumps(manifest, indent=2).encode())]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
    return out


@pytest.mark.parametrize("how", ["resigned", "rehashed", "downgraded"])
def test_a_backup_with_its_key_and_archive_swapped_and_its_manifest_rehashed_is_refused(genuine, tmp_path, how):
    backup, referee_key = genuine
    forged = _rewrite(backup, tmp_path / "forged.backup", how)
    target = tmp_path / "var"
    refused = _restore(forged, target, "--referee-key", referee_key)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    expected = "unsigned manifest" if how == "downgraded" else \
        f"its manifest is not signed by the referee key you named ({referee_key})"
    assert expected in refused.stderr and "restored" not in refused.stdout, refused.stderr
    assert not target.exists() or not any(target.iterdir())  # nothing written, not even the key


def test_the_unaltered_backup_restores_authenticated_by_the_key_named(genuine, tmp_path):
    backup, referee_key = genuine
    target = tmp_path / "var"
    done = _restore(backup, target, "--referee-key", referee_key)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"authenticated: its manifest is signed by the referee key you named ({referee_key})" in done.stdout
    assert public_key_b64(read_or_create_key_file(target / "referee-key")) == referee_key
    assert json.loads((target / "archive" / "g_kept.json").read_text())["bundle"] == "the real one"


def test_another_referees_key_named_or_none_at_all_restores_nothing_unless_told_to_trust_the_file(genuine, tmp_path):
    backup, referee_key = genuine
    other = public_key_b64(generate_key())
    refused = _restore(backup, tmp_path / "a", "--referee-key", other)
    assert refused.returncode != 0 and f"not signed by the referee key you named ({other})" in refused.stderr
    refused = _restore(backup, tmp_path / "b")
    assert refused.returncode != 0 and "--referee-key KEY" in refused.stderr, refused.stderr
    for name, bad in (("c", "not-a-key"), ("e", referee_key + "=")):  # base64url of 32 bytes, canonical
        refused = _restore(backup, tmp_path / name, "--referee-key", bad)
        assert refused.returncode != 0 and "not an Ed25519 public key" in refused.stderr, refused.stderr
    assert not any((tmp_path / name).exists() and any((tmp_path / name).iterdir()) for name in "abce")
    done = _restore(backup, tmp_path / "d", "--unauthenticated")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "NOT authenticated" in done.stderr and referee_key in done.stderr
