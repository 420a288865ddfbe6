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
    """One game in progress. Methods are those of CONTRACT section 1."""

    @abstractmethod
    def to_move(self) -> int | None: ...

    @abstractmethod
    def legal_moves(self) -> list[dict[str, Any]]: ...

    @abstractmethod
    def play(self, seat: int, move: dict[str, Any]) -> None: ...

    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def view(self) -> dict[str, Any]: ...

    @abstractmethod
    def result(self) -> dict[str, Any]: ...

    def default_move(self) -> dict[str, Any]:
        """The move the referee plays for the seat to move when its time runs out or it has forfeited
        (CONTRACT section 8): a deterministic function of the state, always legal. Unless a ruleset says
        otherwise, the first move of :meth:`legal_moves` in its documented order. ``ValueError`` when the
        game is over."""
        moves = self.legal_moves()
        if not moves:
            raise ValueError("the game is over: there is no move to default to")
        return moves[0]

    def provisional_result(self) -> dict[str, Any]:
        """The result document of the position as it stands, as if the game ended now (same shape as
        :meth:`result`, with ``"provisional": true`` while the game is running): for adjudication and for a
        game ended early by forfeit. Once the game is over it equals :meth:`result`."""
        return self.result()

    @abstractmethod
    def copy(self) -> Game: ...


class Ruleset(ABC):
    """A game's rules and data. ``name`` and ``version`` identify it; ``version`` is pinned per game."""

    name: str
    version: str
    min_players: int
    max_players: int

    @abstractmethod
    def components(self) -> dict[str, Any]: ...

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
    ) -> Game: ...


REPO_ROOT = Path(__file__).resolve().parents[2]


def ruleset_version(package_dir: Path, data_files: Iterable[Path]) -> str:
    """``version`` of a ruleset: :func:`content_version` of :func:`engine_files`, relative to the repo root."""
    return content_version(engine_files(package_dir, data_files), REPO_ROOT)
