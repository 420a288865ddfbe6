"""Shadow replay lists exactly the stored games that a deliberately changed rule would change.

The store is filled the way the service fills it: each game's sealed log appended entry by entry, then
the service's own projector (``workers.projector.Projector``) folds it into the stored projection. The
tests then change one rule of the installed engine (monkeypatch) and compare shadow replay's list with
the games the change must affect, computed independently from the logs and stored results.
"""

from __future__ import annotations

import json
from functools import cache

import pytest
from click.testing import CliRunner
from gamelogs import make_game_log

from referee.cli.verification import shadow_replay_command
from referee.games import IllegalMove, ruleset
from referee.games.fivetowers import scoring
from referee.games.fivetowers.game import FiveTowersGame
from referee.replay.shadow import shadow_replay, snapshot
from referee.store import MemoryStore, RedisStore
from workers.projector import Projector

#: (ruleset, players, seed, moves or None for a finished game)
GAMES = [("fivetowers", 2, seed, None) for seed in range(8)] + [
    ("fivetowers", 3, 20, 25), ("fivetowers", 2, 21, 12),  # running games
    ("towerup", 2, 30, None), ("towerup", 3, 31, 10),
]


@cache
def game_logs():
    return [make_game_log(name, players, seed=seed, moves=moves) for name, players, seed, moves in GAMES]


def fill(store):
    logs = {}
    for log in game_logs():
        store.create(log.game_id, log.entries[0], log.server_seed)
        for prev, entry in zip(log.entries, log.entries[1:], strict=False):
            store.append(log.game_id, entry, prev["hash"])
        Projector(store).catch_up(log.game_id)
        logs[log.game_id] = log
    return logs


@pytest.fixture
def store_and_logs():
    store = MemoryStore()
    return store, fill(store)


def big_demolition(store, game_id):
    """Games the demolition change affects: a finished game where some seat demolished 10 cards or more."""
    result = store.read_projection(game_id)["result"]
    return (result is not None and result["ruleset"] == "fivetowers"
            and any(len(seat["demolished"]) >= 10 for seat in result["seats"]))


def first_bid_of(logs, game_id, amount):
    """Position of the first logged bid of ``amount``, or None."""
    return next((e["seq"] for e in logs[game_id].entries if e["type"] == "move"
                 and e["submission"]["envelope"]["move"] == {"type": "bid", "amount": amount}), None)


def test_the_installed_engine_changes_nothing(store_and_logs):
    store, logs = store_and_logs
    report = shadow_replay(store)
    assert report.ok and report.changed == [] and report.not_comparable == []
    assert sorted(g.game for g in report.games) == sorted(logs)
    assert all(g.baseline == "projection" and g.compared_at == len(logs[g.game].entries) for g in report.games)


def test_a_scoring_change_lists_exactly_the_games_whose_result_changes(store_and_logs, monkeypatch):
    store, logs = store_and_logs
    expected = sorted(g for g in logs if big_demolition(store, g))
    assert 0 < len(expected) < len(logs)  # the change must separate the games, or the test proves nothing
    original = scoring.demolition_penalty
    monkeypatch.setattr(scoring, "demolition_penalty", lambda n: original(n) * (2 if n >= 10 else 1))
    report = shadow_replay(store)
    assert sorted(g.game for g in report.changed) == expected
    for game in report.changed:
        assert game.changed == ["result"] and game.first_verdict_change is None
        assert game.details["result"]["before"] == store.read_projection(game.game)["result"]
        assert game.details["result"]["after"] != game.details["result"]["before"]
    assert report.to_dict()["changed"] == expected and not report.ok


def test_a_legality_change_lists_exactly_the_games_with_such_a_move_and_where(store_and_logs, monkeypatch):
    store, logs = store_and_logs
    expected = {g: first_bid_of(logs, g, 4) for g in logs if first_bid_of(logs, g, 4) is not None}
    assert 0 < len(expected) < len(logs)
    original = FiveTowersGame._play_bid

    def no_bids_of_four(self, seat, amount):
        if amount == 4:
            raise IllegalMove("bid/not_four", "FT-X1", "a bid of 4 is no longer allowed")
        return original(self, seat, amount)

    monkeypatch.setattr(FiveTowersGame, "_play_bid", no_bids_of_four)
    report = shadow_replay(store)
    assert {g.game: g.first_verdict_change for g in report.changed} == expected
    for game in report.changed:
        assert "verdicts" in game.changed and "view" in game.changed


