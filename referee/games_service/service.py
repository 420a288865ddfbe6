"""The game lifecycle between the HTTP API and the log store (CONTRACT sections 3–6).

Every write follows one path: check the submission against a fold of the log (binding, signature,
seat, turn, legality — with the same :class:`~referee.replay.LogReplayer` the workers and the verifier
use), build and seal the entry for the position the fold is at, and append it atomically at exactly
that position. Nothing is written unless every check passes; a stale position is a 409, never a
silent merge. After an append the game's replay job is queued (once per burst, see ``workers``).

Inputs arrive already validated by the marshmallow schemas of ``schemas/``; outputs are plain dicts.
:class:`GameService` is put together from its parts, each over the same store and cache of folds:

* ``core`` — the store, the cache of folds, the referee's own entries settling a fold, dispatchers, ids;
* ``submissions`` — the one path of a seat's signed submission (moves, vacations, acceptances);
* ``lifecycle`` — creation, acceptance, abort, adjudication, a withdrawn seat's forfeit;
* ``decisions`` — the seats' own decisions: resignations, offers and answers (CONTRACT section 12);
* ``keys`` — a seat's new key: a holder's rekey, a recovery of a lost key and its answers (CONTRACT section 15;
  ``decisions`` builds on it, since an answer may be to a recovery);
* ``seats`` — open seats: taking one, leaving it, the creator's cancel (CONTRACT section 14);
* ``rematch`` — a finished game's rematch, created once whichever seat asks (CONTRACT section 14);
* ``reads`` — state, listings, legal moves, the log, the replay, the result;
* ``players`` — a player's games (the per-key index, kept at creation).
"""

from __future__ import annotations

from .decisions import PlayerDecisions
from .players import PlayerGames
from .reads import GameReads
from .rematch import Rematches
from .seats import OpenSeats


class GameService(Rematches, PlayerDecisions, OpenSeats, GameReads, PlayerGames):
    """Creates games, takes signed acceptances and moves, and answers reads; one per app."""


__all__ = ["GameService"]
