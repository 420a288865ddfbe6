"""A tournament's log and its one fold, :class:`TournamentReplayer` (CONTRACT section 10).

A tournament is one hash-chained log with the entry format of a game's (``referee.protocol.logchain``: ``v``,
``type``, ``seq``, ``at``, payload, ``hash``). The fold is pure — it reads entries and, when it has it,
the server seed; never Redis, a clock (time comes only from the entries' ``at``) or the network — so
the service (to check an entry before appending it), the workers (projections) and the verifier
(``verify_certificate``) cannot disagree. Payloads (``v`` 1):

* ``created`` — ``tournament`` (id), ``ruleset`` {name, version}, ``options`` (the games' options),
  ``players`` [{name, key}], ``format`` {kind, rounds, table_sizes (allowed sizes, largest first)},
  ``points`` {"<size>": [points for rank 1, 2, …]}, ``bye_points``, ``tie_breaks`` [ids, ``lot`` last],
  ``round_deadline`` (seconds or null), ``adjudication`` ("provisional" | "organiser"), ``commitment``
  (hex SHA-256 of the server seed), ``organiser`` (key or null) and, when an organiser signed,
  ``organiser_sig`` and ``request`` (the body exactly as signed, without ``organiser``): the fold checks
  the signature over ``{"v": 1, "ctx": "referee/tournament", …request}`` and that resolving ``request``
  (:func:`referee.tournaments.spec.resolve_tournament`) gives the values written.
* ``joined`` — ``key``, ``submission`` {envelope {v 1, ctx "referee/join", tournament, key, seq, prev,
  entropy (32 bytes base64url), at}, sig}: signed by that player, bound to this entry's seq and the
  previous entry's hash, like a game's submissions.
  With an open registration (``created.registration``) a key not listed may join too, while the
  registration is open (not full, the entry's ``at`` before ``closes``): its envelope carries the player's
  ``name`` (unique ignoring case) and, for an invitation, the submission an ``invite_sig`` by the
  invitation key over the same envelope.
* ``registration_closed`` — ``reason`` ("full": ``max_players`` joined; "closes": ``at`` ≥ ``closes``;
  "organiser": a ``submission`` {envelope {v 1, ctx "referee/start", tournament, seq, prev}, sig} by the
  organiser). The players are then those who joined, in join order; fewer than the smallest table
  seats make the tournament ``cancelled`` (then only ``revealed`` with reason "cancelled" follows).
* ``paired`` — ``round``, ``tables`` [{game, players (keys in seat order)}], ``byes`` [keys]. The
  players and byes must equal :func:`referee.tournaments.pairing.pair_round` of the log so far and the
  tournament seed; game ids are the referee's choice (unique in the tournament).
* ``game_finished`` — ``game``, ``head`` (the game log's last hash), ``ranks`` and ``scores`` (seat
  order; ``scores`` the result's totals, may be null).
* ``adjudicated`` — ``game``, ``method`` (the one ``created`` declares), ``ranks``, ``scores``?,
  ``head``, ``reason``; with method ``organiser`` a ``decision`` {envelope {v 1, ctx
  "referee/adjudicate", tournament, game, ranks, reason, seq, prev}, sig} signed by the organiser.
* ``withdrawn`` — ``key``, ``submission`` {envelope {v 1, ctx "referee/withdraw", tournament, key, seq,
  prev}, sig} signed by that player or by the organiser, once the tournament is active. A withdrawn
  player is paired no more.
* ``rekeyed`` — ``player`` (its key until now), ``key`` (its new key), ``by`` ("organiser"), ``submission``
  {envelope {v 1, ctx "referee/rekey", tournament, player, key, seq, prev, at?}, sig, new_sig}: ``sig`` by the
  organiser, ``new_sig`` by the new key, while the tournament is active; the new key is not and never was a
  player's here. From then on the player is the new key (standings, pairings, results of games still running);
  the tables already paired keep the keys they were paired with (:meth:`TournamentState.current_key`).
* ``bye`` — ``round``, ``key``, ``reason``: the bye points for a player of the open round who sits at
  none of its tables (the byes of ``paired`` need no ``bye`` entry).
* ``round_closed`` — ``round``, ``reason`` ("complete" | "deadline"): every game of the round has a
  result; "deadline" also needs ``at`` ≥ the ``paired`` entry's ``at`` + ``round_deadline``.
* ``finished`` — every paired round is closed and no further round is due.
* ``revealed`` — ``server_seed`` (hex), ``reason`` ("finished" | "aborted" | "cancelled"); nothing may follow it.

Verdicts (:class:`referee.replay.Verdict`): ``ok``; ``rejected`` with an error ``{code, message}``
(the entry changed nothing); ``unknown`` — a ``paired`` entry that cannot be recomputed because the
server seed is not known (not revealed yet); it is taken as written.

The state the fold builds, and the reads over it (standings, the next pairing, what is due), are
:class:`referee.tournaments.state.TournamentState`; the creation spec is ``referee.tournaments.spec``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..protocol.signing import REKEY_CTX, submitted_entropy, verify
from ..replay import LogError, Verdict, envelope_problem, public_key_ok, revealed_seed
from . import pairing as pr
from .points import ranks_problem
from .spec import created_problem
from .standings import GameResult, Tally
from .state import ABORTED, ACTIVE, CANCELLED, FINISHED, WAITING, Round, TournamentState

JOIN_CTX = "referee/join"
START_CTX = "referee/start"
#: why an open registration closed: ``max_players`` joined, ``closes`` passed, the organiser's signed start
CLOSE_REASONS = ("full", "closes", "organiser")
#: the longest player name (as the API's ``PlayerName``)
NAME_MAX = 64
WITHDRAW_CTX = "referee/withdraw"
ADJUDICATE_CTX = "referee/adjudicate"

_HEX64 = re.compile(r"[0-9a-f]{64}")
_GAME_ID = re.compile(r"[A-Za-z0-9_.:-]{1,80}")


def _reject(entry: dict[str, Any], code: str, message: str) -> Verdict:
    return Verdict(entry.get("seq", -1), str(entry.get("type")), "rejected", None, {"code": code, "message": message})


def _parse_at(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


@dataclass
class TournamentReplayer(TournamentState):
    """Folds a tournament log, entry by entry, into its state and one verdict per entry.

    ``server_seed`` is the referee's secret (the service has it from its store); a verifier takes it from
    the ``revealed`` entry (:func:`replay_tournament`). Without it the ``paired`` entries cannot be
    recomputed: their verdicts are ``unknown``.
    """

    def feed(self, entry: dict[str, Any]) -> Verdict:
        position = self.seq
        if not isinstance(entry, dict):
            raise LogError(position, "an entry is a JSON object")
        if entry.get("seq") != position:
            raise LogError(position, f"entry carries seq {entry.get('seq')!r}")
        kind = entry.get("type")
        if position == 0 and kind != "created":
            raise LogError(0, "the first entry of a tournament log must be 'created'")
        handler = getattr(self, f"_on_{kind}", None) if isinstance(kind, str) else None
        if self.revealed:
            verdict = _reject(entry, "log/after_reveal", "nothing follows the revealed entry")
        elif handler is None:
            verdict = _reject(entry, "log/unknown_entry", f"unknown entry type {kind!r}")
        else:
            verdict = handler(entry)
        self.verdicts.append(verdict)
        self.head = entry.get("hash", self.head)
        return verdict

    def _ok(self, entry: dict[str, Any]) -> Verdict:
        return Verdict(entry["seq"], entry["type"], "ok")

    def _on_created(self, entry: dict[str, Any]) -> Verdict:
        if self.created is not None:
            return _reject(entry, "log/duplicate_created", "a tournament is created once")
        problem = created_problem(entry)
        if problem:
            raise LogError(0, problem)
        self.created = entry
        self._key_set = frozenset(p["key"] for p in entry["players"])  # the players listed at creation
        if entry.get("registration") is None:
            self._roster = [dict(p) for p in entry["players"]]
            self._keys = [p["key"] for p in entry["players"]]
        # with an open registration the players are who joins, in join order: fixed by registration_closed
        self._tally = Tally(self._roster, entry["points"], entry["bye_points"])
        return self._ok(entry)

    def _signed(self, entry: dict[str, Any], ctx: str, signers: list[str | None],
                **binding: Any) -> tuple[str, str] | None:
        """The first problem with ``entry``'s signed submission (shape, binding, signature), or None;
        ``signers`` are the keys allowed to sign it (None: nobody, e.g. a tournament without an organiser)."""
        assert self.created is not None
        submission = entry.get("submission") if ctx != ADJUDICATE_CTX else entry.get("decision")
        problem = envelope_problem(submission, ctx)
        if problem:
            return problem
        envelope, sig = submission["envelope"], submission.get("sig")  # type: ignore[index,union-attr]
        if envelope.get("tournament") != self.created["tournament"]:
            return "submission/wrong_tournament", "the envelope is for another tournament"
        for name, value in binding.items():
            if envelope.get(name) != value:
                return f"submission/wrong_{name}", f"the envelope's {name} is {envelope.get(name)!r}, not {value!r}"
        if envelope.get("seq") != entry["seq"] or envelope.get("prev") != self.head:
            return "submission/stale", f"the envelope is bound to seq {envelope.get('seq')!r}, not {entry['seq']}"
        if not isinstance(sig, str) or not any(verify(key, envelope, sig) for key in signers if key):
            return "submission/bad_signature", "the signature is not over this envelope by a key allowed to sign it"
        return None

    def _on_joined(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        key = entry.get("key")
        registration = self.registration
        if self.status != WAITING:
            if registration is not None:
                return _reject(entry, "registration/closed", "the registration has closed")
            return _reject(entry, "tournament/not_waiting", "the tournament is not waiting for players")
        listed = isinstance(key, str) and key in self._key_set
        if not isinstance(key, str) or (not listed and registration is None):
            return _reject(entry, "join/not_player", "this key is no player of the tournament")
        if key in self._joined:
            return _reject(entry, "join/duplicate", "this player has joined already")
        problem = self._signed(entry, JOIN_CTX, [key], key=key)
        if problem:
            return _reject(entry, *problem)
        entropy = submitted_entropy(entry)
        if entropy is None:
            return _reject(entry, "join/bad_entropy", "entropy must be 32 bytes of base64url")
        row: dict[str, Any] | None = None
        if registration is not None:
            refused = self._registration_problem(entry, listed)
            if refused:
                return _reject(entry, *refused)
            row = next(dict(p) for p in self.created["players"] if p["key"] == key) if listed else \
                {"name": entry["submission"]["envelope"]["name"], "key": key}
        self.joins.append((key, entropy))
        self._joined.add(key)
        if row is not None:
            self._roster.append(row)
        elif len(self.joins) == len(self._keys):
            self.status = ACTIVE
        return self._ok(entry)

    def _registration_problem(self, entry: dict[str, Any], listed: bool) -> tuple[str, str] | None:
        """Why an open registration cannot take this join (full, closed by time, a name taken, the
        invitation's signature), or None. A listed player needs no invitation and keeps the listed name."""
        assert self.created is not None
        if self.registration_full():
            return "registration/full", f"max_players ({self.created['max_players']}) have joined"
        closes, at = _parse_at(self.created.get("closes")), _parse_at(entry.get("at"))
        if closes is not None and (at is None or at >= closes):
            return "registration/closed", f"the registration closed at {self.created['closes']}"
        if listed:
            return None
        submission = entry["submission"]
        name = submission["envelope"].get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= NAME_MAX:
            return "join/name", "a join to an open registration carries the player's name (1-64 characters)"
        taken = {p["name"].casefold() for p in self.created["players"]} | {p["name"].casefold() for p in self._roster}
        if name.casefold() in taken:
            return "registration/name_taken", f"another player is called {name!r}; names must differ"
        invite = (self.registration or {}).get("invite")
        if invite is not None:
            invite_sig = submission.get("invite_sig")
            if not isinstance(invite_sig, str) or not verify(invite, submission["envelope"], invite_sig):
                return "registration/bad_invite", "the invitation's signature (invite_sig) is missing or not over " \
                    "this envelope by the invitation key"
        return None

    def _on_registration_closed(self, entry: dict[str, Any]) -> Verdict:
        """The open registration closes: the players are those who joined, in join order; fewer than the
        smallest table cancel the tournament."""
        assert self.created is not None
        if not self.registration_open:
            return _reject(entry, "registration/not_open", "there is no open registration to close")
        reason = entry.get("reason")
        if reason not in CLOSE_REASONS:
            return _reject(entry, "registration/reason", f"reason is one of {list(CLOSE_REASONS)}")
        if reason == "full" and not self.registration_full():
            return _reject(entry, "registration/not_full", "fewer than max_players have joined")
        if reason == "closes":
            closes, at = _parse_at(self.created.get("closes")), _parse_at(entry.get("at"))
            if closes is None or at is None or at < closes:
                return _reject(entry, "registration/not_closed", "the registration's closing time has not come")
        if reason == "organiser":
            if not self.created.get("organiser"):
                return _reject(entry, "registration/no_organiser", "this tournament has no organiser to start it")
            problem = self._signed(entry, START_CTX, [self.created["organiser"]])
            if problem:
                return _reject(entry, *problem)
        elif "submission" in entry:
            return _reject(entry, "registration/malformed", "only the organiser's start carries a submission")
        self._keys = [p["key"] for p in self._roster]
        self._tally = Tally(self._roster, self.created["points"], self.created["bye_points"])
        self.status = ACTIVE if len(self._keys) >= min(self.created["format"]["table_sizes"]) else CANCELLED
        return self._ok(entry)

    def _on_paired(self, entry: dict[str, Any]) -> Verdict:
        if self.status != ACTIVE:
            return _reject(entry, "tournament/not_active", f"the tournament is {self.status}")
        if self.open_round() is not None:
            return _reject(entry, "round/open", f"round {self.rounds[-1].number} is not closed")
        if entry.get("round") != len(self.rounds) + 1 or not self.rounds_left():
            return _reject(entry, "round/unexpected", f"round {entry.get('round')!r} is not due")
        tables, byes = entry.get("tables"), entry.get("byes")
        if not isinstance(tables, list) or not isinstance(byes, list) or not all(
                isinstance(t, dict) and isinstance(t.get("players"), list) and isinstance(t.get("game"), str)
                and all(isinstance(k, str) for k in t["players"]) for t in tables) or not all(
                isinstance(k, str) for k in byes):
            return _reject(entry, "paired/malformed", "paired has tables [{game, players: [keys]}] and byes [keys]")
        ids = [t["game"] for t in tables]
        if len(set(ids)) != len(ids) or any(i in self._games for i in ids) or not all(
                _GAME_ID.fullmatch(i) for i in ids):
            return _reject(entry, "paired/game_ids", "every table has its own game id (1-80 of A-Z a-z 0-9 _ . : -)")
        written = pr.Pairing([list(t["players"]) for t in tables], list(byes))
        expected = self.expected_pairing()
        status = "ok"
        if expected is None:
            status = "unknown"
            seated = [k for t in written.tables for k in t] + written.byes
            allowed = self.created["format"]["table_sizes"]  # type: ignore[index]
            if sorted(seated) != sorted(self.active_players()) or any(len(t) not in allowed for t in written.tables):
                return _reject(entry, "paired/players",
                               "every active player sits at one table of an allowed size or has a bye")
        elif written != expected:
            return _reject(entry, "paired/mismatch",
                           f"round {entry['round']} is not the recomputed pairing {expected.to_dict()}")
        number = entry["round"]
        self.rounds.append(Round(number, [{"game": t["game"], "players": list(t["players"])} for t in tables],
                                 list(byes), entry.get("at")))
        for i, game in enumerate(ids):
            self._games[game] = (number, i)
        assert self._tally is not None
        for key in byes:
            self._tally.add_bye(key)
        return Verdict(entry["seq"], "paired", status)

    def _table_of(self, entry: dict[str, Any]) -> tuple[Round, dict[str, Any]] | tuple[None, str]:
        game = entry.get("game")
        where = self._games.get(game) if isinstance(game, str) else None
        if where is None:
            return None, "no table of the tournament plays this game"
        rnd = self.rounds[where[0] - 1]
        if game in rnd.results:
            return None, "this game has a result already"
        if rnd.closed:
            return None, "this game's round is closed"
        return rnd, rnd.tables[where[1]]

    def _result_problem(self, entry: dict[str, Any], table: dict[str, Any]) -> str | None:
        seats = len(table["players"])
        problem = ranks_problem(entry.get("ranks"), seats)
        if problem:
            return problem
        scores = entry.get("scores")
        if scores is not None and (not isinstance(scores, list) or len(scores) != seats
                                   or not all(type(s) is int for s in scores)):
            return f"scores is null or a list of {seats} integers (seat order)"
        if not isinstance(entry.get("head"), str) or not _HEX64.fullmatch(entry["head"]):
            return "head is the game log's last hash (64 hex digits)"
        return None

    def _record(self, rnd: Round, entry: dict[str, Any], method: str) -> None:
        rnd.results[entry["game"]] = {"ranks": list(entry["ranks"]), "scores": entry.get("scores"),
                                      "head": entry["head"], "method": method, "seq": entry["seq"]}
        # a player who moved to a new key since the round was paired (``rekeyed``) scores under that key
        players = [self.current_key(k) for k in rnd.tables[self._games[entry["game"]][1]]["players"]]
        scores = entry.get("scores")
        assert self._tally is not None
        self._tally.add_result(GameResult(entry["game"], rnd.number, tuple(players), tuple(entry["ranks"]),
                                          tuple(scores) if scores is not None else None))

    def _on_game_finished(self, entry: dict[str, Any]) -> Verdict:
        rnd, table = self._table_of(entry)
        if rnd is None:
            return _reject(entry, "game/not_open", str(table))
        problem = self._result_problem(entry, table)  # type: ignore[arg-type]
        if problem:
            return _reject(entry, "game/bad_result", problem)
        self._record(rnd, entry, "played")
        return self._ok(entry)

    def _on_adjudicated(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        rnd, table = self._table_of(entry)
        if rnd is None:
            return _reject(entry, "game/not_open", str(table))
        problem = self._result_problem(entry, table)  # type: ignore[arg-type]
        if problem:
            return _reject(entry, "game/bad_result", problem)
        method = entry.get("method")
        if method != self.created["adjudication"]:
            return _reject(entry, "adjudication/method",
                           f"this tournament adjudicates by {self.created['adjudication']}")
        if not isinstance(entry.get("reason"), str):
            return _reject(entry, "adjudication/reason", "an adjudication gives its reason")
        if method == "organiser":
            if not self.created.get("organiser"):
                return _reject(entry, "adjudication/no_organiser", "this tournament has no organiser to decide")
            signed = self._signed(entry, ADJUDICATE_CTX, [self.created["organiser"]], game=entry["game"],
                                  ranks=entry["ranks"], reason=entry["reason"])
            if signed:
                return _reject(entry, *signed)
        self._record(rnd, entry, str(method))
        return self._ok(entry)

    def _on_withdrawn(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        key = entry.get("key")
        if key not in self.keys:
            return _reject(entry, "withdraw/not_player", "this key is no player of the tournament")
        if key in self.withdrawn:
            return _reject(entry, "withdraw/duplicate", "this player has withdrawn already")
        if self.status != ACTIVE:  # before the start a player simply does not join
            return _reject(entry, "tournament/not_active", f"the tournament is {self.status}")
        problem = self._signed(entry, WITHDRAW_CTX, [key, self.created.get("organiser")], key=key)
        if problem:
            return _reject(entry, *problem)
        self.withdrawn.append(key)
        return self._ok(entry)

    def _on_rekeyed(self, entry: dict[str, Any]) -> Verdict:
        """The organiser moves a player to a new key for the rounds to come: the submission is signed by the
        organiser (``sig``) and by the new key (``new_sig``) over the same envelope. From here on the player is
        the new key — in the standings (its points, tie-break values and games carried over), the pairings and
        the games of later rounds; the tables already paired keep the key they were paired with."""
        assert self.created is not None
        player, key, organiser = entry.get("player"), entry.get("key"), self.created.get("organiser")
        if self.status != ACTIVE:
            return _reject(entry, "tournament/not_active", f"the tournament is {self.status}")
        if not organiser:
            return _reject(entry, "rekey/no_organiser", "this tournament has no organiser to move a player's key")
        if not isinstance(player, str) or player not in self._keys:
            return _reject(entry, "rekey/not_player", "this key is no player of the tournament (now)")
        if player in self.withdrawn:
            return _reject(entry, "rekey/withdrawn", "this player has withdrawn: no rounds to come")
        if not isinstance(key, str) or not public_key_ok(key):
            return _reject(entry, "rekey/bad_key", "the new key is an Ed25519 public key (base64url, 32 bytes)")
        if key in self._keys or key in self._moved:
            return _reject(entry, "rekey/key_taken", "the new key is, or was, a player's key in this tournament")
        if entry.get("by") != "organiser":
            return _reject(entry, "rekey/malformed", "a tournament's rekeyed is by the organiser")
        problem = self._signed(entry, REKEY_CTX, [organiser], player=player, key=key)
        if problem:
            return _reject(entry, *problem)
        submission = entry["submission"]
        new_sig = submission.get("new_sig")
        if not isinstance(new_sig, str) or not verify(key, submission["envelope"], new_sig):
            return _reject(entry, "submission/bad_signature", "new_sig is not the new key's signature over it")
        index = self._keys.index(player)
        self._keys[index] = key
        self._roster = [{**p, "key": key} if p["key"] == player else p for p in self._roster]
        for old, now in self._moved.items():
            if now == player:
                self._moved[old] = key
        self._moved[player] = key
        assert self._tally is not None
        self._tally.rename(player, key)
        return self._ok(entry)

    def _on_bye(self, entry: dict[str, Any]) -> Verdict:
        rnd = self.open_round()
        key = entry.get("key")
        if rnd is None or entry.get("round") != rnd.number:
            return _reject(entry, "round/not_open", f"round {entry.get('round')!r} is not the open round")
        now = self.current_key
        if key not in self.keys or key in {now(k) for k in (*rnd.byes, *rnd.extra_byes)} or any(
                key in {now(k) for k in t["players"]} for t in rnd.tables):
            return _reject(entry, "bye/not_allowed", "a bye goes to a player without a table or bye this round")
        rnd.extra_byes.append(key)
        assert self._tally is not None
        self._tally.add_bye(key)
        return self._ok(entry)

    def _on_round_closed(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        rnd = self.open_round()
        if rnd is None or entry.get("round") != rnd.number:
            return _reject(entry, "round/not_open", f"round {entry.get('round')!r} is not the open round")
        missing = [t["game"] for t in rnd.tables if t["game"] not in rnd.results]
        if missing:
            return _reject(entry, "round/games_running", f"games without a result: {missing}")
        reason = entry.get("reason")
        if reason not in ("complete", "deadline"):
            return _reject(entry, "round/reason", "reason is 'complete' or 'deadline'")
        if reason == "deadline":
            deadline = self.created.get("round_deadline")
            start, now = _parse_at(rnd.paired_at), _parse_at(entry.get("at"))
            if deadline is None or start is None or now is None or (now - start).total_seconds() < deadline:
                return _reject(entry, "round/deadline_not_passed", "the round's deadline has not passed")
        rnd.closed = True
        return self._ok(entry)

    def _on_finished(self, entry: dict[str, Any]) -> Verdict:
        if self.status != ACTIVE or self.open_round() is not None or self.rounds_left():
            return _reject(entry, "tournament/not_over", "rounds are still open or due")
        self.status = FINISHED
        return self._ok(entry)

    def _on_revealed(self, entry: dict[str, Any]) -> Verdict:
        assert self.created is not None
        try:
            seed = bytes.fromhex(entry.get("server_seed", ""))
        except (ValueError, TypeError):
            seed = b""
        if hashlib.sha256(seed).hexdigest() != self.created["commitment"]:
            return _reject(entry, "reveal/commitment_mismatch", "the revealed seed does not match the commitment")
        reason = entry.get("reason")
        if reason == "finished" and self.status != FINISHED:
            return _reject(entry, "reveal/not_finished", "the tournament is not finished")
        if reason == "cancelled" and self.status != CANCELLED:
            return _reject(entry, "reveal/not_cancelled", "the tournament is not cancelled")
        if reason not in ("finished", "aborted", "cancelled"):
            return _reject(entry, "reveal/reason", "reason is 'finished', 'aborted' or 'cancelled'")
        if reason == "aborted":
            self.status = ABORTED
        self.server_seed = seed
        self.revealed = True
        return self._ok(entry)


def finished_payload(game: str, head: str, result: dict[str, Any]) -> dict[str, Any]:
    """The ``game_finished`` payload for a game's ``result()`` (CONTRACT section 1): its ranks and totals
    in seat order, and ``head``, the hash of the game log's last entry."""
    seats = result["seats"]
    scores = [s.get("total") for s in seats]
    return {"game": game, "head": head, "ranks": [s["rank"] for s in seats],
            "scores": None if any(score is None for score in scores) else scores}  # an unplayed game has none


def replay_tournament(entries: list[dict[str, Any]], server_seed: bytes | None = None) -> TournamentReplayer:
    """Fold a whole tournament log; without ``server_seed`` the seed the log reveals (if any) is used."""
    replayer = TournamentReplayer(server_seed=server_seed if server_seed is not None else revealed_seed(entries))
    for entry in entries:
        replayer.feed(entry)
    return replayer
