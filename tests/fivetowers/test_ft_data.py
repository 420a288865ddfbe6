"""The data files are validated at load time: a broken copy raises DataError naming the file and problem."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from referee.games import DataError
from referee.games.fivetowers import load_ruleset
from referee.games.fivetowers.cards import default_data_dir


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    target = tmp_path / "fivetowers"
    shutil.copytree(default_data_dir(), target)
    return target


def edit(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_an_intact_copy_loads(data_dir):
    rules = load_ruleset(data_dir)
    assert len(rules.components()["cards"]) == 110
    assert rules.version == load_ruleset(data_dir).version


def test_the_version_changes_with_the_data(data_dir):
    before = load_ruleset(data_dir).version
    edit(data_dir / "suits.json", lambda doc: doc["suits"][1].update(name="Frost tower"))
    assert load_ruleset(data_dir).version != before


def _set(key, value):
    return lambda doc: doc.__setitem__(key, value)


SUIT_BREAKS = [
    (lambda doc: doc["suits"].pop(), "exactly 5 suits"),
    (lambda doc: doc["suits"][1].update(id="sand"), "ids must be unique"),
    (lambda doc: doc["suits"][1].update(colour="yellow"), "colours must be unique"),
    (lambda doc: doc["suits"][0].update(id="dune"), "sand tower"),
    (lambda doc: doc["suits"][2].update(id="Moss 2"), "lowercase letters"),
    (lambda doc: doc["suits"][2].pop("colour"), "exactly the keys"),
    (lambda doc: doc["suits"][2].update(name=""), "non-empty string"),
    (lambda doc: doc["suits"][2].update(named_by="me"), "named_by"),
    (_set("format", "fivetowers-suits/2"), "format"),
    (_set("extra", 1), "unknown keys"),
    (_set("suits", {}), "must be a list"),
]

DECK_BREAKS = [
    (_set("values", list(range(17))), "exactly 0..15"),
    (_set("values", [*range(15), 15.0]), "list of integers"),
    (lambda doc: doc["extra_copies"].update(values=[0, 2, 16]), "must be card values"),
    (lambda doc: doc["extra_copies"].update(values=[2, 0]), "ascending"),
    (lambda doc: doc["extra_copies"].update(min_players=6), "min_players"),
    (lambda doc: doc["deck_sizes"].update({"4": 100}), "deck_sizes[4] is 100 but the cards give 110"),
    (lambda doc: doc["deck_sizes"].pop("5"), "2, 3, 4 and 5 players"),
    (_set("display_size", 4), "display_size"),
    (lambda doc: doc.pop("format"), "keys must be exactly"),
]


@pytest.mark.parametrize(("change", "problem"), SUIT_BREAKS)
def test_broken_suits_file(data_dir, change, problem):
    edit(data_dir / "suits.json", change)
    with pytest.raises(DataError, match=r"suits\.json") as caught:
        load_ruleset(data_dir)
    assert problem in str(caught.value)


@pytest.mark.parametrize(("change", "problem"), DECK_BREAKS)
def test_broken_deck_file(data_dir, change, problem):
    edit(data_dir / "deck.json", change)
    with pytest.raises(DataError, match=r"deck\.json") as caught:
        load_ruleset(data_dir)
    assert problem in str(caught.value)


@pytest.mark.parametrize(("name", "text", "problem"), [
    ("deck.json", "{", "not valid JSON"),
    ("suits.json", '{"format": 1, "format": 2}', "duplicate key"),
    ("deck.json", '{"values": NaN}', "NaN is not allowed"),
])
def test_unparsable_files(data_dir, name, text, problem):
    (data_dir / name).write_text(text)
    with pytest.raises(DataError, match=name) as caught:
        load_ruleset(data_dir)
    assert problem in str(caught.value)


def test_a_missing_file(data_dir):
    (data_dir / "deck.json").unlink()
    with pytest.raises(DataError, match=r"deck\.json"):
        load_ruleset(data_dir)
