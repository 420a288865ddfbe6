"""The API's surface: OpenAPI document, the offline docs page, rulesets, health, errors of the
framework itself, the benchmark-only endpoint, and the wiring the verifier relies on."""

from __future__ import annotations

import re

import pytest
from svc_helpers import Http

from referee.config import ConfigError, load_config
from referee.games import names, ruleset
from referee.protocol.signing import public_key_b64
from referee.store import GameNotFound


def test_openapi_document_covers_every_endpoint(http):
    status, spec = http.get("/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.")
    paths = spec["paths"]
    for path, method in [("/rulesets", "get"), ("/rulesets/{name}", "get"), ("/games", "get"), ("/games", "post"),
                         ("/games/{game_id}", "get"), ("/games/{game_id}/accept", "post"),
                         ("/games/{game_id}/moves", "post"), ("/games/{game_id}/legal-moves", "get"),
                         ("/games/{game_id}/log", "get"), ("/games/{game_id}/replay", "get"),
                         ("/games/{game_id}/result", "get"), ("/games/{game_id}/abort", "post")]:
        assert method in paths[path], (path, method)
    moves = paths["/games/{game_id}/moves"]["post"]
    assert {"200", "202", "400", "401", "403", "404", "409", "413", "422", "503"} <= set(moves["responses"])
    assert moves["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("MoveSubmission")
    envelope = spec["components"]["schemas"]["MoveEnvelope"]
    assert set(envelope["required"]) == {"v", "ctx", "game", "seat", "seq", "prev", "move"}
    assert "/_bench/noop" not in paths


def test_docs_page_works_offline(http, app):
    response = app.test_client().get("/docs")
    assert response.status_code == 200 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "<script" not in page and not re.search(r"(src|href)=\"https?://", page)
    assert "/games/{game_id}/moves" in page and 'id="schema-MoveEnvelope"' in page


def test_rulesets(http):
    status, listing = http.get("/rulesets")
    assert status == 200 and [r["name"] for r in listing["rulesets"]] == names()
    for entry in listing["rulesets"]:
        rules = ruleset(entry["name"])
        assert entry["version"] == rules.version and entry["available"]
        assert (entry["min_players"], entry["max_players"]) == (rules.min_players, rules.max_players)
    status, towerup = http.get("/rulesets/towerup")
    assert status == 200 and towerup["components"] == ruleset("towerup").components()
    status, body = http.get("/rulesets/chess")
    assert status == 404 and body["error"]["code"] == "ruleset/not_found"


def test_framework_errors_use_the_error_format(http, app):
    status, body = http.get("/nowhere")
    assert status == 404 and body["error"]["code"] == "http/not_found"
    response = app.test_client().put("/games")
    assert response.status_code == 405 and response.get_json()["error"]["code"] == "http/method_not_allowed"


def test_health_reports_durability(http):
    status, body = http.get("/health")
    assert status == 200 and body["ok"] and body["durability"] == {"appendonly": "yes", "appendfsync": "always"}


def test_bench_noop_only_when_enabled(make_app):
    assert Http(make_app().test_client()).post("/_bench/noop", {})[0] == 404
    assert Http(make_app(REFEREE_BENCH_NOOP="1").test_client()).post("/_bench/noop", {}) == (202, {"ok": True})


def test_wiring_for_the_verifier(app, http, tmp_path):
    from svc_helpers import create_game

    store, key = app.extensions["referee.store"], app.extensions["referee.key"]
    game = create_game(http, "fivetowers", 2)
    assert store.list_games() == [game.game_id]
    assert store.read_log(game.game_id)[0]["type"] == "created"
    with pytest.raises(GameNotFound):
        store.read_log("g_unknown")
    assert store.read_projection("g_unknown") is None
    key_file = tmp_path / "var" / "referee-key"
    assert key_file.exists() and oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert public_key_b64(app.extensions["referee.key"]) == public_key_b64(key)


def test_config_from_environment_and_overrides():
    config = load_config({"REFEREE_MAX_BODY": "1000"}, environ={
        "REDIS_URL": "redis://example:1/2", "REFEREE_ORGANISER_KEYS": " a, b ,,", "REFEREE_BENCH_NOOP": "yes",
        "REFEREE_VAR": "/srv/ref"})
    assert config["REDIS_URL"] == "redis://example:1/2" and config["REFEREE_MAX_BODY"] == 1000
    assert config["REFEREE_ORGANISER_KEYS"] == ["a", "b"] and config["REFEREE_BENCH_NOOP"] is True
    assert config["REFEREE_KEY_FILE"] == "/srv/ref/referee-key" and config["REFEREE_DISPATCH"] == "rq"
    assert load_config({"REFEREE_STORE": "memory"}, environ={})["REFEREE_DISPATCH"] == "inline"
    for bad in ({"REFEREE_STORE": "sqlite"}, {"REFEREE_MAX_BODY": "lots"}, {"REFEREE_MAX_BODY": 0},
                {"REFEREE_STORE": "memory", "REFEREE_DISPATCH": "rq"}):
        with pytest.raises(ConfigError):
            load_config(bad, environ={})
