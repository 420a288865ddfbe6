"""What others write into a tournament's log (:class:`Submissions`, part of
:class:`~referee.tournaments.service.TournamentService`): its creation, players' joins and withdrawals,
and the organiser's signed decisions on games. Each is checked against the fold before it is appended."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from ...clock import now_ms
from ...errors import ServiceError, invalid
from ...games import ruleset
from ...games_service.entries import make_entry
from ...games_service.players import index_tournament_players
from ...protocol.signing import verify
from ...replay import LogError
from ...store import DuplicateSubmission, GameExists, StaleAppend, StoreUnavailable
from ...store.keys import TOURNAMENT_TIMER
from ...timecontrol import TimeControlError, engine_options, parse_ms
from ...timecontrol import resolve as resolve_time_control
from ..log import TournamentReplayer
from ..spec import TOURNAMENT_CTX, SpecError, resolve_tournament
from ..state import ACTIVE, WAITING
from .advance import RefereeEntries
from .base import log, new_tournament_id, signed_tournament_id, unavailable


class Submissions(RefereeEntries):
    """Creates tournaments and takes joins, withdrawals and organiser decisions; each one that changes what
    is owed is followed by :meth:`advance`."""

    # -- create ---------------------------------------------------------------------------------------
    def create(self, body: dict[str, Any], organiser: dict[str, str] | None = None) -> dict[str, Any]:
        """Create a tournament from a validated body (CONTRACT section 10); 201 body.

        :raises ServiceError: 400 ``request/invalid`` (the spec, the games' options, or adjudication by an
            organiser without one) or ``game/bad_time_control``; 401 ``organiser/required`` or
            ``organiser/bad_signature``; 403 ``organiser/not_allowed``; 409 ``tournament/exists`` (a
            signed request posted twice); 503 ``log/unavailable``.
        """
        try:
            resolved = resolve_tournament(body)
        except SpecError as exc:
            raise invalid(exc.problems) from exc
        rules = ruleset(resolved["ruleset"]["name"])
        options = resolved["options"]
        try:  # the games' options must make games: checked now, not when round 1 is paired
            resolve_time_control(options.get("time_control"))
            rules.new_game(min(resolved["format"]["table_sizes"]), engine_options(options), seed=bytes(32))
        except TimeControlError as exc:
            raise ServiceError(400, "game/bad_time_control", str(exc), "TC-C1",
                               details={"problems": exc.problems}) from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise invalid([{"path": "$.options", "problem": str(exc)}]) from exc
        organiser_key = None
        if organiser is not None:
            organiser_key = organiser["key"]
            if self.organiser_keys and organiser_key not in self.organiser_keys:
                raise ServiceError(403, "organiser/not_allowed", "this key may not create tournaments here")
            if not verify(organiser_key, {"v": 1, "ctx": TOURNAMENT_CTX, **body}, organiser["sig"]):
                raise ServiceError(401, "organiser/bad_signature", "the organiser signature is not over "
                                   "{v: 1, ctx: 'referee/tournament', ...this body}")
        elif self.organiser_keys:
            raise ServiceError(401, "organiser/required",
                               "only organisers may create tournaments here: sign the request (field 'organiser')")
        if resolved.get("registration") is not None:
            self._check_registration(resolved, organiser_key)
        if resolved["adjudication"] == "organiser" and organiser_key is None:
            raise invalid([{"path": "$.adjudication", "problem": "adjudication by the organiser needs an organiser "
                                                                 "(field 'organiser')"}])
        tournament_id = signed_tournament_id(organiser["sig"]) if organiser else new_tournament_id()
        secret = os.urandom(32)
        payload: dict[str, Any] = {"tournament": tournament_id, **resolved,
                                   "commitment": hashlib.sha256(secret).hexdigest(), "organiser": organiser_key}
        if organiser is not None:
            payload.update(organiser_sig=organiser["sig"], request=body)
        entry = make_entry("created", 0, "0" * 64, **payload)
        replayer = TournamentReplayer(server_seed=secret)
        try:
            replayer.feed(entry)
        except LogError as exc:
            raise invalid([{"path": "$", "problem": str(exc)}]) from exc
        try:
            self.store.create_tournament(tournament_id, entry, secret)
        except GameExists as exc:
            raise ServiceError(409, "tournament/exists", f"tournament {tournament_id} exists already (this "
                               "request was posted before)", details={"tournament": tournament_id}) from exc
        except StoreUnavailable as exc:
            raise unavailable(exc) from exc
        index_tournament_players(self.store, tournament_id, entry)
        self._keep(tournament_id, replayer)
        if resolved.get("closes") is not None:  # the deadline scheduler closes the registration then
            self.store.set_timer(TOURNAMENT_TIMER.format(tournament=tournament_id), parse_ms(resolved["closes"]))
        return {"tournament": tournament_id, "seq": replayer.seq, "head": replayer.head,
                "commitment": payload["commitment"], "status": replayer.status}

    @staticmethod
    def _check_registration(resolved: dict[str, Any], organiser_key: str | None) -> None:
        """An open registration is created by its organiser's signed request (who alone may start it early),
        and its ``closes`` lies ahead."""
        if organiser_key is None:
            raise ServiceError(401, "organiser/required", "a tournament with an open registration is created by a "
                               "signed request: field 'organiser' {key, sig} (the organiser may start it)")
        closes = resolved.get("closes")
        if closes is not None and parse_ms(closes) <= now_ms():
            raise invalid([{"path": "$.closes", "problem": f"{closes} has passed: the registration would never open"}])

    # -- players' submissions --------------------------------------------------------------------------
    def _check_binding(self, tournament_id: str, replayer: TournamentReplayer, submission: dict[str, Any],
                       signers: list[str | None], who: str) -> None:
        """403 another tournament's envelope, 401 a signature by none of ``signers`` (None: nobody)."""
        envelope, sig = submission["envelope"], submission["sig"]
        if envelope["tournament"] != tournament_id:
            raise ServiceError(403, "submission/wrong_tournament",
                               f"the envelope is bound to tournament {envelope['tournament']!r}, not {tournament_id!r}")
        if not any(verify(key, envelope, sig) for key in signers if key):
            raise ServiceError(401, "submission/bad_signature", f"the signature is not {who}'s over this envelope")

    @staticmethod
    def _stale(replayer: TournamentReplayer) -> ServiceError:
        return ServiceError(409, "submission/stale", f"stale seq/prev: the log is at seq {replayer.seq} with head "
                            f"{replayer.head}", details={"seq": replayer.seq, "head": replayer.head})

    def _submit(self, tournament_id: str, replayer: TournamentReplayer, kind: str, submission: dict[str, Any],
                **payload: Any) -> dict[str, Any]:
        envelope = submission["envelope"]
        if envelope["seq"] != replayer.seq or envelope["prev"] != replayer.head:
            raise self._stale(replayer)
        try:
            entry = self._append(tournament_id, replayer, kind, signature=submission["sig"], submission=submission,
                                 **payload)
        except StaleAppend as exc:
            raise ServiceError(409, "submission/stale", "the log moved on; sign for the new position",
                               details={"seq": exc.seq, "head": exc.head}) from exc
        except DuplicateSubmission as exc:
            raise ServiceError(409, "submission/duplicate", f"this submission is already in the log at position "
                               f"{exc.position}", details={"position": exc.position, "seq": exc.seq,
                                                           "head": exc.head}) from exc
        return entry

    def join(self, tournament_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A player's signed acceptance (``ctx`` ``referee/join``, 32 bytes of entropy). After the last one
        round 1 is paired and its games are created. With an open registration (CONTRACT section 14) a key not
        listed joins too, its envelope naming the player (``name``) and, by invitation, with ``invite_sig``;
        the join that fills ``max_players`` closes the registration and round 1 is paired.

        :raises ServiceError: 404 ``tournament/not_found``; 401/403 a signature or binding that does not
            hold, or a key that is no player; 403 ``registration/bad_invite``; 409 a duplicate or stale
            submission, a tournament not waiting, ``registration/closed``, ``registration/full``,
            ``registration/name_taken``; 503 ``log/unavailable``; any other refusal of the fold
            (``STATUS_BY_CODE``).
        """
        replayer = self.fold(tournament_id)
        created = replayer.created or {}
        envelope = submission["envelope"]
        key = envelope["key"]
        registration = replayer.registration
        self._check_binding(tournament_id, replayer, submission, [key], "the envelope key")
        if key not in {p["key"] for p in created.get("players", [])} and registration is None:
            raise ServiceError(403, "join/not_player", "this key is no player of the tournament")
        if key in {k for k, _ in replayer.joins}:
            raise ServiceError(409, "join/duplicate", "this player has joined already")
        if replayer.status != WAITING:
            if registration is not None:
                raise ServiceError(409, "registration/closed", f"the registration has closed (the tournament is "
                                   f"{replayer.status})", details={"status": replayer.status})
            raise ServiceError(409, "tournament/not_waiting", f"the tournament is {replayer.status}")
        closes = created.get("closes")
        if closes is not None and now_ms() >= parse_ms(closes):
            self.advance(tournament_id)  # the scheduler may not have looked yet: close it now
            raise ServiceError(409, "registration/closed", f"the registration closed at {closes}")
        entry = self._submit(tournament_id, replayer, "joined", submission, key=key)
        if registration is not None:
            self._index_joiner(tournament_id, key, created)
        self.advance(tournament_id)
        return self._receipt(tournament_id, entry)

    def _index_joiner(self, tournament_id: str, key: str, created: dict[str, Any]) -> None:
        """List the tournament under a key that joined an open registration (``GET /players/{key}/tournaments``)."""
        try:
            self.store.index_player_tournaments([(key, tournament_id, parse_ms(created["at"]))])
        except Exception:
            log.exception("could not list tournament %s under %s", tournament_id, key)

    def start(self, tournament_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """The organiser's signed start (``ctx`` ``referee/start``, bound to the log's seq/prev): the open
        registration closes with whoever has joined; round 1 is paired, or with fewer players than the smallest
        table the tournament is ``cancelled`` and its seed revealed.

        :raises ServiceError: 404 ``tournament/not_found``; 403 ``submission/wrong_tournament`` or
            ``registration/no_organiser``; 401 ``submission/bad_signature`` (not the organiser's); 409
            ``registration/not_open`` or ``submission/stale``; 503 ``log/unavailable``.
        """
        replayer = self.fold(tournament_id)
        organiser = (replayer.created or {}).get("organiser")
        envelope = submission["envelope"]
        if envelope["tournament"] != tournament_id:
            raise ServiceError(403, "submission/wrong_tournament",
                               f"the envelope is bound to tournament {envelope['tournament']!r}, not {tournament_id!r}")
        if not organiser:
            raise ServiceError(403, "registration/no_organiser", "this tournament has no organiser to start it")
        self._check_binding(tournament_id, replayer, submission, [organiser], "the organiser")
        if not replayer.registration_open:
            raise ServiceError(409, "registration/not_open", f"there is no open registration to close (the "
                               f"tournament is {replayer.status})", details={"status": replayer.status})
        entry = self._submit(tournament_id, replayer, "registration_closed", submission, reason="organiser")
        self.advance(tournament_id)
        return self._receipt(tournament_id, entry)

    def withdraw(self, tournament_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """A player's withdrawal (``ctx`` ``referee/withdraw``), signed by the player or the organiser: the
        player is paired no more; games already running go on (docs/tournaments.md).

        :raises ServiceError: as :meth:`join` (409 ``withdraw/duplicate``, ``tournament/not_active``).
        """
        replayer = self.fold(tournament_id)
        envelope = submission["envelope"]
        key = envelope["key"]
        organiser = (replayer.created or {}).get("organiser")
        self._check_binding(tournament_id, replayer, submission, [key, organiser], "the player's or the organiser")
        if key not in replayer.keys:
            raise ServiceError(403, "withdraw/not_player", "this key is no player of the tournament")
        if key in replayer.withdrawn:
            raise ServiceError(409, "withdraw/duplicate", "this player has withdrawn already")
        if replayer.status != ACTIVE:
            raise ServiceError(409, "tournament/not_active", f"the tournament is {replayer.status}")
        entry = self._submit(tournament_id, replayer, "withdrawn", submission, key=key)
        self._withdraw_from_games(tournament_id, key)
        self.advance(tournament_id)
        return self._receipt(tournament_id, entry)

    def rekey(self, tournament_id: str, submission: dict[str, Any]) -> dict[str, Any]:
        """The organiser moves a player to a new key for the rounds to come (``ctx`` ``referee/rekey``, CONTRACT
        section 15): ``sig`` by the organiser, ``new_sig`` by the new key over the same envelope, so nobody is
        moved to a key they do not hold. Entry ``rekeyed``; the games already paired keep their seats' keys (a
        seat moves there by the game's own rekey or recovery).

        :raises ServiceError: 404 ``tournament/not_found`` or ``rekey/not_player`` (no player has this key now);
            403 ``submission/wrong_tournament`` or ``rekey/no_organiser``; 401 ``submission/bad_signature`` (``sig``
            not the organiser's, or ``new_sig`` not the new key's); 409 ``rekey/key_taken`` (the new key is or was
            a player's here), ``rekey/withdrawn``, ``tournament/not_active`` (not started, or over),
            ``submission/stale`` or ``submission/duplicate``; 503 ``log/unavailable``.
        """
        replayer = self.fold(tournament_id)
        envelope = submission["envelope"]
        player, key = envelope["player"], envelope["key"]
        organiser = (replayer.created or {}).get("organiser")
        if player not in replayer.keys:  # 404 before 401 (CONTRACT section 6)
            raise ServiceError(404, "rekey/not_player", "no player of the tournament has this key now")
        if not organiser:
            raise ServiceError(403, "rekey/no_organiser", "this tournament has no organiser to move a player's key")
        self._check_binding(tournament_id, replayer, submission, [organiser], "the organiser")
        if not verify(key, envelope, submission["new_sig"]):
            raise ServiceError(401, "submission/bad_signature", "new_sig is not the new key's signature over this "
                               "envelope")
        if key in replayer.keys or key in replayer.moved:
            raise ServiceError(409, "rekey/key_taken", "the new key is, or was, a player's key in this tournament")
        if player in replayer.withdrawn:
            raise ServiceError(409, "rekey/withdrawn", "this player has withdrawn: there are no rounds to come")
        if replayer.status != ACTIVE:
            raise ServiceError(409, "tournament/not_active", f"the tournament is {replayer.status}",
                               details={"status": replayer.status})
        entry = self._submit(tournament_id, replayer, "rekeyed", submission, player=player, key=key, by="organiser")
        self._index_joiner(tournament_id, key, replayer.created or {})
        return self._receipt(tournament_id, entry)

    def _withdraw_from_games(self, tournament_id: str, key: str) -> list[str]:
        """The withdrawn player's running games of the open round, as ``created.withdrawal`` declares: the
        seat is forfeited there (default moves), and with ``adjudicate`` the game is adjudicated at once."""
        replayer = self.fold(tournament_id)
        mode = (replayer.created or {}).get("withdrawal", "default_moves")
        rnd = replayer.open_round()
        done: list[str] = []
        if rnd is None:
            return done
        for table in rnd.tables:
            seated = [replayer.current_key(k) for k in table["players"]]  # the table's keys, a rekeyed one's now
            if key not in seated or table["game"] in rnd.results:
                continue
            game_id = table["game"]
            try:
                game = self.games.fold(game_id)
                if game.status == "active":
                    self.games.withdraw_seat(game_id, seated.index(key), tournament_id)
                    done.append(game_id)
                if mode == "adjudicate" and self.games.fold(game_id).status in ("active", "waiting"):
                    self.games.adjudicate(game_id, "provisional", "a player withdrew from the tournament")
            except ServiceError as exc:  # the round deadline settles it; the withdrawal stands
                log.warning("tournament %s: withdrawal from %s: %s", tournament_id, game_id, exc)
        return done

    def adjudicate_signed(self, tournament_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The organiser's signed decision on a game of the open round (``ctx`` ``referee/adjudicate``, bound
        to the tournament's seq/prev): written as ``adjudicated`` into the game's log, then the tournament's.

        :raises ServiceError: 404 ``tournament/not_found``; 401 ``adjudication/bad_signature``; 403
            ``submission/wrong_tournament`` or ``adjudication/no_organiser``; 409 ``adjudication/method``,
            ``game/not_open`` or ``submission/stale``; the game service's errors for the game's log.
        """
        replayer = self.fold(tournament_id)
        created = replayer.created or {}
        envelope = body["envelope"]
        organiser = created.get("organiser")
        if envelope["tournament"] != tournament_id:
            raise ServiceError(403, "submission/wrong_tournament",
                               f"the envelope is bound to tournament {envelope['tournament']!r}, not {tournament_id!r}")
        if not organiser:
            raise ServiceError(403, "adjudication/no_organiser", "this tournament has no organiser to decide")
        if not verify(organiser, envelope, body["sig"]):
            raise ServiceError(401, "adjudication/bad_signature", "the decision is not signed by the organiser")
        if created.get("adjudication") != "organiser":
            raise ServiceError(409, "adjudication/method", f"this tournament adjudicates by "
                               f"{created.get('adjudication')}, not by the organiser's decision")
        game_id = envelope["game"]
        rnd = replayer.open_round()
        if rnd is None or game_id not in {t["game"] for t in rnd.tables} or game_id in rnd.results:
            raise ServiceError(409, "game/not_open", f"{game_id!r} is no game of the open round without a result")
        if envelope["seq"] != replayer.seq or envelope["prev"] != replayer.head:
            raise ServiceError(409, "submission/stale", f"the decision is bound to seq {envelope['seq']}; the log is "
                               f"at seq {replayer.seq}", details={"seq": replayer.seq, "head": replayer.head})
        game = self.games.adjudicate(game_id, "organiser", envelope["reason"], envelope["ranks"], body)
        self.advance(tournament_id)
        after = self.fold(tournament_id)
        return {"tournament": tournament_id, "game": game_id, "seq": after.seq, "head": after.head,
                "status": after.status, "result": game.get("result")}

    def _receipt(self, tournament_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        after = self.fold(tournament_id)
        return {"tournament": tournament_id, "position": entry["seq"], "hash": entry["hash"], "seq": after.seq,
                "head": after.head, "status": after.status}
