"""What every log store offers: the Redis store and the in-memory store implement this one interface,
and one contract test suite (``tests/service/test_store_contract.py``) runs against both.

A store keeps, per game: the append-only log (sealed entries, see ``referee.protocol.logchain``), its head, the
secret server seed, the signatures already logged, a "pending" flag for the replay job, and the
projection that the replay job derives from the log. It never interprets entries: deciding what an
entry means is ``referee.replay``'s job.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

#: ``LogStore.append(timer=…)``'s default: leave the game's timer as it is
KEEP_TIMER = object()


class Appended(NamedTuple):
    """Where an entry went: its ``position`` (= its ``seq``), the new ``head`` (its hash), whether this
    append raised the game's pending flag (so the replay workers must hear of it), and whether the append
    itself already told them (``notified``: the store's script pushed the game onto its ready list,
    ``RedisStore.use_ready_list``)."""

    position: int
    head: str
    pending_set: bool
    notified: bool = False


class Tip(NamedTuple):
    """A game's log length (``seq`` of the next entry) and the hash of its last entry."""

    seq: int
    head: str


#: Fields of a projection (``write_projection`` / ``read_projection``); every value is JSON-safe.
PROJECTION_FIELDS = ("seq", "head", "status", "to_move", "view", "result", "version_mismatch", "blocked",
                     "accepted", "last_verdict", "updated_at", "clocks", "decisions")


#: Not a stored field: a projection of a game created with a seat open to anyone carries under this name what
#: the open games' listing needs, ``{"creator": key or None, "created_ms": ms, "open": bool}`` (``open``: a seat
#: open to anyone is free and the game waits for it); a write that is stored (1) lists the game or takes it off
#: the list by it. A projection without it leaves the listing alone.
OPEN_LISTING = "open_listing"


def open_listing_rows(writes: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str | None, int | None]]:
    """The :meth:`LogStore.list_open_games` rows of stored projection writes ``(game, projection)``."""
    rows: list[tuple[str, str | None, int | None]] = []
    for game_id, projection in writes:
        listing = projection.get(OPEN_LISTING)
        if isinstance(listing, dict):
            rows.append((game_id, listing.get("creator"), int(listing["created_ms"]) if listing.get("open") else None))
    return rows


def encode_projection(projection: dict[str, Any]) -> dict[str, str]:
    return {name: json.dumps(projection.get(name), separators=(",", ":"), ensure_ascii=False)
            for name in PROJECTION_FIELDS if name != "seq"}


