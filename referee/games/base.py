"""What every ruleset and every game offer (CONTRACT section 1).

A ruleset is stateless: it holds its validated data and makes games. A game is a pure state
machine: ``play`` checks a move dict and applies it, or raises :class:`IllegalMove` and leaves the game
exactly as it was. No clock, no network, no global random state.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_SHARED_ENGINE_FILES = ("__init__.py", "base.py", "data.py", "errors.py", "randomness.py")


def content_version(paths: Iterable[Path], root: Path) -> str:
    """Hash of the given files' relative paths and bytes: the pinned ``version`` of a ruleset.

    Any change to engine code or data gives a new version, so a game replayed by another engine is
    reported, never silently accepted.
    """
    def relative(path: Path) -> str:
        resolved = path.resolve()
        return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else resolved.name

    digest = hashlib.sha256()
    for path in sorted(set(paths), key=relative):
        rel = relative(path)
        body = path.read_bytes()
        digest.update(rel.encode() + b"\x00" + len(body).to_bytes(8, "big") + body)
    return digest.hexdigest()[:16]


def engine_files(package_dir: Path, data_files: Iterable[Path]) -> list[Path]:
    """The engine's own ``*.py`` files, the shared engine modules and its data files."""
    games_dir = Path(__file__).resolve().parent
    files = sorted(package_dir.rglob("*.py"))
    files += [games_dir / name for name in _SHARED_ENGINE_FILES]
    files += list(data_files)
    return files


class Game(ABC):
    """One game in progress. Methods are those of CONTRACT section 1.

    Every refusal is an :class:`~referee.games.errors.IllegalMove` (a ``ValueError``) with a stable
    ``code``, the ``rule`` broken and ``details``; the codes of each ruleset are listed in its document,
    ``docs/rules-towerup.md`` ("Error codes") and ``docs/rules-fivetowers.md`` ("Errors"). A refused move
    never changes the game.

    >>> from referee.games import ruleset, IllegalMove
    >>> game = ruleset("fivetowers").new_game(2, seed=bytes(32))
    >>> game.to_move()
    0
    >>> game.legal_moves()[:2]
    [{'type': 'bid', 'amount': 0}, {'type': 'bid', 'amount': 1}]
    >>> try:
    ...     game.play(1, {"type": "bid", "amount": 0})
    ... except IllegalMove as err:
    ...     print(err.code, err.rule, err.details)
    move/not_your_turn FT-R1 {'to_move': 0}
    >>> game.play(0, {"type": "bid", "amount": 1})
    >>> game.to_move()
    1
    """

    @abstractmethod
    def to_move(self) -> int | None:
        """The seat whose move is awaited.

        :returns: a seat number (``0`` to ``players - 1``; the same seat again for a seat that plays on, as
            in a Tower Up extra turn, TU-X1), or ``None`` once the game is over.

        Never raises.
        """

    @abstractmethod
    def legal_moves(self) -> list[dict[str, Any]]:
        """Every legal move of the seat to move, as move dicts, in the ruleset's documented order.

        The list is exact: each move in it plays, and :meth:`play` refuses every move dict that is not in it
        (the documented shorthands aside: Tower Up's ``place_start`` with several placements, 5 Towers'
        ``build`` without ``demolish``). The first move is the :meth:`default_move` unless a ruleset says
        otherwise.

        :returns: a new list, which the caller may change; ``[]`` once the game is over.

        Never raises: a move that would be refused (a reshuffle whose order is unknown, TU-G1) is left out.
        """

    @abstractmethod
    def play(self, seat: int, move: dict[str, Any]) -> None:
        """Check ``move`` for ``seat`` and apply it, or raise and leave the game exactly as it was.

        :param seat: the seat playing, an ``int`` (a ``bool`` is refused).
        :param move: a JSON-shaped move dict, ``{"type": ..., ...}``; the types and their fields are the
            ruleset's (``docs/rules-<name>.md``).
        :returns: ``None``; :meth:`to_move`, :meth:`view` and :meth:`is_over` show the new state.
        :raises GameOver: (an :class:`IllegalMove`, code ``game/over``, rule ``None``) when the game has
            ended; checked before anything else.
        :raises IllegalMove: when the move is refused. Its ``code`` names the family and the reason:

            * ``move/malformed`` (rule ``None``): not a dict, an unknown ``type``, a missing or extra field,
              a field of the wrong type, an unknown colour or suit, and (5 Towers) a ``seat`` that is not an
              ``int``;
            * ``move/not_your_turn``: ``seat`` is not :meth:`to_move` (``details["to_move"]``), or (Tower
              Up) not an ``int``;
            * ``move/setup_pending`` (Tower Up, TU-G3), ``move/wrong_phase`` (5 Towers, FT-R1/FT-R4): the
              move belongs to another phase;
            * ``<type>/<reason>`` for a move the rules forbid, ``rule`` being the rule broken:
              ``place_start/…``, ``take/…``, ``build/…``, ``pass/…`` and ``decline_extra/…`` (Tower Up,
              ``TU-*``), ``bid/…`` and ``build/…`` (5 Towers, ``FT-*``);
            * ``deck/reshuffle_mismatch``, ``deck/reshuffle_unknown`` (Tower Up, TU-G1) and
              ``reshuffle/mismatch`` (5 Towers, FT-R8): the move needs a reshuffle whose recorded order is
              not the discard pile, or whose order is not known.

        >>> from referee.games import ruleset, IllegalMove
        >>> game = ruleset("fivetowers").new_game(2, seed=bytes(32))
        >>> try:
        ...     game.play(0, {"type": "bid", "amount": 9})
        ... except IllegalMove as err:
        ...     print(err)
        bid/out_of_range [FT-R1] a bid is a number from 0 to 5, the number of cards in the display
        >>> try:
        ...     game.play(0, {"type": "bid"})
        ... except IllegalMove as err:
        ...     print(err.code, err.rule)
        move/malformed None
        """

    @abstractmethod
    def is_over(self) -> bool:
        """``True`` once the game has ended (then :meth:`to_move` is ``None`` and :meth:`result` is final)."""

    @abstractmethod
    def view(self) -> dict[str, Any]:
        """The whole public state as JSON-safe data (hidden information, such as the deck order, left out).

        :returns: a new dict; its shape is the ruleset's (``docs/rules-<name>.md``). Never raises.
        """

    @abstractmethod
    def result(self) -> dict[str, Any]:
        """The final scores, ranks, winners and tie-breaks of a finished game.

        :returns: a new JSON-safe dict; its shape is the ruleset's.
        :raises ValueError: while the game is running (Tower Up: :class:`IllegalMove` ``game/not_over``).
        """

    def default_move(self) -> dict[str, Any]:
        """The move the referee plays for the seat to move when its time runs out or it has forfeited
        (CONTRACT section 8): a deterministic function of the state, always legal. Unless a ruleset says
        otherwise, the first move of :meth:`legal_moves` in its documented order.

        :raises ValueError: when the game is over.
        """
        moves = self.legal_moves()
        if not moves:
            raise ValueError("the game is over: there is no move to default to")
        return moves[0]

    def provisional_result(self) -> dict[str, Any]:
        """The result document of the position as it stands, as if the game ended now (same shape as
        :meth:`result`, with ``"provisional": true`` while the game is running): for adjudication and for a
        game ended early by forfeit. Once the game is over it equals :meth:`result`.

        :raises ValueError: in this default, which is :meth:`result`, while the game is running; both
            rulesets override it and never raise.
        """
        return self.result()

    @abstractmethod
    def copy(self) -> Game:
        """An independent copy: playing on one never changes the other."""


