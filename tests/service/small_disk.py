"""A small disk of the test's own: a tmpfs mounted on a folder (issue 50). Mounting needs root (the suite runs as
root in CI); where it cannot mount, the test is skipped and says why — never silently passed."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from referee.host.diskspace import free_bytes


@contextmanager
def mounted(folder: Path, size: int) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs for a full-disk test (it needs root): {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(mount: Path, leave: int = 0) -> Path:
    """Take the disk's free space down to ``leave`` bytes with one file (allocated, not sparse); returns it."""
    filler = mount / f"filler-{len(list(mount.glob('filler-*')))}"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        free = free_bytes(mount) or 0
        if free > leave:
            os.posix_fallocate(fd, 0, free - leave)
    finally:
        os.close(fd)
    return filler
