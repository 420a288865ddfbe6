"""What a tournament's log has established so far, and the reads over it.

:class:`TournamentState` holds the rounds, joins, withdrawals and the reveal, and answers what the service,
the workers and the verifier ask of a tournament: its standings, the pairing of the next round, what the
referee owes the log next (:meth:`TournamentState.due`), its projection. It changes only through the
fold, :class:`referee.tournaments.log.TournamentReplayer`, entry by entry. Pure: no Redis, clock or network.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..protocol.logchain import GENESIS
from ..replay import Verdict
from . import pairing as pr
from .seed import tournament_seed
from .standings import GameResult, Tally, compute_standings

WAITING, ACTIVE, FINISHED, ABORTED = "waiting", "active", "finished", "aborted"
#: an open registration that closed with too few players to seat a table (``registration_closed``)
CANCELLED = "cancelled"


def _copied(row: dict[str, Any] | None) -> dict[str, Any] | None:
    return dict(row) if row is not None else None


@dataclass
class Round:
    """A round as the log has it: its tables and byes (``paired``), the results so far, the byes given
    later (``bye``) and whether it is closed."""

    number: int
    tables: list[dict[str, Any]]
    byes: list[str]
    paired_at: str | None
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra_byes: list[str] = field(default_factory=list)
    closed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.number,
                "tables": [{"game": t["game"], "players": list(t["players"]),
                            "result": _copied(self.results.get(t["game"]))} for t in self.tables],
                "byes": [*self.byes, *self.extra_byes], "closed": self.closed}


@dataclass
class TournamentState:
    """A tournament's state as its log has built it so far: :class:`~referee.tournaments.log.TournamentReplayer`
    (the fold) writes it, everything else reads it.

    ``server_seed`` is the referee's secret, when known; ``verdicts`` has one verdict per entry folded.
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
    #: the players as the log has them: ``created``'s, or with an open registration those who joined, in join
    #: order ({name, key, bot?}); fixed when the registration closes
    _roster: list[dict[str, Any]] = field(default_factory=list)
    #: the standings' sums, kept up to date by the fold result by result (:class:`~.standings.Tally`)
    _tally: Tally | None = None
    #: a player's new key (``rekeyed``): every key a player had before, to the key it has now
    _moved: dict[str, str] = field(default_factory=dict)

    def fork(self) -> TournamentState:
        """A copy that the fold can go on with while this one stays as it is — what ``copy.deepcopy`` gives,
        without copying what the fold never changes once written (the entries, the tables, the verdicts,
        the results' rows): O(players + games) list and dict copies, not a deep copy of every object."""
        twin = copy.copy(self)
        twin.verdicts = list(self.verdicts)
        twin.joins = list(self.joins)
        twin.rounds = [dataclasses.replace(r, results=dict(r.results), extra_byes=list(r.extra_byes))
                       for r in self.rounds]
        twin.withdrawn = list(self.withdrawn)
        twin._games = dict(self._games)
        twin._keys = list(self._keys)
        twin._joined = set(self._joined)
        twin._roster = list(self._roster)
        twin._tally = self._tally.fork() if self._tally is not None else None
        twin._moved = dict(self._moved)
        return twin

    # -- reads --------------------------------------------------------------------------------------
    @property
    def seq(self) -> int:
        return len(self.verdicts)

    @property
    def keys(self) -> list[str]:
        """Every player's key, in ``created`` order (an open registration: in join order, once it has closed;
        none before)."""
        return list(self._keys)

    @property
    def players(self) -> list[dict[str, Any]]:
        """The players' rows {name, key, bot?}: ``created``'s, or with an open registration who has joined so
        far, in join order (once the registration has closed, exactly the tournament's players)."""
        return [dict(p) for p in self._roster]

    @property
    def registration(self) -> dict[str, Any] | None:
        """``created.registration`` ({"open": true} | {"invite": key}), None for listed players only."""
        return (self.created or {}).get("registration")

    @property
    def registration_open(self) -> bool:
        """Whether the open registration still takes joins (no ``registration_closed`` yet)."""
        return self.registration is not None and self.status == WAITING

    def registration_full(self) -> bool:
        limit = (self.created or {}).get("max_players")
        return limit is not None and len(self.joins) >= limit

    @property
    def seed(self) -> bytes | None:
        """The tournament seed, once the server seed is known and every player has joined."""
        if self.server_seed is None or self.created is None or len(self.joins) != len(self._keys):
            return None
        return tournament_seed(self.server_seed, [entropy for _, entropy in self.joins])

    def current_key(self, key: str) -> str:
        """The key a player plays under now: ``key``, or the key a ``rekeyed`` entry moved it to (the tables of
        rounds paired before keep the key they were paired with)."""
        return self._moved.get(key, key)

    @property
    def moved(self) -> dict[str, str]:
        """Every key a player had before a ``rekeyed`` entry, to the key it has now."""
        return dict(self._moved)

    def active_players(self) -> list[str]:
        return [k for k in self._keys if k not in self.withdrawn]

    def results(self) -> list[GameResult]:
        """Every game with a result, in the order of its round and table; its players by the keys they play
        under now (a player's new key, ``rekeyed``, in place of the one the table was paired with)."""
        out = []
        for rnd in self.rounds:
            for table in rnd.tables:
                res = rnd.results.get(table["game"])
                if res is not None:
                    players = tuple(self.current_key(k) for k in table["players"])
                    out.append(GameResult(table["game"], rnd.number, players, tuple(res["ranks"]),
                                          tuple(res["scores"]) if res.get("scores") is not None else None))
        return out

    def games(self) -> list[dict[str, str]]:
        """``[{"id", "head"}]`` of every game with a result, in round and table order (the certificate's)."""
        return [{"id": t["game"], "head": rnd.results[t["game"]]["head"]}
                for rnd in self.rounds for t in rnd.tables if t["game"] in rnd.results]

    def standings(self, *, public: bool = True) -> list[dict[str, Any]]:
        """The standings rows, from the sums the fold keeps (:class:`~.standings.Tally`, updated per
        result). ``public``: ``lot`` only from a revealed seed (else null); the service's own pairing
        uses ``public=False`` (the lot from the server seed it holds)."""
        assert self.created is not None and self._tally is not None
        seed = self.seed if (self.revealed or not public) else None
        if not self._keys:  # an open registration before it closes: nobody to rank yet
            return []
        return self._tally.rows(self.created["tie_breaks"], seed)

    def recomputed_standings(self, *, public: bool = True) -> list[dict[str, Any]]:
        """The standings recomputed from every result and bye of the rounds (:func:`compute_standings`):
        what the verifier checks a certificate's standings against; equal to :meth:`standings`."""
        assert self.created is not None
        seed = self.seed if (self.revealed or not public) else None
        byes = [self.current_key(k) for rnd in self.rounds for k in (*rnd.byes, *rnd.extra_byes)]
        return compute_standings(self._roster, self.results(), byes=byes, points=self.created["points"],
                                 bye_points=self.created["bye_points"], chain=self.created["tie_breaks"], seed=seed)

    def expected_pairing(self) -> pr.Pairing | None:
        """The pairing of the next round, or None when the seed is not known."""
        seed = self.seed
        if seed is None or self.created is None:
            return None
        fmt = self.created["format"]
        now = self.current_key  # a player's earlier rounds count under the key it has now (``rekeyed``)
        history = [pr.Pairing([[now(k) for k in t["players"]] for t in r.tables],
                              [now(k) for k in (*r.byes, *r.extra_byes)]) for r in self.rounds]
        assert self._tally is not None
        ranking = self._tally.rows(self.created["tie_breaks"], seed, keys_only=True)  # standings(public=False)'s
        return pr.pair_round(fmt["kind"], round_no=len(self.rounds) + 1, players=self.keys,
                             active=self.active_players(), allowed=fmt["table_sizes"], rounds=fmt["rounds"],
                             history=history, ranking=ranking, seed=seed, swiss_rule=fmt.get("pairing", 1))

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
            # an open registration closes itself when full; at `closes` or on the organiser's word the service
            # writes it (the time and the signature are the service's to bring)
            return {"type": "registration_closed", "reason": "full"} \
                if self.registration_open and self.registration_full() else None
        if self.status == CANCELLED:
            return {"type": "revealed", "server_seed": self.server_seed.hex(), "reason": "cancelled"} \
                if self.server_seed is not None else None
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
                "registration": created.get("registration"), "closes": created.get("closes"),
                "max_players": created.get("max_players"),
                "bye_points": created.get("bye_points"), "tie_breaks": created.get("tie_breaks"),
                "rounds": [r.to_dict() for r in self.rounds],
                "standings": self.standings() if self.created else []}
