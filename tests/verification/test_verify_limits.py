"""``POST /verify`` limits (issue 14, item 5): a body limit sized to the longest real game, and a rate limit
per client address counted in the work Redis (Flask-Limiter), answered 413 and 429."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
import redis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from gamelogs import GameLog, seat_key

from referee.api.limits import KEY_PREFIX
from referee.app import create_app
from referee.config import DEFAULTS, ConfigError, load_config
from referee.games import ruleset
from referee.protocol.signing import public_key_b64
from referee.verify.bundle import build_bundle

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"


def golden_bundle_size(path: Path) -> int:
    """Bytes of the exported bundle of the golden game at ``path``: its log as the service writes it (created,
    a signed acceptance per seat, started, every move as a signed submission, revealed) and its result.
    The moves are not replayed (the golden game's seed is not the log's): only their size matters here."""
    golden = json.loads(path.read_text())
    rules, players = ruleset(golden["ruleset"]), golden["players"]
    keys = [seat_key(1, seat) for seat in range(players)]
    log = GameLog("g_" + "0" * 16, rules.name, keys, hashlib.sha256(path.name.encode()).digest())
    log.append({"type": "created", "game": log.game_id, "ruleset": {"name": rules.name, "version": rules.version},
                "seats": [{"name": f"player {i}", "key": public_key_b64(k)} for i, k in enumerate(keys)],
                "options": golden.get("options") or {}, "organiser": None, "mode": "seeded",
                "commitment": hashlib.sha256(log.server_seed).hexdigest()})
    for seat in range(players):
        log.accept(seat, bytes(32))
    log.append({"type": "started"})
    for step in golden["moves"]:
        envelope = log.envelope("referee/move", step["seat"], move=step["move"])
        log.append({"type": "move", "seat": step["seat"], "submission": log.signed(envelope, keys[step["seat"]])})
    log.reveal()
    bundle = build_bundle(log.entries, Ed25519PrivateKey.generate(), result=golden["expected"]["result"])
    return len(json.dumps(bundle))


def test_the_default_bundle_limit_is_about_ten_times_the_longest_golden_game():
    sizes = {path.name: golden_bundle_size(path) for path in sorted(GOLDEN.glob("*.json"))}
    longest = max(sizes.values())
    assert sizes["towerup-4p.json"] == longest  # 187 moves, ~106 KB (docs/service.md)
    assert 90_000 < longest < 130_000, sizes
    assert 8 * longest <= DEFAULTS["REFEREE_MAX_BUNDLE"] <= 12 * longest


def test_a_bundle_over_the_limit_is_413_and_not_verified(tmp_path, make_bundle):
    body = json.dumps(make_bundle("fivetowers", 3)).encode()
    app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": str(tmp_path), "REFEREE_MAX_BUNDLE": len(body)})
    client = app.test_client()
    assert client.post("/verify", data=body, content_type="application/json").status_code == 200
    response = client.post("/verify", data=body + b"\n", content_type="application/json")
    assert response.status_code == 413
    assert response.get_json()["error"] == {"code": "request/too_large", "details": {"limit": len(body)},
                                            "message": f"the body is larger than the limit of {len(body)} bytes"}


@pytest.fixture
def limited(tmp_path, redis_url):
    """An app on the real Redis whose /verify takes 2 requests per second per client."""
    app = create_app({"REDIS_URL": redis_url, "REFEREE_VAR": str(tmp_path), "REFEREE_DISPATCH": "none",
                      "REFEREE_RATE_VERIFY": "2 per 1 second"})
    yield app
    app.extensions["referee.store"].close()


def test_verify_is_rate_limited_per_client_in_redis(limited, redis_url, make_bundle):
    client = limited.test_client()
    bundle = json.dumps(make_bundle("fivetowers", 3))

    def post(body, address="192.0.2.1"):
        return client.post("/verify", data=body, content_type="application/json",
                           environ_base={"REMOTE_ADDR": address})

    assert post("{}").status_code == 400  # a refused body counts too
    assert post(bundle).status_code == 200
    refused = post(bundle)
    assert refused.status_code == 429
    retry_after = int(refused.headers["Retry-After"])
    assert 1 <= retry_after <= 2  # the window is 1 s; Redis keeps whole seconds
    error = refused.get_json()["error"]
    assert error["code"] == "rate/limited" and error["details"]["retry_after"] == retry_after
    assert error["details"]["limit"] == "2 per 1 second"
    # counted in the work Redis (here the same server as the log's)
    conn = redis.Redis.from_url(redis_url)
    try:
        assert [key for key in conn.scan_iter(f"*{KEY_PREFIX}/*") if b"192.0.2.1" in key]
    finally:
        conn.close()
    # another client is not affected; the first one is served again once the window is over
    assert post(bundle, address="192.0.2.2").get_json()["ok"] is True
    time.sleep(1.1)
    assert post(bundle).status_code == 200


def test_a_rate_setting_must_be_a_rate():
    assert load_config({"REFEREE_RATE_VERIFY": "3/second;100/hour"}, environ={})["REFEREE_RATE_VERIFY"]
    with pytest.raises(ConfigError, match="REFEREE_RATE_VERIFY"):
        load_config({"REFEREE_RATE_VERIFY": "lots"}, environ={})
