"""HTTP/1.1 by hand over one socket, to see what a keep-alive client sees: the ``Connection`` header, and
whether the server really keeps or closes the connection. Also a real gunicorn serving the app."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ports import free_port
from svc_helpers import stop_process

REPO = Path(__file__).resolve().parents[2]


class Connection:
    """One TCP connection to ``host:port``; ``request`` sends bytes, ``response`` reads one answer."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.file = self.sock.makefile("rb")
        self.send_error: BaseException | None = None
        self._sender: threading.Thread | None = None

    def send(self, data: bytes, background: bool = False) -> None:
        """Send ``data``; with ``background``, from a thread, so that an answer can be read meanwhile (the
        server may answer and close before it has read everything: the error is kept in ``send_error``)."""

        def run() -> None:
            try:
                self.sock.sendall(data)
            except OSError as exc:
                self.send_error = exc

        if background:
            self._sender = threading.Thread(target=run, daemon=True)
            self._sender.start()
        else:
            self.sock.sendall(data)

    def response(self) -> tuple[int, dict[str, str], bytes]:
        """Status, headers (lower-case names) and body of the next response."""
        line = self.file.readline()
        if not line:
            raise EOFError("the server closed the connection")
        status = int(line.split()[1])
        headers: dict[str, str] = {}
        while (line := self.file.readline()) not in {b"\r\n", b"\n", b""}:
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = self.file.read(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while size := int(self.file.readline().split(b";")[0], 16):
                body += self.file.read(size)
                self.file.readline()
            self.file.readline()
        else:
            body = self.file.read()
        return status, headers, body

    def closed_by_server(self, wait: float = 5.0) -> bool:
        """Whether the server closes the connection (end of stream or reset) within ``wait`` seconds."""
        self.sock.settimeout(wait)
        try:
            return self.file.read(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False

    def close(self) -> None:
        if self._sender is not None:
            self._sender.join(timeout=10)
        self.file.close()
        self.sock.close()


def request(method: str, path: str, body: bytes = b"", *, content_type: str | None = "application/json",
            chunked: bool = False, chunk: int = 65536) -> bytes:
    """The bytes of one HTTP/1.1 request (keep-alive, the HTTP/1.1 default)."""
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    if content_type:
        head.append(f"Content-Type: {content_type}")
    if chunked:
        head.append("Transfer-Encoding: chunked")
        framed = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + chunk]), body[i:i + chunk])
                          for i in range(0, len(body), chunk)) + b"0\r\n\r\n"
    else:
        if body or method == "POST":
            head.append(f"Content-Length: {len(body)}")
        framed = body
    return ("\r\n".join(head) + "\r\n\r\n").encode() + framed


@contextlib.contextmanager
def gunicorn(env: dict[str, Any], log: Path, worker_args: list[str] | None = None) -> Iterator[int]:
    """A real gunicorn serving ``create_app()`` with settings ``env``; yields its port. ``worker_args``: the
    worker model (default one gthread worker; ``["--config", "python:referee.running.gunicorn_conf", "--workers",
    "1"]`` is the deployment's gevent model)."""
    port = free_port()
    environment = {**os.environ, "PYTHONPATH": str(REPO), **{k: str(v) for k, v in env.items()}}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn",
             *(worker_args or ["--workers", "1", "--worker-class", "gthread", "--threads", "4"]),
             "--bind", f"127.0.0.1:{port}", "referee.app:create_app()"],
            cwd=REPO, env=environment, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"gunicorn exited: {log.read_text()[-2000:]}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            yield port
        finally:
            stop_process(process)
