"""Where a webhook goes (issue 26, item 2): delivered to the address that was checked, no redirect followed,
a few KB of the answer read, and a delivery log that says what failed in fixed words, never what was
reached. Real servers: the suite's Redis, RQ's worker, HTTP(S) endpoints on loopback addresses; the one
stand-in is a resolver (``getaddrinfo``'s signature) for names that resolve elsewhere later."""

from __future__ import annotations

import datetime
import socket
import ssl

import pytest
import redis as redis_lib
from logging_state import kept
from notify_servers import http_endpoint
from ports import free_port
from rq.serializers import JSONSerializer
from rq.worker import SimpleWorker
from standardwebhooks import Webhook
from test_notify_contacts import notify_env, signed_contact, signed_query  # noqa: F401 - notify_env: a fixture

from referee.notify import targets
from referee.protocol.signing import generate_key, public_key_b64
from workers import deliveries

CATEGORIES = {targets.REFUSED, targets.NOT_RESOLVED, targets.CONNECTION_FAILED, targets.TIMED_OUT,
              targets.TLS_ERROR, targets.BAD_ANSWER, targets.TOO_LARGE}


@pytest.fixture
def napp(make_app):
    return make_app(REFEREE_WEBHOOK_RETRIES="0,0,0")


def register(app, url):
    """A key and its contact for ``url`` (registered through the API, loopback allowed as by default)."""
    key = generate_key()
    answer = app.test_client().post("/contacts", json=signed_contact(key, webhook=url, events=["turn"]))
    assert answer.status_code == 201, answer.json
    return key, answer.json


def deliver_turn(app, redis_url, key, number=1):
    """Route one turn event of ``key`` and run the notify queue until it is empty (a real RQ worker)."""
    event = {"id": f"g_hooktest:{number}:turn", "type": "turn", "game": "g_hooktest", "seq": number,
             "key": public_key_b64(key), "link": "/play/games/g_hooktest"}
    assert app.extensions["referee.contacts"].route(event) == 1
    connection = redis_lib.Redis.from_url(redis_url)
    queue = deliveries.notify_queue(connection, app.config["REFEREE_QUEUE"])
    with kept():  # (RQ's worker sets its loggers' levels)
        SimpleWorker([queue], connection=connection, serializer=JSONSerializer).work(burst=True, logging_level="ERROR")


def delivery_log(app, key, contact):
    answer = app.test_client().get(f"/contacts/{contact['id']}/deliveries?" + signed_query(
        key, ctx="referee/contact-deliveries", contact=contact["id"]))
    assert answer.status_code == 200, answer.json
    return answer.json["deliveries"]


def pinned_to(*answers):
    """A resolver that answers each call with the next address of ``answers`` (the last one from then on),
    as a name whose DNS record changes between two look-ups; ``.calls`` counts the look-ups."""
    calls = []

    def resolve(host, port, family=0, kind=0, *rest):
        calls.append(host)
        address = answers[min(len(calls), len(answers)) - 1]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)]

    resolve.calls = calls
    return resolve


# (a) -------------------------------------------------------------------------------------------------
@pytest.mark.usefixtures("notify_env")
def test_a_redirect_is_a_failed_delivery_and_is_not_followed(napp, redis_url):
    with http_endpoint(status=200) as inside, http_endpoint(status=302, headers=(("location", inside.url),)) as hook:
        key, contact = register(napp, hook.url)
        deliver_turn(napp, redis_url, key)
        assert hook.requests and not inside.requests  # the second endpoint never hears from the referee
        rows = delivery_log(napp, key, contact)
        assert rows and all(not row["ok"] and row["status"] == 302 for row in rows)
        assert {row["error"] for row in rows} == {"redirect not followed (HTTP 302)"}
        assert all(inside.url not in str(row) for row in rows)


# (b) -------------------------------------------------------------------------------------------------
@pytest.mark.usefixtures("notify_env")
def test_a_loopback_name_is_refused_at_delivery_without_a_connection(napp, redis_url, monkeypatch):
    with http_endpoint() as hook:
        # registered while loopback was allowed (REFEREE_WEBHOOK_PRIVATE=1), delivered once it is not
        key, contact = register(napp, f"http://localhost:{hook.port}/hook")
        monkeypatch.setenv("REFEREE_WEBHOOK_PRIVATE", "0")
        deliveries.reset_context()
        deliver_turn(napp, redis_url, key)
        assert hook.requests == []
        rows = delivery_log(napp, key, contact)
        assert rows and {row["error"] for row in rows} == {"refused: private address"}
        assert all(row["status"] is None and "ms" not in row for row in rows)  # refused before any connection


