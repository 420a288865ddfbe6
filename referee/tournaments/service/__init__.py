"""The tournament lifecycle between the HTTP API, the log store and the games (CONTRACT section 10).

One write path, as for games (``referee.games_service``): check a submission against the fold of the
tournament's log (:class:`~referee.tournaments.log.TournamentReplayer`, the same fold the verifier
uses), seal the entry for the position the fold is at, and append it atomically at exactly that position
(``APPEND_ENTRY``); a stale position is a 409 for a player's submission and a refold-and-retry for the
referee's own entries.

What the referee owes a tournament's log is written by :meth:`TournamentService.advance`, which anyone
may call any number of times (each step is an atomic append at an expected position, so two callers
never write twice):

* ``game_finished`` / ``adjudicated`` for each game of the open round that has ended (its log final: the
  seed revealed), read from the game's own fold (``LogReplayer.result()``);
* what :meth:`TournamentReplayer.due` says: ``paired`` (then the round's games are created through
  :class:`~referee.games_service.GameService` with the game ids the pairing names; a crash in between is
  repaired by the next ``advance``, which creates any missing game of the open round), ``round_closed``
  (reason ``deadline`` once the round's deadline has passed, else ``complete``), ``finished`` and
  ``revealed``.

Who calls :meth:`advance`: the join that completes the roster; the replay worker each time it has
folded a finished game whose ``created`` names a tournament (``workers/projector.py``, ``on_finished``);
the deadline scheduler at a round's deadline (``workers/deadlines.py``: the member
``tournament:<id>`` of ``referee:timers``), which first adjudicates the round's unfinished games; and an
organiser's decision (``POST /tournaments/{id}/adjudicate``).

The service is one class made of its parts: :class:`~.base.TournamentLogs` (the folds and the checked
append), :class:`~.advance.RefereeEntries` (the referee's own entries), :class:`~.submissions.Submissions`
(creation and signed submissions), :class:`~.reads.TournamentReads` and :class:`~.ratings.RatedTournaments`
(the ratings of each ruleset: a stored fold that every :meth:`advance` brings up to date).
"""

from __future__ import annotations

from .base import new_tournament_id, table_game_id
from .reads import TournamentReads
from .submissions import Submissions


class TournamentService(Submissions, TournamentReads):
    """Creates tournaments, takes joins, withdrawals and organiser decisions, writes the referee's own entries
    and answers reads; one per app (and one in each worker process)."""


__all__ = ["TournamentService", "new_tournament_id", "table_game_id"]
