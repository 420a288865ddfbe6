"""One game of 5 Towers: a pure state machine over bids, passes and builds.

Internally a card is an ``int`` (its index in the canonical card order, see :mod:`.cards`); ids appear
only at the edges (moves in, ``view``/``result``/``legal_moves`` out). The deck is a list, top card first.

A round: reveal ``min(5, deck)`` cards (FT-G3), bidding (FT-R1, FT-G1, FT-G2), then either the highest
bidder builds (FT-R2–R4) or the round ends at once (FT-R7); clean-up (FT-R6); at the end of the round
whose reveal emptied the deck, the discard pile becomes the new deck (FT-R8) the first time, and the
game ends the second time (FT-E1).
"""

from __future__ import annotations

from typing import Any

from ..base import Game
from ..errors import GameOver, IllegalMove
from ..randomness import Rng
from .building import EMPTY, SPIRE, longest_chain, placeable
from .cards import CardRules
from .scoring import score

BIDDING = "bidding"
BUILDING = "building"
OVER = "over"

_BID_KEYS = frozenset(("type", "amount"))
_PASS_KEYS = frozenset(("type",))
_BUILD_KEYS = frozenset(("type", "cards", "demolish"))
_BUILD_KEYS_SHORT = frozenset(("type", "cards"))


def _malformed(message: str) -> IllegalMove:
    return IllegalMove("move/malformed", None, message)