def test_registration_under_the_restriction_names_the_problem(make_app, redis_url):
    app = make_app(REFEREE_WEBHOOK_PRIVATE=False)
    for url in ("http://localhost:8080/hook", "http://169.254.169.254/latest/meta-data", "http://[::1]/hook",
                "http://10.1.2.3/hook", "http://[::ffff:127.0.0.1]/hook", "http://127.0.0.1:99999/hook"):
        answer = app.test_client().post("/contacts", json=signed_contact(generate_key(), webhook=url))
        assert answer.status_code == 400, (url, answer.json)
        problems = answer.json["error"]["details"]["problems"]
        assert problems[0]["path"] == "$.envelope.webhook" and problems[0]["problem"], url


def test_the_registration_and_the_delivery_share_one_check():
    for address in ("127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
                    "0.0.0.0", "224.0.0.1", "240.0.0.1", "255.255.255.255", "::1", "::", "fe80::1%eth0",
                    "fc00::1", "fec0::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"):
        assert targets.forbidden_address(address), address
    for address in ("93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "::ffff:1.1.1.1"):
        assert not targets.forbidden_address(address), address
    refuse = pinned_to("169.254.169.254")
    assert targets.url_problem("http://hook.example/x", allow_private=False, resolve=refuse) == targets.PRIVATE_PROBLEM
    outcome = targets.post("http://hook.example/x", b"{}", {}, timeout=0.5, allow_private=False, resolve=refuse)
    assert (outcome.error, outcome.status, outcome.ms) == (targets.REFUSED, None, None)


# (c) -------------------------------------------------------------------------------------------------
def test_the_connection_goes_to_the_address_that_was_checked():
    """A name that resolves to one address when checked and to another a moment later (DNS rebinding): the
    delivery resolves once and connects to the address it checked, with the name in the Host header."""
    with http_endpoint(host="127.0.0.1") as checked, http_endpoint(host="127.0.0.2", port=checked.port) as other:
        url = f"http://hook.example:{checked.port}/hook?x=1"
        resolve = pinned_to("127.0.0.1", "127.0.0.2")
        outcome = targets.post(url, b'{"a":1}', {"content-type": "application/json"}, timeout=2,
                               allow_private=True, resolve=resolve)
        assert outcome.ok and outcome.status == 204, outcome
        assert resolve.calls == ["hook.example"]  # one look-up per delivery, none by the connection
        assert len(checked.requests) == 1 and other.requests == []
        request = checked.requests[0]
        assert request["headers"]["host"] == f"hook.example:{checked.port}"
        assert (request["method"], request["path"], request["body"]) == ("POST", "/hook?x=1", b'{"a":1}')
        # the next delivery resolves again, and goes where the name points then
        assert targets.post(url, b"{}", {}, timeout=2, allow_private=True, resolve=resolve).ok
        assert len(other.requests) == 1


def test_a_name_checked_public_at_registration_and_private_at_delivery_is_refused():
    with http_endpoint() as hook:
        url = f"http://hook.example:{hook.port}/hook"
        resolve = pinned_to("93.184.215.14", "127.0.0.1")  # public when registered, loopback when delivered
        assert targets.url_problem(url, allow_private=False, resolve=resolve) is None
        outcome = targets.post(url, b"{}", {}, timeout=0.5, allow_private=False, resolve=resolve)
        assert (outcome.ok, outcome.error, outcome.ms) == (False, targets.REFUSED, None)
        assert "127.0.0.1" in outcome.detail  # for the operator's log
        assert hook.requests == [] and len(resolve.calls) == 2


def test_https_is_checked_for_the_name_not_the_address(tmp_path):
    ca, server = _certificates(tmp_path, "hook.example")
    with http_endpoint(tls=server) as hook:
        resolve = pinned_to("127.0.0.1")
        client = ssl.create_default_context(cafile=str(ca))
        good = targets.post(f"https://hook.example:{hook.port}/hook", b"{}", {}, timeout=2, allow_private=True,
                            resolve=resolve, context=client)
        assert good.ok and hook.requests[0]["headers"]["host"] == f"hook.example:{hook.port}"
        wrong = targets.post(f"https://other.example:{hook.port}/hook", b"{}", {}, timeout=2, allow_private=True,
                             resolve=resolve, context=client)
        assert (wrong.ok, wrong.error, wrong.status) == (False, targets.TLS_ERROR, None)
        assert len(hook.requests) == 1


# (d) -------------------------------------------------------------------------------------------------
@pytest.mark.usefixtures("notify_env")
def test_an_answer_of_a_megabyte_is_read_only_up_to_the_limit(napp, redis_url):
    with http_endpoint(status=200, body=b"x" * 1_000_000) as big_body:
        outcome = targets.post(big_body.url, b"{}", {}, timeout=2, allow_private=True)
        assert outcome.ok and outcome.status == 200
        assert 0 < outcome.read <= targets.ANSWER_LIMIT
    head = tuple((f"x-pad-{i}", "a" * 62_500) for i in range(16))  # a megabyte of headers before the body
    with http_endpoint(status=200, headers=head) as big_head:
        outcome = targets.post(big_head.url, b"{}", {}, timeout=2, allow_private=True)
        assert (outcome.ok, outcome.error) == (False, targets.TOO_LARGE)
        assert outcome.read <= targets.ANSWER_LIMIT
        key, contact = register(napp, big_head.url)
        deliver_turn(napp, redis_url, key)
        rows = delivery_log(napp, key, contact)
        assert rows and {(row["ok"], row["error"]) for row in rows} == {(False, "answer too large")}


# (e) -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["closed_port", "not_http", "hangs"])
@pytest.mark.usefixtures("notify_env")
def test_the_delivery_log_says_what_failed_in_fixed_words(napp, redis_url, case, monkeypatch):
    expected = {"closed_port": "connection failed", "not_http": "not an HTTP answer", "hangs": "timed out"}[case]
    if case == "hangs":  # it hangs for 1 s; the others answer at once, within notify_env's 3 s on a loaded machine
        monkeypatch.setenv("REFEREE_WEBHOOK_TIMEOUT", "0.5")
    answers = {"not_http": {"raw": b"SSH-2.0-OpenSSH_9.6\r\n"}, "hangs": {"hang": 1.0}}.get(case, {})
    with http_endpoint(**answers) as hook:
        url = hook.url if case != "closed_port" else f"http://127.0.0.1:{free_port()}/hook"
        key, contact = register(napp, url)
        deliver_turn(napp, redis_url, key)
    rows = delivery_log(napp, key, contact)
    assert rows
    for row in rows:
        assert row["ok"] is False and row["error"] == expected, row
        assert row["error"] in CATEGORIES
        text = str(row)
        for leak in ("Error", "Errno", "refused", "SSH", "urlopen", str(hook.port)):
            assert leak not in text.replace(url, ""), (leak, row)


@pytest.mark.usefixtures("notify_env")
def test_a_delivered_webhook_still_verifies_and_logs_its_time(napp, redis_url):
    with http_endpoint(status=200) as hook:
        key, contact = register(napp, hook.url)
        deliver_turn(napp, redis_url, key)
        assert len(hook.requests) == 1
        request = hook.requests[0]
        event = Webhook(contact["secret"]).verify(request["body"], request["headers"])
        assert event["link"] == "https://referee.example/play/games/g_hooktest"
        (row,) = delivery_log(napp, key, contact)
        assert row["ok"] and row["status"] == 200 and "error" not in row and isinstance(row["ms"], int)


def _certificates(tmp_path, name):
    """A test CA and an ``ssl`` server context with a certificate for ``name`` that it signed."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def make(subject, issuer, key, signer, *, ca):
        start = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
        builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if ca:
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                decipher_only=False), critical=True)
        else:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_cert = make("referee test CA", "referee test CA", ca_key, ca_key, ca=True)
    leaf = make(name, "referee test CA", leaf_key, ca_key, ca=False)
    ca_file, cert_file, key_file = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(cert_file), str(key_file))
    return ca_file, server
