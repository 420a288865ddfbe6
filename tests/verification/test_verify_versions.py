"""Pinned engine versions: a bundle made with another engine version is reported as such, never silently
verified with whatever engine happens to be installed."""

from __future__ import annotations

import pytest
from gamelogs import GAMES, make_game_log, reseal

from referee.games import ruleset
from referee.games.fivetowers import scoring
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle

OLD = "0123456789abcdef"


@pytest.mark.parametrize(("ruleset_name", "players"), GAMES)
def test_bundle_of_another_engine_version_is_reported(ruleset_name, players, referee_key):
    log = make_game_log(ruleset_name, players, seed=21, version=OLD)
    bundle = build_bundle(log.entries, referee_key)
    assert bundle["ruleset"]["version"] == OLD
    report = verify_bundle(bundle)
    installed = ruleset(ruleset_name).version
    version = report.check("ruleset_version")
    assert version.status == "failed" and version.position == 0
    assert version.details == {"pinned": OLD, "installed": installed}
    assert f"pinned to {ruleset_name} {OLD} but {ruleset_name} {installed} is installed" in version.reason
    # the rest still ran, with the installed engine, and says so
    for name in ("replay", "result"):
        check = report.check(name)
        assert check.status == "passed"
        assert f"(with the installed engine {installed}, not the pinned {OLD})" in check.reason
    assert report.status == "version_mismatch" and not report.ok and report.exit_code == 4
    assert report.summary["ruleset"] == {"name": ruleset_name, "pinned_version": OLD, "installed_version": installed}


def test_version_mismatch_and_a_changed_rule_is_a_failure(referee_key, monkeypatch):
    """The old engine scored demolitions differently: the installed engine recomputes another result."""
    log = next(g for g in (make_game_log("fivetowers", 3, seed=s, version=OLD) for s in range(40))
               if any(seat["demolished"] for seat in g.game.result()["seats"]))
    bundle = build_bundle(log.entries, referee_key)
    monkeypatch.setattr(scoring, "demolition_penalty", lambda n: n * (n + 1))
    report = verify_bundle(bundle)
    assert [c.name for c in report.checks if c.status == "failed"] == ["ruleset_version", "result"]
    assert report.status == "failed" and report.exit_code == 1
    assert "demolition_penalty" in report.check("result").reason


def test_unknown_ruleset_is_reported_and_not_replayed(referee_key):
    log = make_game_log("fivetowers", 2, seed=1, moves=3)
    created = {**log.entries[0], "ruleset": {"name": "chess", "version": OLD}}
    entries = reseal([created, *log.entries[1:]])
    report = verify_bundle(build_bundle(entries, referee_key))
    assert report.check("ruleset_version").reason == "ruleset 'chess' is not installed"
    assert report.check("replay").status == "failed" and report.check("replay").position == 0
    assert report.check("result").status == "skipped"
    assert report.status == "failed"
