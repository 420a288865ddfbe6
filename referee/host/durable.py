"""Durable writes on a POSIX file system: a file's new name (or a new file) survives a crash only once its
folder is fsync'd too. Used by the archive (``referee.store.archive``) and by backup and restore
(``referee.running.backup``)."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(path: Path | str) -> None:
    """fsync the folder ``path`` itself (its entries: names created, replaced or removed in it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
