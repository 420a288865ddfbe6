"""The referee's key file is created once even when several processes start at the same time (gunicorn's
workers): every process gets the same key and none reads a half-written file."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from referee.protocol.signing import private_key_b64, read_or_create_key_file


def _read(path: str, barrier, out) -> None:
    barrier.wait()
    out.put(private_key_b64(read_or_create_key_file(path)))


def test_processes_racing_to_create_the_key_all_get_the_same_one(tmp_path):
    path = str(tmp_path / "var" / "referee-key")
    context = multiprocessing.get_context("fork")
    barrier, out = context.Barrier(8), context.Queue()
    processes = [context.Process(target=_read, args=(path, barrier, out)) for _ in range(8)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(20)
        assert process.exitcode == 0
    keys = {out.get(timeout=5) for _ in processes}
    assert len(keys) == 1 and Path(path).stat().st_mode & 0o777 == 0o600
    assert [p.name for p in Path(path).parent.iterdir()] == ["referee-key"]  # no temporary file left
