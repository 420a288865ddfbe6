"""A game rebuilt from what one seat may know: its public view, with the unseen cards in a sampled order.

In both rulesets the only hidden information is the order of the deck (and of the reshuffles still to
come, which the game's seed decides). Everything else is in :meth:`Game.view`. :func:`from_view` builds a
game whose ``view()`` equals the given view, whose deck holds exactly the cards no view shows (every card
of the game minus the market, display, discard, towers …), in an order drawn from ``rng``, and whose seed
for later reshuffles is drawn from ``rng`` too. It never sees a true deck order: it is given none.

That is the determinization of information-set Monte Carlo tree search, and it is also how a bot that
talks to the referee over HTTP gets a game object: from the ``state`` of ``GET /games/{id}``.

The engines are left untouched (their files are hashed into the rulesets' ``version``, see
``referee/games/base.py``); this module sets their state directly, and the tests check for random
positions of both games that ``from_view(view).view() == view`` and that the legal moves agree.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from ..base import Game
from ..fivetowers.game import BIDDING, BUILDING, OVER, FiveTowersGame
from ..fivetowers.ruleset import FiveTowers
from ..towerup.data import COLOR_INDEX, COLORS, WILD, WILD_NAME
from ..towerup.game import LAST_ROOF, SCARCITY, TowerUpGame, TriggerKind
from ..towerup.ruleset import TowerUpRuleset


def from_view(rules: Any, view: dict[str, Any], rng: random.Random) -> Game:
    """A game consistent with ``view`` (a ``Game.view()`` of a game of ``rules``), hidden cards sampled.

    :raises ValueError: for a ruleset this module does not know.
    """
    if isinstance(rules, FiveTowers):
        return _fivetowers(rules, view, rng)
    if isinstance(rules, TowerUpRuleset):
        return _towerup(rules, view, rng)
    raise ValueError(f"cannot rebuild a game of {getattr(rules, 'name', rules)!r} from its view")


def _seed(rng: random.Random) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(32))


# ---------------------------------------------------------------------------------------------- 5 Towers

_FT_PHASES = {"bidding": BIDDING, "building": BUILDING, "over": OVER}


def _fivetowers(rules: FiveTowers, view: dict[str, Any], rng: random.Random) -> FiveTowersGame:
    index = rules.index
    n: int = view["players"]
    seen: set[int] = set()

    def cards(ids: list[str]) -> list[int]:
        out = [index[card] for card in ids]
        seen.update(out)
        return out

    display = cards(view["display"])
    discard = cards(view["discard"])
    towers: list[list[list[int]]] = [[[] for _ in rules.suits] for _ in range(n)]
    demolished: list[list[int]] = []
    for seat in view["seats"]:
        for suit_id, tower in seat["towers"].items():
            towers[seat["seat"]][rules.suit_index[suit_id]] = cards(tower)
        demolished.append(cards(seat["demolished"]))
    unseen = sorted(set(index[card] for card in rules.cards_in_play(n)) - seen)
    rng.shuffle(unseen)
    if len(unseen) != view["deck_count"]:
        raise ValueError(f"the view shows {view['deck_count']} cards in the deck, but {len(unseen)} are unseen")

    game = object.__new__(FiveTowersGame)
    game._rules = rules
    game._n = n
    game._deck = unseen
    game._seed = _seed(rng)
    game._recorded_reshuffles = None
    game._reshuffles_done = 1 if view["reshuffled"] else 0
    game._display = display
    game._discard = discard
    game._towers = towers
    game._demolished = demolished
    game._exhaustions = view["exhaustions"]
    game._emptied = view["deck_count"] == 0
    game._round = view["round"]
    game._start = view["start_player"]
    game._last_round = None if view["last_round"] is None else dict(view["last_round"])
    game._phase = _FT_PHASES[view["phase"]]
    game._turn = view["to_move"]
    game._bids = [(bid["seat"], bid["amount"] if bid["type"] == "bid" else None) for bid in view["bidding"]]
    game._turns = len(game._bids)
    game._high = -1 if view["high_bid"] is None else view["high_bid"]
    game._high_bidder = view["high_bidder"]
    game._capacity = {}
    groups: dict[int, list[int]] = {}
    for card in display:
        groups.setdefault(rules.suit_of[card], []).append(rules.value_of[card])
    game._groups = [(suit, tuple(sorted(values))) for suit, values in groups.items()]
    return game


# ---------------------------------------------------------------------------------------------- Tower Up

_TU_PHASES = {"setup": 0, "play": 1, "over": 2}
_TRIGGERS: dict[str, TriggerKind] = {"last_roof": LAST_ROOF, "scarcity": SCARCITY}


def _towerup(rules: TowerUpRuleset, view: dict[str, Any], rng: random.Random) -> TowerUpGame:
    n: int = view["players"]
    shown = view["options"]
    options: dict[str, Any] = {
        "objectives": [objective["number"] for objective in view["objectives"]],
        "start_floors": view["start_floors"]["mode"],
        "extra_start_floors": shown.get("extra_start_floors", 0),
    }
    if "extra_turn" in shown:
        options["extra_turn"] = shown["extra_turn"]
    game = rules.new_game(n, options, seed=_seed(rng))  # a fresh config; every state field is set below
    assert isinstance(game, TowerUpGame)
    cfg = game.cfg
    cfg.options = copy.deepcopy(shown)
    cfg.recorded = view["recorded"]
    data, side = cfg.data, cfg.side
    slot_of = {number: slot for slot, number in enumerate(cfg.objectives)}

    sites = len(side.site_ids)
    game.color = [-1] * sites
    game.height = [0] * sites
    game.roofs = [()] * sites
    presence: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for site_id, building in view["buildings"].items():
        site = side.site_index[site_id]
        game.color[site] = COLOR_INDEX[building["color"]]
        game.height[site] = building["height"]
        game.roofs[site] = tuple((roof["level"], roof["owner"]) for roof in building["roofs"])
        for roof in building["roofs"]:
            presence[roof["owner"]].append((site, roof["level"]))
    game.box = [view["box"][c] for c in COLORS]
    game.supply, game.loco = [], []
    game.roofs_left, game.star_mark, game.achieved, game.cone = [], [], [], []
    game.chips = []
    for seat in view["seats"]:
        game.supply += [seat["supply"][c] for c in COLORS]
        game.loco += [seat["locomotives"][c] for c in COLORS]
        game.roofs_left.append(seat["roofs_left"])
        game.star_mark.append(seat["stars_reached"])
        game.achieved.append(sum(1 << slot_of[number] for number in seat["objectives_met"]))
        game.chips.append(tuple((slot_of[chip["objective"]], chip["value"]) for chip in seat["chips"]))
        game.cone.append(None if seat["cone"] is None else seat["cone"]["visible_roofs"])
    game.presence = [tuple(sorted(mine)) for mine in presence]
    # every objective has been checked after every action so far (TU-G9)
    game.checked = [len(mine) for mine in presence] + [sum(len(mine) for mine in presence)]
    game.chips_left = [tuple(objective["chips_left"]) for objective in view["objectives"]]
    card_index = data.card_index
    game.market = [-1 if card is None else card_index[card] for card in view["market"]]
    game.discard = [card_index[card] for card in view["discard"]]
    seen = set(game.market) | set(game.discard)
    unseen = [card for card in range(len(data.cards)) if card not in seen]
    rng.shuffle(unseen)
    if len(unseen) != view["deck_count"]:
        raise ValueError(f"the view shows {view['deck_count']} cards in the deck, but {len(unseen)} are unseen")
    game.deck = unseen
    game.reshuffles = view["reshuffles"]
    game.start_pending = tuple(WILD if c == WILD_NAME else COLOR_INDEX[c] for c in view["start_floors"]["pending"])
    end = view["end"]
    trigger = end["trigger"]
    game.trigger = None if trigger is None else (_TRIGGERS[trigger["kind"]], trigger["seat"])
    game.last_round = end["last_round"]
    game.last_queue = tuple(end["last_turns_to_come"])
    game.turn_is_last = end["current_turn_is_last"]
    game.extra_turn = view["extra_turn"]
    game.actions = view["actions"]
    phase = _TU_PHASES[view["phase"]]
    game.phase = 0 if phase == 0 else 1 if phase == 1 else 2
    game.seat = view["to_move"] if view["to_move"] is not None else 0
    return game
