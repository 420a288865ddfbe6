"""The players' own decisions (CONTRACT section 12): resignations, offers, answers and agreements.

A pure core beside ``timecontrol/``: :mod:`referee.replay` keeps a :class:`Decisions` in its fold and asks
the functions here who may offer what at a position, whether an offer has every answer it needs, and
how the seats rank once some resigned or all agreed; the verifier re-checks every entry through that same
fold. Nothing here reads Redis, a clock or the network. A :class:`Decisions` is immutable (every change
makes a new one), so a copied fold shares it safely and a plain move costs nothing but one test.

Rules (their ids are named in verdicts and results; ``docs/service.md`` "Resign, offers and answers"):

* DC-R1 — a seat still in the game may resign at any time after the start, whoever is to move. With
  two seats left the other wins and the game ends; with more the game goes on.
* DC-R2 — a resigned seat's turns are played by the ruleset's default move, as a forfeited seat's (TC-F1).
* DC-R3 — seats still in the game rank above every seat that left (resigned or forfeited); the seats
  that left rank among themselves by who left later (later is better). In a game where nobody
  resigned, forfeits rank as TC-F1 says.
* DC-O1 — at most one offer is pending per game; only a seat still in the game offers or answers.
* DC-O2 — an offer passes when every other seat still in the game has accepted it: the referee then
  writes ``agreed`` at once. It lapses at any decline, at the offerer's own ``accept: false``
  (withdrawn), and at any entry that changes the position or who is in the game: a ``move``, a
  ``timeout`` (its default move, or the forfeit that ends the game), an ``auto_move`` (a forfeited or
  resigned seat's default move), a resignation, a withdrawal (``forfeited``, reason ``withdrawn``). An
  answer to a lapsed offer is refused (``offer/none_pending``, naming where it lapsed), and so is an
  ``agreed`` naming it: an offer is made for one position and answered for that one only.
* DC-D1 — ``draw``: every seat still in the game shares first place.
* DC-E1 — ``end``: the game ends now, scored as it stands (the ruleset's provisional result).
* DC-A1 — ``abort``: only before every seat has had a move applied, never in a tournament game; the
  game ends with no result and its seed is revealed.
* DC-T1 — ``takeback``: only by the seat whose ``move`` entry is the last applied move; agreed, that
  move is void and the game continues from the position before it: the seats that have moved are
  counted again without it (so an abort may be offered again, DC-A1), and the seat's clock gets back
  nothing but what the move itself earned — a bank's increment, the reset of its timeouts in a row
  (TC-D3 in ``docs/timecontrol.md``). Like any offer it lapses at any applied move (DC-O2).
* DC-T2 — a move that revealed something hidden cannot be taken back: one after which the deck holds
  another number of cards or was reshuffled (:func:`revealing`; the rule ids of each ruleset in
  :data:`REVEAL_RULES`).

>>> d = Decisions.start(3)
>>> offer_problem(d, "draw", 0, standing=[0, 1, 2], tournament=False, all_moved=True) is None
True
>>> d = d.offered(Offer(position=9, seat=0, kind="draw"))
>>> offer_problem(d, "end", 1, standing=[0, 1, 2], tournament=False, all_moved=True)[0]
'offer/pending'
>>> d = d.answered(1, True)
>>> agreed(d.pending, [0, 1, 2]), agreed(d.answered(2, True).pending, [0, 1, 2])
(False, True)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

OFFER_KINDS = ("draw", "end", "abort", "takeback")

#: Which moves reveal something hidden, per ruleset (DC-T2): the rule that draws from the deck, and the
#: rule that reshuffles it. ``docs/rules-towerup.md`` and ``docs/rules-fivetowers.md`` say the same.
REVEAL_RULES: dict[str, tuple[str, str]] = {
    "towerup": ("TU-T1", "TU-G1"),     # a take refills its market slot from the deck; an empty deck reshuffles
    "fivetowers": ("FT-G3", "FT-R8"),  # a round's end deals the next display; the first exhaustion reshuffles
}


@dataclass(frozen=True)
class Offer:
    """A pending offer: its log position (its id), who made it, its kind, who accepted it so far, and for
    a take-back the position of the move it would void and the game as it was before that move."""

    position: int
    seat: int
    kind: str
    accepted: frozenset[int] = frozenset()
    target: int | None = None
    before: Any = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"offer": self.position, "seat": self.seat, "kind": self.kind,
                               "accepted": sorted(self.accepted)}
        if self.target is not None:
            out["move"] = self.target
        return out


@dataclass(frozen=True)
class Decisions:
    """What the decisions entries of a log have done so far (immutable: each change is a new value)."""

    players: int
    #: log position of each seat's resignation, or None
    resigned_at: tuple[int | None, ...] = ()
    pending: Offer | None = None
    #: the last offer that lapsed or passed: ``{offer, kind, outcome, position}`` (outcome ``declined``,
    #: ``withdrawn``, ``lapsed``, ``agreed``)
    last: dict[str, Any] | None = None
    #: the agreement that ended the game (``draw``, ``end``, ``abort``): ``{kind, offer, position}``
    ended: dict[str, Any] | None = None
    #: positions of the moves voided by agreed take-backs
    voided: tuple[int, ...] = ()

    @classmethod
    def start(cls, players: int) -> Decisions:
        return cls(players=players, resigned_at=(None,) * players)

    # -- changes ------------------------------------------------------------------------------------
    def resigned(self, seat: int, position: int) -> Decisions:
        """Seat ``seat`` resigns at ``position`` (DC-R1); a pending offer lapses (DC-O2)."""
        marks = list(self.resigned_at)
        marks[seat] = position
        out = replace(self, resigned_at=tuple(marks))
        return out.lapsed("lapsed", position) if out.pending is not None else out

    def offered(self, offer: Offer) -> Decisions:
        return replace(self, pending=offer)

    def answered(self, seat: int, accept: bool) -> Decisions:
        """``seat``'s answer to the pending offer: an acceptance is recorded; a ``false`` declines it (or,
        from the offerer, withdraws it)."""
        offer = self.pending
        assert offer is not None
        if accept:
            return replace(self, pending=replace(offer, accepted=offer.accepted | {seat}))
        return self.lapsed("withdrawn" if seat == offer.seat else "declined", None)

    def lapsed(self, outcome: str, position: int | None) -> Decisions:
        offer = self.pending
        assert offer is not None
        return replace(self, pending=None, last={"offer": offer.position, "kind": offer.kind, "outcome": outcome,
                                                 "position": position})

    def agreed(self, position: int) -> Decisions:
        """The pending offer passed at ``position`` (the ``agreed`` entry)."""
        offer = self.pending
        assert offer is not None
        out = self.lapsed("agreed", position)
        if offer.kind == "takeback":
            assert offer.target is not None
            return replace(out, voided=(*out.voided, offer.target))
        return replace(out, ended={"kind": offer.kind, "offer": offer.position, "position": position})

    # -- reads --------------------------------------------------------------------------------------
    def has_left(self, seat: int) -> bool:
        return self.resigned_at[seat] is not None

    @property
    def any_resigned(self) -> bool:
        return any(position is not None for position in self.resigned_at)

    @property
    def shapes_result(self) -> bool:
        """Whether the result is not simply the engine's (with forfeits): a seat resigned, or a draw or an
        end was agreed."""
        return self.any_resigned or (self.ended is not None and self.ended["kind"] in ("draw", "end"))

    def view(self) -> dict[str, Any]:
        """JSON-safe, for ``GET /games/{id}``: the pending offer, the last one settled, who resigned."""
        return {"pending": self.pending.to_dict() if self.pending is not None else None,
                "last": dict(self.last) if self.last is not None else None,
                "resigned": [seat for seat, at in enumerate(self.resigned_at) if at is not None],
                "voided": list(self.voided)}


def offer_problem(decisions: Decisions, kind: Any, seat: int, *, standing: list[int], tournament: bool,
                  all_moved: bool, last_move: tuple[int, str, int] | None = None,
                  revealed_rule: str | None = None) -> tuple[str, str, str] | None:
    """``(code, message, rule)`` of why ``seat`` may not offer ``kind`` now, or None.

    ``standing``: the seats still in the game; ``all_moved``: every seat has had a move applied;
    ``last_move``: ``(seat, entry type, position)`` of the last applied move; ``revealed_rule``: the rule
    by which that move revealed something hidden (:func:`revealing`), or None."""
    if kind not in OFFER_KINDS:
        return "offer/bad_kind", f"an offer is one of {', '.join(OFFER_KINDS)}, not {kind!r}", "DC-O1"
    if seat not in standing:
        return "decision/left", f"seat {seat} is no longer in the game", "DC-O1"
    if decisions.pending is not None:
        pending = decisions.pending
        return ("offer/pending", f"seat {pending.seat}'s {pending.kind} offer (position {pending.position}) "
                "is pending: one offer at a time", "DC-O1")
    if kind == "abort":
        if tournament:
            return "offer/not_allowed", "a tournament game cannot be aborted", "DC-A1"
        if all_moved:
            return "offer/not_allowed", "every seat has moved: the game can no longer be aborted", "DC-A1"
    if kind == "takeback":
        if last_move is None or last_move[1] != "move" or last_move[0] != seat:
            return ("offer/not_allowed", f"only the seat whose move is the last applied one may ask to take it "
                    f"back, and seat {seat}'s is not", "DC-T1")
        if revealed_rule is not None:
            return ("offer/not_allowed", f"the move at position {last_move[2]} revealed something hidden "
                    f"({revealed_rule}): it cannot be taken back", "DC-T2")
    return None


def answer_problem(decisions: Decisions, offer: Any, seat: int, accept: Any, *,
                   standing: list[int]) -> tuple[str, str, str] | None:
    """``(code, message, rule)`` of why ``seat`` may not give this answer now, or None."""
    if not isinstance(accept, bool):
        return "answer/bad_accept", "accept is true or false", "DC-O2"
    if seat not in standing:
        return "decision/left", f"seat {seat} is no longer in the game", "DC-O1"
    pending = decisions.pending
    if pending is None or pending.position != offer:
        return not_pending(decisions, offer)
    if seat == pending.seat and accept:
        return "answer/own_offer", "the offerer does not accept its own offer (accept: false withdraws it)", "DC-O2"
    if seat in pending.accepted:
        return "answer/duplicate", f"seat {seat} has accepted this offer already", "DC-O2"
    return None


def lapsed_offer(decisions: Decisions, offer: Any) -> dict[str, Any] | None:
    """``{offer, position}`` when the offer at ``offer`` is the last one settled and it lapsed (DC-O2) at the
    entry at ``position``; else None."""
    last = decisions.last
    if last is None or last.get("offer") != offer or last.get("outcome") != "lapsed":
        return None
    return {"offer": last["offer"], "position": last["position"]}


def not_pending(decisions: Decisions, offer: Any) -> tuple[str, str, str]:
    """``(code, message, rule)`` of an answer to ``offer`` when it is not the pending one: ``offer/none_pending``,
    saying where the offer lapsed when it did (DC-O2).

    >>> d = Decisions.start(2).offered(Offer(position=7, seat=0, kind="draw")).lapsed("lapsed", 8)
    >>> not_pending(d, 7)[1]
    'no offer at position 7 is pending: it lapsed at position 8, an entry that changed the position'
    """
    pending = decisions.pending
    lapsed = lapsed_offer(decisions, offer)
    if lapsed is not None:
        return ("offer/none_pending", f"no offer at position {offer} is pending: it lapsed at position "
                f"{lapsed['position']}, an entry that changed the position", "DC-O2")
    now = f" (the pending offer is at position {pending.position})" if pending is not None else ""
    return "offer/none_pending", f"no offer at position {offer!r} is pending{now}", "DC-O2"


def needed(offer: Offer, standing: list[int]) -> frozenset[int]:
    """The seats whose acceptance an offer needs: every other seat still in the game (DC-O2)."""
    return frozenset(seat for seat in standing if seat != offer.seat)


def agreed(offer: Offer | None, standing: list[int]) -> bool:
    """Whether ``offer`` has every acceptance it needs (DC-O2)."""
    return offer is not None and needed(offer, standing) <= offer.accepted


def revealing(ruleset: str, before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """The rule by which a move revealed something hidden (DC-T2), from the public views of the position
    before and after it: the deck holds another number of cards (a card was drawn or dealt) or was
    reshuffled; None for a quiet move.

    >>> revealing("towerup", {"deck_count": 40, "reshuffles": 0}, {"deck_count": 39, "reshuffles": 0})
    'TU-T1'
    >>> revealing("fivetowers", {"deck_count": 0, "reshuffled": False}, {"deck_count": 0, "reshuffled": True})
    'FT-R8'
    >>> revealing("fivetowers", {"deck_count": 60, "reshuffled": False}, {"deck_count": 60, "reshuffled": False})
    """
    draw, reshuffle = REVEAL_RULES.get(ruleset, ("deck", "reshuffle"))
    for name in ("reshuffles", "reshuffled"):
        if before.get(name) != after.get(name):
            return reshuffle
    if before.get("deck_count") != after.get("deck_count"):
        return draw
    return None


def rank_decisions(result: dict[str, Any], decisions: Decisions, forfeited_at: list[int | None], *,
                   ended_early: bool) -> dict[str, Any]:
    """``result`` (the engine's result document, or its provisional one for a game ended early) with the
    decisions applied (DC-R3, DC-D1, DC-E1): every seat gets ``resigned``, ``forfeited``, its ``rank`` and
    ``basis`` (the rule and a short reason for where it ranks).

    >>> base = {"seats": [{"seat": s, "total": t, "rank": r} for s, t, r in [(0, 9, 1), (1, 5, 2), (2, 7, 2)]]}
    >>> d = Decisions.start(3).resigned(0, 12)
    >>> out = rank_decisions(base, d, [12, None, None], ended_early=False)
    >>> [(s["seat"], s["rank"], s["resigned"]) for s in out["seats"]]
    [(0, 3, True), (1, 1, False), (2, 1, False)]
    """
    out = copy.deepcopy(result)
    seats = out.get("seats") or []
    ended = decisions.ended or {}
    draw = ended.get("kind") == "draw"
    keys: dict[int, tuple[int, int]] = {}
    for entry in seats:
        seat = entry["seat"]
        resigned = decisions.resigned_at[seat] if seat < decisions.players else None
        forfeited = forfeited_at[seat] if seat < len(forfeited_at) and resigned is None else None
        entry["resigned"] = resigned is not None
        entry["forfeited"] = forfeited is not None
        left = resigned if resigned is not None else forfeited
        if left is not None:
            keys[seat] = (1, -left)  # DC-R3: below every seat still in the game; who left later ranks higher
            how = (f"resigned at position {left}" if resigned is not None
                   else f"forfeited on time at position {left}")
            rule = "DC-R3" if resigned is not None else "TC-F1"
            entry["basis"] = {"rule": rule, "reason": f"{how}: ranked below every seat still in the game, "
                                                      "and among the seats that left by who left later"}
        elif draw:
            keys[seat] = (0, 0)
            entry["basis"] = {"rule": "DC-D1", "reason": f"a draw was agreed at position {ended['position']}: "
                                                         "every seat still in the game shares first place"}
        else:
            keys[seat] = (0, entry.get("rank", 0))
            scored = "the position as it stood (provisional result)" if ended_early else "the final score"
            entry["basis"] = {"rule": "DC-R3" if decisions.any_resigned else "DC-E1",
                              "reason": f"still in the game: ranked among the seats still in it by {scored} "
                                        "and the ruleset's tie-breaks"}
    for entry in seats:
        key = keys[entry["seat"]]
        entry["rank"] = 1 + sum(1 for other in keys.values() if other < key)
    out["winners"] = [entry["seat"] for entry in seats if entry["rank"] == 1]
    out["resignations"] = [{"seat": seat, "position": position, "rule": "DC-R1"}
                           for seat, position in enumerate(decisions.resigned_at) if position is not None]
    if any(position is not None for position in forfeited_at):
        out["forfeits"] = [{"seat": seat, "position": position, "rule": "TC-F1"}
                           for seat, position in enumerate(forfeited_at)
                           if position is not None and decisions.resigned_at[seat] is None]
    if ended.get("kind") in ("draw", "end"):
        reason = ("drawn by agreement: every seat still in the game shares first place" if draw else
                  "ended by agreement: the position was scored as it stood (the ruleset's provisional result)")
        out["ended_by"] = {"rule": "DC-D1" if draw else "DC-E1", "reason": reason, "offer": ended["offer"],
                           "position": ended["position"]}
    elif ended_early:
        out["ended_by"] = {"rule": "DC-R1", "reason": "fewer than two seats remained in the game; the position "
                                                      "was scored as it stood"}
    return out
