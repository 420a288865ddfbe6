"""Data files: a broken copy fails loading with a message naming the file and the problem."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.games import DataError
from referee.games.data import fixtures_dir
from referee.games.towerup import DATA_FILES, load_data, load_ruleset

SOURCE = fixtures_dir() / "towerup"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    target = tmp_path / "towerup"
    shutil.copytree(SOURCE, target)
    return target


def edit(directory: Path, name: str, change: Callable[[Any], Any]) -> None:
    path = directory / name
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)  # changes doc in place
    path.write_text(json.dumps(doc), encoding="utf-8")


def broken(directory: Path, name: str, change: Callable[[Any], Any], problem: str) -> str:
    edit(directory, name, change)
    with pytest.raises(DataError) as info:
        load_data(directory)
    message = str(info.value)
    assert name in message and problem in message, message
    return message


def test_shipped_data_loads_and_says_it_is_a_stand_in():
    data = load_data(SOURCE)
    assert len(data.cards) == 44 and len(data.objectives) == 10
    for name in ("board-front.json", "board-back.json", "cards.json", "personal-board.json"):
        doc = json.loads((SOURCE / name).read_text(encoding="utf-8"))
        assert doc["stand_in"] is True and "STAND-IN" in doc["note"]
    assert sorted(p.name for p in data.files) == sorted(DATA_FILES)


def test_version_covers_the_data_files(data_dir):
    original = load_ruleset(data_dir).version
    edit(data_dir, "cards.json", lambda d: d.update(note=d["note"] + " (edited)"))
    assert load_ruleset(data_dir).version != original


def test_fixtures_env_variable_points_the_loader_elsewhere(data_dir, monkeypatch):
    monkeypatch.setenv("REFEREE_FIXTURES", str(data_dir.parent))
    assert load_ruleset().data.directory == data_dir


def test_unknown_site_in_a_road(data_dir):
    broken(data_dir, "board-front.json", lambda d: d["roads"].append(["A1", "Z9"]), "names unknown site 'Z9'")


def test_isolated_site(data_dir):
    def isolate(doc):
        doc["sites"].append({"id": "E99", "district": "E", "x": 1, "y": 1})
    broken(data_dir, "board-back.json", isolate, "site 'E99' is isolated")


def test_disconnected_road_network(data_dir):
    def split(doc):
        doc["sites"] += [{"id": "E98", "district": "E", "x": 1, "y": 1}, {"id": "E99", "district": "E", "x": 2, "y": 1}]
        doc["roads"].append(["E98", "E99"])
    broken(data_dir, "board-back.json", split, "not connected")


def test_too_many_roads_at_a_site(data_dir):
    def crowd(doc):
        for other in ("A3", "A4", "A6", "A7"):
            doc["roads"].append(["A1", other])
    broken(data_dir, "board-front.json", crowd, "site 'A1' has 6 roads")


def test_district_colours_need_exactly_two_grey(data_dir):
    broken(data_dir, "board-front.json", lambda d: d["districts"][1].update(color="grey"),
           "exactly 2 districts must have color 'grey'")


def test_five_districts(data_dir):
    broken(data_dir, "board-back.json", lambda d: d["districts"].pop(), "exactly 5 districts")


def test_border_side_in_the_wrong_district(data_dir):
    broken(data_dir, "board-front.json", lambda d: d["borders"][0]["sides"][0].append("E1"),
           "is not in district")


def test_park_with_an_unknown_site(data_dir):
    broken(data_dir, "board-front.json", lambda d: d["parks"][0]["sites"].append("Q1"), "unknown site 'Q1'")


def test_wrong_card_count(data_dir):
    broken(data_dir, "cards.json", lambda d: d["cards"].pop(), "exactly 44 cards, found 43")


def test_duplicate_card_id(data_dir):
    broken(data_dir, "cards.json", lambda d: d["cards"][1].update(id="c01"), "card 'c01' appears twice")


def test_unknown_floor_colour_on_a_card(data_dir):
    broken(data_dir, "cards.json", lambda d: d["cards"][0]["floors"].append("gold"), "unknown floor 'gold'")


def test_locomotive_steps(data_dir):
    broken(data_dir, "cards.json", lambda d: d["cards"][3]["locomotives"][0].update(steps=3), "steps must be 1 or 2")


def test_track_values_must_not_decrease(data_dir):
    broken(data_dir, "personal-board.json", lambda d: d["track"]["values"].append(1), "must not decrease")


def test_star_column_outside_the_track(data_dir):
    broken(data_dir, "personal-board.json", lambda d: d["track"]["stars"].append(40), "star columns must lie")


def test_objectives_count_and_check_kinds(data_dir):
    broken(data_dir, "objectives.json", lambda d: d["objectives"][4]["check"].update(kind="magic"),
           "unknown check kind 'magic'")


def test_objectives_need_three_first_game_cards(data_dir):
    broken(data_dir, "objectives.json", lambda d: d["objectives"][5].update(first_game=True), "first_game")


def test_chips_by_player_count(data_dir):
    broken(data_dir, "chips.json", lambda d: d["chips_by_players"].pop("3"), "2, 3 and 4 players")


def test_chips_highest_first(data_dir):
    broken(data_dir, "chips.json", lambda d: d["chips_by_players"].update({"4": [3, 5, 7, 3]}), "highest first")


def test_unknown_field(data_dir):
    broken(data_dir, "cards.json", lambda d: d["cards"][0].update(colour="red"), "unknown field(s) colour")


def test_stand_in_flag_required(data_dir):
    broken(data_dir, "personal-board.json", lambda d: d.pop("stand_in"), "lacks stand_in")


def test_board_side_for_each_player_count(data_dir):
    broken(data_dir, "board-back.json", lambda d: d.update(players=[3]), "exactly one board side")


def test_invalid_json_and_duplicate_keys(data_dir):
    (data_dir / "chips.json").write_text('{"slots": 3, "slots": 3}', encoding="utf-8")
    with pytest.raises(DataError, match=r"chips\.json.*duplicate key"):
        load_data(data_dir)
    (data_dir / "chips.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(DataError, match=r"chips\.json.*not valid JSON"):
        load_data(data_dir)


def test_missing_file(data_dir):
    (data_dir / "objectives.json").unlink()
    with pytest.raises(DataError, match=r"objectives\.json.*cannot read"):
        load_data(data_dir)
