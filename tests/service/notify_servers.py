"""Real servers for the notification tests: an SMTP sink (``aiosmtpd``) and webhook receivers (HTTP servers
that verify every request with the ``standardwebhooks`` library). No mocks: mail goes over SMTP, webhooks
over HTTP, signatures are checked by the reference implementation."""

from __future__ import annotations

import email
import email.policy
import http.server
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiosmtpd.controller import Controller
from ports import free_port


@dataclass
class MailSink:
    messages: list[email.message.EmailMessage] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        message["X-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"

    def to(self, address: str) -> list[email.message.EmailMessage]:
        return [m for m in self.messages if address in str(m["To"])]

    def wait_for(self, address: str, count: int = 1, timeout: float = 10.0) -> list[email.message.EmailMessage]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.to(address)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        raise AssertionError(f"{count} mail(s) to {address} did not arrive; got {len(self.to(address))}")


def text_of(message: email.message.EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


@contextmanager
def smtp_sink():
    sink = MailSink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        sink.port = port  # type: ignore[attr-defined]
        yield sink
    finally:
        controller.stop()


@dataclass
class Receiver:
    """A webhook endpoint: ``fail_first`` requests answer 500, ``hang`` never answers in time."""

    url: str = ""
    received: list[dict[str, Any]] = field(default_factory=list)
    fail_first: int = 0
    hang: float = 0.0
    attempts: int = 0


@contextmanager
def webhook_receiver(fail_first: int = 0, hang: float = 0.0):
    receiver = Receiver(fail_first=fail_first, hang=hang)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            receiver.attempts += 1
            if receiver.hang:
                time.sleep(receiver.hang)
            if receiver.attempts <= receiver.fail_first:
                self.send_response(500)
                self.end_headers()
                return
            receiver.received.append({"body": body, "headers": {k.lower(): v for k, v in self.headers.items()}})
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Endpoint:
    """An HTTP endpoint for the delivery tests: every request (any method) is kept and answered the same."""

    url: str = ""
    port: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def http_endpoint(*, status: int = 204, headers: tuple[tuple[str, str], ...] = (), body: bytes = b"",
                  raw: bytes | None = None, hang: float = 0.0, host: str = "127.0.0.1", port: int = 0,
                  tls: Any = None):
    """A real HTTP server on ``host`` (a loopback address): it answers ``status`` with ``headers`` and ``body``
    (or writes ``raw`` bytes, not HTTP), after ``hang`` seconds; ``tls``: an ``ssl.SSLContext`` to serve https."""
    endpoint = Endpoint()

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length", 0) or 0)
            endpoint.requests.append({"method": self.command, "path": self.path, "body": self.rfile.read(length),
                                      "headers": {k.lower(): v for k, v in self.headers.items()}})
            if hang:
                time.sleep(hang)
            try:
                if raw is not None:
                    self.wfile.write(raw)
                    return
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the client stopped reading (the answer limit) and closed
                self.close_connection = True

        do_GET = do_POST = do_PUT = _answer

        def log_message(self, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    endpoint.port = server.server_address[1]
    endpoint.url = f"{'https' if tls else 'http'}://{host}:{endpoint.port}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
