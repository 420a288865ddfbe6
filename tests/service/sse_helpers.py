"""A small Server-Sent Events client over ``http.client`` (real sockets), for the live-page tests and the
benchmark: it parses blocks (``id:``, ``data:``, ``retry:``, comments) as they arrive."""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Block:
    id: str | None
    data: str | None
    retry: int | None
    comment: bool
    event: str | None = None  # the event's name (``event:``); None: the default ("message")

    def entry(self) -> dict[str, Any]:
        assert self.data is not None
        return json.loads(self.data)


def parse_block(text: str) -> Block:
    fields: dict[str, list[str]] = {}
    comment = False
    for line in text.split("\n"):
        if line.startswith(":"):
            comment = True
            continue
        name, _, value = line.partition(":")
        fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
    data = "\n".join(fields["data"]) if "data" in fields else None
    retry = int(fields["retry"][0]) if "retry" in fields else None
    return Block(fields.get("id", [None])[-1], data, retry, comment and not fields, fields.get("event", [None])[-1])


class SSEClient:
    """``GET path`` on ``base`` with ``Accept: text/event-stream``; ``status``, ``headers``, ``next_block()``."""

    def __init__(self, base: str, path: str, headers: dict[str, str] | None = None, timeout: float = 10.0):
        parts = urlsplit(base)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        self.conn.request("GET", path, headers={"Accept": "text/event-stream", **(headers or {})})
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.headers = self.response.headers
        self.buffer = ""

    def body_json(self) -> Any:
        return json.loads(self.response.read())

    def next_block(self, timeout: float = 10.0) -> Block | None:
        """The next block, or ``None`` when the server ended the stream."""
        deadline = time.monotonic() + timeout
        while "\n\n" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no block in time")
            chunk = self.response.read1(65536)
            if not chunk:
                return None
            self.buffer += chunk.decode()
        text, self.buffer = self.buffer.split("\n\n", 1)
        return parse_block(text)

    def next_event(self, timeout: float = 10.0) -> Block | None:
        """The next block carrying ``data`` (skipping heartbeats and the opening ``retry``/``id`` block)."""
        while True:
            block = self.next_block(timeout)
            if block is None or block.data is not None:
                return block

    def close(self) -> None:
        self.conn.close()
