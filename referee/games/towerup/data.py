"""Tower Up data files (``fixtures/towerup/*.json``): loading, validation and compact indexes.

Every file is checked when the ruleset loads. A broken file raises :class:`~referee.games.errors.DataError`
whose message starts with the file name and says what is wrong (an unknown site in a road, an isolated
site, a wrong card count, a district colour, ...). The loader takes the directory as an argument, so tests
can point it at broken copies in a temporary directory.

The map, the card list and the personal board are *stand-ins* (the rulebook shows them only as
pictures); every such file says so in ``"stand_in": true`` and a ``"note"``. Real values drop in without
code changes as long as they keep the shapes validated here.
"""

from __future__ import annotations

import copy
from collections.abc import Set
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..data import load_json, require
from ..errors import DataError

COLORS: tuple[str, ...] = ("black", "grey", "white", "brown")
COLOR_INDEX: dict[str, int] = {name: i for i, name in enumerate(COLORS)}
WILD = 4  # a wildcard floor on a card
WILD_NAME = "wild"

FLOORS_PER_COLOR = 30  # TU-C2
ROOFS_PER_PLAYER = 10  # TU-C3
SUPPLY_LIMIT = 10  # TU-T3
MARKET_SIZE = 3  # TU-S2
BASE_START_FLOORS = 3  # TU-S3
CARD_COUNT = 44  # TU-C5
OBJECTIVE_COUNT = 10  # TU-C6

BOARD_FILES = {"front": "board-front.json", "back": "board-back.json"}
DATA_FILES = (*BOARD_FILES.values(), "cards.json", "personal-board.json", "objectives.json", "chips.json")

OBJECTIVE_CHECKS = {
    "colors": {"count"},
    "area": {"area", "buildings"},
    "districts": {"count"},
    "connected": {"buildings"},
    "color_buildings": {"color", "buildings"},
    "grey_districts": {"counts"},
    "borders": {"count"},
    "stacked": {"buildings", "roofs"},
    "levels": {"levels"},
}


@dataclass(frozen=True, slots=True)
class Side:
    """One side of the board, with integer indexes for play (site ``i`` is ``site_ids[i]``)."""

    name: str
    players: tuple[int, ...]
    site_ids: tuple[str, ...]
    site_index: dict[str, int]
    adjacency: tuple[tuple[int, ...], ...]  # neighbours of each site, ascending
    site_district: tuple[int, ...]  # district index of each site
    district_ids: tuple[str, ...]
    grey_districts: tuple[int, int]
    parks: tuple[frozenset[int], ...]
    lakes: tuple[frozenset[int], ...]
    borders: tuple[tuple[frozenset[int], frozenset[int]], ...]
    raw: dict[str, Any]  # the validated file content, for components()


@dataclass(frozen=True, slots=True)
class Card:
    id: str
    floors: tuple[int, ...]  # bottom to top; WILD for a wildcard
    fixed: tuple[int, int, int, int]  # floors of each colour shown
    wild: int  # number of wildcards
    locomotives: tuple[tuple[int, int], ...]  # (colour, steps)


@dataclass(frozen=True, slots=True)
class Objective:
    number: int
    first_game: bool
    kind: str
    params: dict[str, Any]
    text: str
    text_de: str


@dataclass(frozen=True, slots=True)
class TowerUpData:
    directory: Path
    sides: dict[str, Side]
    cards: tuple[Card, ...]
    card_index: dict[str, int]
    track_values: tuple[int, ...]
    track_stars: tuple[int, ...]
    cone_max: int
    objectives: dict[int, Objective]
    chips_by_players: dict[int, tuple[int, ...]]
    objective_slots: int
    raw: dict[str, Any]

    @property
    def files(self) -> list[Path]:
        return [self.directory / name for name in DATA_FILES]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _object(value: Any, path: Path, what: str, keys: Set[str], optional: Set[str] = frozenset()) -> dict[str, Any]:
    require(isinstance(value, dict), path, f"{what} must be an object")
    obj: dict[str, Any] = value
    missing = keys - obj.keys()
    require(not missing, path, f"{what} lacks {', '.join(sorted(missing))}")
    extra = obj.keys() - keys - optional
    require(not extra, path, f"{what} has unknown field(s) {', '.join(sorted(extra))}")
    return obj


