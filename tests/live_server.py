"""A real threaded HTTP server for a WSGI app, on a free loopback port, for tests that need real
sockets (concurrent clients, the CLI, the browser)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from werkzeug.serving import make_server


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve ``app`` in a daemon thread for the ``with`` block; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
