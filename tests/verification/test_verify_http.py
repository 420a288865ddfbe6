"""Verification over HTTP: games played through the real API, exported, and verified offline and via
``POST /verify``; the referee key; size limits and junk."""

from __future__ import annotations

import copy
import io
import json
import os
import random

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from gamelogs import GAMES, finished_log, seat_key

from referee.app import create_app
from referee.cli.verification import verify_command
from referee.protocol.signing import ACCEPT_CTX, MOVE_CTX, b64url_encode, public_key_b64, sign
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle, sign_bundle

AT = "2026-11-21T10:00:00Z"


def make_app(tmp_path, **config):
    settings = {"REFEREE_STORE": "memory", "REFEREE_KEY_FILE": str(tmp_path / "referee-key"), "TESTING": True,
                **config}
    return create_app(settings)


@pytest.fixture
def app(tmp_path):
    return make_app(tmp_path)


@pytest.fixture
def client(app):
    return app.test_client()


def post_json(client, path, body, expect=202):
    response = client.post(path, data=json.dumps(body), content_type="application/json")
    assert response.status_code == expect, response.get_json()
    return response.get_json()


def play_over_http(client, ruleset_name, players, seed=0, moves=None):
    """Create a seeded game through the API, accept it from every seat, and play random legal moves
    (signed by each seat) until it ends or ``moves`` moves have been made. Returns the game id."""
    keys = [seat_key(1000 + seed, i) for i in range(players)]
    chooser = random.Random(seed)
    created = post_json(client, "/games", {"ruleset": ruleset_name, "seats": [
        {"name": f"p{i}", "key": public_key_b64(k)} for i, k in enumerate(keys)]}, expect=201)
    game_id = created["game"]
    for seat, key in enumerate(keys):
        state = client.get(f"/games/{game_id}").get_json()
        envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game_id, "seat": seat, "seq": state["seq"],
                    "prev": state["head"], "entropy": b64url_encode(os.urandom(32)), "at": AT}
        post_json(client, f"/games/{game_id}/accept", {"envelope": envelope, "sig": sign(key, envelope)})
    played = 0
    while moves is None or played < moves:
        legal = client.get(f"/games/{game_id}/legal-moves").get_json()
        if legal["status"] != "active":
            break
        seat = legal["to_move"]
        envelope = {"v": 1, "ctx": MOVE_CTX, "game": game_id, "seat": seat, "seq": legal["seq"],
                    "prev": legal["head"], "move": chooser.choice(legal["moves"]), "at": AT}
        post_json(client, f"/games/{game_id}/moves", {"envelope": envelope, "sig": sign(keys[seat], envelope)})
        played += 1
    return game_id


@pytest.mark.parametrize(("ruleset_name", "players"), GAMES)
def test_game_played_over_http_exports_a_bundle_that_verifies_offline_and_over_http(
        client, tmp_path, ruleset_name, players):
    game_id = play_over_http(client, ruleset_name, players, seed=players)
    assert client.get(f"/games/{game_id}").get_json()["status"] == "finished"
    referee_key = client.get("/referee-key").get_json()
    assert referee_key["algorithm"] == "Ed25519"

    response = client.get(f"/games/{game_id}/export")
    assert response.status_code == 200 and response.mimetype == "application/json"
    bundle = response.get_json()
    assert bundle["format"] == "referee-bundle/1" and bundle["interim"] is False and bundle["game"] == game_id
    assert bundle["log"] == client.get(f"/games/{game_id}/log?limit=1000").get_json()["entries"]
    assert bundle["log"][-1]["type"] == "revealed"
    assert bundle["result"] == client.get(f"/games/{game_id}/result").get_json()["result"]
    assert bundle["referee_key"] == referee_key["key"]

    offline = verify_bundle(bundle, referee_key=referee_key["key"])
    assert offline.ok, offline.to_dict()

    path = tmp_path / "bundle.json"
    path.write_bytes(response.data)
    cli = CliRunner().invoke(verify_command, [str(path), "--referee-key", referee_key["key"]])
    assert cli.exit_code == 0 and cli.stdout.splitlines()[-1] == "VERIFIED: every check passed."

    report = post_json(client, "/verify", bundle, expect=200)
    assert report["ok"] is True and report["status"] == "verified" and report["signed_by_this_referee"] is True
    assert [c["status"] for c in report["checks"]] == ["passed"] * 3 + ["skipped"] + ["passed"] * 6
    assert report == {**verify_bundle(bundle).to_dict(), "signed_by_this_referee": True}


def test_running_game_exports_an_interim_bundle(client):
    game_id = play_over_http(client, "fivetowers", 3, seed=5, moves=7)
    bundle = client.get(f"/games/{game_id}/export").get_json()
    assert bundle["interim"] is True and bundle["result"] is None
    assert all(entry["type"] != "revealed" for entry in bundle["log"])
    report = post_json(client, "/verify", bundle, expect=200)
    assert report["status"] == "incomplete" and report["ok"] is False and report["first_failure"] is None
    assert {c["name"]: c["status"] for c in report["checks"]}["seed_commitment"] == "skipped"


