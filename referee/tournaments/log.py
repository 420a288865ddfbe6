"""A tournament's log and its one fold, :class:`TournamentReplayer` (CONTRACT section 10).

A tournament is one hash-chained log with the entry format of a game's (``referee.logchain``: ``v``,
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
  (:func:`resolve_tournament`) gives the values written.
* ``joined`` — ``key``, ``submission`` {envelope {v 1, ctx "referee/join", tournament, key, seq, prev,
  entropy (32 bytes base64url), at}, sig}: signed by that player, bound to this entry's seq and the
  previous entry's hash, like a game's submissions.
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
* ``bye`` — ``round``, ``key``, ``reason``: the bye points for a player of the open round who sits at
  none of its tables (the byes of ``paired`` need no ``bye`` entry).
* ``round_closed`` — ``round``, ``reason`` ("complete" | "deadline"): every game of the round has a
  result; "deadline" also needs ``at`` ≥ the ``paired`` entry's ``at`` + ``round_deadline``.
* ``finished`` — every paired round is closed and no further round is due.
* ``revealed`` — ``server_seed`` (hex), ``reason`` ("finished" | "aborted"); nothing may follow it.

Verdicts (:class:`referee.replay.Verdict`): ``ok``; ``rejected`` with an error ``{code, message}``
(the entry changed nothing); ``unknown`` — a ``paired`` entry that cannot be recomputed because the
server seed is not known (not revealed yet); it is taken as written.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..games import ruleset as load_ruleset
from ..logchain import GENESIS
from ..replay import LogError, Verdict, envelope_problem, revealed_seed
from ..signing import load_public_key, submitted_entropy, verify
from . import pairing as pr
from .points import DEFAULT_BYE_POINTS, DEFAULT_POINTS, ranks_problem
from .seed import tournament_seed
from .standings import GameResult, compute_standings
from .tiebreaks import chain_problem, resolve_chain

TOURNAMENT_CTX = "referee/tournament"
JOIN_CTX = "referee/join"
WITHDRAW_CTX = "referee/withdraw"
ADJUDICATE_CTX = "referee/adjudicate"

WAITING, ACTIVE, FINISHED, ABORTED = "waiting", "active", "finished", "aborted"
ADJUDICATION_METHODS = ("provisional", "organiser")
#: what a withdrawal does to the player's running games: the referee plays their turns by default moves
#: (the seat is forfeited in the game, ranked last), or the game is adjudicated at once (``provisional``)
WITHDRAWAL_MODES = ("default_moves", "adjudicate")
MAX_PLAYERS = 4096
MAX_ROUNDS = 1000
_HEX64 = re.compile(r"[0-9a-f]{64}")
_GAME_ID = re.compile(r"[A-Za-z0-9_.:-]{1,80}")


class SpecError(ValueError):
    """A tournament body that cannot be resolved; ``problems`` is ``[{"path", "problem"}]``."""

    def __init__(self, problems: list[dict[str, str]]):
        super().__init__("; ".join(f"{p['path']}: {p['problem']}" for p in problems))
        self.problems = problems


# -- created: defaults and checks -----------------------------------------------------------------
def default_rounds(kind: str, players: int, allowed: list[int]) -> int:
    """Rounds when the format names none: round robin — 2-seat tables: n − 1 (n even) or n (n odd);
    larger tables: ⌈(n(n−1)/2) / pairs seated per round⌉; Swiss — ⌈log2 n⌉ (at least 1); series — n."""
    if kind == pr.SERIES:
        return players
    if kind == pr.SWISS:
        return max(1, math.ceil(math.log2(players)))
    if max(allowed) == 2:
        return players - 1 if players % 2 == 0 else players
    sizes, _ = pr.table_sizes(players, allowed)
    per_round = sum(s * (s - 1) // 2 for s in sizes)
    return max(1, math.ceil(players * (players - 1) // 2 / per_round)) if per_round else 1


def resolve_sizes(sizes: list[int], min_players: int) -> list[int]:
    """One size ``n`` allows every size from ``n`` down to the ruleset's minimum; several sizes are used
    as listed. Largest first, no repeats."""
    if len(sizes) == 1:
        return list(range(sizes[0], min_players - 1, -1))
    return sorted(set(sizes), reverse=True)


def resolve_tournament(body: dict[str, Any], *, literal_sizes: bool = False) -> dict[str, Any]:
    """The resolved values ``created`` records for a tournament body (defaults filled in, documented in
    ``docs/tournaments.md``). Raises :class:`SpecError` listing every problem.

    ``body``: ``ruleset``, ``options``?, ``players`` [{name, key}], ``format`` {kind, rounds?,
    table_sizes?}, ``points``?, ``bye_points``?, ``tie_breaks``?, ``round_deadline``?,
    ``adjudication``?, ``nonce``?. The result has ``ruleset`` {name, version}, ``options``,
    ``players``, ``format``, ``points``, ``bye_points``, ``tie_breaks``, ``round_deadline``,
    ``adjudication`` (and ``nonce`` when given). ``literal_sizes``: take ``table_sizes`` as written
    (a ``created`` entry's, already resolved) instead of widening a single size.
    """
    problems: list[dict[str, str]] = []

    def bad(path: str, problem: str) -> None:
        problems.append({"path": path, "problem": problem})

    if not isinstance(body, dict):
        raise SpecError([{"path": "$", "problem": "a tournament is a JSON object"}])
    try:
        rules = load_ruleset(body.get("ruleset"))  # type: ignore[arg-type]
    except (KeyError, TypeError):
        raise SpecError([{"path": "$.ruleset", "problem": f"unknown ruleset {body.get('ruleset')!r}"}]) from None
    players = body.get("players")
    if not isinstance(players, list) or not 2 <= len(players) <= MAX_PLAYERS:
        bad("$.players", f"players is a list of 2 to {MAX_PLAYERS} {{name, key}}")
        players = players[:MAX_PLAYERS] if isinstance(players, list) else []
    seen: set[str] = set()
    for i, p in enumerate(players):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p.get("name"):
            bad(f"$.players[{i}]", "a player is {name, key} with a non-empty name")
            continue
        try:
            load_public_key(p.get("key"))  # type: ignore[arg-type]
        except (ValueError, TypeError):
            bad(f"$.players[{i}].key", "not a base64url Ed25519 public key")
            continue
        if p["key"] in seen:
            bad(f"$.players[{i}].key", "a key plays once in a tournament")
        seen.add(p["key"])
    fmt = body.get("format")
    if not isinstance(fmt, dict):
        raise SpecError([*problems, {"path": "$.format", "problem": "format is {kind, rounds?, table_sizes?}"}])
    kind = fmt.get("kind")
    if kind not in pr.KINDS:
        bad("$.format.kind", f"kind is one of {list(pr.KINDS)}")
    n = len(players)
    given_sizes = fmt.get("table_sizes")
    if given_sizes is None:
        given_sizes = [max(rules.min_players, min(n, rules.max_players))] if kind == pr.SERIES \
            else [min(4, rules.max_players)]
    if not isinstance(given_sizes, list) or not given_sizes or not all(type(s) is int for s in given_sizes):
        bad("$.format.table_sizes", "table_sizes is a non-empty list of integers")
        given_sizes = [rules.min_players]
    elif not all(rules.min_players <= s <= rules.max_players for s in given_sizes):
        bad("$.format.table_sizes", f"{rules.name} tables seat {rules.min_players} to {rules.max_players} players")
        given_sizes = [rules.min_players]
    sizes = sorted(set(given_sizes), reverse=True) if literal_sizes else resolve_sizes(given_sizes, rules.min_players)
    if literal_sizes and sizes != given_sizes:
        bad("$.format.table_sizes", "table_sizes are written largest first, each once")
    if kind == pr.SERIES and n and n not in sizes:
        bad("$.format", f"a series seats every player at one table: {n} players is not an allowed table size")
    rounds = fmt.get("rounds")
    if rounds is None and kind in pr.KINDS and n >= 2:
        rounds = default_rounds(kind, n, sizes)
    if type(rounds) is not int or not 1 <= rounds <= MAX_ROUNDS:
        bad("$.format.rounds", f"rounds is an integer from 1 to {MAX_ROUNDS}")
    points = {str(s): list(DEFAULT_POINTS[s]) for s in sorted(sizes)}
    given_points = body.get("points")
    if given_points is not None:
        if not isinstance(given_points, dict):
            bad("$.points", 'points is {"<table size>": [points for rank 1, 2, ...]}')
        else:
            for size, row in given_points.items():
                if size not in points:
                    bad(f"$.points.{size}", f"no table of {size} in this tournament (sizes {sorted(sizes)})")
                elif not isinstance(row, list) or len(row) != int(size) or not all(type(x) is int for x in row):
                    bad(f"$.points.{size}", f"a list of {size} integers, rank 1 first")
                else:
                    points[size] = list(row)
    bye_points = body.get("bye_points", DEFAULT_BYE_POINTS)
    if type(bye_points) is not int:
        bad("$.bye_points", "bye_points is an integer")
    chain = body.get("tie_breaks")
    if chain is not None and (not isinstance(chain, list) or not all(isinstance(i, str) for i in chain)):
        bad("$.tie_breaks", "tie_breaks is a list of tie-break ids")
        chain = None
    chain = resolve_chain(chain)
    problem = chain_problem(chain)
    if problem:
        bad("$.tie_breaks", problem)
    deadline = body.get("round_deadline")
    if deadline is not None and (type(deadline) is not int or deadline < 1):
        bad("$.round_deadline", "round_deadline is a positive number of seconds")
    adjudication = body.get("adjudication", "provisional")
    if adjudication not in ADJUDICATION_METHODS:
        bad("$.adjudication", f"adjudication is one of {list(ADJUDICATION_METHODS)}")
    withdrawal = body.get("withdrawal", "default_moves")
    if withdrawal not in WITHDRAWAL_MODES:
        bad("$.withdrawal", f"withdrawal is one of {list(WITHDRAWAL_MODES)}")
    options = body.get("options") or {}
    if not isinstance(options, dict):
        bad("$.options", "options is an object")
    if problems:
        raise SpecError(problems)
    out = {
        "ruleset": {"name": rules.name, "version": rules.version},
        "options": options,
        "players": [{"name": p["name"], "key": p["key"]} for p in players],
        "format": {"kind": kind, "rounds": rounds, "table_sizes": sizes},
        "points": points,
        "bye_points": bye_points,
        "tie_breaks": chain,
        "round_deadline": deadline,
        "adjudication": adjudication,
        "withdrawal": withdrawal,
    }
    if body.get("nonce") is not None:
        out["nonce"] = body["nonce"]
    return out


RESOLVED_FIELDS = ("ruleset", "options", "players", "format", "points", "bye_points", "tie_breaks",
                   "round_deadline", "adjudication", "withdrawal")


def _created_problem(entry: dict[str, Any]) -> str | None:
    """What is wrong with a ``created`` entry, or None: its values must be a fixed point of
    :func:`resolve_tournament` (what the service writes), and a signed request must resolve to them."""
    if not isinstance(entry.get("tournament"), str) or not entry["tournament"]:
        return "created names no tournament id"
    if not isinstance(entry.get("commitment"), str) or not _HEX64.fullmatch(entry["commitment"]):
        return "the commitment must be 64 lowercase hex digits"
    ruleset = entry.get("ruleset")
    if not isinstance(ruleset, dict) or set(ruleset) != {"name", "version"} or not isinstance(
            ruleset.get("version"), str):
        return "created names no ruleset {name, version}"
    fmt = entry.get("format") if isinstance(entry.get("format"), dict) else {}
    body = {k: entry.get(k) for k in RESOLVED_FIELDS if k != "ruleset"}
    body["ruleset"] = ruleset.get("name")
    body["format"] = {**fmt, "table_sizes": fmt.get("table_sizes")}
    try:
        resolved = resolve_tournament(body, literal_sizes=True)
    except SpecError as exc:
        return str(exc)
    for key in RESOLVED_FIELDS:
        if key == "ruleset":
            continue
        if resolved[key] != entry.get(key):
            return f"created.{key} is not in resolved form ({resolved[key]!r})"
    organiser = entry.get("organiser")
    if organiser is not None:
        request = entry.get("request")
        if not isinstance(request, dict) or not isinstance(entry.get("organiser_sig"), str):
            return "an organiser's tournament records the signed request and organiser_sig"
        if not verify(organiser, {"v": 1, "ctx": TOURNAMENT_CTX, **request}, entry["organiser_sig"]):
            return "organiser_sig is not the organiser's signature over {v: 1, ctx: 'referee/tournament', ...request}"
        try:
            signed = resolve_tournament(request)
        except SpecError as exc:
            return f"the signed request does not resolve: {exc}"
        for key in RESOLVED_FIELDS:
            mine = signed[key] if key != "ruleset" else signed[key]["name"]
            theirs = entry.get(key) if key != "ruleset" else ruleset.get("name")
            if mine != theirs:
                return f"created.{key} differs from the organiser's signed request"
    return None


# -- the fold -------------------------------------------------------------------------------------
@dataclass
class Round:
    number: int
    tables: list[dict[str, Any]]
    byes: list[str]
    paired_at: str | None
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra_byes: list[str] = field(default_factory=list)
    closed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.number,
                "tables": [{"game": t["game"], "players": list(t["players"]), "result": self.results.get(t["game"])}
                           for t in self.tables],
                "byes": [*self.byes, *self.extra_byes], "closed": self.closed}


def _reject(entry: dict[str, Any], code: str, message: str) -> Verdict:
    return Verdict(entry.get("seq", -1), str(entry.get("type")), "rejected", None, {"code": code, "message": message})


def _parse_at(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


@dataclass
class TournamentReplayer:
    """Folds a tournament log, entry by entry, into its state and one verdict per entry.

    ``server_seed`` is the referee's secret (the service has it from its store); a verifier takes it from
    the ``revealed`` entry (:func:`replay_tournament`). Without it the ``paired`` entries cannot be
    recomputed: their verdicts are ``unknown``.
    """

    server_seed: bytes | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    created: dict[str, Any] | None = None
    status: str = WAITING
    joins: list[tuple[str, bytes]] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    withdrawn: list[str] = field(default_factory=list)
    revealed: bool = False
    head: str = GENESIS
    _games: dict[str, tuple[int, int]] = field(default_factory=dict)
    _keys: list[str] = field(default_factory=list)
    _key_set: frozenset[str] = frozenset()
    _joined: set[str] = field(default_factory=set)

    # -- reads --------------------------------------------------------------------------------------
    @property
    def seq(self) -> int:
        return len(self.verdicts)

    @property
    def keys(self) -> list[str]:
        """Every player's key, in ``created`` order."""
        return list(self._keys)

    @property
    def seed(self) -> bytes | None:
        """The tournament seed, once the server seed is known and every player has joined."""
        if self.server_seed is None or self.created is None or len(self.joins) != len(self._keys):
            return None
        return tournament_seed(self.server_seed, [entropy for _, entropy in self.joins])

    def active_players(self) -> list[str]:
        return [k for k in self._keys if k not in self.withdrawn]

    def results(self) -> list[GameResult]:
        """Every game with a result, in the order of its round and table."""
        out = []
        for rnd in self.rounds:
            for table in rnd.tables:
                res = rnd.results.get(table["game"])
                if res is not None:
                    out.append(GameResult(table["game"], rnd.number, tuple(table["players"]), tuple(res["ranks"]),
                                          tuple(res["scores"]) if res.get("scores") is not None else None))
        return out

    def games(self) -> list[dict[str, str]]:
        """``[{"id", "head"}]`` of every game with a result, in round and table order (the certificate's)."""
        return [{"id": t["game"], "head": rnd.results[t["game"]]["head"]}
                for rnd in self.rounds for t in rnd.tables if t["game"] in rnd.results]

    def standings(self, *, public: bool = True) -> list[dict[str, Any]]:
        """The standings rows. ``public``: ``lot`` only from a revealed seed (else null); the service's
        own pairing uses ``public=False`` (the lot from the server seed it holds)."""
        assert self.created is not None
        seed = self.seed if (self.revealed or not public) else None
        byes = [k for rnd in self.rounds for k in (*rnd.byes, *rnd.extra_byes)]
        return compute_standings(self.created["players"], self.results(), byes=byes, points=self.created["points"],
                                 bye_points=self.created["bye_points"], chain=self.created["tie_breaks"], seed=seed)

    def expected_pairing(self) -> pr.Pairing | None:
        """The pairing of the next round, or None when the seed is not known."""
        seed = self.seed
        if seed is None or self.created is None:
            return None
        fmt = self.created["format"]
        history = [pr.Pairing([t["players"] for t in r.tables], [*r.byes, *r.extra_byes]) for r in self.rounds]
        ranking = [row["key"] for row in self.standings(public=False)]
        return pr.pair_round(fmt["kind"], round_no=len(self.rounds) + 1, players=self.keys,
                             active=self.active_players(), allowed=fmt["table_sizes"], rounds=fmt["rounds"],
                             history=history, ranking=ranking, seed=seed)

    def open_round(self) -> Round | None:
        return self.rounds[-1] if self.rounds and not self.rounds[-1].closed else None

    def rounds_left(self) -> bool:
        """Whether another round is due: fewer rounds than the format's, and enough players for a table."""
        assert self.created is not None
        fmt = self.created["format"]
        return len(self.rounds) < fmt["rounds"] and len(self.active_players()) >= min(fmt["table_sizes"])

    def due(self) -> dict[str, Any] | None:
        """What the referee owes this log next, as ``{"type", …}``: ``paired`` (with ``round`` and the
        ``pairing``; the service adds game ids), ``round_closed``, ``finished`` or ``revealed``
        (``server_seed`` hex). None when it waits for players."""
        if self.created is None or self.revealed:
            return None
        if self.status == WAITING:
            return None
        if self.status == FINISHED:
            return {"type": "revealed", "server_seed": self.server_seed.hex(), "reason": "finished"} \
                if self.server_seed is not None else None
        current = self.open_round()
        if current is not None:
            if all(t["game"] in current.results for t in current.tables):
                return {"type": "round_closed", "round": current.number, "reason": "complete"}
            return None
        if self.rounds_left():
            pairing = self.expected_pairing()
            return None if pairing is None else {"type": "paired", "round": len(self.rounds) + 1, "pairing": pairing}
        return {"type": "finished"}

    def to_dict(self) -> dict[str, Any]:
        """The projection (``GET /tournaments/{id}``), from the log alone."""
        created = self.created or {}
        return {"tournament": created.get("tournament"), "status": self.status, "seq": self.seq, "head": self.head,
                "format": created.get("format"), "points": created.get("points"),
                "bye_points": created.get("bye_points"), "tie_breaks": created.get("tie_breaks"),
                "rounds": [r.to_dict() for r in self.rounds],
                "standings": self.standings() if self.created else []}

    # -- the fold -----------------------------------------------------------------------------------
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
        problem = _created_problem(entry)
        if problem:
            raise LogError(0, problem)
        self.created = entry
        self._keys = [p["key"] for p in entry["players"]]
        self._key_set = frozenset(self._keys)
        return self._ok(entry)

    def _signed(self, entry: dict[str, Any], ctx: str, signers: list[str], **binding: Any) -> tuple[str, str] | None:
        """The first problem with ``entry``'s signed submission (shape, binding, signature), or None."""
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
        key = entry.get("key")
        if self.status != WAITING:
            return _reject(entry, "tournament/not_waiting", "the tournament is not waiting for players")
        if not isinstance(key, str) or key not in self._key_set:
            return _reject(entry, "join/not_player", "this key is no player of the tournament")
        if key in self._joined:
            return _reject(entry, "join/duplicate", "this player has joined already")
        problem = self._signed(entry, JOIN_CTX, [key], key=key)
        if problem:
            return _reject(entry, *problem)
        entropy = submitted_entropy(entry)
        if entropy is None:
            return _reject(entry, "join/bad_entropy", "entropy must be 32 bytes of base64url")
        self.joins.append((key, entropy))
        self._joined.add(key)
        if len(self.joins) == len(self._keys):
            self.status = ACTIVE
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

    def _on_bye(self, entry: dict[str, Any]) -> Verdict:
        rnd = self.open_round()
        key = entry.get("key")
        if rnd is None or entry.get("round") != rnd.number:
            return _reject(entry, "round/not_open", f"round {entry.get('round')!r} is not the open round")
        if key not in self.keys or key in (*rnd.byes, *rnd.extra_byes) or any(
                key in t["players"] for t in rnd.tables):
            return _reject(entry, "bye/not_allowed", "a bye goes to a player without a table or bye this round")
        rnd.extra_byes.append(key)
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
        if reason not in ("finished", "aborted"):
            return _reject(entry, "reveal/reason", "reason is 'finished' or 'aborted'")
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
