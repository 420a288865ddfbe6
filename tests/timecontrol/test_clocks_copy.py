"""``Clocks.copy`` (issue 28: field by field instead of ``deepcopy``) equals a deep copy and is independent of
the original, for every field."""

from __future__ import annotations

import copy
import dataclasses

from referee.timecontrol.clocks import Clocks
from referee.timecontrol.spec import resolve


def busy_clocks() -> Clocks:
    clocks = Clocks.start(resolve({"kind": "bank", "initial": 60, "increment": 5, "max": 120, "vacation": 30}), 3)
    clocks.begin(seat=1, at=1_000, position=4)
    clocks.grant_vacation(seat=1, at=2_000, seconds=10)
    clocks.timeouts_in_row[2] = 1
    clocks.forfeited_at[0] = 7
    clocks.unconfirmed[0] = 7
    return clocks


def test_a_copy_equals_a_deep_copy_in_every_field():
    clocks = busy_clocks()
    copied = clocks.copy()
    assert copied == copy.deepcopy(clocks)
    for f in dataclasses.fields(Clocks):  # every field has a value that is not its default here
        assert getattr(copied, f.name) == getattr(clocks, f.name), f.name


def test_a_copy_goes_on_alone():
    clocks = busy_clocks()
    before = copy.deepcopy(clocks)
    copied = clocks.copy()
    copied.finish(at=5_000)
    copied.grant_vacation(seat=2, at=6_000, seconds=5)
    copied.timeouts_in_row[2] = 0
    copied.forfeited_at[0] = None
    copied.unconfirmed.clear()
    copied.begin(seat=0, at=7_000, position=9)
    assert clocks == before