class Ruleset(ABC):
    """A game's rules and data. ``name`` and ``version`` identify it; ``version`` is pinned per game."""

    name: str
    version: str
    min_players: int
    max_players: int

    @abstractmethod
    def components(self) -> dict[str, Any]:
        """Every component of the game (board, cards, ...) as JSON-safe data, a new dict each call."""

    @abstractmethod
    def options_schema(self) -> dict[str, Any]:
        """The options ``new_game`` accepts, with defaults, as JSON-safe data (for ``GET /rulesets``)."""

    @abstractmethod
    def new_game(
        self,
        players: int,
        options: dict[str, Any] | None = None,
        seed: bytes | None = None,
        deck: list[str] | None = None,
    ) -> Game:
        """A new game for ``players`` seats.

        :param options: the game's options (see :meth:`options_schema`); ``None`` for the defaults.
        :param seed: 32 bytes: the game's randomness (``referee.games.randomness``), the deck order included.
        :param deck: a recorded game's deck, every card id once, top card first (then ``seed`` is optional).
        :returns: the game, before its first move.
        :raises ValueError: for a bad argument (player count, unknown or bad option, seed, deck, or neither a
            seed nor a deck); the message names it.
        """


REPO_ROOT = Path(__file__).resolve().parents[2]


def ruleset_version(package_dir: Path, data_files: Iterable[Path]) -> str:
    """``version`` of a ruleset: :func:`content_version` of :func:`engine_files`, relative to the repo root."""
    return content_version(engine_files(package_dir, data_files), REPO_ROOT)
