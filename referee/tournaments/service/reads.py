"""What the tournament service answers (:class:`TournamentReads`, part of
:class:`~referee.tournaments.service.TournamentService`): the list of tournaments, a tournament's state,
its standings as CSV, its log and its certificate; the ratings of a ruleset's tournaments are
:class:`~.ratings.RatedTournaments`'."""

from __future__ import annotations

import csv
import io
from typing import Any

from ...errors import ServiceError
from ...games_service.players import bad_key
from ...store import GameNotFound
from ...store.keys import valid_game_id
from ...timecontrol import format_ms, parse_ms
from ..certificate import CertificateError, build_certificate
from .base import not_found
from .ratings import RatedTournaments


def _cell(text: str) -> str:
    """A name as a CSV cell that a spreadsheet will not run as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


class TournamentReads(RatedTournaments):
    """The service's reads: every answer is folded here from the tournament's log (the ratings, stored
    per ruleset, come from :class:`~.ratings.RatedTournaments`)."""

    # -- reads ------------------------------------------------------------------------------------------
    def list_tournaments(self, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """``GET /tournaments``: newest first, a summary of each (folded here, like ``state``)."""
        return self._summaries(self.store.newest_tournaments(offset, limit))

    def _summaries(self, tournament_ids: list[str]) -> list[dict[str, Any]]:
        out = []
        for tournament_id in tournament_ids:
            try:
                replayer = self.fold(tournament_id)
            except ServiceError:
                continue
            created = replayer.created or {}
            out.append({"tournament": tournament_id, "status": replayer.status, "ruleset": created.get("ruleset"),
                        "format": created.get("format"), "players": len(self._player_rows(replayer)),
                        "registration": created.get("registration"), "max_players": created.get("max_players"),
                        "joined": len(replayer.joins), "withdrawn": len(replayer.withdrawn),
                        "round": len(replayer.rounds), "seq": replayer.seq, "head": replayer.head,
                        "created_at": created.get("at")})
        return out

    def player_tournaments(self, public_key: str, offset: int = 0, limit: int = 100) -> dict[str, Any]:
        """``GET /players/{key}/tournaments``: the tournaments the key is a player of, newest first (each folded
        here, like ``GET /tournaments``); 400 ``player/bad_key`` for a key that is not one."""
        problem = bad_key(public_key)
        if problem is not None:
            raise problem
        listed = self.store.player_tournaments(public_key)
        page = self._summaries([tournament_id for tournament_id, _ms in listed[offset:offset + limit]])
        following = offset + limit if offset + limit < len(listed) else None
        return {"key": public_key, "tournaments": page, "offset": offset, "total": len(listed), "next": following}

    def state(self, tournament_id: str) -> dict[str, Any]:
        """``GET /tournaments/{id}``: the projection of the log (CONTRACT section 10), folded here.

        :raises ServiceError: from :meth:`fold` (404 ``tournament/not_found``, 500 ``log/corrupt``).
        """
        replayer = self.fold(tournament_id)
        created = replayer.created or {}
        out = replayer.to_dict()
        joined = {replayer.current_key(k) for k, _ in replayer.joins}  # a player moved to a new key has joined
        former: dict[str, list[str]] = {}  # the keys a player was moved away from (rekeyed), oldest first
        for key, now in replayer.moved.items():
            former.setdefault(now, []).append(key)
        deadline = created.get("round_deadline")
        for rnd, row in zip(replayer.rounds, out["rounds"], strict=True):
            row["paired_at"] = rnd.paired_at
            row["deadline"] = None if deadline is None or rnd.paired_at is None else \
                format_ms(parse_ms(rnd.paired_at) + deadline * 1000)
        out.update(ruleset=created.get("ruleset"), options=created.get("options"),
                   commitment=created.get("commitment"), organiser=created.get("organiser"),
                   adjudication=created.get("adjudication"), round_deadline=deadline,
                   created_at=created.get("at"), revealed=replayer.revealed,
                   players=[{"name": p["name"], "key": p["key"], "joined": p["key"] in joined,
                             "withdrawn": p["key"] in replayer.withdrawn, **({"bot": True} if p.get("bot") else {}),
                             **({"former_keys": former[p["key"]]} if p["key"] in former else {})}
                            for p in self._player_rows(replayer)],
                   registration_open=replayer.registration_open)
        return out

    @staticmethod
    def _player_rows(replayer: Any) -> list[dict[str, Any]]:
        """The players to show: ``created``'s; with an open registration those listed and those who joined
        (in join order), and once it has closed, the tournament's players."""
        created = replayer.created or {}
        if created.get("registration") is None or replayer.status != "waiting":
            return replayer.players
        joined = replayer.players
        seen = {p["key"] for p in joined}
        return [*joined, *(p for p in created.get("players", []) if p["key"] not in seen)]

    def standings_csv(self, tournament_id: str) -> str:
        """The standings as CSV: ``rank,name,key,points`` and one column per tie-break, in chain order.

        :raises ServiceError: from :meth:`fold` (404 ``tournament/not_found``, 500 ``log/corrupt``).
        """
        state = self.fold(tournament_id)
        chain = (state.created or {}).get("tie_breaks", [])
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["rank", "name", "key", "points", *chain])
        for row in state.standings():
            values = ["" if row["tie_breaks"].get(t) is None else row["tie_breaks"][t] for t in chain]
            writer.writerow([row["rank"], _cell(row["name"]), row["key"], row["points"], *values])
        return out.getvalue()

    def log_page(self, tournament_id: str, start: int = 0, limit: int = 100) -> dict[str, Any]:
        """``GET /tournaments/{id}/log``: up to ``limit`` entries from ``start``, and where the next page starts.

        :raises ServiceError: 404 ``tournament/not_found``.
        """
        if not valid_game_id(tournament_id):
            raise not_found(tournament_id)
        try:
            entries, tip = self.store.read_tournament(tournament_id, start)
        except GameNotFound as exc:
            raise not_found(tournament_id) from exc
        entries = entries[:limit]
        following = start + len(entries)
        return {"tournament": tournament_id, "from": start, "total": tip.seq, "head": tip.head, "entries": entries,
                "next": following if following < tip.seq else None}

    def export(self, tournament_id: str) -> dict[str, Any]:
        """The signed certificate.

        :raises ServiceError: 409 ``tournament/not_revealed`` before the seed is revealed; 500
            ``log/corrupt``; 404 ``tournament/not_found``.
        """
        replayer = self.fold(tournament_id)
        if not replayer.revealed:
            raise ServiceError(409, "tournament/not_revealed", f"the tournament is {replayer.status}; its certificate "
                               "comes once it is finished and its seed revealed", details={"status": replayer.status})
        entries, _tip = self.store.read_tournament(tournament_id)
        try:
            return build_certificate(entries, self.referee_key)
        except CertificateError as exc:
            raise ServiceError(500, "log/corrupt", str(exc)) from exc
