"""One address written two ways is one address (issue 37, item 8): a dual-stack socket reports an IPv4 peer
as ``::ffff:127.0.0.1``, which the trusted proxies, the ``/metrics`` allow-list and the rate limits read
as the IPv4 address it is (``referee.addresses.normalised``). 6to4 (``2002:7f00:1::``), IPv4-compatible and
NAT64 addresses carry an IPv4 address without being it: never trusted as it, and a webhook may reach them
only where it may reach that IPv4 address."""

from __future__ import annotations

import pytest

from referee.clock import now
from referee.notify import targets
from referee.protocol.signing import generate_key, public_key_b64, sign

CARRYING_LOOPBACK = ["2002:7f00:1::", "::127.0.0.1", "64:ff9b::7f00:1"]


def _peer_seen(app, remote: str) -> str:
    @app.get("/_peer")
    def peer():
        from flask import request

        return {"addr": request.remote_addr}

    return app.test_client().get("/_peer", headers={"X-Forwarded-For": "203.0.113.9"},
                                 environ_base={"REMOTE_ADDR": remote}).get_json()["addr"]


def test_a_trusted_proxy_connecting_ipv4_mapped_is_trusted(make_app):
    assert _peer_seen(make_app(REFEREE_TRUSTED_PROXIES="10.1.0.0/16"), "::ffff:10.1.2.3") == "203.0.113.9"
    assert _peer_seen(make_app(REFEREE_TRUSTED_PROXIES="10.1.0.0/16"), "2002:a01:203::1") == "2002:a01:203::1"


def test_a_proxy_named_in_its_ipv4_mapped_form_is_the_ipv4_proxy(make_app):
    assert _peer_seen(make_app(REFEREE_TRUSTED_PROXIES="::ffff:10.1.0.0/112"), "10.1.2.3") == "203.0.113.9"
    assert _peer_seen(make_app(REFEREE_TRUSTED_PROXIES="::ffff:10.1.0.0/112"), "10.2.0.1") == "10.2.0.1"


def test_the_metrics_allow_list_takes_mapped_loopback_and_no_relayed_form(make_app):
    client = make_app().test_client()
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "::ffff:127.0.0.1"}).status_code == 200
    for remote in CARRYING_LOOPBACK:
        assert client.get("/metrics", environ_base={"REMOTE_ADDR": remote}).status_code == 404, remote


@pytest.mark.parametrize("address", ["2002:7f00:1::", "2002:a00:1::", "2002:a9fe:a9fe::", "::127.0.0.1",
                                     "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe"])
def test_a_webhook_may_not_reach_loopback_or_a_private_network_through_an_ipv6_form(address):
    assert targets.forbidden_address(address), address


def test_a_public_ipv4_address_in_an_ipv6_form_stays_allowed():
    for address in ("2002:101:101::", "2606:4700:4700::1111"):
        assert not targets.forbidden_address(address), address


def test_a_webhook_at_6to4_loopback_is_refused_at_registration(make_app):
    app = make_app(REFEREE_WEBHOOK_PRIVATE=False)
    key = generate_key()
    envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key), "webhook": "http://[2002:7f00:1::]/h",
                "at": now()}
    answer = app.test_client().post("/contacts", json={"envelope": envelope, "sig": sign(key, envelope)})
    assert answer.status_code == 400, answer.json
    assert answer.json["error"]["details"]["problems"][0]["path"] == "$.envelope.webhook"


def test_one_client_counts_once_whichever_way_its_address_is_written(make_app):
    app = make_app(REFEREE_RATE_CREATE="2 per minute")
    client = app.test_client()
    seats = [{"name": f"p{i}", "key": public_key_b64(generate_key())} for i in range(2)]
    statuses = [client.post("/games", json={"ruleset": "fivetowers", "seats": seats, "nonce": str(n)},
                            environ_base={"REMOTE_ADDR": remote}).status_code
                for n, remote in enumerate(["192.0.2.7", "::ffff:192.0.2.7", "192.0.2.7"])]
    assert statuses == [201, 201, 429]


def test_gunicorn_believes_a_trusted_proxy_connecting_ipv4_mapped(monkeypatch):
    """gunicorn compares its peer with ``forwarded_allow_ips`` as written: the list carries the mapped forms."""
    import importlib
    import ipaddress

    import referee.running.gunicorn_conf as conf

    monkeypatch.setenv("REFEREE_TRUSTED_PROXIES", "10.1.0.0/16")
    allowed = [ipaddress.ip_network(item) for item in importlib.reload(conf).forwarded_allow_ips.split(",")]
    monkeypatch.undo()
    importlib.reload(conf)
    assert any(ipaddress.ip_address("::ffff:10.1.2.3") in network for network in allowed)
    assert not any(ipaddress.ip_address("::ffff:10.2.0.1") in network for network in allowed)
