"""Shadow replay: which stored games would change under the installed engine?

Run it before deploying a rules fix. Every stored game is folded again from its log with the engine
installed *now* (with the game's secret seed from the store, so running games replay fully) and the
outcome is compared with a baseline made by the pinned behaviour:

* by default the game's stored **projection** — what the service computed and published with the
  engine it ran when the entries were appended. A projection that lags its log is compared at its own
  ``seq`` (the new fold is cut at the same entry);
* or a **saved snapshot** (:func:`snapshot`, ``referee shadow-replay --save FILE`` run with the current
  engine, then ``--baseline FILE`` with the candidate engine installed).

An *outcome* is what a player can see of a fold: ``status``, ``to_move``, the public state ``view``, the
``result`` and every entry's verdict. A game is listed as changed when any of them differs, or when the
new engine crashes on its log. Games with neither a projection nor a snapshot entry are listed as
``not comparable`` (rebuild their projections first), never silently counted as unchanged.

Pure apart from reading the store it is given (the :class:`referee.store.LogStore` interface: only
``list_games``/``scan_games``, ``read_log``, ``read_secret`` and ``read_projection`` are used).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..games import ruleset as load_ruleset
from .adjudication import revealed_seed
from .replayer import LogReplayer

#: The parts of a fold that shadow replay compares, in report order.
OUTCOME_FIELDS = ("status", "to_move", "view", "result", "verdicts")

#: ``progress(done, total)`` after each game.
ShadowProgress = Callable[[int, int], None]


def _json_safe(value: Any) -> Any:
    """The value as it reads back from JSON (tuples become lists), so stored and fresh values compare equal."""
    return json.loads(json.dumps(value))


def outcome_of(replayer: LogReplayer) -> dict[str, Any]:
    """The comparable outcome of a fold (see the module docstring)."""
    game = replayer.game
    return _json_safe({
        "seq": replayer.seq,
        "status": replayer.status,
        "to_move": replayer.to_move(),
        "view": game.view() if game is not None else None,
        "result": replayer.result(),
        "verdicts": [v.to_dict() for v in replayer.verdicts],
    })


def replay_outcome(entries: list[dict[str, Any]], server_seed: bytes | None) -> dict[str, Any]:
    """Fold ``entries`` with the installed engine; an exception becomes ``{"error": ...}`` in the outcome."""
    replayer = LogReplayer(server_seed=server_seed if server_seed is not None else revealed_seed(entries))
    try:
        for entry in entries:
            replayer.feed(entry)
    except Exception as exc:  # a crash of the new engine on an old log is exactly what shadow replay must report
        return {"seq": replayer.seq, "error": f"{type(exc).__name__}: {exc}"}
    return outcome_of(replayer)


@dataclass
class GameShadow:
    """One game: which outcome fields the installed engine would change, compared with ``baseline``."""

    game: str
    ruleset: str | None
    pinned_version: str | None
    installed_version: str | None
    baseline: str  # "projection", "snapshot" or "none"
    compared_at: int | None  # the log length both outcomes are taken at
    changed: list[str] = field(default_factory=list)
    first_verdict_change: int | None = None
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def comparable(self) -> bool:
        return self.baseline != "none"

    @property
    def version_differs(self) -> bool:
        return self.pinned_version != self.installed_version

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "ruleset": self.ruleset, "pinned_version": self.pinned_version,
                "installed_version": self.installed_version, "version_differs": self.version_differs,
                "baseline": self.baseline, "compared_at": self.compared_at, "changed": self.changed,
                "first_verdict_change": self.first_verdict_change, "error": self.error, **self.details}


@dataclass
class ShadowReport:
    games: list[GameShadow]

    @property
    def changed(self) -> list[GameShadow]:
        return [g for g in self.games if g.changed]

    @property
    def not_comparable(self) -> list[GameShadow]:
        return [g for g in self.games if not g.comparable]

    @property
    def ok(self) -> bool:
        """No game would change and every game could be compared."""
        return not self.changed and not self.not_comparable

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "games": len(self.games),
            "changed": [g.game for g in self.changed],
            "not_comparable": [g.game for g in self.not_comparable],
            "version_differs": [g.game for g in self.games if g.version_differs],
            "details": [g.to_dict() for g in self.games],
        }


def _compare(baseline: Mapping[str, Any], candidate: Mapping[str, Any]) -> tuple[list[str], int | None]:
    if "error" in candidate or "error" in baseline:
        same = candidate.get("error") == baseline.get("error")
        return ([] if same else ["error"]), None
    changed = [name for name in OUTCOME_FIELDS if name in baseline and baseline[name] != candidate.get(name)]
    first = None
    if "verdicts" in changed:
        old, new = baseline["verdicts"], candidate["verdicts"]
        first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    return changed, first


def _projection_outcome(store: Any, game_id: str) -> dict[str, Any] | None:
    projection = store.read_projection(game_id, with_verdicts=True)
    if not projection:
        return None
    return {"seq": projection.get("seq"), **{name: projection.get(name) for name in OUTCOME_FIELDS}}


def shadow_game(store: Any, game_id: str, baseline: Mapping[str, Any] | None = None) -> GameShadow:
    """Shadow-replay one game (``baseline``: its snapshot outcome; ``None``: use the stored projection)."""
    entries = store.read_log(game_id)
    created = entries[0] if entries else {}
    pinned_field = created.get("ruleset")
    pinned: dict[str, Any] = pinned_field if isinstance(pinned_field, dict) else {}
    try:
        # whatever the log names: not a known name (None, a list, ...) is the KeyError or TypeError below
        installed: str | None = load_ruleset(pinned.get("name")).version  # type: ignore[arg-type]
    except (KeyError, TypeError):
        installed = None
    kind = "snapshot" if baseline is not None else "projection"
    if baseline is None:
        baseline = _projection_outcome(store, game_id)
    shadow = GameShadow(game_id, pinned.get("name"), pinned.get("version"), installed,
                        kind if baseline is not None else "none", None)
    if baseline is None:
        shadow.details["note"] = "no stored projection to compare with (rebuild it first)"
        return shadow
    at = baseline.get("seq")
    at = len(entries) if not isinstance(at, int) or at > len(entries) else at
    shadow.compared_at = at
    candidate = replay_outcome(entries[:at], store.read_secret(game_id))
    shadow.error = candidate.get("error")
    shadow.changed, shadow.first_verdict_change = _compare(baseline, candidate)
    if "result" in shadow.changed:
        shadow.details["result"] = {"before": baseline.get("result"), "after": candidate.get("result")}
    return shadow


def _game_ids(store: Any, game_ids: Iterable[str] | None) -> list[str]:
    if game_ids is not None:
        return list(game_ids)
    listed = getattr(store, "scan_games", None) or store.list_games
    return sorted(listed())


def shadow_replay(store: Any, *, game_ids: Iterable[str] | None = None,
                  baseline: Mapping[str, Mapping[str, Any]] | None = None,
                  progress: ShadowProgress | None = None) -> ShadowReport:
    """Shadow-replay ``game_ids`` (default: every game in ``store``).

    ``baseline``: a :func:`snapshot` (game id → outcome); games missing from it are compared with their
    stored projection. ``progress(done, total)`` is called after each game.
    """
    ids = _game_ids(store, game_ids)
    games = []
    for done, game_id in enumerate(ids, 1):
        games.append(shadow_game(store, game_id, None if baseline is None else baseline.get(game_id)))
        if progress is not None:
            progress(done, len(ids))
    return ShadowReport(games)


def snapshot(store: Any, *, game_ids: Iterable[str] | None = None,
             progress: ShadowProgress | None = None) -> dict[str, dict[str, Any]]:
    """Every game's outcome with the installed engine (game id → outcome), to compare against later."""
    ids = _game_ids(store, game_ids)
    out = {}
    for done, game_id in enumerate(ids, 1):
        out[game_id] = replay_outcome(store.read_log(game_id), store.read_secret(game_id))
        if progress is not None:
            progress(done, len(ids))
    return out
