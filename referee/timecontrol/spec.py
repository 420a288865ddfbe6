"""The ``options.time_control`` object of a game (CONTRACT section 8): what it may hold, its defaults.

Durations are integer seconds. The resolved object (every default filled in) is what ``created``
records, so a verifier never needs to know the defaults of the referee that ran the game.

>>> resolve(None)
{'kind': 'none'}
>>> resolve({"kind": "per_move", "per_move": 259200})["on_timeout"]
'auto_move'
>>> resolve({"kind": "bank", "initial": 864000, "increment": 86400, "max": 1728000, "vacation": 0})["vacation"]
0
>>> resolve({"kind": "per_move"})
Traceback (most recent call last):
...
referee.timecontrol.spec.TimeControlError: $.options.time_control.per_move: required for kind 'per_move'
"""

from __future__ import annotations

from typing import Any

KINDS = ("none", "per_move", "bank")
ACTIONS = ("auto_move", "forfeit")
DAY = 86_400
YEAR = 365 * DAY

#: Defaults of a game with a clock (kind ``per_move`` or ``bank``).
DEFAULTS: dict[str, Any] = {
    "vacation": 7 * DAY,         # seconds of vacation each seat may take in this game
    "on_timeout": "auto_move",   # or "forfeit"
    "max_auto_moves": 3,         # the 3rd timeout in a row forfeits (with on_timeout auto_move)
    "reminders": [DAY, 3600],    # reminder events this many seconds before a deadline
}
_MEMBERS = {
    "none": {"kind"},
    "per_move": {"kind", "per_move", *DEFAULTS},
    "bank": {"kind", "initial", "increment", "max", *DEFAULTS},
}
PATH = "$.options.time_control"


class TimeControlError(ValueError):
    """A bad ``time_control`` object; ``problems`` lists ``{path, problem}`` (every one found)."""

    def __init__(self, problems: list[dict[str, str]]):
        super().__init__("; ".join(f"{p['path']}: {p['problem']}" for p in problems))
        self.problems = problems


def _seconds(spec: dict[str, Any], name: str, problems: list[dict[str, str]], *, low: int, high: int) -> None:
    value = spec.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append({"path": f"{PATH}.{name}", "problem": "must be an integer number of seconds"})
    elif not low <= value <= high:
        problems.append({"path": f"{PATH}.{name}", "problem": f"must be between {low} and {high} seconds"})


