"""A tournament's creation spec: the values ``created`` records, their defaults and checks (CONTRACT section 10).

:func:`resolve_tournament` turns a request body into the resolved values (defaults filled in, documented
in ``docs/tournaments.md``); :func:`created_problem` checks a ``created`` entry against it (the fold's first
step, :class:`referee.tournaments.log.TournamentReplayer`). Pure, like the fold: no Redis, clock or network.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..games import ruleset as load_ruleset
from ..protocol.signing import load_public_key, verify
from ..timecontrol import format_ms, parse_ms
from . import pairing as pr
from .points import DEFAULT_BYE_POINTS, DEFAULT_POINTS
from .tiebreaks import chain_problem, resolve_chain

#: ``ctx`` of an organiser's signed creation request
TOURNAMENT_CTX = "referee/tournament"

ADJUDICATION_METHODS = ("provisional", "organiser")
#: what a withdrawal does to the player's running games: the referee plays their turns by default moves
#: (the seat is forfeited in the game, ranked last), or the game is adjudicated at once (``provisional``)
WITHDRAWAL_MODES = ("default_moves", "adjudicate")
#: players one section (one tournament) holds: a 10,000-player Swiss pairs in about linear time (docs/performance.md)
MAX_PLAYERS = 10_000
MAX_ROUNDS = 1000
_HEX64 = re.compile(r"[0-9a-f]{64}")


class SpecError(ValueError):
    """A tournament body that cannot be resolved; ``problems`` is ``[{"path", "problem"}]``."""

    def __init__(self, problems: list[dict[str, str]]):
        super().__init__("; ".join(f"{p['path']}: {p['problem']}" for p in problems))
        self.problems = problems


# -- defaults ------------------------------------------------------------------------------------
def default_rounds(kind: str, players: int, allowed: list[int]) -> int:
    """Rounds when the format names none: round robin — 2-seat tables: n − 1 (n even) or n (n odd);
    larger tables: ⌈(n(n−1)/2) / pairs seated per round⌉; Swiss — ⌈log2 n⌉ (at least 1); series — n."""
    if kind == pr.SERIES:
        return players
    if kind == pr.SWISS:
        return max(1, math.ceil(math.log2(players)))
    if max(allowed) == 2:
        return players - 1 if players % 2 == 0 else players
    sizes, _ = pr.table_sizes(players, allowed)
    per_round = sum(s * (s - 1) // 2 for s in sizes)
    return max(1, math.ceil(players * (players - 1) // 2 / per_round)) if per_round else 1


def resolve_sizes(sizes: list[int], min_players: int) -> list[int]:
    """One size ``n`` allows every size from ``n`` down to the ruleset's minimum; several sizes are used
    as listed. Largest first, no repeats."""
    if len(sizes) == 1:
        return list(range(sizes[0], min_players - 1, -1))
    return sorted(set(sizes), reverse=True)


def resolve_tournament(body: dict[str, Any], *, literal_sizes: bool = False,
                       default_pairing: int = pr.SWISS_RULE) -> dict[str, Any]:
    """The resolved values ``created`` records for a tournament body (defaults filled in, documented in
    ``docs/tournaments.md``).

    ``body``: ``ruleset``, ``options``?, ``players`` [{name, key, bot?}], ``format`` {kind, rounds?,
    table_sizes?}, ``points``?, ``bye_points``?, ``tie_breaks``?, ``round_deadline``?,
    ``adjudication``?, ``nonce``?. The result has ``ruleset`` {name, version}, ``options``,
    ``players``, ``format``, ``points``, ``bye_points``, ``tie_breaks``, ``round_deadline``,
    ``adjudication`` (and ``nonce`` when given). ``literal_sizes``: take ``table_sizes`` as written
    (a ``created`` entry's, already resolved) instead of widening a single size.

    :raises SpecError: listing every problem of ``body`` (``problems``: ``[{"path", "problem"}]``).
    """
    problems: list[dict[str, str]] = []

    def bad(path: str, problem: str) -> None:
        problems.append({"path": path, "problem": problem})

    if not isinstance(body, dict):
        raise SpecError([{"path": "$", "problem": "a tournament is a JSON object"}])
    try:
        rules = load_ruleset(body.get("ruleset"))  # type: ignore[arg-type]
    except (KeyError, TypeError):
        raise SpecError([{"path": "$.ruleset", "problem": f"unknown ruleset {body.get('ruleset')!r}"}]) from None
    registration, closes, max_players = _resolve_registration(body, bad)
    players = body.get("players", [] if registration is not None else None)
    least = 0 if registration is not None else 2
    if not isinstance(players, list) or not least <= len(players) <= MAX_PLAYERS:
        bad("$.players", f"players is a list of {least} to {MAX_PLAYERS} {{name, key}}")
        players = players[:MAX_PLAYERS] if isinstance(players, list) else []
    if max_players is not None and len(players) > max_players:
        bad("$.max_players", f"max_players ({max_players}) is fewer than the {len(players)} players listed")
    seen: set[str] = set()
    for i, p in enumerate(players):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p.get("name"):
            bad(f"$.players[{i}]", "a player is {name, key} with a non-empty name")
            continue
        try:
            load_public_key(p.get("key"))  # type: ignore[arg-type]
        except (ValueError, TypeError):
            bad(f"$.players[{i}].key", "not a base64url Ed25519 public key")
            continue
        if p["key"] in seen:
            bad(f"$.players[{i}].key", "a key plays once in a tournament")
        seen.add(p["key"])
        if "bot" in p and not isinstance(p["bot"], bool):
            bad(f"$.players[{i}].bot", "bot is true or false")
    fmt = body.get("format")
    if not isinstance(fmt, dict):
        raise SpecError([*problems, {"path": "$.format", "problem": "format is {kind, rounds?, table_sizes?}"}])
    kind = fmt.get("kind")
    if kind not in pr.KINDS:
        bad("$.format.kind", f"kind is one of {list(pr.KINDS)}")
    # an open registration plans for max_players (the most who can come); rounds and sizes resolve from it
    n = max_players if max_players is not None else len(players)
    if registration is not None and kind == pr.SERIES and max_players is None:
        bad("$.max_players", "a series seats everyone at one table: an open registration names max_players")
    given_sizes = fmt.get("table_sizes")
    if given_sizes is None:
        given_sizes = [max(rules.min_players, min(n, rules.max_players))] if kind == pr.SERIES \
            else [min(4, rules.max_players)]
    if not isinstance(given_sizes, list) or not given_sizes or not all(type(s) is int for s in given_sizes):
        bad("$.format.table_sizes", "table_sizes is a non-empty list of integers")
        given_sizes = [rules.min_players]
    elif not all(rules.min_players <= s <= rules.max_players for s in given_sizes):
        bad("$.format.table_sizes", f"{rules.name} tables seat {rules.min_players} to {rules.max_players} players")
        given_sizes = [rules.min_players]
    sizes = sorted(set(given_sizes), reverse=True) if literal_sizes else resolve_sizes(given_sizes, rules.min_players)
    if literal_sizes and sizes != given_sizes:
        bad("$.format.table_sizes", "table_sizes are written largest first, each once")
    if kind == pr.SERIES and n and n not in sizes:
        bad("$.format", f"a series seats every player at one table: {n} players is not an allowed table size")
    two_seat = kind == pr.SWISS and sizes == [2]  # the formats paired by the 2-seat matching, whose rule it names
    pairing = fmt.get("pairing")
    if pairing is None:
        pairing = default_pairing if two_seat else None
    elif not two_seat:
        bad("$.format.pairing", "pairing is the rule of a Swiss tournament at tables of 2 (table_sizes [2])")
    elif type(pairing) is not int or pairing not in pr.SWISS_RULES:
        bad("$.format.pairing", f"pairing is one of {list(pr.SWISS_RULES)}")
    if max_players is not None and max_players < min(sizes):
        bad("$.max_players", f"max_players ({max_players}) cannot fill a table (the smallest seats {min(sizes)})")
    rounds = fmt.get("rounds")
    if rounds is None and registration is not None and max_players is None:
        bad("$.format.rounds", "an open registration without max_players names its rounds")
        rounds = 1  # (refused above; not refused twice)
    if rounds is None and kind in pr.KINDS and n >= 2:
        rounds = default_rounds(kind, n, sizes)
    if type(rounds) is not int or not 1 <= rounds <= MAX_ROUNDS:
        bad("$.format.rounds", f"rounds is an integer from 1 to {MAX_ROUNDS}")
    points = {str(s): list(DEFAULT_POINTS[s]) for s in sorted(sizes)}
    given_points = body.get("points")
    if given_points is not None:
        if not isinstance(given_points, dict):
            bad("$.points", 'points is {"<table size>": [points for rank 1, 2, ...]}')
        else:
            for size, row in given_points.items():
                if size not in points:
                    bad(f"$.points.{size}", f"no table of {size} in this tournament (sizes {sorted(sizes)})")
                elif not isinstance(row, list) or len(row) != int(size) or not all(type(x) is int for x in row):
                    bad(f"$.points.{size}", f"a list of {size} integers, rank 1 first")
                else:
                    points[size] = list(row)
    bye_points = body.get("bye_points", DEFAULT_BYE_POINTS)
    if type(bye_points) is not int:
        bad("$.bye_points", "bye_points is an integer")
    chain = body.get("tie_breaks")
    if chain is not None and (not isinstance(chain, list) or not all(isinstance(i, str) for i in chain)):
        bad("$.tie_breaks", "tie_breaks is a list of tie-break ids")
        chain = None
    chain = resolve_chain(chain)
    problem = chain_problem(chain)
    if problem:
        bad("$.tie_breaks", problem)
    deadline = body.get("round_deadline")
    if deadline is not None and (type(deadline) is not int or deadline < 1):
        bad("$.round_deadline", "round_deadline is a positive number of seconds")
    adjudication = body.get("adjudication", "provisional")
    if adjudication not in ADJUDICATION_METHODS:
        bad("$.adjudication", f"adjudication is one of {list(ADJUDICATION_METHODS)}")
    withdrawal = body.get("withdrawal", "default_moves")
    if withdrawal not in WITHDRAWAL_MODES:
        bad("$.withdrawal", f"withdrawal is one of {list(WITHDRAWAL_MODES)}")
    options = body.get("options") or {}
    if not isinstance(options, dict):
        bad("$.options", "options is an object")
    if problems:
        raise SpecError(problems)
    out = {
        "ruleset": {"name": rules.name, "version": rules.version},
        "options": options,
        "players": [{"name": p["name"], "key": p["key"], **({"bot": True} if p.get("bot") is True else {})}
                    for p in players],
        # rule 1, the first, is written as no pairing at all: the tournaments made before rule 2 stay as they were
        "format": {"kind": kind, "rounds": rounds, "table_sizes": sizes,
                   **({"pairing": pairing} if pairing not in (None, 1) else {})},
        "points": points,
        "bye_points": bye_points,
        "tie_breaks": chain,
        "round_deadline": deadline,
        "adjudication": adjudication,
        "withdrawal": withdrawal,
    }
    if registration is not None:  # written only for an open registration: older logs stay as they were
        out.update(registration=registration, closes=closes, max_players=max_players)
    if body.get("nonce") is not None:
        out["nonce"] = body["nonce"]
    return out


def _resolve_registration(body: dict[str, Any], bad: Any) -> tuple[dict[str, Any] | None, str | None, int | None]:
    """``registration`` ({"open": true} | {"invite": key}), ``closes`` (RFC 3339 UTC, written as the log's
    ``at`` times are) and ``max_players`` of a body; all None for a tournament of listed players only."""
    registration = body.get("registration")
    closes, max_players = body.get("closes"), body.get("max_players")
    if registration is None:
        if closes is not None or max_players is not None:
            bad("$.registration", "closes and max_players belong to an open registration (field 'registration')")
        return None, None, None
    if registration == {"open": True}:
        resolved: dict[str, Any] = {"open": True}
    elif isinstance(registration, dict) and set(registration) == {"invite"}:
        try:
            load_public_key(registration["invite"])
        except (ValueError, TypeError):
            bad("$.registration.invite", "not a base64url Ed25519 public key (the invitation's)")
        resolved = {"invite": registration["invite"]}
    else:
        bad("$.registration", 'registration is {"open": true} or {"invite": <invitation public key>}')
        resolved = {"open": True}
    if closes is not None:
        try:
            closes = format_ms(parse_ms(closes))
        except ValueError as exc:
            bad("$.closes", str(exc))
            closes = None
    if max_players is not None and (type(max_players) is not int or not 2 <= max_players <= MAX_PLAYERS):
        bad("$.max_players", f"max_players is an integer from 2 to {MAX_PLAYERS}")
        max_players = None
    return resolved, closes, max_players


# -- the created entry -----------------------------------------------------------------------------
RESOLVED_FIELDS = ("ruleset", "options", "players", "format", "points", "bye_points", "tie_breaks",
                   "round_deadline", "adjudication", "withdrawal", "registration", "closes", "max_players")
#: the fields only an open registration writes
REGISTRATION_FIELDS = ("registration", "closes", "max_players")


def created_problem(entry: dict[str, Any]) -> str | None:
    """What is wrong with a ``created`` entry, or None: its values must be a fixed point of
    :func:`resolve_tournament` (what the service writes), and a signed request must resolve to them."""
    if not isinstance(entry.get("tournament"), str) or not entry["tournament"]:
        return "created names no tournament id"
    if not isinstance(entry.get("commitment"), str) or not _HEX64.fullmatch(entry["commitment"]):
        return "the commitment must be 64 lowercase hex digits"
    ruleset = entry.get("ruleset")
    if not isinstance(ruleset, dict) or set(ruleset) != {"name", "version"} or not isinstance(
            ruleset.get("version"), str):
        return "created names no ruleset {name, version}"
    fmt = entry.get("format")
    if not isinstance(fmt, dict):
        fmt = {}
    body = {k: entry.get(k) for k in RESOLVED_FIELDS if k != "ruleset" and k in entry}
    body["ruleset"] = ruleset.get("name")
    body["format"] = {**fmt, "table_sizes": fmt.get("table_sizes")}
    try:
        resolved = resolve_tournament(body, literal_sizes=True, default_pairing=1)  # no pairing: rule 1
    except SpecError as exc:
        return str(exc)
    for key in RESOLVED_FIELDS:
        if key == "ruleset":
            continue
        if resolved.get(key) != entry.get(key) or (key in resolved) != (key in entry):
            return f"created.{key} is not in resolved form ({resolved[key]!r})"
    organiser = entry.get("organiser")
    if "registration" in entry and organiser is None:
        return "an open registration is created by its organiser's signed request"
    if organiser is not None:
        request = entry.get("request")
        if not isinstance(request, dict) or not isinstance(entry.get("organiser_sig"), str):
            return "an organiser's tournament records the signed request and organiser_sig"
        if not verify(organiser, {"v": 1, "ctx": TOURNAMENT_CTX, **request}, entry["organiser_sig"]):
            return "organiser_sig is not the organiser's signature over {v: 1, ctx: 'referee/tournament', ...request}"
        try:
            # a request that names no pairing rule takes the referee's of the day: the one created records
            signed = resolve_tournament(request, default_pairing=fmt.get("pairing", 1))
        except SpecError as exc:
            return f"the signed request does not resolve: {exc}"
        for key in RESOLVED_FIELDS:
            mine = signed.get(key) if key != "ruleset" else signed[key]["name"]
            theirs = entry.get(key) if key != "ruleset" else ruleset.get("name")
            if mine != theirs:
                return f"created.{key} differs from the organiser's signed request"
    return None