def _header(doc: Any, path: Path, keys: Set[str]) -> dict[str, Any]:
    header = _object(doc, path, "the file", keys | {"stand_in", "note"})
    require(isinstance(header["stand_in"], bool), path, "stand_in must be true or false")
    require(isinstance(header["note"], str), path, "note must be a string")
    return header


def _load_side(directory: Path, name: str) -> Side:
    path = directory / BOARD_FILES[name]
    doc = _header(load_json(path), path, {"side", "players", "districts", "sites", "roads", "parks", "lakes",
                                          "borders"})
    require(doc["side"] == name, path, f"side must be {name!r}, not {doc['side']!r}")
    players = doc["players"]
    require(isinstance(players, list) and len(players) > 0 and all(_is_int(p) and 2 <= p <= 4 for p in players), path,
            "players must be a non-empty list of player counts 2-4")

    districts = doc["districts"]
    require(isinstance(districts, list) and len(districts) == 5, path, "there must be exactly 5 districts (TU-C1)")
    district_ids: list[str] = []
    greys: list[int] = []
    for i, district in enumerate(districts):
        _object(district, path, f"district {i}", {"id", "name", "color"})
        did = district["id"]
        require(isinstance(did, str) and did != "", path, f"district {i} has no id")
        require(did not in district_ids, path, f"district {did!r} appears twice")
        require(isinstance(district["name"], str), path, f"district {did!r}: name must be a string")
        require(isinstance(district["color"], str) and district["color"] != "", path,
                f"district {did!r}: color must be a non-empty string")
        if district["color"] == "grey":
            greys.append(i)
        district_ids.append(did)
    require(len(greys) == 2, path, f"exactly 2 districts must have color 'grey' (TU-C1), found {len(greys)}")

    sites = doc["sites"]
    require(isinstance(sites, list) and len(sites) > 0, path, "sites must be a non-empty list")
    site_ids: list[str] = []
    site_index: dict[str, int] = {}
    site_district: list[int] = []
    for i, site in enumerate(sites):
        _object(site, path, f"site {i}", {"id", "district", "x", "y"})
        sid = site["id"]
        require(isinstance(sid, str) and sid != "", path, f"site {i} has no id")
        require(sid not in site_index, path, f"site {sid!r} appears twice")
        require(site["district"] in district_ids, path, f"site {sid!r} is in unknown district {site['district']!r}")
        require(_is_int(site["x"]) and _is_int(site["y"]), path, f"site {sid!r}: x and y must be integers")
        site_index[sid] = i
        site_ids.append(sid)
        site_district.append(district_ids.index(site["district"]))
    for d, did in enumerate(district_ids):
        require(d in site_district, path, f"district {did!r} has no site")

    roads = doc["roads"]
    require(isinstance(roads, list), path, "roads must be a list")
    neighbours: list[set[int]] = [set() for _ in site_ids]
    for i, road in enumerate(roads):
        require(isinstance(road, list) and len(road) == 2 and all(isinstance(s, str) for s in road), path,
                f"road {i} must be a pair of site ids")
        for sid in road:
            require(sid in site_index, path, f"road {i} {road} names unknown site {sid!r}")
        a, b = site_index[road[0]], site_index[road[1]]
        require(a != b, path, f"road {i} joins site {road[0]!r} to itself")
        require(b not in neighbours[a], path, f"road {road[0]}-{road[1]} appears twice")
        neighbours[a].add(b)
        neighbours[b].add(a)
    for i, sid in enumerate(site_ids):
        require(len(neighbours[i]) >= 1, path, f"site {sid!r} is isolated (no road)")
        require(len(neighbours[i]) <= 5, path, f"site {sid!r} has {len(neighbours[i])} roads (at most 5)")
    seen = {0}
    todo = [0]
    while todo:
        for t in neighbours[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    unreachable = [site_ids[i] for i in range(len(site_ids)) if i not in seen]
    require(not unreachable, path, f"the road network is not connected: cannot reach {', '.join(unreachable[:5])}")

    def areas(key: str) -> tuple[frozenset[int], ...]:
        value = doc[key]
        require(isinstance(value, list), path, f"{key} must be a list")
        out = []
        names: set[str] = set()
        for i, area in enumerate(value):
            _object(area, path, f"{key} {i}", {"id", "name", "sites"})
            require(isinstance(area["id"], str) and area["id"] not in names, path, f"{key} {i}: missing or repeated id")
            names.add(area["id"])
            require(isinstance(area["name"], str), path, f"{key} {area['id']!r}: name must be a string")
            members = area["sites"]
            require(isinstance(members, list) and len(members) > 0, path, f"{key} {area['id']!r}: sites must be a list")
            for sid in members:
                require(sid in site_index, path, f"{key} {area['id']!r} names unknown site {sid!r}")
            require(len(set(members)) == len(members), path, f"{key} {area['id']!r} lists a site twice")
            out.append(frozenset(site_index[s] for s in members))
        return tuple(out)

    parks = areas("parks")
    lakes = areas("lakes")

    borders_doc = doc["borders"]
    require(isinstance(borders_doc, list), path, "borders must be a list")
    borders = []
    border_ids: set[str] = set()
    for i, border in enumerate(borders_doc):
        _object(border, path, f"border {i}", {"id", "name", "districts", "sides"})
        bid = border["id"]
        require(isinstance(bid, str) and bid not in border_ids, path, f"border {i}: missing or repeated id")
        border_ids.add(bid)
        require(isinstance(border["name"], str), path, f"border {bid!r}: name must be a string")
        pair = border["districts"]
        require(isinstance(pair, list) and len(pair) == 2 and all(d in district_ids for d in pair)
                and pair[0] != pair[1], path, f"border {bid!r} must name 2 different known districts")
        sides = border["sides"]
        require(isinstance(sides, list) and len(sides) == 2, path, f"border {bid!r} must have 2 sides")
        side_sets = []
        for k in range(2):
            members = sides[k]
            require(isinstance(members, list) and len(members) > 0, path, f"border {bid!r}: side {k} must list sites")
            for sid in members:
                require(sid in site_index, path, f"border {bid!r} names unknown site {sid!r}")
                require(site_district[site_index[sid]] == district_ids.index(pair[k]), path,
                        f"border {bid!r}: site {sid!r} is not in district {pair[k]!r}")
            side_sets.append(frozenset(site_index[s] for s in members))
        borders.append((side_sets[0], side_sets[1]))

    return Side(
        name=name,
        players=tuple(players),
        site_ids=tuple(site_ids),
        site_index=site_index,
        adjacency=tuple(tuple(sorted(n)) for n in neighbours),
        site_district=tuple(site_district),
        district_ids=tuple(district_ids),
        grey_districts=(greys[0], greys[1]),
        parks=parks,
        lakes=lakes,
        borders=tuple(borders),
        raw=doc,
    )


def _load_cards(directory: Path) -> tuple[tuple[Card, ...], dict[str, Any]]:
    path = directory / "cards.json"
    doc = _header(load_json(path), path, {"cards"})
    cards_doc = doc["cards"]
    require(isinstance(cards_doc, list), path, "cards must be a list")
    require(len(cards_doc) == CARD_COUNT, path, f"there must be exactly {CARD_COUNT} cards, found {len(cards_doc)}")
    cards: list[Card] = []
    ids: set[str] = set()
    for i, card in enumerate(cards_doc):
        _object(card, path, f"card {i}", {"id", "floors", "locomotives"})
        cid = card["id"]
        require(isinstance(cid, str) and cid != "", path, f"card {i} has no id")
        require(cid not in ids, path, f"card {cid!r} appears twice")
        ids.add(cid)
        floors = card["floors"]
        require(isinstance(floors, list) and 1 <= len(floors) <= 6, path, f"card {cid!r} must show 1-6 floors")
        codes = []
        for f in floors:
            require(f in COLOR_INDEX or f == WILD_NAME, path, f"card {cid!r} shows unknown floor {f!r}")
            codes.append(COLOR_INDEX.get(f, WILD))
        locos = card["locomotives"]
        require(isinstance(locos, list), path, f"card {cid!r}: locomotives must be a list")
        loco_codes = []
        for loco in locos:
            _object(loco, path, f"card {cid!r} locomotive", {"color", "steps"})
            require(loco["color"] in COLOR_INDEX, path, f"card {cid!r}: unknown locomotive colour {loco['color']!r}")
            require(_is_int(loco["steps"]) and loco["steps"] in (1, 2), path, f"card {cid!r}: steps must be 1 or 2")
            loco_codes.append((COLOR_INDEX[loco["color"]], loco["steps"]))
        fixed = tuple(codes.count(c) for c in range(4))
        cards.append(Card(cid, tuple(codes), fixed, codes.count(WILD), tuple(loco_codes)))  # type: ignore[arg-type]
    return tuple(cards), doc


def _load_personal_board(directory: Path) -> tuple[tuple[int, ...], tuple[int, ...], int, dict[str, Any]]:
    path = directory / "personal-board.json"
    doc = _header(load_json(path), path, {"track", "cone"})
    track = _object(doc["track"], path, "track", {"values", "stars"})
    values = track["values"]
    require(isinstance(values, list) and len(values) >= 2 and all(_is_int(v) for v in values), path,
            "track values must be a list of at least 2 integers")
    require(values[0] == 0, path, "the first track column (the start) must be worth 0")
    require(all(a <= b for a, b in pairwise(values)), path, "track values must not decrease")
    stars = track["stars"]
    require(isinstance(stars, list) and all(_is_int(s) for s in stars), path, "stars must be a list of columns")
    require(all(0 < s < len(values) for s in stars), path, f"star columns must lie in 1..{len(values) - 1}")
    require(all(a < b for a, b in pairwise(stars)), path, "star columns must be ascending")
    cone = _object(doc["cone"], path, "cone", {"max"})
    require(_is_int(cone["max"]) and 1 <= cone["max"] < len(values), path,
            f"cone max must be an integer in 1..{len(values) - 1}")
    return tuple(values), tuple(stars), cone["max"], doc


def _load_objectives(directory: Path) -> tuple[dict[int, Objective], dict[str, Any]]:
    path = directory / "objectives.json"
    doc = _header(load_json(path), path, {"objectives"})
    items = doc["objectives"]
    require(isinstance(items, list) and len(items) == OBJECTIVE_COUNT, path,
            f"there must be exactly {OBJECTIVE_COUNT} objectives")
    out: dict[int, Objective] = {}
    for i, item in enumerate(items):
        _object(item, path, f"objective {i}", {"number", "first_game", "check", "text", "text_de"})
        number = item["number"]
        require(_is_int(number) and 1 <= number <= OBJECTIVE_COUNT, path, f"objective {i}: number must be 1-10")
        require(number not in out, path, f"objective {number} appears twice")
        require(isinstance(item["first_game"], bool), path, f"objective {number}: first_game must be a boolean")
        require(isinstance(item["text"], str) and isinstance(item["text_de"], str), path,
                f"objective {number}: texts must be strings")
        check = item["check"]
        require(isinstance(check, dict) and check.get("kind") in OBJECTIVE_CHECKS, path,
                f"objective {number}: unknown check kind {check.get('kind') if isinstance(check, dict) else check!r}")
        kind = check["kind"]
        params = {k: v for k, v in check.items() if k != "kind"}
        require(set(params) == OBJECTIVE_CHECKS[kind], path,
                f"objective {number}: check {kind!r} needs exactly {', '.join(sorted(OBJECTIVE_CHECKS[kind]))}")
        for key, value in params.items():
            if key == "area":
                require(value in ("parks", "lakes"), path, f"objective {number}: area must be parks or lakes")
            elif key == "color":
                require(value in COLOR_INDEX, path, f"objective {number}: unknown colour {value!r}")
            elif key in ("counts", "levels"):
                require(isinstance(value, list) and len(value) > 0 and all(_is_int(v) and v >= 1 for v in value), path,
                        f"objective {number}: {key} must be a list of positive integers")
            else:
                require(_is_int(value) and value >= 1, path, f"objective {number}: {key} must be a positive integer")
        if kind == "grey_districts":
            require(len(params["counts"]) == 2, path, f"objective {number}: counts must name 2 numbers")
        out[number] = Objective(number, item["first_game"], kind, params, item["text"], item["text_de"])
    firsts = sorted(n for n, o in out.items() if o.first_game)
    require(len(firsts) == 3, path, f"exactly 3 objectives must be marked first_game (the S cards), found {firsts}")
    return out, doc


def _load_chips(directory: Path) -> tuple[dict[int, tuple[int, ...]], int, dict[str, Any]]:
    path = directory / "chips.json"
    doc = _header(load_json(path), path, {"slots", "chips_by_players"})
    require(doc["slots"] == 3, path, "there must be 3 objective slots (TU-S6)")
    table = doc["chips_by_players"]
    require(isinstance(table, dict) and set(table) == {"2", "3", "4"}, path,
            "chips_by_players must give the chips for 2, 3 and 4 players")
    out: dict[int, tuple[int, ...]] = {}
    for key, chips in table.items():
        require(isinstance(chips, list) and len(chips) > 0 and all(_is_int(c) and c > 0 for c in chips), path,
                f"chips for {key} players must be a list of positive integers")
        require(all(a >= b for a, b in pairwise(chips)), path,
                f"chips for {key} players must be listed highest first")
        out[int(key)] = tuple(chips)
    return out, 3, doc


def load_data(directory: Path) -> TowerUpData:
    """Load and validate every Tower Up data file in ``directory``."""
    directory = Path(directory)
    sides = {name: _load_side(directory, name) for name in BOARD_FILES}
    for count in (2, 3, 4):
        owners = [name for name, side in sides.items() if count in side.players]
        if len(owners) != 1:
            raise DataError(f"{BOARD_FILES['front']}/{BOARD_FILES['back']}: exactly one board side must be for "
                            f"{count} players (TU-S1), found {owners}")
    cards, cards_doc = _load_cards(directory)
    values, stars, cone_max, board_doc = _load_personal_board(directory)
    objectives, objectives_doc = _load_objectives(directory)
    chips, slots, chips_doc = _load_chips(directory)
    return TowerUpData(
        directory=directory,
        sides=sides,
        cards=cards,
        card_index={card.id: i for i, card in enumerate(cards)},
        track_values=values,
        track_stars=stars,
        cone_max=cone_max,
        objectives=objectives,
        chips_by_players=chips,
        objective_slots=slots,
        raw={"cards": cards_doc, "personal_board": board_doc, "objectives": objectives_doc, "chips": chips_doc},
    )


def components(data: TowerUpData) -> dict[str, Any]:
    """The JSON-safe description of every component (CONTRACT section 1, ``components()``)."""
    board_sides = {}
    for name, side in data.sides.items():
        raw = copy.deepcopy(side.raw)
        board_sides[name] = {
            "side": name,
            "players": raw["players"],
            "stand_in": raw["stand_in"],
            "note": raw["note"],
            "districts": raw["districts"],
            "sites": raw["sites"],
            "roads": raw["roads"],
            "parks": raw["parks"],
            "lakes": raw["lakes"],
            "borders": raw["borders"],
        }
    cards_doc = copy.deepcopy(data.raw["cards"])
    board_doc = copy.deepcopy(data.raw["personal_board"])
    objectives_doc = copy.deepcopy(data.raw["objectives"])
    chips_doc = data.raw["chips"]
    return {
        "colors": list(COLORS),
        "floors_per_color": FLOORS_PER_COLOR,
        "roofs_per_player": ROOFS_PER_PLAYER,
        "supply_limit": SUPPLY_LIMIT,
        "board_sides": board_sides,
        "cards": {"stand_in": cards_doc["stand_in"], "note": cards_doc["note"], "wildcard": WILD_NAME,
                  "cards": cards_doc["cards"]},
        "personal_board": {"stand_in": board_doc["stand_in"], "note": board_doc["note"],
                           "track": {"values": board_doc["track"]["values"], "stars": board_doc["track"]["stars"],
                                     "locomotives": list(COLORS)},
                           "cone": {"max": board_doc["cone"]["max"], "values": board_doc["track"]["values"]}},
        "objectives": objectives_doc["objectives"],
        "chips": {"slots": chips_doc["slots"],
                  "by_players": {k: list(v) for k, v in chips_doc["chips_by_players"].items()}},
    }
