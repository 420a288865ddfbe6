"""Rematch (CONTRACT section 14): a seat of a finished game asks, signed, for the same game again; the referee
creates one new game with the same ruleset, options and clock and the same keys, the seats rotated by one
(``referee.rulings.rematch``), whose ``created`` says ``rematch_of: {game, head}`` and keeps the signed ask.

One new game, whichever seat asks and whichever process answers: the new game's id is derived from the finished
game's id and head (:func:`referee.rulings.rematch.rematch_game_id`), the store names it the finished game's rematch
once (``claim_rematch``: ``SET`` if none, under the finished game's hash tag), and creating a game is itself refused
when its log exists (``GameExists``). The first ask that creates it answers 201; every later one (or the loser of a
race) 200 with the same game.
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import ServiceError
from ..replay import FINISHED
from ..rulings.rematch import rematch_game_id, rotated
from .lifecycle import Lifecycle
from .submissions import authenticated_seat

log = logging.getLogger(__name__)


class Rematches(Lifecycle):
    """Creates a finished game's rematch once (``POST /games/{id}/rematch``)."""

    def rematch(self, game_id: str, submission: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """A seat's signed ask for a rematch of ``game_id``: ``(201, the new game)`` when this ask created it, ``(200,
        the same)`` when it existed already.

        :raises ServiceError: the first that applies of 404 ``game/not_found``; 403 ``submission/wrong_game``, 403
            ``submission/wrong_seat``, 401 ``submission/bad_signature``, 403 ``submission/wrong_key`` (the seat's
            signature, against the key that held the seat at the end); 409 ``game/not_finished`` (the game is not
            finished: waiting, active, aborted, cancelled or expired), 409 ``game/not_revealed`` (finished, its seed
            not revealed yet: a moment later it is); 503 ``log/unavailable``.
        """
        replayer = self.fold(game_id)
        seat = authenticated_seat(game_id, replayer.keys, submission)
        created = replayer.created or {}
        if replayer.status != FINISHED:
            raise ServiceError(409, "game/not_finished", f"the game is {replayer.status}; only a finished game has "
                               "a rematch", details={"status": replayer.status})
        if created.get("mode") == "seeded" and not replayer.revealed:  # its head moves once more: ask again then
            raise ServiceError(409, "game/not_revealed", "the game is finished but its seed is not revealed yet; "
                               "ask again in a moment", details={"status": replayer.status})
        of = {"game": game_id, "head": replayer.head}
        wanted = rematch_game_id(game_id, of["head"])
        try:
            named = self.store.claim_rematch(game_id, wanted) or wanted
        except Exception:  # the id is derived: creating it is what makes it one game, the name is a record
            log.warning("could not name the rematch of %s", game_id, exc_info=True)
            named = wanted
        existing = self._existing(named)
        if existing is not None:
            return 200, existing
        seats = rotated([{"name": holder[1] or f"seat {i + 1}", "key": holder[0],
                          **({"bot": True} if (created.get("seats") or [])[i].get("bot") is True else {})}
                         for i, holder in enumerate(replayer.holders) if holder is not None])
        spec = {"ruleset": created["ruleset"]["name"], "seats": seats, "options": dict(created.get("options") or {})}
        try:
            answer = self.create_game(spec, game_id=named,
                                      rematch={"of": of, "ask": {"envelope": submission["envelope"],
                                                                 "sig": submission["sig"]}})
        except ServiceError as error:
            if error.code != "game/exists":
                raise
            existing = self._existing(named)
            if existing is None:
                raise
            return 200, existing
        log.info("rematch %s of %s asked by seat %s", named, game_id, seat)
        return 201, {**answer, "rematch_of": of}

    def _existing(self, game_id: str) -> dict[str, Any] | None:
        """The answer for a rematch that exists already (its state now), or None when it does not."""
        try:
            created = self.created_entry(game_id)
        except ServiceError:
            return None
        state = self.game_state(game_id)  # type: ignore[attr-defined]
        return {"game": game_id, "ruleset": created["ruleset"], "mode": created.get("mode"),
                "commitment": created.get("commitment"), "seq": state["seq"], "head": state["head"],
                "status": state["status"], "to_move": state["to_move"], "rematch_of": created.get("rematch_of")}
