"""Errors of the log stores (the same for every store)."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of the store's errors."""


class GameNotFound(StoreError, LookupError):
    """No game with this id (its log is empty or absent)."""

    def __init__(self, game_id: str):
        super().__init__(f"no game {game_id!r}")
        self.game_id = game_id


class GameExists(StoreError):
    """A game with this id already has a log."""

    def __init__(self, game_id: str):
        super().__init__(f"game {game_id!r} already exists")
        self.game_id = game_id


class StaleAppend(StoreError):
    """The log is not at the expected position: ``seq`` and ``head`` say where it is."""

    def __init__(self, seq: int, head: str):
        super().__init__(f"the log is at seq {seq} (head {head[:12]}…)")
        self.seq = seq
        self.head = head


class DuplicateSubmission(StoreError):
    """This signed submission is already in the log at ``position``; the log is at ``seq``/``head``."""

    def __init__(self, position: int, seq: int, head: str):
        super().__init__(f"this submission is already in the log at position {position}")
        self.position = position
        self.seq = seq
        self.head = head


class StoreUnavailable(StoreError):
    """The backing store could not be reached or did not confirm the write."""


class GameArchived(StoreError):
    """A write (a message, a mute) to a game that was moved to the archive (``referee.store.archive``): archived
    games take nothing more; nothing written."""

    def __init__(self, game_id: str):
        super().__init__(f"game {game_id} is archived")
        self.game_id = game_id
