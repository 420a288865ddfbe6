"""The clock arithmetic (``referee.timecontrol``): the time-control object, deadlines with vacations, banks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.timecontrol import Clocks, TimeControlError, format_ms, parse_ms, resolve
from referee.timecontrol.spec import parse_duration, parse_shorthand


def test_TC_C1_defaults_are_filled_in_and_written_resolved():
    assert resolve(None) == {"kind": "none"}
    assert resolve({"kind": "per_move", "per_move": 259200}) == {
        "kind": "per_move", "per_move": 259200, "vacation": 604800, "on_timeout": "auto_move",
        "max_auto_moves": 3, "reminders": [86400, 3600]}


@pytest.mark.parametrize("raw, path", [
    ({"kind": "per_move", "per_move": 60, "colour": "red"}, "$.options.time_control.colour"),
    ({"kind": "per_move", "per_move": 0}, "$.options.time_control.per_move"),
    ({"kind": "per_move", "per_move": 1.5}, "$.options.time_control.per_move"),
    ({"kind": "per_move", "per_move": True}, "$.options.time_control.per_move"),
    ({"kind": "bank", "initial": 100, "increment": 10}, "$.options.time_control.max"),
    ({"kind": "bank", "initial": 100, "increment": 10, "max": 50}, "$.options.time_control.max"),
    ({"kind": "per_move", "per_move": 60, "on_timeout": "resign"}, "$.options.time_control.on_timeout"),
    ({"kind": "per_move", "per_move": 60, "max_auto_moves": 0}, "$.options.time_control.max_auto_moves"),
    ({"kind": "per_move", "per_move": 60, "vacation": -1}, "$.options.time_control.vacation"),
    ({"kind": "blitz"}, "$.options.time_control.kind"),
    ({"kind": "none", "per_move": 60}, "$.options.time_control.per_move"),
    ("3d", "$.options.time_control"),
])
def test_TC_C1_a_bad_time_control_names_the_member(raw, path):
    with pytest.raises(TimeControlError) as caught:
        resolve(raw)
    assert path in [p["path"] for p in caught.value.problems]


def test_cli_shorthand_and_durations():
    assert parse_shorthand("none") == {"kind": "none"}
    assert parse_shorthand('{"kind": "per_move", "per_move": 5}') == {"kind": "per_move", "per_move": 5}
    assert parse_duration("2h30m") == 9000
    for bad in ("3x", "d", "bank:1d", "per_move:"):
        with pytest.raises(ValueError):
            parse_shorthand(bad) if ":" in bad or bad == "d" else parse_duration(bad)


def test_times_round_trip_in_the_logs_format():
    assert format_ms(parse_ms("2026-11-21T10:00:00.007Z")) == "2026-11-21T10:00:00.007Z"
    for bad in ("2026-11-21 10:00:00Z", "2026-11-21T10:00:00+01:00", "yesterday", 5):
        with pytest.raises(ValueError):
            parse_ms(bad)


vacations = st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 5_000)), max_size=6)


@given(allowance=st.integers(1, 20_000), since=st.integers(0, 5_000), requests=vacations)
def test_TC_V1_the_deadline_is_the_moment_the_seat_has_been_charged_exactly_its_allowance(allowance, since, requests):
    clocks = Clocks.start(resolve({"kind": "per_move", "per_move": 1, "vacation": 365 * 86400}), players=2)
    for at_ms, length in sorted(requests):
        clocks.grant_vacation(0, at_ms, 0)
        clocks.vacations[0][-1] = (clocks.vacations[0][-1][0], clocks.vacations[0][-1][0] + length)
    clocks.begin(0, since, 3)
    clocks.allowance = allowance
    deadline = clocks.deadline()
    assert deadline is not None and deadline >= since + allowance
    assert clocks.charged(0, since, deadline) == allowance
    assert clocks.charged(0, since, deadline - 1) < allowance
    # the other seat's vacations never move seat 0's deadline
    clocks.grant_vacation(1, since, 10)
    assert clocks.deadline() == deadline
