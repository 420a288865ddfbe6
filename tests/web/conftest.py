"""Fixtures of the browser tests: Debian's Chromium driven by Playwright, and a real referee server.

The server is ``referee.app.create_app`` served by werkzeug in a thread, on the session's real Redis
(``redis_server`` from ``tests/conftest.py``) with a real RQ worker subprocess replaying the logs. Set
``REFEREE_WEB_BASE_URL`` to run the same tests against a server that is already running instead.

The browser is Debian's ``chromium-headless-shell`` (``/usr/bin/chromium-headless-shell``: the old headless
mode, which Playwright itself uses for headless runs), else Debian's ``/usr/bin/chromium``; ``REFEREE_TEST_CHROMIUM``
names another. The shell starts a browser context and loads a page for about a quarter of the CPU of the full
browser's headless mode (0.31 s against 1.36 s a context; a game page 0.9 s against 3.4 s; measured in one run on
this 2-core machine), and the browser tests are most of the suite's CPU. The tests are skipped, with the reason,
when neither is installed or the ``playwright`` package is missing. Playwright's own browser downloads are never
used (no ``playwright install``).
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from forked_workers import referee_worker, wait_for_worker
from live_server import serving

FULL_CHROMIUM = "/usr/bin/chromium"
CHROMIUMS = ("/usr/bin/chromium-headless-shell", FULL_CHROMIUM)
CHROMIUM = os.environ.get("REFEREE_TEST_CHROMIUM") or next((c for c in CHROMIUMS if os.path.exists(c)), CHROMIUMS[0])
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None


def pytest_configure(config):
    config.addinivalue_line("markers", f"web: browser tests (Playwright driving {CHROMIUM})")


def pytest_collection_modifyitems(config, items):
    reason = None
    if sync_playwright is None:
        reason = "the playwright package is not installed (pip install -e '.[dev]')"
    elif not os.path.exists(CHROMIUM):
        reason = f"{CHROMIUM} is missing (apt-get install chromium-headless-shell)"
    if reason:
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if "web" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """``test-artifacts/`` (git-ignored): screenshots for people to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def playwright_driver():
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_driver):
    chromium = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