def test_tampered_bundle_is_200_with_the_failure_and_its_position(client, app):
    game_id = play_over_http(client, "fivetowers", 2, seed=6)
    bundle = client.get(f"/games/{game_id}/export").get_json()
    forged = copy.deepcopy(bundle)
    forged["log"][9]["at"] = "2030-01-01T00:00:00Z"
    report = post_json(client, "/verify", sign_bundle(forged, app.extensions["referee.key"]), expect=200)
    assert report["ok"] is False and report["status"] == "failed"
    assert report["first_failure"] == {"check": "hash_chain", "position": 9,
                                       "reason": "hash does not chain from the previous entry"}
    not_resigned = post_json(client, "/verify", forged, expect=200)
    assert not_resigned["first_failure"]["check"] == "referee_signature"


def test_expected_referee_key_and_foreign_bundles(client, referee_key):
    bundle = build_bundle(finished_log("fivetowers", 3).entries, referee_key)  # signed by another referee
    report = post_json(client, "/verify", bundle, expect=200)
    assert report["ok"] is True and report["signed_by_this_referee"] is False
    other = public_key_b64(Ed25519PrivateKey.generate())
    response = client.post(f"/verify?referee_key={other}", data=json.dumps(bundle), content_type="application/json")
    assert response.status_code == 200
    assert response.get_json()["first_failure"]["check"] == "referee_signature"


def test_bundles_larger_than_the_api_body_limit_are_accepted_up_to_the_bundle_limit(tmp_path, referee_key):
    bundle = build_bundle(finished_log("fivetowers", 5).entries, referee_key)
    body = json.dumps(bundle).encode()
    app = make_app(tmp_path, REFEREE_MAX_BODY=4096, REFEREE_MAX_BUNDLE=len(body))
    client = app.test_client()
    assert len(body) > 4096
    ok = client.post("/verify", data=body, content_type="application/json")
    assert ok.status_code == 200 and ok.get_json()["ok"] is True
    too_big = client.post("/verify", data=body + b" ", content_type="application/json")
    assert too_big.status_code == 413
    assert too_big.get_json() == {"error": {"code": "request/too_large", "message": f"the body is larger than "
                                            f"the limit of {len(body)} bytes", "details": {"limit": len(body)}}}
    # without a Content-Length (chunked), the limit holds while reading
    def chunked(data):
        return client.post("/verify", input_stream=io.BytesIO(data), environ_base={"wsgi.input_terminated": True},
                           headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})

    streamed = chunked(body + b" ")
    assert streamed.status_code == 413 and streamed.get_json()["error"]["code"] == "request/too_large"
    assert chunked(body).get_json()["ok"] is True


@pytest.mark.parametrize(("body", "problem"), [
    (b"", "the body is empty; POST a bundle"),
    (b"{not json", "not valid JSON"),
    (b'{"format": "referee-bundle/1", "x": 0.5}', "$.x: floats are not allowed"),
    (b'{"format": "referee-bundle/1", "a": 1, "a": 2}', "duplicate key 'a'"),
    (b"[1, 2, 3]", "this is not a referee bundle"),
    (b'{"hello": "world"}', "this is not a referee bundle"),
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64 levels"),  # once a RecursionError, a 500
    (b'{"format": "referee-bundle/1", "log": ' + b"[" * 500 + b"]" * 500 + b"}", "nested deeper than 64 levels"),
])
def test_junk_is_400_with_a_clear_error(client, body, problem):
    response = client.post("/verify", data=body, content_type="application/json")
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["code"] == "request/invalid" and problem in error["message"]
    assert error["details"]["problems"]


def test_a_bundle_shaped_object_with_broken_fields_is_a_failed_report_not_a_400(client):
    report = post_json(client, "/verify", {"format": "referee-bundle/1", "log": "nope"}, expect=200)
    assert report["ok"] is False and report["first_failure"]["check"] == "format"
    assert "log must be a non-empty list of entries" in report["first_failure"]["reason"]


def test_export_of_unknown_games_is_404(client):
    for game_id in ("g_doesnotexist", "bad id!"):
        response = client.get(f"/games/{game_id}/export")
        assert response.status_code == 404
        assert response.get_json()["error"]["code"] == "game/not_found"


def test_referee_key_is_the_key_file_and_survives_a_restart(tmp_path):
    first = make_app(tmp_path).test_client().get("/referee-key").get_json()
    second = make_app(tmp_path).test_client().get("/referee-key").get_json()
    assert first == second and len(first["key"]) == 43
    assert (tmp_path / "referee-key").stat().st_mode & 0o777 == 0o600


def test_openapi_documents_the_verification_endpoints(client):
    paths = client.get("/openapi.json").get_json()["paths"]
    assert {"/referee-key", "/games/{game_id}/export", "/verify"} <= set(paths)
    assert "413" in paths["/verify"]["post"]["responses"]


def test_game_on_the_real_redis_store_exports_and_verifies(tmp_path, redis_url):
    app = make_app(tmp_path, REFEREE_STORE="redis", REDIS_URL=redis_url, REFEREE_DISPATCH="inline")
    client = app.test_client()
    game_id = play_over_http(client, "towerup", 3, seed=8)
    bundle = client.get(f"/games/{game_id}/export").get_json()
    assert bundle["interim"] is False
    key = client.get("/referee-key").get_json()["key"]
    assert verify_bundle(bundle, referee_key=key).ok
    assert post_json(client, "/verify", bundle, expect=200)["ok"] is True
