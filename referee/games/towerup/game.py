"""A Tower Up game: the pure state machine behind ``ruleset("towerup").new_game(...)``.

State is kept in flat lists of small integers (colours are 0-3, sites and cards are indexes), so
``play`` is a handful of list operations and ``copy`` a few list copies. ``play`` validates the move
dict directly (it never generates the legal moves to do so) and mutates only after every check has
passed: an illegal move leaves the game exactly as it was.

Turn structure (TU-T*, TU-B*, TU-X*, TU-E*, TU-G*): a seat plays one action; after the action the
objectives of every player are checked (TU-G9), end triggers are noted (TU-E1, TU-E2, first one only,
TU-G6), and the star columns are evaluated once (TU-G5): a newly reached star column gives the same seat
one extra turn, which belongs to the same turn (TU-G7). The seat may decline it (``decline_extra``,
TU-X1) unless the game's option ``extra_turn`` is ``"mandatory"``. When the turn ends, a seat whose turn
was its last one counts its visible roofs for the cone.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, Final, Literal, TypeAlias

from ..base import Game
from ..errors import GameOver, IllegalMove
from ..randomness import Rng
from .data import (
    COLOR_INDEX,
    COLORS,
    FLOORS_PER_COLOR,
    ROOFS_PER_PLAYER,
    SUPPLY_LIMIT,
    WILD,
    WILD_NAME,
    Card,
    Side,
    TowerUpData,
)
from .objectives import Check, Presence, make_check
from .scoring import final_result

Phase: TypeAlias = Literal[0, 1, 2]
SETUP: Final = 0
PLAY: Final = 1
OVER: Final = 2
TriggerKind: TypeAlias = Literal["last_roof", "scarcity"]
LAST_ROOF: Final = "last_roof"
SCARCITY: Final = "scarcity"
_TRIGGER_RULE: dict[TriggerKind, str] = {LAST_ROOF: "TU-E1", SCARCITY: "TU-E2"}
_PHASE_NAMES: dict[Phase, str] = {SETUP: "setup", PLAY: "play", OVER: "over"}

#: ``(level, seat)`` of each roof on a site, bottom to top.
RoofStack: TypeAlias = tuple[tuple[int, int], ...]
#: ``(objective slot, chip value)`` of each chip a seat has won.
Chips: TypeAlias = tuple[tuple[int, int], ...]

_BUILD_KEYS = frozenset(("type", "site", "color", "roof"))
_TAKE_KEYS = frozenset(("type", "slot", "choose", "discard"))
_START_KEYS = frozenset(("type", "placements"))
_PLACEMENT_KEYS = frozenset(("site", "color"))


def _malformed(message: str) -> IllegalMove:
    return IllegalMove("move/malformed", None, message)


def _color_list(counts: list[int] | tuple[int, ...]) -> dict[str, int]:
    return {COLORS[c]: counts[c] for c in range(4)}


class GameConfig:
    """What a game and all its copies share and never change: data, players, options, seed."""

    __slots__ = (
        "cone_max",
        "data",
        "extra_start_floors",
        "extra_turn_optional",
        "last_column",
        "objective_checks",
        "objectives",
        "options",
        "players",
        "recorded",
        "recorded_reshuffles",
        "seed",
        "side",
        "star_count_at",
        "start_mode",
        "track_values",
    )

    data: TowerUpData
    players: int
    side: Side
    objective_checks: tuple[Check, ...]
    star_count_at: tuple[int, ...]
    objectives: tuple[int, ...]  # objective numbers, by slot
    start_mode: str
    extra_start_floors: int
    extra_turn_optional: bool
    seed: bytes | None
    recorded: bool
    recorded_reshuffles: tuple[tuple[int, ...], ...]
    options: dict[str, Any]
    track_values: tuple[int, ...]
    last_column: int
    cone_max: int

    def __init__(
        self,
        *,
        data: TowerUpData,
        players: int,
        objectives: tuple[int, ...],
        start_mode: str,
        extra_start_floors: int,
        seed: bytes | None,
        extra_turn_optional: bool = True,
        recorded: bool,
        recorded_reshuffles: tuple[tuple[int, ...], ...],
        options: dict[str, Any],
    ):
        self.data = data
        self.players = players
        self.side, self.objective_checks, self.star_count_at = _static_tables(data, players, objectives)
        self.objectives = objectives
        self.start_mode = start_mode
        self.extra_start_floors = extra_start_floors
        self.extra_turn_optional = extra_turn_optional
        self.seed = seed
        self.recorded = recorded
        self.recorded_reshuffles = recorded_reshuffles
        self.options = options
        self.track_values = data.track_values
        self.last_column = len(data.track_values) - 1
        self.cone_max = data.cone_max


_STATIC: dict[tuple[int, int, tuple[int, ...]], tuple[TowerUpData, Side, tuple[Check, ...], tuple[int, ...]]] = {}


def _static_tables(data: TowerUpData, players: int, objectives: tuple[int, ...]) -> tuple[
        Side, tuple[Check, ...], tuple[int, ...]]:
    """Board side, objective predicates and star counts per column: computed once per data and set-up."""
    key = (id(data), players, objectives)
    hit = _STATIC.get(key)
    if hit is None or hit[0] is not data:
        side = next(side for side in data.sides.values() if players in side.players)
        checks = tuple(make_check(data.objectives[number], side) for number in objectives)
        stars = data.track_stars
        star_count_at = tuple(sum(1 for s in stars if s <= pos) for pos in range(len(data.track_values)))
        hit = _STATIC[key] = (data, side, checks, star_count_at)
    return hit[1], hit[2], hit[3]


class TowerUpGame(Game):
    """One game of Tower Up. Create it with ``ruleset("towerup").new_game(...)``."""

    __slots__ = (
        "achieved",
        "actions",
        "box",
        "cfg",
        "checked",
        "chips",
        "chips_left",
        "color",
        "cone",
        "deck",
        "discard",
        "extra_turn",
        "height",
        "last_queue",
        "last_round",
        "loco",
        "market",
        "phase",
        "presence",
        "reshuffles",
        "roofs",
        "roofs_left",
        "seat",
        "star_mark",
        "start_pending",
        "supply",
        "trigger",
        "turn_is_last",
    )

    # Colours, sites and cards are indexes (see the module docstring); a site without a building has colour -1,
    # an empty market slot card -1. Per-seat lists have one entry per seat, ``supply`` and ``loco`` four
    # (one per colour: ``4 * seat + colour``).
    cfg: GameConfig
    color: list[int]
    height: list[int]
    roofs: list[RoofStack]
    box: list[int]
    supply: list[int]
    roofs_left: list[int]
    loco: list[int]
    star_mark: list[int]
    presence: list[Presence]
    checked: list[int]
    achieved: list[int]  # bit ``slot`` set: the seat met the objective in that slot
    chips: list[Chips]
    chips_left: list[tuple[int, ...]]
    market: list[int]
    deck: list[int]  # top of the deck last
    discard: list[int]
    reshuffles: int
    start_pending: tuple[int, ...]  # colour codes, WILD included
    trigger: tuple[TriggerKind, int] | None
    last_round: bool
    last_queue: tuple[int, ...]
    turn_is_last: bool
    cone: list[int | None]
    extra_turn: bool
    actions: int
    phase: Phase
    seat: int

    # ------------------------------------------------------------------ construction

    @classmethod
    def start(cls, cfg: GameConfig, deck_top_first: list[int]) -> TowerUpGame:
        """Set up a game (TU-S1 to TU-S8) from a full deck order, top card first."""
        n = cfg.players
        sites = len(cfg.side.site_ids)
        game = cls.__new__(cls)
        game.cfg = cfg
        game.color = [-1] * sites
        game.height = [0] * sites
        game.roofs = [()] * sites
        game.box = [FLOORS_PER_COLOR - n] * 4  # TU-S8: one floor of each colour to every player
        game.supply = [1] * (4 * n)
        game.roofs_left = [ROOFS_PER_PLAYER] * n
        game.loco = [0] * (4 * n)
        game.star_mark = [0] * n
        game.presence = [()] * n
        game.checked = [0] * (n + 1)  # roofs of each seat at the last objective check; then all roofs placed
        game.achieved = [0] * n
        game.chips = [()] * n
        chips = cfg.data.chips_by_players[n]
        game.chips_left = [chips] * len(cfg.objectives)
        game.market = list(deck_top_first[:3])
        extra = deck_top_first[3:3 + cfg.extra_start_floors]
        rest = deck_top_first[3 + cfg.extra_start_floors:]
        if extra:
            # TU-S4: the extra cards only name colours; they are shuffled back into the deck
            rest = Rng(cfg.seed, "start-cards").shuffle(rest + extra)  # type: ignore[arg-type]
        game.deck = rest[::-1]  # top of the deck is the end of the list
        game.discard = []
        game.reshuffles = 0
        cards = cfg.data.cards
        game.start_pending = tuple(cards[c].floors[0] for c in game.market + extra)
        game.trigger = None
        game.last_round = False
        game.last_queue = ()
        game.turn_is_last = False
        game.cone = [None] * n
        game.extra_turn = False
        game.actions = 0
        game.phase = SETUP
        game.seat = n - 1  # TU-G3: the last seat places the start floors
        if cfg.start_mode == "random":
            game._place_random_start()
        return game

    def _place_random_start(self) -> None:
        """TU-G3 option: start floors placed from the game's randomness (label ``start-floors``).

        For each start floor in card order: a wildcard's colour is ``below(4)`` redrawn until some site
        can take it; the site is ``choice`` among the sites that can take the colour, in data order.
        """
        rng = Rng(self.cfg.seed, "start-floors")  # type: ignore[arg-type]
        sites = range(len(self.color))
        for code in self.start_pending:
            if not any(self._start_site_ok(s, c) for s in sites for c in ((0, 1, 2, 3) if code == WILD else (code,))):
                raise ValueError("start_floors: no site can take a random start floor")
            while True:
                c = rng.below(4) if code == WILD else code
                candidates = [s for s in sites if self._start_site_ok(s, c)]
                if candidates:
                    break
            site = rng.choice(candidates)
            self.color[site] = c
            self.height[site] = 1
            self.box[c] -= 1
        self.start_pending = ()
        self.phase = PLAY
        self.seat = 0

    def copy(self) -> TowerUpGame:
        other = TowerUpGame.__new__(TowerUpGame)
        other.cfg = self.cfg
        other.color = self.color[:]
        other.height = self.height[:]
        other.roofs = self.roofs[:]
        other.box = self.box[:]
        other.supply = self.supply[:]
        other.roofs_left = self.roofs_left[:]
        other.loco = self.loco[:]
        other.star_mark = self.star_mark[:]
        other.presence = self.presence[:]
        other.checked = self.checked[:]
        other.achieved = self.achieved[:]
        other.chips = self.chips[:]
        other.chips_left = self.chips_left[:]
        other.market = self.market[:]
        other.deck = self.deck[:]
        other.discard = self.discard[:]
        other.reshuffles = self.reshuffles
        other.start_pending = self.start_pending
        other.trigger = self.trigger
        other.last_round = self.last_round
        other.last_queue = self.last_queue
        other.turn_is_last = self.turn_is_last
        other.cone = self.cone[:]
        other.extra_turn = self.extra_turn
        other.actions = self.actions
        other.phase = self.phase
        other.seat = self.seat
        return other

    # ------------------------------------------------------------------ simple queries

    def to_move(self) -> int | None:
        return None if self.phase == OVER else self.seat

    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def players(self) -> int:
        return self.cfg.players

    # ------------------------------------------------------------------ play

    def play(self, seat: int, move: dict[str, Any]) -> None:
        """Apply ``move`` for ``seat`` or raise :class:`IllegalMove` and change nothing."""
        if self.phase == OVER:
            raise GameOver()
        if seat != self.seat or type(seat) is not int:
            raise IllegalMove("move/not_your_turn", None, f"it is seat {self.seat}'s turn, not seat {seat!r}'s",
                              {"to_move": self.seat})
        if type(move) is not dict:
            raise _malformed("a move must be a JSON object")
        kind = move.get("type")
        if kind == "build":
            self._play_build(seat, move)
        elif kind == "take":
            self._play_take(seat, move)
        elif kind == "place_start":
            self._play_place_start(seat, move)
        elif kind == "pass":
            if len(move) != 1:
                raise _malformed("a pass has no other field than type")
            self._play_pass(seat)
        elif kind == "decline_extra":
            if len(move) != 1:
                raise _malformed("a decline_extra has no other field than type")
            self._play_decline_extra(seat)
        else:
            raise _malformed(f"unknown move type {kind!r}; expected place_start, take, build, pass or decline_extra")

    # --- build (TU-B1 to TU-B6, TU-G4)

    def _play_build(self, seat: int, move: dict[str, Any]) -> None:
        if len(move) != 4 or not _BUILD_KEYS.issuperset(move):
            raise _malformed("a build has exactly the fields type, site, color and roof")
        site_id = move["site"]
        cname = move["color"]
        roof_id = move["roof"]
        if type(site_id) is not str or type(roof_id) is not str or type(cname) is not str:
            raise _malformed("site, color and roof must be strings")
        c = COLOR_INDEX.get(cname)
        if c is None:
            raise _malformed(f"unknown colour {cname!r}; colours are {', '.join(COLORS)}")
        if self.phase == SETUP:
            raise IllegalMove("move/setup_pending", "TU-G3", "the start floors must be placed first")
        side = self.cfg.side
        site = side.site_index.get(site_id)
        if site is None:
            raise IllegalMove("build/unknown_site", "TU-C1", f"there is no site {site_id!r} on this board")
        if self.roofs_left[seat] == 0:
            raise IllegalMove("build/no_roof", "TU-G4", "you have no roof left, so you cannot build")
        color = self.color
        if color[site] >= 0:
            raise IllegalMove("build/site_taken", "TU-B1", f"site {site_id} is not empty")
        neighbours = [t for t in side.adjacency[site] if color[t] >= 0]
        if not neighbours:
            raise IllegalMove("build/not_adjacent", "TU-B1", f"site {site_id} is not adjacent to any building")
        base = 4 * seat
        supply = self.supply
        for t in neighbours:
            if color[t] == c:
                raise IllegalMove("build/same_color", "TU-B1",
                                  f"a {cname} building at {site_id} would be next to the {cname} building at "
                                  f"{side.site_ids[t]}")
        need = [0, 0, 0, 0]
        need[c] = 1
        if supply[base + c] < 1:
            raise IllegalMove("build/no_floor", "TU-B1", f"you have no {cname} floor to start a building")
        for t in neighbours:
            tc = color[t]
            need[tc] += 1
            if need[tc] > supply[base + tc]:
                raise IllegalMove("build/cannot_pay", "TU-B2",
                                  f"cannot pay the {COLORS[tc]} building at {side.site_ids[t]}",
                                  {"site": side.site_ids[t], "color": COLORS[tc]})
        roof = side.site_index.get(roof_id)
        if roof != site and roof not in neighbours:
            raise IllegalMove("build/bad_roof", "TU-B3",
                              f"the roof must go on the new building at {site_id} or on an adjacent building you "
                              f"just raised, not on {roof_id}")
        # -- every check passed: apply
        for k in range(4):
            if need[k]:
                supply[base + k] -= need[k]
        height = self.height
        color[site] = c
        height[site] = 1
        for t in neighbours:
            height[t] += 1
        level = height[roof]
        self.roofs[roof] += ((level, seat),)
        self.roofs_left[seat] -= 1
        self.presence[seat] += ((roof, level),)
        moved = self._advance(seat, color[roof], level)
        if self.roofs_left[seat] == 0 and self.trigger is None:
            self.trigger = (LAST_ROOF, seat)  # TU-E1
        self._end_action(seat, moved)

    def _advance(self, seat: int, c: int, steps: int) -> bool:
        """TU-B4/TU-T1: move a locomotive; steps beyond the end of the track are lost (TU-C4)."""
        i = 4 * seat + c
        old = self.loco[i]
        new = min(old + steps, self.cfg.last_column)
        self.loco[i] = new
        return new != old

    # --- take (TU-T1 to TU-T3, TU-G1, TU-G10)

    def _play_take(self, seat: int, move: dict[str, Any]) -> None:
        if "slot" not in move or not _TAKE_KEYS.issuperset(move):
            raise _malformed("a take has the fields type and slot, and optionally choose and discard")
        slot = move["slot"]
        if type(slot) is not int:
            raise _malformed("slot must be an integer (0, 1 or 2)")
        choose = move.get("choose")
        chosen: list[int] | None = None
        if "choose" in move:
            if type(choose) is not list or not all(type(x) is str and x in COLOR_INDEX for x in choose):
                raise _malformed(f"choose must be a list of colours ({', '.join(COLORS)})")
            chosen = [COLOR_INDEX[x] for x in choose]
        discard: list[int] | None = None
        if "discard" in move:
            raw = move["discard"]
            if type(raw) is not dict or not all(
                type(k) is str and k in COLOR_INDEX and type(v) is int for k, v in raw.items()
            ):
                raise _malformed("discard must map colours to whole numbers of floors")
            discard = [0, 0, 0, 0]
            for k, v in raw.items():
                discard[COLOR_INDEX[k]] = v
            if any(v < 1 for v in raw.values()):
                raise IllegalMove("take/bad_discard", "TU-T3", "discard only positive numbers of floors")
        if self.phase == SETUP:
            raise IllegalMove("move/setup_pending", "TU-G3", "the start floors must be placed first")
        if not 0 <= slot < len(self.market):
            raise IllegalMove("take/bad_slot", "TU-T1", f"slot must be 0, 1 or 2, not {slot}")
        ci = self.market[slot]
        if ci < 0:
            raise IllegalMove("take/empty_slot", "TU-G1", f"market slot {slot} is empty")
        card = self.cfg.data.cards[ci]
        gain, shortage, picks, rest = self._card_gain(card)
        if picks == 0:
            if chosen is not None:
                raise IllegalMove("take/choose_not_needed", "TU-T1",
                                  f"card {card.id} has no wildcard and the box supplies every floor: omit choose")
        else:
            if chosen is None or len(chosen) != picks:
                raise IllegalMove("take/choose_count", "TU-T2" if shortage else "TU-T1",
                                  f"card {card.id} needs choose with exactly {picks} colour(s) "
                                  f"({card.wild} wildcard(s), {shortage} floor(s) the box cannot supply)",
                                  {"picks": picks})
            picked = [0, 0, 0, 0]
            for c in chosen:
                picked[c] += 1
                if picked[c] > rest[c]:
                    raise IllegalMove("take/choose_unavailable", "TU-T2",
                                      f"the box has not enough {COLORS[c]} floors left for your choice")
            for c in range(4):
                gain[c] += picked[c]
        base = 4 * seat
        supply = self.supply
        total = sum(supply[base:base + 4]) + sum(gain)
        excess = total - SUPPLY_LIMIT
        if excess <= 0:
            if discard is not None:
                raise IllegalMove("take/discard_not_needed", "TU-T3",
                                  f"you will hold {total} floors, at most {SUPPLY_LIMIT}: omit discard")
        else:
            if discard is None or sum(discard) != excess:
                raise IllegalMove("take/discard_count", "TU-T3",
                                  f"you would hold {total} floors: discard exactly {excess} to get down to "
                                  f"{SUPPLY_LIMIT}", {"excess": excess})
            for c in range(4):
                if discard[c] > supply[base + c] + gain[c]:
                    raise IllegalMove("take/bad_discard", "TU-T3",
                                      f"you cannot return {discard[c]} {COLORS[c]} floors; you would hold "
                                      f"{supply[base + c] + gain[c]}")
        if not self.deck:
            self._check_reshuffle(ci)
        # -- every check passed: apply
        box = self.box
        for c in range(4):
            g = gain[c]
            if g:
                box[c] -= g
                supply[base + c] += g
        if discard is not None:  # TU-G10: part of the take
            for c in range(4):
                d = discard[c]
                if d:
                    box[c] += d
                    supply[base + c] -= d
        moved = False
        for c, steps in card.locomotives:
            moved = self._advance(seat, c, steps) or moved
        self.discard.append(ci)
        self.market[slot] = self._draw()
        if shortage and self.trigger is None:
            self.trigger = (SCARCITY, seat)  # TU-T2 -> TU-E2
        self._end_action(seat, moved)

    def _card_gain(self, card: Card) -> tuple[list[int], int, int, list[int]]:
        """Floors a card gives before choices: (fixed gain, shortage, picks to choose, box left per colour).

        Ruling (docs/rules-towerup.md): the card's coloured floors are taken first; each one the box cannot
        supply is a shortage (TU-T2). Then every wildcard and every shortage is one pick of any colour from
        what is left in the box; if the box holds fewer floors than picks, the player gets what is there.
        """
        box = self.box
        fixed = card.fixed
        b0, b1, b2, b3 = box
        f0, f1, f2, f3 = fixed
        if f0 <= b0 and f1 <= b1 and f2 <= b2 and f3 <= b3:  # the usual case: no shortage
            rest = [b0 - f0, b1 - f1, b2 - f2, b3 - f3]
            picks = card.wild
            if picks:
                picks = min(picks, rest[0] + rest[1] + rest[2] + rest[3])
            return [f0, f1, f2, f3], 0, picks, rest
        gain = [0, 0, 0, 0]
        shortage = 0
        for c in range(4):
            f = fixed[c]
            if f:
                have = box[c]
                if f <= have:
                    gain[c] = f
                else:
                    gain[c] = have
                    shortage += f - have
        rest = [box[c] - gain[c] for c in range(4)]
        picks = card.wild + shortage
        left = rest[0] + rest[1] + rest[2] + rest[3]
        picks = min(picks, left)
        return gain, shortage, picks, rest

    def _check_reshuffle(self, taken: int) -> None:
        """TU-G1: the refill after taking ``taken`` needs a reshuffle; make sure its order is known."""
        cfg = self.cfg
        k = self.reshuffles
        if k < len(cfg.recorded_reshuffles):
            pile = [*self.discard, taken]
            if sorted(cfg.recorded_reshuffles[k]) != sorted(pile):
                data = cfg.data
                raise IllegalMove("deck/reshuffle_mismatch", "TU-G1",
                                  f"recorded reshuffle {k + 1} is not an order of the discarded cards",
                                  {"discards": [data.cards[c].id for c in pile]})
        elif cfg.seed is None:
            raise IllegalMove("deck/reshuffle_unknown", "TU-G1",
                              f"the deck is empty and options.reshuffles gives no order for reshuffle {k + 1} "
                              "(a recorded game needs it, or a seed)")

    def _draw(self) -> int:
        """TU-S2/TU-T1 refill; TU-G1 reshuffles the discards (label ``reshuffle/<k>``) when the deck is empty."""
        if not self.deck:
            if not self.discard:
                return -1
            cfg = self.cfg
            k = self.reshuffles
            if k < len(cfg.recorded_reshuffles):
                order = list(cfg.recorded_reshuffles[k])
            else:
                order = Rng(cfg.seed, f"reshuffle/{k + 1}").shuffle(self.discard)  # type: ignore[arg-type]
            self.deck = order[::-1]
            self.discard = []
            self.reshuffles = k + 1
        return self.deck.pop()

    # --- start floors (TU-S3, TU-S4, TU-G3)

    def _start_site_ok(self, site: int, c: int) -> bool:
        if self.color[site] >= 0:
            return False
        color = self.color
        return all(color[t] != c for t in self.cfg.side.adjacency[site])

    def _play_place_start(self, seat: int, move: dict[str, Any]) -> None:
        if len(move) != 2 or not _START_KEYS.issuperset(move):
            raise _malformed("a place_start has exactly the fields type and placements")
        placements = move["placements"]
        if type(placements) is not list or not placements:
            raise _malformed("placements must be a non-empty list of {site, color}")
        parsed: list[tuple[str, int]] = []
        for p in placements:
            if type(p) is not dict or len(p) != 2 or not _PLACEMENT_KEYS.issuperset(p):
                raise _malformed("each placement has exactly the fields site and color")
            if type(p["site"]) is not str or type(p["color"]) is not str or p["color"] not in COLOR_INDEX:
                raise _malformed(f"a placement needs a site id and a colour ({', '.join(COLORS)})")
            parsed.append((p["site"], COLOR_INDEX[p["color"]]))
        if self.phase != SETUP:
            raise IllegalMove("place_start/not_setup", "TU-G3", "the start floors are already placed")
        pending = list(self.start_pending)
        if len(parsed) > len(pending):
            raise IllegalMove("place_start/too_many", "TU-S3",
                              f"only {len(pending)} start floor(s) are left to place")
        side = self.cfg.side
        placed: dict[int, int] = {}
        for site_id, c in parsed:
            site = side.site_index.get(site_id)
            if site is None:
                raise IllegalMove("place_start/unknown_site", "TU-C1", f"there is no site {site_id!r} on this board")
            if self.color[site] >= 0 or site in placed:
                raise IllegalMove("place_start/site_taken", "TU-S3", f"site {site_id} is not empty")
            if c in pending:
                pending.remove(c)
            elif WILD in pending:
                pending.remove(WILD)
            else:
                raise IllegalMove("place_start/wrong_color", "TU-S3",
                                  f"no start floor left is {COLORS[c]}; left: "
                                  f"{', '.join(WILD_NAME if x == WILD else COLORS[x] for x in self.start_pending)}")
            for t in side.adjacency[site]:
                if self.color[t] == c or placed.get(t) == c:
                    raise IllegalMove("place_start/same_color_adjacent", "TU-S3",
                                      f"a {COLORS[c]} start floor at {site_id} would be next to the {COLORS[c]} "
                                      f"building at {side.site_ids[t]}")
            placed[site] = c
        for site, c in placed.items():
            self.color[site] = c
            self.height[site] = 1
            self.box[c] -= 1
        self.start_pending = tuple(pending)
        self.actions += len(parsed)  # the shorthand is the single placements in a row: one action each
        if not pending:
            self.phase = PLAY
            self.seat = 0  # TU-G2

    # --- pass (TU-G8)

    def _play_pass(self, seat: int) -> None:
        if self.phase == SETUP:
            raise IllegalMove("move/setup_pending", "TU-G3", "the start floors must be placed first")
        if any(c >= 0 for c in self.market) or self._any_build(seat):
            raise IllegalMove("pass/not_allowed", "TU-G8", "you may pass only when you can neither build nor take")
        self._end_action(seat, False)

    # --- decline an extra turn (TU-X1)

    def _play_decline_extra(self, seat: int) -> None:
        if not self.extra_turn:
            raise IllegalMove("decline_extra/no_extra_turn", "TU-X1", "you have no extra turn to decline")
        if not self.cfg.extra_turn_optional:
            raise IllegalMove("decline_extra/mandatory", "TU-X1",
                              "in this game extra turns are mandatory (option extra_turn: \"mandatory\"): "
                              "take a card or build")
        self.actions += 1
        self._end_turn(seat)  # the turn ends as if the extra turn had been played (cone, last round: TU-G7)

    # ------------------------------------------------------------------ after an action

    def _end_action(self, seat: int, moved: bool) -> None:
        self.actions += 1
        self._check_objectives()
        if moved:
            # TU-X1/TU-X2/TU-G5: evaluated once, after the whole action; every newly reached column is used up
            m = min(self.loco[4 * seat:4 * seat + 4])
            reached = self.cfg.star_count_at[m]
            if reached > self.star_mark[seat]:
                self.star_mark[seat] = reached
                self.extra_turn = True  # TU-X3: an extra turn may earn another one
                return
        self._end_turn(seat)

    def _check_objectives(self) -> None:
        """TU-G9/TU-O1: every player, after every action. Presence only grows, so a player whose roofs did
        not change since the last check cannot have met anything new and is skipped."""
        checked = self.checked
        placed = ROOFS_PER_PLAYER * self.cfg.players - sum(self.roofs_left)
        if checked[-1] == placed:  # no roof placed since the last check: nobody's presence changed
            return
        checked[-1] = placed
        presence = self.presence
        for seat in range(self.cfg.players):
            mine = presence[seat]
            if len(mine) == checked[seat]:
                continue
            self.checked[seat] = len(mine)
            for slot, check in enumerate(self.cfg.objective_checks):
                bit = 1 << slot
                if self.achieved[seat] & bit or not check(self.color, mine):
                    continue
                self.achieved[seat] |= bit
                left = self.chips_left[slot]
                if left:
                    self.chips[seat] += ((slot, left[0]),)
                    self.chips_left[slot] = left[1:]

    def _end_turn(self, seat: int) -> None:
        self.extra_turn = False
        if self.turn_is_last:
            self._count_cone(seat)
        if self.trigger is not None and not self.last_round:
            # the trigger happened in this turn (TU-G7: the turn included any extra turn)
            kind, who = self.trigger
            n = self.cfg.players
            others = tuple((who + k) % n for k in range(1, n))
            self.last_round = True
            if kind == LAST_ROOF:
                self._count_cone(who)  # TU-E1: the trigger player counts right after their turn
                self.last_queue = others
            else:
                self.last_queue = (*others, who)  # TU-E2: everyone, the trigger player included
        if self.last_round:
            if self.last_queue:
                self.seat = self.last_queue[0]
                self.last_queue = self.last_queue[1:]
                self.turn_is_last = True
            else:
                self.phase = OVER
                self.turn_is_last = False
        else:
            self.seat = (seat + 1) % self.cfg.players

    def visible_roofs(self, seat: int) -> int:
        """Roofs of ``seat`` on top of a building (not covered by a floor)."""
        height = self.height
        count = 0
        for site, stack in enumerate(self.roofs):
            if stack and stack[-1][1] == seat and stack[-1][0] == height[site]:
                count += 1
        return count

    def _count_cone(self, seat: int) -> None:
        if self.cone[seat] is None:
            self.cone[seat] = self.visible_roofs(seat)

    # ------------------------------------------------------------------ legal moves

    def legal_moves(self) -> list[dict[str, Any]]:
        """Every legal move of the seat to move, as move dicts.

        During setup it lists one placement per move; a ``place_start`` with several placements is the
        same as playing them one after the other (docs/rules-towerup.md).
        """
        if self.phase == OVER:
            return []
        seat = self.seat
        if self.phase == SETUP:
            return list(self._start_moves())
        moves = list(self._take_moves(seat))
        moves += self._build_moves(seat)
        if not moves and not any(c >= 0 for c in self.market):
            moves.append({"type": "pass"})
        if self.extra_turn and self.cfg.extra_turn_optional:
            moves.append({"type": "decline_extra"})  # TU-X1: the extra turn may be declined
        return moves

    def _start_moves(self) -> Iterator[dict[str, Any]]:
        colors = sorted(range(4) if WILD in self.start_pending else set(self.start_pending))
        side = self.cfg.side
        for c in colors:
            for site in range(len(side.site_ids)):
                if self._start_site_ok(site, c):
                    yield {"type": "place_start", "placements": [{"site": side.site_ids[site], "color": COLORS[c]}]}

    def _take_moves(self, seat: int) -> Iterator[dict[str, Any]]:
        base = 4 * seat
        held = self.supply[base:base + 4]
        for slot, ci in enumerate(self.market):
            if ci < 0:
                continue
            if not self.deck:
                try:
                    self._check_reshuffle(ci)
                except IllegalMove:
                    continue
            card = self.cfg.data.cards[ci]
            gain, _shortage, picks, rest = self._card_gain(card)
            for chosen in _choose_sequences(picks, rest):
                after = [held[c] + gain[c] for c in range(4)]
                for c in chosen:
                    after[c] += 1
                move: dict[str, Any] = {"type": "take", "slot": slot}
                if chosen:
                    move["choose"] = [COLORS[c] for c in chosen]
                excess = sum(after) - SUPPLY_LIMIT
                if excess <= 0:
                    yield move
                    continue
                for counts in _discards(excess, after):
                    yield {**move, "discard": {COLORS[c]: counts[c] for c in range(4) if counts[c]}}

    def _build_moves(self, seat: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.roofs_left[seat] == 0:
            return out
        for site, c, neighbours in self._build_options(seat):
            ids = self.cfg.side.site_ids
            for roof in (site, *neighbours):
                out.append({"type": "build", "site": ids[site], "color": COLORS[c], "roof": ids[roof]})
        return out

    def _build_options(self, seat: int) -> Iterator[tuple[int, int, list[int]]]:
        """(site, colour, adjacent buildings) of every build ``seat`` can afford (TU-B1, TU-B2)."""
        color = self.color
        adjacency = self.cfg.side.adjacency
        held = self.supply[4 * seat:4 * seat + 4]
        for site in range(len(color)):
            if color[site] >= 0:
                continue
            neighbours = [t for t in adjacency[site] if color[t] >= 0]
            if not neighbours:
                continue
            pay = [0, 0, 0, 0]
            for t in neighbours:
                pay[color[t]] += 1
            if any(pay[k] > held[k] for k in range(4)):
                continue
            for c in range(4):
                if pay[c] == 0 and held[c] >= 1:
                    yield site, c, neighbours

    def _any_build(self, seat: int) -> bool:
        return self.roofs_left[seat] > 0 and next(self._build_options(seat), None) is not None

    # ------------------------------------------------------------------ view and result

    def view(self) -> dict[str, Any]:
        """The whole public state as JSON-safe data (str keys, ints, strs, bools, lists, None)."""
        cfg = self.cfg
        data = cfg.data
        side = cfg.side
        buildings: dict[str, Any] = {}
        for site, c in enumerate(self.color):
            if c < 0:
                continue
            roofs = self.roofs[site]
            by_level = {level: owner for level, owner in roofs}
            stack: list[Any] = []
            for level in range(1, self.height[site] + 1):
                stack.append(COLORS[c])
                if level in by_level:
                    stack.append({"owner": by_level[level]})
            top = roofs[-1][1] if roofs and roofs[-1][0] == self.height[site] else None
            buildings[side.site_ids[site]] = {
                "color": COLORS[c],
                "height": self.height[site],
                "stack": stack,
                "roofs": [{"level": level, "owner": owner} for level, owner in roofs],
                "top_roof": top,
            }
        seats = []
        for seat in range(cfg.players):
            base = 4 * seat
            cone = self.cone[seat]
            seats.append({
                "seat": seat,
                "supply": _color_list(self.supply[base:base + 4]),
                "supply_total": sum(self.supply[base:base + 4]),
                "roofs_left": self.roofs_left[seat],
                "roofs_on_board": ROOFS_PER_PLAYER - self.roofs_left[seat],
                "visible_roofs": self.visible_roofs(seat),
                "locomotives": {COLORS[c]: self.loco[base + c] for c in range(4)},
                "stars_reached": self.star_mark[seat],
                "cone": None if cone is None else {"visible_roofs": cone, "position": min(cone, cfg.cone_max)},
                "chips": [{"objective": cfg.objectives[slot], "value": value} for slot, value in self.chips[seat]],
                "objectives_met": [number for k, number in enumerate(cfg.objectives) if self.achieved[seat] >> k & 1],
                "last_turn_done": cone is not None,
            })
        trigger = None
        if self.trigger is not None:
            kind, who = self.trigger
            trigger = {"kind": kind, "seat": who, "rule": _TRIGGER_RULE[kind]}
        return {
            "ruleset": "towerup",
            "players": cfg.players,
            "options": copy.deepcopy(cfg.options),
            "recorded": cfg.recorded,
            "board_side": side.name,
            "phase": _PHASE_NAMES[self.phase],
            "to_move": self.to_move(),
            "actions": self.actions,
            "extra_turn": self.extra_turn,
            "start_floors": {
                "mode": cfg.start_mode,
                "placer": cfg.players - 1,
                "pending": [WILD_NAME if c == WILD else COLORS[c] for c in self.start_pending],
            },
            "buildings": buildings,
            "box": _color_list(self.box),
            "market": [None if c < 0 else data.cards[c].id for c in self.market],
            "deck_count": len(self.deck),
            "discard": [data.cards[c].id for c in self.discard],
            "reshuffles": self.reshuffles,
            "objectives": [
                {"slot": slot, "number": number, "text": data.objectives[number].text,
                 "chips_left": list(self.chips_left[slot])}
                for slot, number in enumerate(cfg.objectives)
            ],
            "seats": seats,
            "end": {
                "trigger": trigger,
                "last_round": self.last_round,
                "current_turn_is_last": self.turn_is_last and self.phase != OVER,
                "last_turns_to_come": list(self.last_queue),
            },
            "is_over": self.phase == OVER,
        }

    def result(self) -> dict[str, Any]:
        """Final scores (TU-E4), ranks and the tie-break chain (TU-E5); only when the game is over."""
        if self.phase != OVER:
            raise IllegalMove("game/not_over", None, "the game is not over yet; there is no result")
        return final_result(self)

    def provisional_result(self) -> dict[str, Any]:
        """The final scoring (TU-E4, TU-E5) applied to the position as it stands, the cone counted from the
        roofs visible now for every seat that has not counted yet; ``provisional`` is true while the game
        runs."""
        if self.phase == OVER:
            return self.result()
        counted = self.copy()
        for seat in range(self.cfg.players):
            counted._count_cone(seat)
        return {**final_result(counted), "provisional": True}

    def default_move(self) -> dict[str, Any]:
        """The move the referee plays for a seat out of time (docs/rules-towerup.md, "Default move"): the
        first move of :meth:`legal_moves` in its documented order: during setup the first start placement
        (TU-G3), else a TAKE of the lowest market slot with its first choices (TU-T1–T3), else the first
        BUILD (TU-B1–B3), else ``pass`` (TU-G8)."""
        moves = self.legal_moves()
        if not moves:
            raise ValueError("the game is over: there is no move to default to")
        return moves[0]


def _choose_sequences(picks: int, rest: list[int]) -> Iterator[tuple[int, ...]]:
    """Every ordered list of ``picks`` colours the box (``rest``) can supply."""
    if picks == 0:
        yield ()
        return
    left = rest[:]

    def extend(prefix: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if len(prefix) == picks:
            yield prefix
            return
        for c in range(4):
            if left[c]:
                left[c] -= 1
                yield from extend((*prefix, c))
                left[c] += 1

    yield from extend(())


def _discards(excess: int, held: list[int]) -> Iterator[tuple[int, ...]]:
    """Every way to return exactly ``excess`` floors out of ``held`` (per colour)."""
    def fill(c: int, left: int, prefix: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if c == 3:
            if left <= held[3]:
                yield (*prefix, left)
            return
        for k in range(min(left, held[c]) + 1):
            yield from fill(c + 1, left - k, (*prefix, k))

    yield from fill(0, excess, ())