def decode_projection(raw: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {name: None for name in PROJECTION_FIELDS}
    for name, value in raw.items():
        out[name] = json.loads(value)
    out["seq"] = int(raw.get("seq", 0))
    return out


class LogStore(ABC):
    """The interface of a game log store. Positions are 0-based; ``seq`` of a log is its length.

    Errors (``referee.store.errors``, every one a :class:`~referee.store.errors.StoreError`):

    * ``GameNotFound`` (also a ``LookupError``): reading or extending the log of a game (or tournament)
      that has none. The lookups that can answer "nothing" (:meth:`read_secret`, :meth:`find_submission`,
      :meth:`read_projection`, :meth:`pending_since`, ...) answer ``None`` or an empty list instead.
    * ``GameExists``, ``StaleAppend``, ``DuplicateSubmission``: a log write that is refused; nothing is
      written.
    * ``StoreUnavailable``: a log write (:meth:`create`, :meth:`append` and their tournament twins) that the
      backing store refused or did not confirm. Unconfirmed, it may have happened: read :meth:`tip`.

    Other failures are not translated: an id that is not a valid game id
    (:func:`referee.store.keys.valid_game_id`) raises ``ValueError`` where the store makes keys from it
    (every method that reads or writes one log), and a ``RedisStore`` that cannot reach Redis raises
    ``redis.exceptions.RedisError`` from the other methods (reads, projections, timers, the outbox).
    """

    # -- games and their logs ---------------------------------------------------------------------
    @abstractmethod
    def create(self, game_id: str, entry: dict[str, Any], secret: bytes | None) -> Appended:
        """Start a game's log with its sealed ``created`` entry (position 0) and keep its secret seed.
        Also lists the game in :meth:`list_games`.

        :returns: position 0, the entry's hash as the head, ``pending_set`` true.
        :raises GameExists: if the game has a log already (nothing written).
        :raises StoreUnavailable: if the write was not confirmed, or (``RedisStore``) the game was created but
            not listed (``referee rebuild --all`` lists it).
        """

    @abstractmethod
    def append(self, game_id: str, entry: dict[str, Any], prev: str, signature: str | None = None, *,
               timer: int | object | None = KEEP_TIMER) -> Appended:
        """Append a sealed ``entry`` at position ``entry["seq"]``, chained from ``prev``, atomically; with
        ``timer`` (ms, or ``None`` to clear it), set the game's timer as :meth:`set_timer` does, in the same
        write where the store can (one Redis: the same script; a cluster: a second command, best effort).

        :returns: where the entry went (:class:`Appended`).
        :raises GameNotFound: if the game has no log.
        :raises StaleAppend: ``(seq, head)`` of the log if it is not at exactly ``entry["seq"]`` after ``prev``
            (nothing written).
        :raises DuplicateSubmission: if ``signature`` is already in this game's log (nothing written).
        :raises StoreUnavailable: if the write was refused or could not be confirmed.
        """

    @abstractmethod
    def read_log(self, game_id: str, start: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Entries from position ``start`` (at most ``limit``).

        :raises GameNotFound: if the game has no log.
        """

    @abstractmethod
    def read_since(self, game_id: str, start: int) -> tuple[list[dict[str, Any]], Tip]:
        """A consistent snapshot: the entries from ``start`` and the tip they end at.

        :raises GameNotFound: if the game has no log.
        """

    def read_since_many(self, starts: list[tuple[str, int]]) -> list[tuple[list[dict[str, Any]], Tip] | Exception]:
        """:meth:`read_since` of several games (a replay worker's batch): one answer or exception per game, in
        order (``GameNotFound`` for a game without a log is returned in its place, not raised). A store that
        can batches them into one round trip."""
        out: list[tuple[list[dict[str, Any]], Tip] | Exception] = []
        for game_id, start in starts:
            try:
                out.append(self.read_since(game_id, start))
            except Exception as exc:
                out.append(exc)
        return out

    @abstractmethod
    def tip(self, game_id: str) -> Tip:
        """The game's log length and head.

        :raises GameNotFound: if the game has no log.
        """

    def exists(self, game_id: str) -> bool:
        """Whether the game has a log (:meth:`tip` without the ``GameNotFound``)."""
        from .errors import GameNotFound  # noqa: PLC0415 - avoid a cycle at import time

        try:
            self.tip(game_id)
        except GameNotFound:
            return False
        return True

    @abstractmethod
    def read_secret(self, game_id: str) -> bytes | None:
        """The game's secret server seed (``None`` for recorded games or unknown games)."""

    @abstractmethod
    def find_submission(self, game_id: str, signature: str) -> int | None:
        """Position of the logged submission with this signature, or ``None`` (also for an unknown game)."""

    @abstractmethod
    def list_games(self, offset: int = 0, limit: int | None = None) -> list[str]:
        """Game ids, newest first (the lobby's: archived games too)."""

    def live_games(self, offset: int = 0, limit: int | None = None) -> list[str]:
        """The ids of the games still in the store itself (not archived), newest first."""
        return self.list_games(offset, limit)

    @abstractmethod
    def scan_games(self) -> list[str]:
        """Every game that has a log, found from the logs themselves (not the index); for ``rebuild --all``."""

    # -- the games of a player's key (an index: rebuilt from the ``created`` entries by ``rebuild --all``) ----
    @abstractmethod
    def index_player_games(self, rows: list[tuple[str, str, int]]) -> None:
        """List each game under each key: ``(public key, game, created ms)`` rows (the ``created`` entry's
        ``at``); listing a game again under a key changes nothing but its score. One round trip where the
        store can (one command per key: each key's index is its own hash tag).

        :raises ValueError: for a key that is not base64url.
        """

    @abstractmethod
    def player_games(self, public_key: str, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        """``(game, created ms)`` of the games listed under ``public_key``, newest first (``[]`` for a key with
        none).

        :raises ValueError: for a key that is not base64url.
        """

    @abstractmethod
    def unindex_player_games(self, rows: list[tuple[str, str]]) -> None:
        """Take each game off each key's list: ``(public key, game)`` rows (a key that left the seat it took,
        CONTRACT section 14); a row not listed changes nothing. One round trip where the store can.

        :raises ValueError: for a key that is not base64url.
        """

    @abstractmethod
    def index_player_tournaments(self, rows: list[tuple[str, str, int]]) -> None:
        """:meth:`index_player_games` for tournaments: ``(public key, tournament, created ms)`` rows.

        :raises ValueError: for a key that is not base64url.
        """

    @abstractmethod
    def player_tournaments(self, public_key: str, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        """``(tournament, created ms)`` of the tournaments listed under ``public_key``, newest first.

        :raises ValueError: for a key that is not base64url.
        """

    def read_projections(self, game_ids: list[str], fields: tuple[str, ...] | None = None
                         ) -> list[dict[str, Any] | None]:
        """:meth:`read_projection` (without verdicts) of several games, in order; one round trip where the store
        can. With ``fields`` (names of ``PROJECTION_FIELDS``) only those are read (the others are ``None``):
        a listing need not carry every game's public state (``view``)."""
        out = [self.read_projection(game_id) for game_id in game_ids]
        if fields is None:
            return out
        return [None if p is None else {name: p[name] if name in fields or name == "seq" else None for name in p}
                for p in out]

    def read_created(self, game_ids: list[str]) -> list[dict[str, Any] | None]:
        """The first entry (``created``) of each game's log, in order (``None`` for a game without a log); one
        round trip where the store can."""
        from .errors import GameNotFound  # noqa: PLC0415 - avoid a cycle at import time

        out: list[dict[str, Any] | None] = []
        for game_id in game_ids:
            try:
                out.append(self.read_log(game_id, 0, 1)[0])
            except GameNotFound:
                out.append(None)
        return out

    def read_last_entries(self, game_ids: list[str]) -> list[dict[str, Any] | None]:
        """The last entry of each game's log, in order (``None`` for a game without a log); one round trip where
        the store can."""
        from .errors import GameNotFound  # noqa: PLC0415 - avoid a cycle at import time

        out: list[dict[str, Any] | None] = []
        for game_id in game_ids:
            try:
                tip = self.tip(game_id)
                out.append(self.read_log(game_id, tip.seq - 1, 1)[0])
            except GameNotFound:
                out.append(None)
        return out

    @abstractmethod
    def claim_rematch(self, game_id: str, rematch_id: str) -> str | None:
        """Name ``rematch_id`` the rematch of ``game_id`` unless another id is named already (atomically, under the
        game's hash tag); returns the id named now (``None`` for a game without a log in the store, e.g. archived).

        :raises ValueError: for an id that is not a valid game id.
        """

    @abstractmethod
    def read_rematch(self, game_id: str) -> str | None:
        """The id :meth:`claim_rematch` named the rematch of ``game_id``, or None (none yet, or the game's keys are
        gone: archived)."""

    # -- the open games (CONTRACT section 14: waiting games with a seat open to anyone) --------------------------
    # Derived data, like the projections: kept by each projection write that carries ``OPEN_LISTING`` (the
    # replay workers', in log order), rebuilt with them (``referee rebuild``, the reconciler after a lost work
    # Redis), dropped when the game is archived.
    @abstractmethod
    def list_open_games(self, rows: list[tuple[str, str | None, int | None]]) -> None:
        """List each game among the open games, and among its creator's: ``(game, creator key or None, created
        ms)`` rows; ``created ms`` None takes the game off both lists (the creator's as given). One round trip
        where the store can.

        :raises ValueError: for a creator key that is not base64url.
        """

    @abstractmethod
    def open_games(self, offset: int = 0, limit: int | None = None) -> list[tuple[str, int]]:
        """``(game, created ms)`` of the open games, oldest first (then by id)."""

    @abstractmethod
    def count_open_games(self, creator: str | None = None) -> int:
        """How many games are open: all of them, or those ``creator`` created.

        :raises ValueError: for a creator key that is not base64url.
        """

    # -- replay bookkeeping -------------------------------------------------------------------------
    @abstractmethod
    def read_projection(self, game_id: str, with_verdicts: bool = False) -> dict[str, Any] | None:
        """The stored projection (fields of ``PROJECTION_FIELDS``; plus ``verdicts`` if asked), or ``None``
        (none stored yet, or an unknown game)."""

    @abstractmethod
    def read_verdicts(self, game_id: str, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        """Stored verdicts of positions ``start`` … ``stop - 1`` (to the end when ``stop`` is None); ``[]`` for
        an unknown game."""

    @abstractmethod
    def write_projection(self, game_id: str, projection: dict[str, Any], verdicts: list[dict[str, Any]],
                         from_seq: int, replace: bool = False) -> int:
        """Store a projection at ``projection["seq"]`` with the verdicts of positions ``from_seq`` onward.

        Returns 1 when written; 0 when the stored projection is already at that seq or beyond; -1 when it
        is at a seq other than ``from_seq`` (the caller folded from a stale start). ``replace`` drops the
        stored projection and writes this one (``verdicts`` must then start at position 0).
        """

    @abstractmethod
    def wait_for_verdict(self, game_id: str, position: int, timeout: float) -> dict[str, Any] | None:
        """The stored verdict of the entry at ``position``, waiting up to ``timeout`` seconds for a replay
        job to store it (woken by projection writes, not by polling); ``None`` if it did not come."""

    @abstractmethod
    def mark_pending(self, game_id: str, now_ms: int) -> None:
        """Set the pending flag to ``now_ms`` (used by the reconciler when it queues a job)."""

    @abstractmethod
    def release_pending(self, game_id: str, seq: int) -> bool:
        """A replay job has stored the projection up to ``seq``: clear the pending flag if the log is still
        ``seq`` long (True); else refresh it and return False (the job must fold the new entries)."""

    def write_projections(self, writes: list[tuple[str, dict[str, Any], list[dict[str, Any]], int]]) -> list[int]:
        """:meth:`write_projection` (mode "advance") of several games ``(game, projection, verdicts, from_seq)``;
        the answers in order. A store that can batches them into one round trip."""
        return [self.write_projection(*write) for write in writes]

    def release_many(self, seqs: list[tuple[str, int]]) -> list[bool]:
        """:meth:`release_pending` of several games; the answers in order (batched where the store can)."""
        return [self.release_pending(game_id, seq) for game_id, seq in seqs]

    @abstractmethod
    def pending_since(self, game_id: str) -> int | None:
        """When the pending flag was set (ms), or ``None``."""

    @abstractmethod
    def lagging_games(self, games: list[str] | None = None) -> list[tuple[str, int, int, int | None]]:
        """``(game, log length, projection seq, pending since)`` of every listed game (or of ``games``) whose
        projection is behind its log."""

    @abstractmethod
    def stale_pending(self, before_ms: int, limit: int = 10_000) -> list[str]:
        """The games whose pending flag was raised (or refreshed) at or before ``before_ms``, oldest first:
        what the reconciler looks at on each pass, whatever the number of games stored."""

    def work_intact(self) -> bool:
        """Whether the derived data (projections) is still all there: ``False`` after the work Redis restarted
        empty, until :meth:`mark_work_intact` (the reconciler then looks at every game once)."""
        return True

    def mark_work_intact(self) -> None:
        """Record that every game was looked at since the derived data was last lost (a store whose derived
        data cannot be lost apart from its logs records nothing)."""
        return None

    # -- time control: timers and the outbox (CONTRACT section 8) ---------------------------------
    @abstractmethod
    def set_timer(self, game_id: str, when_ms: int | None) -> None:
        """When the deadline scheduler must next look at ``game_id`` (None: never, e.g. no clock runs)."""

    def set_timers(self, timers: list[tuple[str, int | None]]) -> None:
        """:meth:`set_timer` of several games (a replay worker's batch; one round trip where the store can)."""
        for game_id, when_ms in timers:
            self.set_timer(game_id, when_ms)

    @abstractmethod
    def due_timers(self, now_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        """``(game, when)`` of the timers due at ``now_ms``, earliest first."""

    @abstractmethod
    def claim_timers(self, now_ms: int, limit: int = 100, lease_ms: int = 30_000) -> list[tuple[str, int]]:
        """Atomically take the timers due at ``now_ms`` (earliest first): each is moved to ``now_ms +
        lease_ms``, so that concurrent schedulers split the due games instead of all looking at each."""

    @abstractmethod
    def emit_events(self, events: list[dict[str, Any]]) -> int:
        """Append each event (a dict with a stable ``id``) to the outbox unless its id was emitted before;
        returns how many were new."""

    @abstractmethod
    def read_outbox(self, count: int = 1000) -> list[dict[str, Any]]:
        """The outbox's events, oldest first (at most ``count``)."""

    # -- tournaments (CONTRACT section 10): one log each, the same entry format and atomic append ----
    # Unknown tournaments raise ``GameNotFound``, an existing one ``GameExists`` (the same errors as games).
    @abstractmethod
    def create_tournament(self, tournament_id: str, entry: dict[str, Any], secret: bytes) -> Appended:
        """Start a tournament's log with its ``created`` entry and keep its secret seed; lists it.

        :raises GameExists: if the tournament has a log already (nothing written).
        :raises StoreUnavailable: if the write was not confirmed.
        """

    @abstractmethod
    def append_tournament(self, tournament_id: str, entry: dict[str, Any], prev: str,
                          signature: str | None = None) -> Appended:
        """Append at exactly ``entry["seq"]`` after ``prev``, as :meth:`append` does for a game.

        :raises GameNotFound: if the tournament has no log.
        :raises StaleAppend: if the log is not at exactly that position (nothing written).
        :raises DuplicateSubmission: if ``signature`` is already in this tournament's log (nothing written).
        :raises StoreUnavailable: if the write was refused or could not be confirmed.
        """

    @abstractmethod
    def read_tournament(self, tournament_id: str, start: int = 0) -> tuple[list[dict[str, Any]], Tip]:
        """The entries from ``start`` and the tip they end at (a consistent snapshot).

        :raises GameNotFound: if the tournament has no log.
        """

    @abstractmethod
    def tournament_secret(self, tournament_id: str) -> bytes | None:
        """The tournament's secret server seed, or ``None`` for an unknown tournament."""

    @abstractmethod
    def list_tournaments(self) -> list[str]:
        """Tournament ids, oldest first."""

    def newest_tournaments(self, offset: int = 0, limit: int | None = None) -> list[str]:
        """Tournament ids, newest first, ``limit`` of them after skipping ``offset`` (``GET /tournaments``)."""
        ordered = list(reversed(self.list_tournaments()))
        return ordered[offset:None if limit is None else offset + limit]

    def ping(self) -> bool:
        """Whether the backing store answers (never raises: ``False`` when it does not)."""
        return True

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

