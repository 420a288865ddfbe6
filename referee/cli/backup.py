"""``referee backup`` and ``referee restore``: one file holding what cannot be rebuilt (the log Redis, the
archive, the referee's key), written while the service runs, and brought back into an empty data
directory. The work is in ``referee/running/backup.py``; what to back up, how often and how to move to another
machine is in ``docs/operations.md``."""

from __future__ import annotations

import os
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import click

from ..config import ConfigError, load_config, read_password_file, with_password


class _Progress:
    """Progress on stderr: one line rewritten in place on a terminal; each stage once otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.stage: str | None = None
        self.last = 0.0

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if stage != self.stage:
            if self.tty and self.stage is not None:
                click.echo("", err=True)
            self.stage = stage
            if not self.tty:
                click.echo(f"{stage} …", err=True)
        elif not self.tty or (now - self.last < 0.1 and (total is None or done < total)):
            return
        self.last = now
        if self.tty:
            if total is not None:
                amount = f": {done / 1e6:,.1f} / {total / 1e6:,.1f} MB ({100 * done / max(total, 1):.0f} %)"
            else:
                amount = f": {done / 1e6:,.1f} MB" if done else " …"
            click.echo(f"\r\x1b[2K{stage}{amount}", err=True, nl=False)

    def close(self) -> None:
        if self.tty and self.stage is not None:
            click.echo("", err=True)


def _archive_dir(config: dict[str, Any]) -> Path:
    """``REFEREE_ARCHIVE_DIR`` (default ``<REFEREE_VAR>/archive``)."""
    return Path(config.get("REFEREE_ARCHIVE_DIR") or os.environ.get("REFEREE_ARCHIVE_DIR")
                or Path(config["REFEREE_VAR"]) / "archive")


def _embedded_log_url(var: Path) -> str | None:
    """The URL of the log Redis that ``referee serve`` embeds for ``var`` (its port in ``var/redis/redis.conf``,
    its password in ``var/redis-password``), if there is one."""
    conf, password_file = var / "redis" / "redis.conf", var / "redis-password"
    try:
        lines = conf.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    ports = [line.split()[1] for line in lines if line.startswith("port ")]
    if not ports or not password_file.exists():
        return None
    return with_password(f"redis://127.0.0.1:{ports[0]}/0", read_password_file(str(password_file)))


def _log_redis_url(url: str | None, config: dict[str, Any]) -> str:
    from ..store.cluster import is_cluster_url  # noqa: PLC0415

    log_url = url or (config["REDIS_URL"] if os.environ.get("REDIS_URL") else
                      _embedded_log_url(Path(config["REFEREE_VAR"])))
    if not log_url:
        raise click.UsageError(f"no log Redis: neither --url nor $REDIS_URL, and no `referee serve` Redis in "
                               f"{config['REFEREE_VAR']}/redis (set REFEREE_VAR to the service's data directory)")
    if config["REFEREE_REDIS_PASSWORD_FILE"]:
        log_url = with_password(log_url, read_password_file(config["REFEREE_REDIS_PASSWORD_FILE"]))
    if is_cluster_url(log_url):
        raise click.UsageError("the logs' Redis is a cluster: back up each master with its own --url "
                               "redis://HOST:PORT (docs/operations.md)")
    return log_url


def _size(count: int) -> str:
    return f"{count / 1e6:,.1f} MB" if count >= 100_000 else f"{count:,} bytes"


def _version() -> str:
    try:
        return metadata.version("referee")
    except metadata.PackageNotFoundError:
        return ""


@click.command()
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="the backup file to write (must not exist; written 0600: it holds the referee's key)")
@click.option("--url", help="the logs' Redis URL (default $REDIS_URL, else the Redis `referee serve` runs "
                            "for $REFEREE_VAR)")
@click.option("--method", type=click.Choice(["auto", "bgsave", "sync"]), default="auto", show_default=True,
              help="bgsave: BGSAVE and copy the RDB (a Redis on this machine); sync: the snapshot a replica "
                   "gets (any Redis that allows SYNC); auto: bgsave when the RDB is reachable here")
def backup(out: str, url: str | None, method: str) -> None:
    """Back up the log Redis, the archive and the referee's key into one file, while the service runs.

    The log Redis is snapshotted at one instant (every move acknowledged before the backup began is in
    it), then the archive directory is copied. The projections and the queue are not backed up: they are
    rebuilt from the logs. docs/operations.md says how often and where to keep the file."""
    from ..running.backup import BackupError, write_backup  # noqa: PLC0415

    try:
        config = load_config()
        log_url = _log_redis_url(url, config)
    except ConfigError as error:
        raise click.UsageError(str(error)) from error
    progress = _Progress()
    started = time.monotonic()
    try:
        summary = write_backup(out, log_url, config["REFEREE_KEY_FILE"], _archive_dir(config), method=method,
                               referee_version=_version(), progress=progress)
    except BackupError as error:
        progress.close()
        raise click.ClickException(str(error)) from error
    progress.close()
    manifest = summary.manifest
    redis_part = manifest["log_redis"]
    archived = [m for m in summary.members if m["kind"] == "archive"]
    rdb = next(m for m in summary.members if m["kind"] == "log-redis")
    click.echo(f"backup written to {summary.path} ({_size(summary.size)}, 0600) in {time.monotonic() - started:.1f}s")
    click.echo(f"  log Redis {redis_part['redis_version']} ({redis_part['method']}): {redis_part['keys_at_start']} "
               f"keys when it began, RDB {_size(rdb['size'])}")
    click.echo(f"  referee key: {config['REFEREE_KEY_FILE']} (public {manifest['referee_public_key']})")
    click.echo(f"  archive: {len(archived)} file(s), {_size(sum(m['size'] for m in archived))}"
               if manifest["archive_dir"] else "  archive: none (no directory)")
    click.echo(f"  taken {manifest['created']}; every member's sha256 is in its manifest.json, signed with the "
               "referee key")
    click.echo(f"  restore it with: referee restore {summary.path} --referee-key {manifest['referee_public_key']}")


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--var", "var", type=click.Path(file_okay=False),
              help="the data directory to restore into (default $REFEREE_VAR); must be empty or absent")
@click.option("--referee-key", "referee_key", metavar="KEY", envvar="REFEREE_RESTORE_KEY",
              help="the referee's public key (base64url) the backup's manifest must be signed with: the one "
                   "`referee backup` printed, or GET /referee-key of the service it came from "
                   "(default $REFEREE_RESTORE_KEY)")
@click.option("--unauthenticated", is_flag=True,
              help="restore without checking who signed the manifest (an unsigned, format 1 backup, or a lost "
                   "key): the sha256 checks then prove only that the file is whole, not that it is yours")
def restore(file: str, var: str | None, referee_key: str | None, unauthenticated: bool) -> None:
    """Restore a backup into an EMPTY data directory: the log Redis, the referee's key and the archive.

    The manifest's signature is checked against the referee key you name (--referee-key), then every
    member against the manifest's sha256: an altered, damaged or another referee's file restores nothing.
    Then `referee serve` on that directory comes up with every game; its replay workers rebuild the
    projections from the logs at start. docs/operations.md says what a restore proves."""
    from ..running.backup import BackupError, restore_backup  # noqa: PLC0415

    try:
        config = load_config({"REFEREE_VAR": var} if var else None)
    except ConfigError as error:
        raise click.UsageError(str(error)) from error
    target = Path(config["REFEREE_VAR"])
    progress = _Progress()
    try:
        summary = restore_backup(file, target, config["REFEREE_KEY_FILE"], _archive_dir(config), progress,
                                 referee_key=referee_key, unauthenticated=unauthenticated)
    except BackupError as error:
        progress.close()
        raise click.ClickException(str(error)) from error
    progress.close()
    manifest = summary.manifest
    click.echo(f"restored {file} (taken {manifest['created']}) into {target}")
    if summary.authenticated_by is not None:
        click.echo(f"  authenticated: its manifest is signed by the referee key you named ({summary.authenticated_by})"
                   " and every member matches it")
    else:
        click.echo("  NOT authenticated (--unauthenticated): nothing shows this backup is yours and unaltered; "
                   f"it carries the key {manifest.get('referee_public_key')}", err=True)
    click.echo(f"  log Redis: {summary.keys} keys, as the append-only file `referee serve` loads ({target}/redis)")
    click.echo(f"  referee key: {summary.key_file} (public {manifest['referee_public_key']})")
    click.echo(f"  archive: {summary.archived_files} file(s) in {summary.archive_dir}")
    serve = "referee serve" if not var else f"REFEREE_VAR={target} referee serve"
    click.echo(f"start it with `{serve}`: its replay workers rebuild the projections from the logs "
               "(or run `referee rebuild --all`)")
