"""What the checks of one run share (:class:`Context`): the bundle, its log and what the replay found."""

from __future__ import annotations

from typing import Any

from ..protocol.signing import verify
from ..replay import LogReplayer
from .report import Progress


class MemoVerifier:
    """``signing.verify`` that checks each signature once: the seat-signature check and the replay look at
    the very same envelope objects (the verifier never mutates them), so the result is memoised by
    identity, and the object is kept so that its id cannot be reused."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int, str], tuple[Any, bool]] = {}

    def __call__(self, key: str, value: Any, sig: str) -> bool:
        memo = (key, id(value), sig)
        hit = self._seen.get(memo)
        if hit is not None and hit[0] is value:
            return hit[1]
        ok = verify(key, value, sig)
        self._seen[memo] = (value, ok)
        return ok


class Context:
    """What the checks share: the bundle, its log, and what the replay found."""

    def __init__(self, bundle: Any, progress: Progress | None, referee_key: str | None):
        self.bundle = bundle
        self.progress = progress
        self.expected_key = referee_key
        self.log: list[dict[str, Any]] = []
        self.created: dict[str, Any] = {}
        self.interim = False
        self.replayer: LogReplayer | None = None
        self.ended_at: int | None = None
        self.installed_version: str | None = None
        self.verifier = MemoVerifier()

    def tick(self, stage: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(stage, done, total)

