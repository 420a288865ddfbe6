"""Mail out (CONTRACT section 9): over SMTP when ``REFEREE_SMTP_URL`` is set, else into the Maildir
``<REFEREE_VAR>/mail/`` (files in ``new/``), which ``referee serve`` names when it starts.

``REFEREE_SMTP_URL``: ``smtp://[user:password@]host[:port]`` (plain, or STARTTLS with
``?starttls=1``, the default for port 587) or ``smtps://…`` (TLS from the first byte, port 465).
``REFEREE_MAIL_FROM`` is the sender (default ``referee@localhost``).
"""

from __future__ import annotations

import logging
import mailbox
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

log = logging.getLogger(__name__)


class Mailer(Protocol):
    def send(self, message: EmailMessage) -> None: ...

    def describe(self) -> str: ...


class MaildirMailer:
    """Writes each mail as a file into a Maildir (``new/``): for a referee run without an SMTP server."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        for sub in ("new", "cur", "tmp"):  # mailbox.Maildir(create=True) makes them only for a new folder
            (self.path / sub).mkdir(parents=True, exist_ok=True)
        self._box = mailbox.Maildir(str(self.path), create=False)

    def send(self, message: EmailMessage) -> None:
        self._box.add(message)

    def describe(self) -> str:
        return f"mail goes into the Maildir {self.path}/new (no SMTP server set: REFEREE_SMTP_URL)"


def without_password(url: str) -> str:
    """``url`` with its password, if any, written ``***`` (what an error message or a log may show).

    >>> without_password("smtp://referee:s3cret@mail.example:587"), without_password("smtp://mail.example")
    ('smtp://referee:***@mail.example:587', 'smtp://mail.example')
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    userinfo, _, hostport = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{userinfo.partition(':')[0]}:***@{hostport}"))


class SmtpMailer:
    """Sends over SMTP: plain, STARTTLS or TLS, with credentials when the URL has them."""

    def __init__(self, url: str, timeout: float = 10.0):
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(f"REFEREE_SMTP_URL must be smtp://host[:port] or smtps://host[:port], not "
                             f"{without_password(url)!r}")
        self.tls = parts.scheme == "smtps"
        self.host = parts.hostname
        self.port = parts.port or (465 if self.tls else 25)
        query = parse_qs(parts.query)
        self.starttls = not self.tls and (query.get("starttls", ["1" if self.port == 587 else "0"])[0] in ("1", "true"))
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.timeout = timeout
        self._context: ssl.SSLContext | None = None

    def _tls_context(self) -> ssl.SSLContext:
        """One context for every mail (loading the system's certificates takes ~20 ms), made at the first TLS."""
        if self._context is None:
            self._context = ssl.create_default_context()
        return self._context

    def send(self, message: EmailMessage) -> None:
        smtp: Any
        if self.tls:
            smtp = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=self._tls_context())
        else:
            smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
        with smtp:
            if self.starttls:
                smtp.starttls(context=self._tls_context())
            if self.user:
                smtp.login(self.user, self.password or "")
            smtp.send_message(message)

    def describe(self) -> str:
        mode = "TLS" if self.tls else ("STARTTLS" if self.starttls else "plain")
        return f"mail goes out over SMTP {self.host}:{self.port} ({mode})"


def mailer_from_config(config: dict[str, Any]) -> Mailer:
    url = config.get("REFEREE_SMTP_URL")
    if url:
        return SmtpMailer(url)
    return MaildirMailer(Path(config.get("REFEREE_VAR") or "var") / "mail")


def compose(*, sender: str, to: str, subject: str, text: str, html: str | None = None,
            in_reply_to: str | None = None, references: str | None = None, language: str | None = None
            ) -> EmailMessage:
    """A mail with a plain-text part and, when given, an HTML alternative; ``language`` (``de``…) is said in
    ``Content-Language``."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "referee.local")
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
        message["References"] = f"{references} {in_reply_to}".strip() if references else in_reply_to
    message.set_content(text)
    if html is not None:
        message.add_alternative(html, subtype="html")
    if language:  # after the content: setting it clears the Content-* headers
        message["Content-Language"] = language
    return message
