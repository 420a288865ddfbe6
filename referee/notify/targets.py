"""Where a webhook goes (issue 26): one check of its address, shared by registration and delivery, and the
POST to the address that was checked.

With ``REFEREE_WEBHOOK_PRIVATE=0`` a webhook URL whose host resolves to a private, loopback, link-local,
reserved or multicast address is refused (:func:`forbidden_address`): when it is registered
(:func:`url_problem`, ``ContactService.webhook_problem``) and again at every delivery (:func:`post`),
which resolves the host once, checks every address, and connects to one of THOSE addresses (a name
that resolves elsewhere a second later, DNS rebinding, changes nothing). The ``Host`` header, and for
https the SNI and the certificate check, keep the URL's name. :func:`post` follows no redirect (a 3xx
is a failed delivery, as Standard Webhooks' senders do), reads at most :data:`ANSWER_LIMIT` bytes of
the answer within one deadline, and describes a failure by a short, fixed category (:data:`REFUSED`,
:data:`TIMED_OUT`, …) for the player-visible delivery log; the exception and the address reached are
only in :attr:`Outcome.detail`, for the operator's log.
"""

from __future__ import annotations

import http.client
import io
import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..addresses import carried_ipv4, normalised

#: ``socket.getaddrinfo``, or a stand-in with its signature (tests: a name that resolves elsewhere later)
Resolve = Callable[..., list[tuple[Any, ...]]]
#: bytes of an answer (status line, headers and body together) the referee reads at most
ANSWER_LIMIT = 8192

# the delivery log's categories of failure (never an exception's text, never an address)
REFUSED = "refused: private address"
NOT_RESOLVED = "host does not resolve"
NOT_HTTP = "not an http(s) URL"
CONNECTION_FAILED = "connection failed"
TIMED_OUT = "timed out"
TLS_ERROR = "TLS error"
BAD_ANSWER = "not an HTTP answer"
TOO_LARGE = "answer too large"
PRIVATE_PROBLEM = "private, loopback and link-local addresses are not allowed here (REFEREE_WEBHOOK_PRIVATE)"


def forbidden_address(address: str) -> bool:
    """Is ``address`` (an IP, as ``getaddrinfo`` gives it) one a webhook may not reach when private
    addresses are refused: private, loopback, link-local, reserved, multicast, unspecified, or any
    other address that is not global (shared address space, documentation ranges)? Read through
    ``referee.addresses``: an IPv4-mapped address is its IPv4 address, and a 6to4, IPv4-compatible or
    NAT64 one is forbidden when the IPv4 address it carries is (``2002:7f00:1::`` is loopback)."""
    ip = normalised(address)
    if ip is None:
        raise ValueError(f"{address!r} is not an IP address")
    carried = carried_ipv4(ip)
    if carried is not None and forbidden_address(str(carried)):
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.sixtofour is not None:
        return False  # 6to4: judged by the IPv4 it carries (Pythons before 3.11.4 call all of 2002::/16 private)
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return True
    return (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved or ip.is_multicast
            or ip.is_unspecified or not ip.is_global)


class Refused(Exception):
    """The host resolves to an address that is not allowed (:func:`forbidden_address`)."""


def checked_addresses(host: str, port: int, *, allow_private: bool,
                      resolve: Resolve = socket.getaddrinfo) -> list[tuple[int, tuple[Any, ...]]]:
    """Resolve ``host`` once: its ``(family, sockaddr)`` pairs, every one of them checked. Raises
    :class:`Refused` when one is forbidden (and private addresses are), ``OSError`` when it does not
    resolve."""
    found = [(info[0], info[4]) for info in resolve(host, port, 0, socket.SOCK_STREAM)]
    if not found:
        raise socket.gaierror(f"{host!r} resolves to no address")
    if not allow_private:
        bad = sorted({str(sockaddr[0]) for _family, sockaddr in found if forbidden_address(str(sockaddr[0]))})
        if bad:
            raise Refused(f"{host} resolves to {', '.join(bad)}")
    return list(dict.fromkeys(found))


def default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def url_problem(url: str, *, allow_private: bool, resolve: Resolve = socket.getaddrinfo) -> str | None:
    """What is wrong with ``url`` as a webhook target (registration), or None."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return "the port is not a number from 0 to 65535"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL"
    if allow_private:
        return None
    try:
        checked_addresses(parts.hostname, port or default_port(parts.scheme), allow_private=False,
                          resolve=resolve)
    except Refused:
        return PRIVATE_PROBLEM
    except (OSError, UnicodeError):
        return f"the host {parts.hostname!r} does not resolve"
    return None


# -- the POST ------------------------------------------------------------------------------------------
class TooLarge(Exception):
    """The answer goes on past :data:`ANSWER_LIMIT` bytes before its head ends."""


class _Capped(io.RawIOBase):
    """The socket's reading side, stopping at ``limit`` bytes and at the deadline."""

    def __init__(self, sock: socket.socket, limit: int, deadline: float):
        self.sock, self.left, self.deadline, self.taken = sock, limit, deadline, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.left <= 0:
            raise TooLarge(f"more than {ANSWER_LIMIT} bytes")
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the answer took longer than the timeout")
        self.sock.settimeout(remaining)
        view = memoryview(buffer).cast("B")[: self.left]
        got = self.sock.recv_into(view)
        self.left -= got
        self.taken += got
        return got