@pytest.fixture(scope="session")
def full_browser(playwright_driver):
    """Debian's full ``/usr/bin/chromium`` in its headless mode, for what the headless shell lacks: notifications
    (the shell's permission stays "denied" whatever is granted). Skipped, saying so, where it is not installed."""
    if not os.path.exists(FULL_CHROMIUM):
        pytest.skip(f"{FULL_CHROMIUM} is missing (apt-get install chromium): notifications need the full browser")
    chromium = playwright_driver.chromium.launch(executable_path=FULL_CHROMIUM, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


class ConsoleErrors:
    """Collects console errors and uncaught exceptions of every page it watches."""

    def __init__(self):
        self.errors: list[str] = []
        self.expected: list[str] = []

    def expect(self, text: str) -> None:
        """One console error containing ``text`` is expected: Chromium itself logs every HTTP error
        response of a fetch ("Failed to load resource: ... status of 422"), also when the page handles it."""
        self.expected.append(text)

    @contextmanager
    def tolerate(self, text: str) -> Iterator[None]:
        """Within the block, at most one console error containing ``text`` is allowed (an answer of a race that
        the page handles, which may or may not happen); after it, none."""
        self.expected.append(text)
        try:
            yield
        finally:
            if text in self.expected:
                self.expected.remove(text)

    def _console(self, page, msg) -> None:
        if msg.type != "error":
            return
        for i, text in enumerate(self.expected):
            if text in msg.text:
                del self.expected[i]
                return
        self.errors.append(f"{page.url}: {msg.text}")

    def watch(self, page):
        page.on("console", lambda msg: self._console(page, msg))
        page.on("pageerror", lambda exc: self.errors.append(f"{page.url}: uncaught {exc}"))
        return page

    def assert_none(self):
        assert not self.errors, "console errors:\n" + "\n".join(self.errors)


@pytest.fixture
def console_errors():
    errors = ConsoleErrors()
    yield errors
    if errors.errors:  # shown with a failing test's output
        print("console errors:", *errors.errors, sep="\n  ")


@pytest.fixture(scope="module")
def web_server(request, tmp_path_factory):
    """Base URL of a running referee with a real Redis and a real RQ worker (one per test module)."""
    external = os.environ.get("REFEREE_WEB_BASE_URL")
    if external:
        yield external.rstrip("/")
        return
    redis_server = request.getfixturevalue("redis_server")
    yield from _serve(redis_server.url, tmp_path_factory.mktemp("web-var"))


@pytest.fixture(scope="module")
def lapsing_server(request, tmp_path_factory):
    """Like ``web_server``, but its games wait only 4 s for their seats (``REFEREE_ACCEPT_WITHIN``; the suite's
    default: forever), for an invitation that lapses (test_invitations.py)."""
    redis_server = request.getfixturevalue("redis_server")
    yield from _serve(redis_server.url, tmp_path_factory.mktemp("web-lapsing"), {"REFEREE_ACCEPT_WITHIN": 4})


@pytest.fixture(scope="module")
def messages_server(request, tmp_path_factory):
    """Like ``web_server``, but its game pages read their messages every second (``WEB_MESSAGES_POLL_MS``; the
    service's default, and the other modules': 5 s), for the message tests (test_decisions_and_messages.py): a
    message reaches the other pages within a second, not five."""
    redis_server = request.getfixturevalue("redis_server")
    yield from _serve(redis_server.url, tmp_path_factory.mktemp("web-messages"), {"WEB_MESSAGES_POLL_MS": 1000})


@pytest.fixture(scope="module")
def recovering_server(request, tmp_path_factory):
    """Like ``web_server``, at ``localhost`` (WebAuthn refuses an IP address: a recovery's new key may be a passkey's),
    with recoveries of lost keys that wait 3 s (``REFEREE_RECOVERY_WAIT``; the default is 72 hours)."""
    redis_server = request.getfixturevalue("redis_server")
    for url in _serve(redis_server.url, tmp_path_factory.mktemp("web-recovering"), {"REFEREE_RECOVERY_WAIT": 3}):
        yield url.replace("127.0.0.1", "localhost")


def _serve(redis_url: str, var: Path, config: dict | None = None):
    """A referee app served in a thread and its RQ worker; ``config``: more of the app's settings."""
    from referee.app import create_app

    queue = f"web-{uuid.uuid4().hex[:8]}"  # its own queue: this worker serves only this server's games
    settings = {"REDIS_URL": redis_url, "REFEREE_VAR": str(var), "REFEREE_QUEUE": queue}
    # Every browser of the tests comes from 127.0.0.1, and a closed context's event stream keeps its slot until the
    # next heartbeat finds it gone (up to 15 s): a module that opens a page a second, serially, held more than the
    # cap of 8 a client (a 429 on the stream, a console error; the cap's own tests: tests/service/test_stream_cap.py)
    streams = {"REFEREE_MAX_STREAMS_PER_CLIENT": 64}
    app = create_app({**settings, "WEB_POLL_MS": 250, "TESTING": True, **streams, **(config or {})})
    env = {**os.environ, **settings}
    worker_log = var / "worker.log"  # a file, not a pipe: a chatty worker must never block on a full pipe
    with serving(app) as url:
        worker = referee_worker(["--url", redis_url, "--queue", queue, "--name", f"{queue}-worker"], env=env,
                                stderr=worker_log, new_session=True)  # (a fork: tests/forked_workers.py)
        try:
            wait_for_worker(redis_url, worker, f"{queue}-worker", worker_log)
            yield url
        finally:
            # killed with its job processes, not stopped: a graceful stop waits ~1.8 s for RQ and the blocking
            # reads of its loops, in each of the ~25 modules; its queue and replayer set are this module's own, so
            # nothing is left that another module reads (the graceful stop has tests of its own: tests/service)
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    app.extensions["referee.store"].close()


@pytest.fixture(scope="module")
def pages_only():
    """Base URL of an app with only the pages' blueprint: enough for the ES modules, no Redis."""
    from flask import Flask

    from referee.web import bp

    app = Flask("pages-only")
    app.register_blueprint(bp)
    with serving(app) as url:
        yield url


@pytest.fixture
def static_page(browser, pages_only, console_errors):
    """A page of the pages-only server (``/play/keys``), to import the ES modules into."""
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    page.goto(f"{pages_only}/play/keys")
    yield page
    context.close()
    console_errors.assert_none()
