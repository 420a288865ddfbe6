"""Logs of every referee process, set up once where the process is made (CONTRACT section 13, "Logs").

:func:`configure_logging` is called once by each kind of process: ``create_app`` (the web workers),
``referee/running/gunicorn_conf.py`` (gunicorn's master, and the access log), ``referee worker`` (replay and
notify workers), ``referee serve`` and ``referee mail-gateway``. With ``REFEREE_LOG_FORMAT=text`` (the
default) it changes nothing: the processes write what they always wrote. With ``json`` the root logger
writes one JSON object a line to stderr (python-json-logger's ``JsonFormatter``)::

    {"time": "2026-11-21T10:00:00.123000+00:00", "level": "INFO", "logger": "gunicorn.access",
     "event": "POST /games/g1/moves 202", "process": "web", "pid": 4242, "request_id": "9f…",
     "game_id": "g1", "method": "POST", "path": "/games/g1/moves", "status": 202, "duration_ms": 3.1}

``request_id`` and ``game_id`` come from context variables (:func:`bind`): the web app binds them for each
request (``referee/observability.py``), the replay loop and the deadline scheduler for each game they work
on. Each greenlet (gevent) and thread has its own context, so one request's ids never show up in
another's lines.

:func:`announce` is for what a command says to its operator (``referee serve``'s URL, restarts): printed
as before in text mode, a log line in JSON mode.
"""

from __future__ import annotations

import contextvars
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

FORMATS = ("text", "json")
#: the context of the current request or job: ``request_id``, ``game_id``
_CONTEXT: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("referee_log_context", default=None)
_HANDLER_MARK = "_referee_handler"
#: attributes never written to a JSON line: RQ puts a failed job's ``arguments`` and ``kwargs`` on the record
#: it logs (``extra``), and a job's arguments may carry what no log may hold (a private message's text; issue 37)
UNLOGGED = ("arguments", "kwargs")
_state: dict[str, Any] = {"format": "text", "process": None}


class ContextFilter(logging.Filter):
    """Puts the bound ``request_id``/``game_id`` and the process id on every record that has none of its own,
    and takes off what is never logged (:data:`UNLOGGED`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name in UNLOGGED:
            record.__dict__.pop(name, None)
        for name, value in (_CONTEXT.get() or {}).items():
            if not hasattr(record, name):
                setattr(record, name, value)
        record.pid = record.process
        return True


def json_formatter(process: str) -> logging.Formatter:
    """python-json-logger's formatter with the referee's field names (``time``, ``level``, ``logger``,
    ``event``, ``process``, and whatever the record carries beyond the standard attributes)."""
    from pythonjsonlogger.json import JsonFormatter  # noqa: PLC0415 - only in JSON mode

    return JsonFormatter(["levelname", "name", "message"], timestamp="time", static_fields={"process": process},
                         rename_fields={"levelname": "level", "name": "logger", "message": "event"})


def configure_logging(config: Mapping[str, Any], process: str) -> str:
    """Set up this process's logs from ``REFEREE_LOG_FORMAT`` (``text``: leave them as they are; ``json``: the
    root logger writes JSON lines to stderr, at INFO and above). ``process`` names the kind of process in
    every line (``web``, ``worker``, ``notify``, ``serve``, ``mail-gateway``). Calling it again replaces what
    the last call set up. Returns the format."""
    fmt = str(config.get("REFEREE_LOG_FORMAT") or "text")
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(handler)
    _state.update(format=fmt, process=process)
    if fmt != "json":
        return fmt
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(json_formatter(process))
    handler.addFilter(ContextFilter())
    setattr(handler, _HANDLER_MARK, True)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    return fmt


def is_json() -> bool:
    return _state["format"] == "json"


@contextmanager
def bound(**fields: str | None) -> Iterator[None]:
    """Within the block, every log line carries ``fields`` (``request_id``, ``game_id``) besides those bound
    outside it; ``None`` values are left out."""
    token = bind(**fields)
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def bind(**fields: str | None) -> contextvars.Token[dict[str, str] | None]:
    """Bind ``fields`` to this context (greenlet, thread) until :func:`unbind` with the returned token."""
    current = _CONTEXT.get() or {}
    return _CONTEXT.set({**current, **{name: value for name, value in fields.items() if value is not None}})


def unbind(token: contextvars.Token[dict[str, str] | None]) -> None:
    _CONTEXT.reset(token)


def announce(message: str, *, err: bool = False, warning: bool | None = None, **fields: Any) -> None:
    """What a command tells its operator: printed (stdout, or stderr with ``err``) in text mode; in JSON mode a
    log line of the logger ``referee.<process>`` (WARNING if ``warning``, which defaults to ``err``), with
    ``fields`` as its extra fields."""
    if is_json():
        logger = logging.getLogger(f"referee.{_state['process'] or 'cli'}")
        logger.log(logging.WARNING if (err if warning is None else warning) else logging.INFO, message, extra=fields)
        return
    print(message, file=sys.stderr if err else sys.stdout, flush=True)