class _Answer(http.client.HTTPResponse):
    """An answer read through :class:`_Capped` (the connection hands it the limit and the deadline)."""

    def __init__(self, sock: socket.socket, *args: Any, capped: _Capped | None = None, **kwargs: Any):
        super().__init__(sock, *args, **kwargs)
        self.capped = capped or _Capped(sock, ANSWER_LIMIT, time.monotonic() + 5)
        self.fp.close()  # the plain reader http.client made: the capped one reads instead
        self.fp = io.BufferedReader(self.capped, buffer_size=1024)


class _Pinned(http.client.HTTPConnection):
    """An HTTP connection to one of the checked ``addresses``, whatever the name resolves to by now; the
    ``Host`` header keeps the name."""

    def __init__(self, host: str, port: int, addresses: list[tuple[int, tuple[Any, ...]]], deadline: float):
        super().__init__(host, port, timeout=max(deadline - time.monotonic(), 0.001))
        self.addresses, self.deadline = addresses, deadline
        self.reached: Any = None
        self.capped: _Capped | None = None

    def _open(self) -> socket.socket:
        last: OSError | None = None
        for family, sockaddr in self.addresses:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no connection within the timeout")
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.settimeout(remaining)
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.reached = sockaddr[0]
            return sock
        raise last or OSError("no address to connect to")

    def connect(self) -> None:
        self.sock = self._open()

    def response_class(self, sock: socket.socket, *args: Any, **kwargs: Any) -> _Answer:  # type: ignore[override]
        self.capped = _Capped(sock, ANSWER_LIMIT, self.deadline)
        return _Answer(sock, *args, capped=self.capped, **kwargs)


class _PinnedTLS(_Pinned):
    """The same over TLS: SNI and the certificate check are for the URL's name, not the address."""

    default_port = http.client.HTTPS_PORT

    def __init__(self, *args: Any, context: ssl.SSLContext | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.context = context or ssl.create_default_context()

    def connect(self) -> None:
        sock = self._open()
        try:
            sock.settimeout(max(self.deadline - time.monotonic(), 0.001))
            self.sock = self.context.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise


@dataclass
class Outcome:
    """One delivery attempt: ``status`` (None without an answer), ``ok`` (a 2xx), ``error`` (a fixed category,
    for the player), ``ms`` (from the connection on; None when nothing was connected), ``detail`` (the
    exception and the address reached: for the operator's log only), ``read`` (bytes of the answer read)."""

    status: int | None
    ok: bool
    error: str | None = None
    ms: int | None = None
    detail: str = ""
    read: int = 0


def post(url: str, body: bytes, headers: Mapping[str, str], *, timeout: float, allow_private: bool,
         resolve: Resolve = socket.getaddrinfo, context: ssl.SSLContext | None = None) -> Outcome:
    """POST ``body`` to ``url``: resolved once, checked, connected to the address checked, no redirect
    followed, at most :data:`ANSWER_LIMIT` bytes of the answer read, all within ``timeout`` seconds."""
    try:
        parts = urlsplit(url)
        port = parts.port or default_port(parts.scheme)
    except ValueError:
        return Outcome(None, False, NOT_HTTP, detail=f"not a URL: {url!r}")
    host = parts.hostname
    if parts.scheme not in ("http", "https") or not host:
        return Outcome(None, False, NOT_HTTP, detail=f"not an http(s) URL: {url!r}")
    try:
        addresses = checked_addresses(host, port, allow_private=allow_private, resolve=resolve)
    except Refused as exc:
        return Outcome(None, False, REFUSED, detail=str(exc))
    except (OSError, UnicodeError) as exc:
        return Outcome(None, False, NOT_RESOLVED, detail=f"{host}: {type(exc).__name__}: {exc}")
    started = time.monotonic()
    deadline = started + timeout
    connection: _Pinned | None = None
    try:
        if parts.scheme == "https":
            connection = _PinnedTLS(host, port, addresses, deadline, context=context)
        else:
            connection = _Pinned(host, port, addresses, deadline)
        connection.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
                           body=body, headers=dict(headers))
        answer = connection.getresponse()
        status = answer.status
        try:
            answer.read1(ANSWER_LIMIT)  # what has come of the body, within the limit; never kept, never waited for
        except (TooLarge, OSError, http.client.HTTPException):
            pass  # the status is in: the rest of the body does not matter
        if 200 <= status < 300:
            outcome = Outcome(status, True)
        elif 300 <= status < 400:
            outcome = Outcome(status, False, f"redirect not followed (HTTP {status})",
                              detail=f"Location: {(answer.getheader('location') or '')[:200]!r}")
        else:
            outcome = Outcome(status, False, f"HTTP {status}")
    except TooLarge as exc:
        outcome = Outcome(None, False, TOO_LARGE, detail=f"the answer's head is {exc}")
    except TimeoutError as exc:
        outcome = Outcome(None, False, TIMED_OUT, detail=f"{type(exc).__name__}: {exc}")
    except ssl.SSLError as exc:  # with ssl.CertificateError
        outcome = Outcome(None, False, TLS_ERROR, detail=f"{type(exc).__name__}: {exc}")
    except OSError as exc:
        outcome = Outcome(None, False, CONNECTION_FAILED, detail=f"{type(exc).__name__}: {exc}")
    except (http.client.HTTPException, ValueError, UnicodeError) as exc:
        outcome = Outcome(None, False, BAD_ANSWER, detail=f"{type(exc).__name__}: {exc}")
    finally:
        if connection is not None:
            connection.close()
    outcome.ms = round((time.monotonic() - started) * 1000)
    reached = connection.reached if connection is not None else None
    outcome.read = connection.capped.taken if connection is not None and connection.capped else 0
    where = f"{host} at {reached}" if reached else host
    outcome.detail = f"{where}: {outcome.detail}" if outcome.detail else where
    return outcome
