"""The logging configuration of this process, taken and put back (issue 50, item 5).

Two tests that read captured log lines came back empty when an earlier test on the same xdist worker had left
the logging configuration changed: ``lint_imports`` (import-linter, ``tests/test_static_checks.py``) calls
``logging.config.dictConfig`` with ``disable_existing_loggers`` left at its default, so every logger that
existed then (``workers.allowlist``, ``rq.worker``, …) was ``disabled`` for the rest of the worker's tests. RQ's
``Worker.work`` sets the level of ``rq.worker`` and ``rq.job`` (``setup_loghandlers``), and ``configure_logging``
the root's level. :func:`snapshot` takes what decides where a record goes — every logger's level, handlers,
filters, ``propagate`` and ``disabled``, and ``logging.disable``'s level — :func:`restore` puts it back and
:func:`changes` names what differs. ``tests/conftest.py`` runs every test between the two and fails a test that
left a change; :func:`kept` is for the tests and helpers that configure logging on purpose.

pytest's own handlers (the capture of each phase, ``caplog``) come and go with each phase of a test: they are
no part of the state compared.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

ROOT = "<root>"


def _own(handlers: list[logging.Handler]) -> tuple[logging.Handler, ...]:
    return tuple(h for h in handlers if not type(h).__module__.startswith("_pytest."))


def _state(logger: logging.Logger) -> dict[str, Any]:
    return {"level": logger.level, "handlers": _own(logger.handlers), "filters": tuple(logger.filters),
            "propagate": logger.propagate, "disabled": logger.disabled}


DEFAULT = {"level": logging.NOTSET, "handlers": (), "filters": (), "propagate": True, "disabled": False}


def _loggers() -> dict[str, logging.Logger]:
    found = {name: logger for name, logger in list(logging.root.manager.loggerDict.items())
             if isinstance(logger, logging.Logger)}
    found[ROOT] = logging.getLogger()
    return found


def snapshot() -> dict[str, Any]:
    return {"disable": logging.root.manager.disable,
            "loggers": {name: _state(logger) for name, logger in _loggers().items()}}


def changes(before: dict[str, Any]) -> list[str]:
    """What differs now from ``before``, one line a change (``rq.worker: disabled False -> True``), on the loggers
    that were there before: a logger made since is a library's own first set-up (redis-py's ``push_response``
    gets its own handler the first time it is asked for); :func:`restore` puts those back to the defaults too.
    Only what can keep a record from reaching another test's capture counts: a level, a filter, ``propagate``,
    ``disabled``, the root's handlers. A handler added below the root writes more, hides nothing (Flask-Limiter
    adds a ``NullHandler`` to its logger for each app): it is put back without a word."""
    out = []
    if logging.root.manager.disable != before["disable"]:
        out.append(f"logging.disable: {before['disable']} -> {logging.root.manager.disable}")
    for name, logger in sorted(_loggers().items()):
        if name not in before["loggers"]:
            continue
        was, now = before["loggers"][name], _state(logger)
        for field in ("level", "filters", "propagate", "disabled", *(("handlers",) if name == ROOT else ())):
            if was[field] != now[field]:
                out.append(f"{name}: {field} {was[field]!r} -> {now[field]!r}")
    return out


def restore(before: dict[str, Any]) -> None:
    logging.disable(before["disable"])
    for name, logger in _loggers().items():
        was = before["loggers"].get(name, DEFAULT)
        pytest_handlers = [h for h in logger.handlers if h not in _own(logger.handlers)]
        logger.handlers[:] = [*was["handlers"], *pytest_handlers]
        logger.filters[:] = list(was["filters"])
        logger.propagate, logger.disabled = was["propagate"], was["disabled"]
        if logger.level != was["level"]:  # (setLevel clears every logger's cached effective level: once a test
            logger.setLevel(was["level"])  # for each of ~100 loggers, 1.4 ms of each of the suite's ~1,700 tests)


@contextmanager
def kept() -> Iterator[None]:
    """Within the block, logging may be configured (an in-process worker, ``configure_logging``, import-linter);
    after it, it is as it was."""
    before = snapshot()
    try:
        yield
    finally:
        restore(before)