def test_on_the_real_redis_store(redis_url, monkeypatch):
    """The same, reading logs and projections from Redis streams and hashes (the production store)."""
    store = RedisStore.from_url(redis_url)
    try:
        logs = fill(store)
        assert shadow_replay(store).ok
        expected = sorted(g for g in logs if big_demolition(store, g))
        original = scoring.demolition_penalty
        monkeypatch.setattr(scoring, "demolition_penalty", lambda n: original(n) * (2 if n >= 10 else 1))
        assert sorted(g.game for g in shadow_replay(store).changed) == expected
    finally:
        store.close()


def test_a_new_engine_version_is_listed_beside_the_changes(store_and_logs, monkeypatch):
    store, logs = store_and_logs
    monkeypatch.setattr(ruleset("fivetowers"), "version", "ffffffffffffffff")
    report = shadow_replay(store)
    assert report.changed == []  # a new version that behaves the same changes no game
    assert sorted(report.to_dict()["version_differs"]) == sorted(g for g in logs if g.startswith("g_fi"))


def test_an_engine_crash_is_a_change(store_and_logs, monkeypatch):
    store, logs = store_and_logs

    def broken(self, seat, amount):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(FiveTowersGame, "_play_bid", broken)
    report = shadow_replay(store)
    crashed = {g.game for g in report.changed if g.error}
    assert crashed == {g for g in logs if g.startswith("g_fi")}
    assert all(g.changed == ["error"] and "RuntimeError: engine bug" in g.error for g in report.changed)


def test_a_saved_snapshot_is_the_baseline_when_projections_are_missing(monkeypatch):
    store = MemoryStore()
    logs = {}
    for name, players, seed, moves in GAMES[:6]:
        log = make_game_log(name, players, seed=seed, moves=moves)
        store.create(log.game_id, log.entries[0], log.server_seed)
        for prev, entry in zip(log.entries, log.entries[1:], strict=False):
            store.append(log.game_id, entry, prev["hash"])
        logs[log.game_id] = log
    plain = shadow_replay(store)
    assert sorted(g.game for g in plain.not_comparable) == sorted(logs) and not plain.ok
    saved = snapshot(store)
    original = scoring.demolition_penalty
    monkeypatch.setattr(scoring, "demolition_penalty", lambda n: original(n) + 1)
    report = shadow_replay(store, baseline=saved)
    assert sorted(g.game for g in report.changed) == sorted(logs)
    assert all(g.baseline == "snapshot" for g in report.games)


def test_the_command(store_and_logs, monkeypatch, tmp_path):
    store, logs = store_and_logs
    runner = CliRunner()
    calm = runner.invoke(shadow_replay_command, [], obj={"store": store}, catch_exceptions=False)
    assert calm.exit_code == 0
    assert calm.stdout.splitlines()[-1] == f"{len(logs)} games replayed: 0 would change, 0 not comparable, " \
                                           f"{len(logs)} unchanged."
    assert "shadow-replay: 12/12 games" in calm.stderr  # progress for many games
    saved = tmp_path / "baseline.json"
    assert runner.invoke(shadow_replay_command, ["--save", str(saved), "-q"], obj={"store": store}).exit_code == 0
    assert set(json.loads(saved.read_text())) == set(logs)

    original = scoring.demolition_penalty
    monkeypatch.setattr(scoring, "demolition_penalty", lambda n: original(n) * (2 if n >= 10 else 1))
    expected = sorted(g for g in logs if big_demolition(store, g))
    changed = runner.invoke(shadow_replay_command, ["-q"], obj={"store": store}, catch_exceptions=False)
    assert changed.exit_code == 1 and changed.stderr == ""
    listed = [line.split()[1] for line in changed.stdout.splitlines() if line.startswith("  !  ")]
    assert sorted(listed) == expected
    assert f"  !  {expected[0]}  would change: result (fivetowers " in changed.stdout
    machine = runner.invoke(shadow_replay_command, ["--json", "-q", "--baseline", str(saved)], obj={"store": store})
    assert machine.exit_code == 1 and json.loads(machine.stdout)["changed"] == expected
    one = runner.invoke(shadow_replay_command, ["--json", "--game", expected[0]], obj={"store": store})
    assert json.loads(one.stdout)["games"] == 1


def test_the_command_says_clearly_when_the_store_cannot_be_read_or_a_game_is_unknown(store_and_logs):
    unreachable = RedisStore.from_url("redis://127.0.0.1:1/0")
    result = CliRunner().invoke(shadow_replay_command, [], obj={"store": unreachable})
    assert result.exit_code == 3 and "Error: cannot read the game store: " in result.stderr
    store, _ = store_and_logs
    unknown = CliRunner().invoke(shadow_replay_command, ["--game", "g_nope"], obj={"store": store})
    assert unknown.exit_code == 2 and "Invalid value for --game: no game 'g_nope'" in unknown.stderr