def resolve(raw: Any) -> dict[str, Any]:
    """The validated time control with its defaults filled in; ``TimeControlError`` naming every problem."""
    if raw is None:
        return {"kind": "none"}
    if not isinstance(raw, dict):
        raise TimeControlError([{"path": PATH, "problem": "must be an object like {\"kind\": \"per_move\", ...}"}])
    kind = raw.get("kind", "none")
    if kind not in KINDS:
        raise TimeControlError([{"path": f"{PATH}.kind", "problem": f"must be one of {', '.join(KINDS)}"}])
    problems: list[dict[str, str]] = []
    for name in sorted(set(raw) - _MEMBERS[kind]):
        problems.append({"path": f"{PATH}.{name}", "problem": f"unknown member for kind {kind!r}"})
    if kind == "none":
        if problems:
            raise TimeControlError(problems)
        return {"kind": "none"}
    spec = {**DEFAULTS, **raw}
    required: tuple[str, ...]
    if kind == "per_move":
        required = ("per_move",)
    else:
        required = ("initial", "increment", "max")
    for name in required:
        if name not in raw:
            problems.append({"path": f"{PATH}.{name}", "problem": f"required for kind {kind!r}"})
    if problems:
        raise TimeControlError(problems)
    for name in required:
        _seconds(spec, name, problems, low=1, high=YEAR)
    if kind == "bank" and not problems and spec["max"] < spec["initial"]:
        problems.append({"path": f"{PATH}.max", "problem": "must be at least the initial bank"})
    _seconds(spec, "vacation", problems, low=0, high=YEAR)
    if spec["on_timeout"] not in ACTIONS:
        problems.append({"path": f"{PATH}.on_timeout", "problem": "must be 'auto_move' or 'forfeit'"})
    limit = spec["max_auto_moves"]
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        problems.append({"path": f"{PATH}.max_auto_moves", "problem": "must be an integer from 1 to 100"})
    reminders = spec["reminders"]
    if (not isinstance(reminders, list) or len(reminders) > 5
            or any(isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= YEAR for r in reminders)):
        problems.append({"path": f"{PATH}.reminders",
                         "problem": "must be a list of at most 5 durations in seconds (1 to 365 days)"})
    if problems:
        raise TimeControlError(problems)
    spec["reminders"] = sorted(set(reminders), reverse=True)
    order = ["kind", *required, "vacation", "on_timeout", "max_auto_moves", "reminders"]
    return {name: spec[name] for name in order}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of ``options.time_control`` (shown by ``GET /rulesets/{name}``)."""
    seconds = {"type": "integer", "minimum": 1, "maximum": YEAR}
    common = {
        "vacation": {"type": "integer", "minimum": 0, "maximum": YEAR, "default": DEFAULTS["vacation"],
                     "description": "seconds of vacation each seat may take in this game (TC-V1)"},
        "on_timeout": {"enum": list(ACTIONS), "default": DEFAULTS["on_timeout"],
                       "description": "what a timeout does: the referee plays the seat's default move (TC-M1), "
                                      "or the seat forfeits (TC-F1)"},
        "max_auto_moves": {"type": "integer", "minimum": 1, "maximum": 100, "default": DEFAULTS["max_auto_moves"],
                           "description": "with auto_move: the seat forfeits at this many timeouts in a row"},
        "reminders": {"type": "array", "items": seconds, "maxItems": 5, "default": DEFAULTS["reminders"],
                      "description": "reminder events this many seconds before a deadline"},
    }
    return {
        "description": "correspondence clock (CONTRACT section 8, docs/timecontrol.md); durations in seconds",
        "default": {"kind": "none"},
        "oneOf": [
            {"type": "object", "additionalProperties": False, "required": ["kind"],
             "properties": {"kind": {"const": "none"}}},
            {"type": "object", "additionalProperties": False, "required": ["kind", "per_move"],
             "properties": {"kind": {"const": "per_move"},
                            "per_move": {**seconds, "description": "seconds for each decision (TC-D1)"}, **common}},
            {"type": "object", "additionalProperties": False, "required": ["kind", "initial", "increment", "max"],
             "properties": {"kind": {"const": "bank"},
                            "initial": {**seconds, "description": "the bank of the first decision (TC-D2)"},
                            "increment": {**seconds, "description": "added to the bank after each decision"},
                            "max": {**seconds, "description": "the bank never grows beyond this"}, **common}},
        ],
    }


_UNITS = {"d": DAY, "h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> int:
    """Seconds of ``3d``, ``12h``, ``90m``, ``45s``, ``1d12h`` or a plain number of seconds.

    >>> parse_duration("3d"), parse_duration("1d12h"), parse_duration("600")
    (259200, 129600, 600)
    """
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    total, number = 0, ""
    for char in text:
        if char.isdigit():
            number += char
        elif char in _UNITS and number:
            total, number = total + int(number) * _UNITS[char], ""
        else:
            raise ValueError(f"{text!r} is not a duration like 3d, 12h, 90m or 1d12h")
    if number or not total:
        raise ValueError(f"{text!r} is not a duration like 3d, 12h, 90m or 1d12h")
    return total


def parse_shorthand(text: str) -> dict[str, Any]:
    """The ``time_control`` object of the CLI's shorthand (or of a JSON object): ``none``,
    ``per_move:3d``, ``bank:10d+1d:20d`` (initial + increment, capped at max).

    >>> parse_shorthand("per_move:3d")
    {'kind': 'per_move', 'per_move': 259200}
    >>> parse_shorthand("bank:10d+1d:20d")
    {'kind': 'bank', 'initial': 864000, 'increment': 86400, 'max': 1728000}
    """
    text = text.strip()
    if text.startswith("{"):
        import json  # noqa: PLC0415 - only for this form

        value = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError("a time control is a JSON object")
        return value
    kind, _, rest = text.partition(":")
    if kind == "none" and not rest:
        return {"kind": "none"}
    if kind == "per_move" and rest:
        return {"kind": "per_move", "per_move": parse_duration(rest)}
    if kind == "bank" and rest:
        start, _, cap = rest.partition(":")
        initial, _, increment = start.partition("+")
        if initial and increment and cap:
            return {"kind": "bank", "initial": parse_duration(initial), "increment": parse_duration(increment),
                    "max": parse_duration(cap)}
    raise ValueError(f"{text!r}: use none, per_move:3d, bank:10d+1d:20d or a JSON object")


def time_control_of(created: dict[str, Any] | None) -> dict[str, Any]:
    """The time control a game's ``created`` entry records: its resolved ``time_control`` (games created
    before clocks have none: ``{"kind": "none"}``). A log whose ``time_control`` does not resolve has no
    clock (the verifier then reports its timeouts as ``time/no_clock``)."""
    raw = (created or {}).get("time_control")
    if raw is None:
        return {"kind": "none"}
    try:
        return resolve(raw)
    except TimeControlError:
        return {"kind": "none"}


def engine_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The options the rules engine takes: a game's options without the referee's own ``time_control``."""
    return {k: v for k, v in (options or {}).items() if k != "time_control"}