class FiveTowersGame(Game):
    """A game in progress. Create it with :meth:`FiveTowers.new_game`."""

    __slots__ = (
        "_bids", "_capacity", "_deck", "_demolished", "_discard", "_display", "_emptied", "_exhaustions",
        "_groups", "_high", "_high_bidder", "_last_round", "_n", "_phase", "_recorded_reshuffles",
        "_reshuffles_done", "_round", "_rules", "_seed", "_start", "_towers", "_turn", "_turns",
    )

    def __init__(self, rules: CardRules, players: int, deck: list[int], seed: bytes | None,
                 recorded_reshuffles: list[list[int]] | None):
        self._rules = rules
        self._n = players
        self._deck = deck
        self._seed = seed
        self._recorded_reshuffles = recorded_reshuffles
        self._reshuffles_done = 0
        self._display: list[int] = []
        self._discard: list[int] = []
        self._towers: list[list[list[int]]] = [[[] for _ in rules.suits] for _ in range(players)]
        self._demolished: list[list[int]] = [[] for _ in range(players)]
        self._exhaustions = 0
        self._emptied = False
        self._round = 0
        self._start = 0  # FT-S3: seat 0 is the first start player
        self._last_round: dict[str, Any] | None = None
        self._phase = BIDDING
        self._start_round()

    # ------------------------------------------------------------------ round structure

    def _start_round(self) -> None:
        self._round += 1
        deck = self._deck
        k = min(self._rules.display_size, len(deck))  # FT-G3, FT-E1: the last display may be short
        self._display = deck[:k]
        del deck[:k]
        self._emptied = not deck
        if self._emptied:
            self._exhaustions += 1
        self._phase = BIDDING
        self._turn: int | None = self._start  # None once the game is over
        self._turns = 0
        self._bids: list[tuple[int, int | None]] = []
        self._high = -1
        self._high_bidder: int | None = None
        self._capacity: dict[int, int] = {}
        groups: dict[int, list[int]] = {}
        suit_of, value_of = self._rules.suit_of, self._rules.value_of
        for card in self._display:
            groups.setdefault(suit_of[card], []).append(value_of[card])
        self._groups = [(suit, tuple(sorted(values))) for suit, values in groups.items()]

    def _next_deck(self, leftovers: list[int]) -> list[int] | None:
        """The deck after this round's clean-up if it reshuffles (FT-R8), else ``None``. Pure: checks only.

        The discard pile is shuffled in the order its cards were discarded (each round's leftovers in
        display order). A recorded order must be a permutation of that pile.
        """
        if not (self._emptied and self._exhaustions == 1):
            return None
        pile = self._discard + leftovers
        recorded = self._recorded_reshuffles
        if recorded is not None and len(recorded) > self._reshuffles_done:
            order = recorded[self._reshuffles_done]
            if sorted(order) != sorted(pile):
                ids = self._rules.ids
                missing = sorted(ids[c] for c in set(pile) - set(order))
                extra = sorted(ids[c] for c in set(order) - set(pile))
                raise IllegalMove(
                    "reshuffle/mismatch", "FT-R8",
                    "the recorded reshuffle (options['reshuffles'][0]) is not an order of the discard pile",
                    {"missing": missing, "not_in_discard": extra},
                )
            return list(order)
        if self._seed is None:  # new_game refuses this combination; kept as a guard
            raise IllegalMove("reshuffle/no_order", "FT-R8", "no seed and no recorded order for the reshuffle")
        return Rng(self._seed, f"reshuffle/{self._reshuffles_done + 1}").shuffle(pile)

    def _end_round(self, new_deck: list[int] | None) -> None:
        self._discard.extend(self._display)  # FT-R6: leftovers go to the face-up discard pile
        self._display = []
        if self._emptied:
            if self._exhaustions == 1:
                assert new_deck is not None
                self._deck = new_deck  # FT-R8
                self._discard = []
                self._reshuffles_done += 1
                if not new_deck:
                    # Our ruling: an empty discard pile gives an empty deck, which has run out again at
                    # once; the game ends here as at the second exhaustion (FT-E1).
                    self._exhaustions = 2
            if self._exhaustions >= 2:
                self._phase = OVER  # FT-E1: the discard pile is not shuffled again
                self._turn = None
                return
        self._start_round()

    # ------------------------------------------------------------------ Game API

    def to_move(self) -> int | None:
        return self._turn

    def is_over(self) -> bool:
        return self._phase is OVER

    def copy(self) -> FiveTowersGame:
        other = object.__new__(FiveTowersGame)
        other._rules = self._rules
        other._n = self._n
        other._deck = self._deck[:]
        other._seed = self._seed
        other._recorded_reshuffles = self._recorded_reshuffles  # never mutated
        other._reshuffles_done = self._reshuffles_done
        other._display = self._display[:]
        other._discard = self._discard[:]
        other._towers = [[tower[:] for tower in seat] for seat in self._towers]
        other._demolished = [pile[:] for pile in self._demolished]
        other._exhaustions = self._exhaustions
        other._emptied = self._emptied
        other._round = self._round
        other._start = self._start
        other._last_round = self._last_round  # never mutated
        other._phase = self._phase
        other._turn = self._turn
        other._turns = self._turns
        other._bids = self._bids[:]
        other._high = self._high
        other._high_bidder = self._high_bidder
        other._capacity = dict(self._capacity)
        other._groups = self._groups  # never mutated
        return other

    def max_buildable(self, seat: int) -> int:
        """How many of the display's cards ``seat`` could take and build, with at most one demolition (FT-G1).

        Suits are independent, so this is the sum over suits of the longest buildable chain, plus the
        best gain a single demolition (of a top card that is not a spire, FT-R3) gives in one suit.
        Cached for the round: towers do not change while bidding.
        """
        cached = self._capacity.get(seat)
        if cached is not None:
            return cached
        towers = self._towers[seat]
        value_of = self._rules.value_of
        total = gain = 0
        for suit, values in self._groups:
            tower = towers[suit]
            top = value_of[tower[-1]] if tower else EMPTY
            best = longest_chain(top, values)
            total += best
            if tower and top != SPIRE and best < len(values):
                below = value_of[tower[-2]] if len(tower) > 1 else EMPTY
                better = longest_chain(below, values) - best
                gain = max(gain, better)
        self._capacity[seat] = total + gain
        return total + gain

    def play(self, seat: int, move: dict[str, Any]) -> None:
        """Apply ``move`` for ``seat``, or raise :class:`IllegalMove` and change nothing."""
        if self._phase is OVER:
            raise GameOver()
        if type(move) is not dict:
            raise _malformed("a move must be a JSON object")
        kind = move.get("type")
        if type(seat) is not int:
            raise _malformed("seat must be an integer")
        if kind == "bid":
            if move.keys() != _BID_KEYS:
                raise _malformed("a bid is {'type': 'bid', 'amount': n} and nothing else")
            amount = move["amount"]
            if type(amount) is not int:
                raise _malformed("'amount' must be an integer")
            self._check_turn(seat)
            self._play_bid(seat, amount)
        elif kind == "pass":
            if move.keys() != _PASS_KEYS:
                raise _malformed("a pass is {'type': 'pass'} and nothing else")
            self._check_turn(seat)
            self._play_pass(seat)
        elif kind == "build":
            keys = move.keys()
            if keys not in (_BUILD_KEYS, _BUILD_KEYS_SHORT):
                raise _malformed("a build is {'type': 'build', 'cards': [...], 'demolish': suit or null}")
            cards = move["cards"]
            if type(cards) is not list or not all(type(card) is str for card in cards):
                raise _malformed("'cards' must be a list of card ids")
            demolish = move.get("demolish")
            suit = None
            if demolish is not None:
                suit = self._rules.suit_index.get(demolish) if type(demolish) is str else None
                if suit is None:
                    raise _malformed(f"'demolish' must be null or a suit id ({', '.join(self._rules.suit_ids)})")
            self._check_turn(seat)
            self._play_build(seat, cards, suit)
        else:
            raise _malformed("'type' must be 'bid', 'pass' or 'build'")

    def _check_turn(self, seat: int) -> None:
        if seat != self._turn:
            rule = "FT-R1" if self._phase is BIDDING else "FT-R2"
            raise IllegalMove("move/not_your_turn", rule, f"it is seat {self._turn}'s turn, not seat {seat}'s",
                              {"to_move": self._turn})

    # ------------------------------------------------------------------ bidding

    def _play_bid(self, seat: int, amount: int) -> None:
        if self._phase is not BIDDING:
            raise IllegalMove("move/wrong_phase", "FT-R4", "bidding is over: the highest bidder builds now")
        top = len(self._display)
        if amount < 0 or amount > top:
            raise IllegalMove("bid/out_of_range", "FT-R1" if top == 5 else "FT-E1",
                              f"a bid is a number from 0 to {top}, the number of cards in the display",
                              {"max": top})
        if self._turns and amount <= self._high:
            raise IllegalMove("bid/not_higher", "FT-G2" if amount == 0 else "FT-R1",
                              f"a bid must be higher than the current highest bid {self._high}",
                              {"high_bid": self._high})
        if amount > self.max_buildable(seat):
            can = self.max_buildable(seat)
            raise IllegalMove("bid/unbuildable", "FT-G1",
                              f"seat {seat} could build at most {can} of the display's cards, even with a demolition",
                              {"max_buildable": can})
        self._high = amount
        self._high_bidder = seat
        self._bids.append((seat, amount))
        self._after_bidding_turn(None)

    def _play_pass(self, seat: int) -> None:
        if self._phase is not BIDDING:
            raise IllegalMove("move/wrong_phase", "FT-R4", "bidding is over: the highest bidder builds now")
        if not self._turns:
            raise IllegalMove("bid/start_must_bid", "FT-R1", "the start player must bid (0 is allowed), not pass")
        new_deck = None
        if self._turns + 1 == self._n and self._high == 0:
            new_deck = self._next_deck(self._display)  # may refuse (recorded reshuffle mismatch)
        self._bids.append((seat, None))
        self._after_bidding_turn(new_deck)

    def _after_bidding_turn(self, new_deck: list[int] | None) -> None:
        self._turns += 1
        if self._high < len(self._display) and self._turns < self._n:
            assert self._turn is not None  # bidding: there is a seat to move
            self._turn = (self._turn + 1) % self._n  # FT-R1: clockwise = next seat
            return
        if self._high == 0:
            # FT-R7 / FT-G2: the start player's 0 stood; the display is discarded, the start player stays.
            self._last_round = {"round": self._round, "outcome": "all_passed", "start_player": self._start,
                                "builder": None, "cards": [], "demolished": None,
                                "discarded": [self._rules.ids[c] for c in self._display]}
            self._end_round(new_deck)
        else:
            self._phase = BUILDING
            self._turn = self._high_bidder

    # ------------------------------------------------------------------ building

    def _play_build(self, seat: int, card_ids: list[str], demolish: int | None) -> None:
        if self._phase is not BUILDING:
            raise IllegalMove("move/wrong_phase", "FT-R1", "no one has won the bidding yet: bid or pass")
        rules = self._rules
        if len(card_ids) != self._high:
            raise IllegalMove("build/wrong_count", "FT-R2",
                              f"take exactly {self._high} cards (your bid), not {len(card_ids)}",
                              {"bid": self._high})
        display = self._display
        cards = []
        index = rules.index
        for card_id in card_ids:
            card = index.get(card_id)
            if card is None or card not in display:
                raise IllegalMove("build/not_in_display", "FT-R2", f"{card_id!r} is not in the display",
                                  {"card": card_id})
            if card in cards:
                raise IllegalMove("build/duplicate_card", "FT-R2", f"{card_id!r} is named twice", {"card": card_id})
            cards.append(card)
        towers = self._towers[seat]
        value_of, suit_of = rules.value_of, rules.suit_of
        tops = [value_of[tower[-1]] if tower else EMPTY for tower in towers]
        if demolish is not None:
            tower = towers[demolish]
            suit_id = rules.suit_ids[demolish]
            if not tower:
                raise IllegalMove("build/demolish_no_tower", "FT-R3", f"you have no {suit_id} tower to demolish from",
                                  {"suit": suit_id})
            if tops[demolish] == SPIRE:
                raise IllegalMove("build/demolish_spire", "FT-R3",
                                  f"the top of your {suit_id} tower is a spire (0), which may never be demolished",
                                  {"suit": suit_id, "card": rules.ids[tower[-1]]})
            tops[demolish] = value_of[tower[-2]] if len(tower) > 1 else EMPTY
        for card in cards:
            suit = suit_of[card]
            value, top = value_of[card], tops[suit]
            if not placeable(value, top):
                suit_id = rules.suit_ids[suit]
                details = {"card": rules.ids[card], "on": top, "suit": suit_id}
                if top == SPIRE:
                    raise IllegalMove("build/on_spire", "FT-B4",
                                      f"nothing can go on the spire (0) of the {suit_id} tower, not even a 9", details)
                raise IllegalMove("build/order", "FT-B4", f"{value} cannot go on {top} in the {suit_id} tower", details)
            tops[suit] = value
        leftovers = [card for card in display if card not in cards]
        new_deck = self._next_deck(leftovers)  # may refuse (recorded reshuffle mismatch); nothing changed yet
        # --- apply
        demolished_id = None
        if demolish is not None:
            gone = towers[demolish].pop()
            self._demolished[seat].append(gone)  # FT-R3: face down on the own demolition pile
            demolished_id = rules.ids[gone]
        for card in cards:
            towers[suit_of[card]].append(card)
        self._display = leftovers
        self._last_round = {"round": self._round, "outcome": "built", "start_player": self._start, "builder": seat,
                            "cards": list(card_ids), "demolished": demolished_id,
                            "discarded": [rules.ids[c] for c in leftovers]}
        self._start = (seat + 1) % self._n  # FT-R6: the player to the builder's left
        self._end_round(new_deck)

    # ------------------------------------------------------------------ legal moves

    def legal_moves(self) -> list[dict[str, Any]]:
        """Every legal move of the seat to move, exactly; ``[]`` when the game is over.

        Bidding: the bids from the lowest allowed to the most the seat can build (FT-G1), and ``pass``
        unless the seat is the start player. Building: every card choice in every legal placement order
        with every demolition choice (``null`` first, then each suit whose top card is not a spire).
        A build may also be submitted without the ``demolish`` key, meaning null.
        """
        if self._phase is OVER:
            return []
        seat = self._turn
        assert seat is not None  # only a game that is over has no seat to move
        if self._phase is BIDDING:
            lowest = 0 if not self._turns else self._high + 1
            moves: list[dict[str, Any]] = [{"type": "bid", "amount": amount}
                                           for amount in range(lowest, self.max_buildable(seat) + 1)]
            if self._turns:
                moves.append({"type": "pass"})
            return moves
        return self._legal_builds(seat)

    def _legal_builds(self, seat: int) -> list[dict[str, Any]]:
        rules = self._rules
        value_of, suit_of, ids = rules.value_of, rules.suit_of, rules.ids
        towers = self._towers[seat]
        display = self._display
        need = self._high
        base_tops = [value_of[tower[-1]] if tower else EMPTY for tower in towers]
        out: list[dict[str, Any]] = []
        options: list[int | None] = [None]
        options += [suit for suit, tower in enumerate(towers) if tower and base_tops[suit] != SPIRE]
        chosen: list[int] = []

        def extend(tops: list[int], suit_id: str | None) -> None:
            if len(chosen) == need:
                out.append({"type": "build", "cards": [ids[c] for c in chosen], "demolish": suit_id})
                return
            for card in display:
                if card in chosen:
                    continue
                suit = suit_of[card]
                top = tops[suit]
                if placeable(value_of[card], top):
                    tops[suit] = value_of[card]
                    chosen.append(card)
                    extend(tops, suit_id)
                    chosen.pop()
                    tops[suit] = top

        for demolish in options:
            tops = base_tops[:]
            if demolish is not None:
                tower = towers[demolish]
                tops[demolish] = value_of[tower[-2]] if len(tower) > 1 else EMPTY
            extend(tops, None if demolish is None else rules.suit_ids[demolish])
        return out

    # ------------------------------------------------------------------ public state

    def view(self) -> dict[str, Any]:
        """The public state, JSON-safe (str keys, ints, strs, bools, lists, None). Nothing is hidden but the
        deck order (only its size is shown)."""
        rules = self._rules
        ids, suit_ids = rules.ids, rules.suit_ids
        bidding = []
        for seat, amount in self._bids:
            bidding.append({"seat": seat, "type": "pass"} if amount is None
                           else {"seat": seat, "type": "bid", "amount": amount})
        seats = []
        for seat in range(self._n):
            towers = {suit_ids[s]: [ids[c] for c in tower] for s, tower in enumerate(self._towers[seat]) if tower}
            seats.append({"seat": seat, "towers": towers, "demolished": [ids[c] for c in self._demolished[seat]]})
        in_bidding = self._phase is BIDDING
        return {
            "ruleset": rules.name,
            "players": self._n,
            "phase": self._phase,
            "round": self._round,
            "start_player": self._start,
            "to_move": self._turn,
            "is_over": self._phase is OVER,
            "display": [ids[c] for c in self._display],
            "max_bid": len(self._display) if self._phase is not OVER else 0,
            "high_bid": self._high if self._high >= 0 else None,
            "high_bidder": self._high_bidder,
            "bidding": bidding,
            "has_bid": [seat for seat, amount in self._bids if amount is not None],
            "passed": [seat for seat, amount in self._bids if amount is None],
            "awaiting": ([(self._start + i) % self._n for i in range(self._turns, self._n)]
                         if in_bidding else []),
            "seats": seats,
            "deck_count": len(self._deck),
            "discard": [ids[c] for c in self._discard],
            "exhaustions": self._exhaustions,
            "reshuffled": self._reshuffles_done > 0,
            "last_round": None if self._last_round is None else dict(self._last_round),
        }

    def result(self) -> dict[str, Any]:
        """The final score breakdown (FT-E2–E5). Raises ``ValueError`` while the game is running."""
        if self._phase is not OVER:
            raise ValueError("the game is not over yet; result() is only available once is_over() is true")
        return score(self._rules, self._towers, self._demolished)

    def provisional_result(self) -> dict[str, Any]:
        """The score breakdown of the towers as they stand (FT-E2–E5 applied now); ``provisional`` is true
        while the game runs. Cards in the display, the deck or a hand count for nobody."""
        if self._phase is OVER:
            return self.result()
        return {**score(self._rules, self._towers, self._demolished), "provisional": True}

    def default_move(self) -> dict[str, Any]:
        """The move the referee plays for a seat out of time (docs/rules-fivetowers.md, "Default move"):
        in bidding ``pass`` (FT-R1), or the lowest bid for the start player, who may not pass (FT-R1, FT-G1:
        0 is always buildable); in building the first legal build in :meth:`legal_moves` order (FT-R2–R4:
        the display cards in display order, no demolition first)."""
        moves = self.legal_moves()
        if not moves:
            raise ValueError("the game is over: there is no move to default to")
        if self._phase is BIDDING and {"type": "pass"} in moves:
            return {"type": "pass"}
        return moves[0]

    # ------------------------------------------------------------------ helpers for tests and tools

    @property
    def players(self) -> int:
        return self._n
