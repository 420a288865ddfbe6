"""Browser defences and forwarded headers (issue 17, CONTRACT section 11): the security headers on every
route of ``app.url_map`` (so that a new route cannot miss them), on errors and static files; the pages
keep no inline script or style; a real gunicorn started with the deployment's config ignores
``SCRIPT_NAME``/``X-Forwarded-*`` from an untrusted peer; links take their prefix from
``REFEREE_PUBLIC_URL``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from ports import free_port
from svc_helpers import stop_process

from referee.config import ConfigError, load_config, with_password
from referee.web.defences import CONTENT_SECURITY_POLICY

REPO = str(Path(__file__).resolve().parents[2])
PLACEHOLDERS = {"filename": "style.css", "game_id": "placeholder-game", "name": "fivetowers", "position": 0}


def assert_secured(response, what: str) -> None:
    csp = response.headers.get("Content-Security-Policy", "")
    directives = {part.strip().split(" ", 1)[0]: part.strip() for part in csp.split(";") if part.strip()}
    assert directives.get("default-src") == "default-src 'self'", (what, csp)
    assert directives.get("object-src") == "object-src 'none'", (what, csp)
    assert directives.get("base-uri") == "base-uri 'none'", (what, csp)
    assert directives.get("frame-ancestors") == "frame-ancestors 'none'", (what, csp)
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp, (what, csp)
    assert response.headers.get("X-Content-Type-Options") == "nosniff", what
    assert response.headers.get("Referrer-Policy") in {"no-referrer", "same-origin"}, what


def test_every_route_of_the_url_map_answers_with_the_security_headers(app):
    client = app.test_client()
    rules = list(app.url_map.iter_rules())
    assert len(rules) >= 15  # the API, the pages, the docs, the static folders
    seen = 0
    for rule in rules:
        args = {name: PLACEHOLDERS.get(name, "x") for name in rule.arguments}
        if rule.endpoint == "docs.static":
            args["filename"] = "docs.css"
        path = rule.build(args, append_unknown=False)[1]
        for method in sorted((rule.methods or set()) | {"OPTIONS"}):
            kwargs = {"json": {}} if method in {"POST", "PUT", "PATCH"} else {}
            response = client.open(path, method=method, **kwargs)
            assert_secured(response, f"{method} {path} ({rule.endpoint}) -> {response.status_code}")
            seen += 1
    assert seen >= 30


@pytest.mark.parametrize("method, path, status", [
    ("GET", "/no/such/route", 404),
    ("DELETE", "/games", 405),
    ("POST", "/games", 415),  # empty body
    ("GET", "/play/static/style.css", 200),
    ("GET", "/docs/static/docs.css", 200),
    ("GET", "/play/games/..%2f..%2fetc/replay", 404),
])
def test_errors_and_static_files_carry_the_headers(app, method, path, status):
    response = app.test_client().open(path, method=method)
    assert response.status_code == status
    assert_secured(response, path)


def test_an_unhandled_error_carries_the_headers(make_app):
    app = make_app()
    app.testing = False  # a real 500, not an exception raised into the test

    @app.get("/_boom")
    def boom():
        raise RuntimeError("boom")

    response = app.test_client().get("/_boom")
    assert response.status_code == 500 and response.get_json()["error"]["code"] == "server/error"
    assert_secured(response, "500")


def test_pages_and_docs_have_no_inline_script_or_style(app):
    client = app.test_client()
    for path in ("/play/", "/play/new", "/play/keys", "/play/games/abc", "/play/games/abc/replay", "/docs"):
        page = client.get(path).get_data(as_text=True)
        assert "<style" not in page and " style=" not in page, path
        for tag in re.findall(r"<script\b[^>]*>", page):
            if tag == '<script type="importmap">':  # the one inline script: data, allowed by its hash alone
                continue  # (tests/service/test_static_versions.py checks the hash and the policy)
            assert re.search(r"\bsrc=\"/", tag), (path, tag)  # a file of this origin, never inline
        assert not re.search(r"\son[a-z]+=", page), path  # no inline event handlers


def test_csp_is_at_least_what_the_contract_names():
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY


# -- forwarded headers and the public URL ------------------------------------------------------------------
def _script_and_link_urls(page: str) -> list[str]:
    return re.findall(r"(?:src|href)=\"([^\"]*)\"", page) + re.findall(r"data-(?:api|web)=\"([^\"]*)\"", page)


EVIL_HEADERS = {"SCRIPT_NAME": "//evil.example", "X-Forwarded-Host": "evil.example",
                "X-Forwarded-Prefix": "//evil.example", "X-Forwarded-Proto": "https", "Host": "evil.example",
                "X-Original-URL": "//evil.example/", "Forwarded": "host=evil.example;proto=https"}


def test_forwarded_headers_do_not_change_the_links_in_the_app(app):
    page = app.test_client().get("/play/games/abc", headers=EVIL_HEADERS,
                                 environ_base={"SCRIPT_NAME": "//evil.example"}).get_data(as_text=True)
    urls = _script_and_link_urls(page)
    assert urls and not any("evil" in url for url in urls), urls
    assert re.search(r'<script type="module" src="/play/static/pages/game-page\.[0-9a-f]{12}\.js">', page), page
    assert "evil" not in page.split('<script type="importmap">')[1].split("</script>")[0]


def test_links_take_their_prefix_from_the_public_url(make_app):
    app = make_app(REFEREE_PUBLIC_URL="https://referee.example/club/")
    page = app.test_client().get("/play/games/abc").get_data(as_text=True)
    assert 'data-api="/club"' in page and re.search(r'src="/club/play/static/pages/game-page\.[0-9a-f]{12}\.js"', page)
    # the import map, under the prefix too
    assert '"/club/play/static/shared/keys.js":"/club/play/static/shared/keys.' in page
    with app.test_request_context("/", headers={"Host": "evil.example"}):
        from referee.web.defences import public_url

        assert public_url("/play/games/abc") == "https://referee.example/club/play/games/abc"


def test_x_forwarded_for_is_believed_only_from_a_named_proxy(make_app):
    def peer_seen(app, remote: str) -> tuple[str, str]:
        @app.get("/_peer")
        def peer():
            from flask import request

            return {"addr": request.remote_addr, "scheme": request.scheme}

        body = app.test_client().get("/_peer", headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"},
                                     environ_base={"REMOTE_ADDR": remote}).get_json()
        return body["addr"], body["scheme"]

    assert peer_seen(make_app(), "127.0.0.1") == ("127.0.0.1", "http")  # default: nobody is a proxy
    assert peer_seen(make_app(REFEREE_TRUSTED_PROXIES="10.1.0.0/16"), "127.0.0.1") == ("127.0.0.1", "http")
    assert peer_seen(make_app(REFEREE_TRUSTED_PROXIES="10.1.0.0/16"), "10.1.2.3") == ("203.0.113.9", "https")


def test_the_settings_are_checked():
    with pytest.raises(ConfigError, match="REFEREE_PUBLIC_URL"):
        load_config({"REFEREE_PUBLIC_URL": "javascript:alert(1)"}, environ={})
    with pytest.raises(ConfigError, match="REFEREE_TRUSTED_PROXIES"):
        load_config({"REFEREE_TRUSTED_PROXIES": "127.0.0.1, proxy.example"}, environ={})
    assert load_config(environ={})["REFEREE_TRUSTED_PROXIES"] == []
    assert with_password("redis://[::1]:6379/0", "p w") == "redis://:p%20w@[::1]:6379/0"


@pytest.fixture
def gunicorn_url(redis_url, tmp_path):
    """A real gunicorn with the deployment's config (``referee/running/gunicorn_conf.py``), on a free port."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": REPO, "REDIS_URL": redis_url, "REFEREE_VAR": str(tmp_path / "var"),
           "REFEREE_DISPATCH": "none"}
    env.pop("FORWARDED_ALLOW_IPS", None)
    env.pop("REFEREE_TRUSTED_PROXIES", None)
    log = open(tmp_path / "gunicorn.log", "wb")
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", "--config", "python:referee.running.gunicorn_conf",
                                "--workers", "1", "--worker-class", "gthread", "--threads", "2",
                                "--bind", f"127.0.0.1:{port}", "referee.app:create_app()"],
                               cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(url + "/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((tmp_path / "gunicorn.log").read_text()[-2000:])
            time.sleep(0.1)
        yield url
    finally:
        stop_process(process)
        log.close()


def test_real_gunicorn_ignores_script_name_and_forwarded_headers_from_loopback(gunicorn_url):
    plain = requests.get(gunicorn_url + "/play/games/abc", timeout=5)
    attacked = requests.get(gunicorn_url + "/play/games/abc", headers=EVIL_HEADERS, timeout=5)
    assert plain.status_code == attacked.status_code == 200
    assert _script_and_link_urls(attacked.text) == _script_and_link_urls(plain.text)
    assert "evil" not in attacked.text
    assert_secured(attacked, "gunicorn page")
    docs = requests.get(gunicorn_url + "/docs", headers=EVIL_HEADERS, timeout=5)
    assert docs.status_code == 200 and "evil" not in docs.text
    # the review's attack: the path starts with the forged SCRIPT_NAME, which gunicorn used to strip off
    # and hand to the app as the prefix of every link
    forged = requests.get(gunicorn_url + "//evil.example/play/games/abc", headers={"SCRIPT_NAME": "//evil.example"},
                          timeout=5)
    assert not any("evil" in url for url in _script_and_link_urls(forged.text)), forged.text[:500]
    assert_secured(forged, "gunicorn forged SCRIPT_NAME")


def _redirect_variants(app) -> list[str]:
    """Every GET path of the URL map, each with and without its trailing slash: werkzeug answers the form a
    rule does not take with a redirect to the form it does (issue 26, item 1)."""
    paths = []
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or set()):
            continue
        args = {name: PLACEHOLDERS.get(name, "x") for name in rule.arguments}
        path = rule.build(args, append_unknown=False)[1]
        paths += [path, path.rstrip("/") if path.endswith("/") and path != "/" else path + "/"]
    return paths


def test_no_redirect_is_built_from_the_request_host(app):
    """Issue 26, item 1: ``GET /play`` with ``Host: evil.example`` answered ``Location: http://evil.example/play/``."""
    client = app.test_client()
    redirects = []
    for path in _redirect_variants(app):
        for host in ("evil.example", "evil.example:8443"):
            response = client.get(path, headers={"Host": host})
            if 300 <= response.status_code < 400:
                location = response.headers["Location"]
                redirects.append((path, location))
                assert "evil" not in location and "evil" not in response.get_data(as_text=True), (path, location)
                assert location.startswith("/") and not location.startswith("//"), (path, location)
    assert ("/play", "/play/") in redirects, redirects  # the review's case, still a redirect, now relative


def test_a_redirect_keeps_its_query_and_the_public_prefix(make_app):
    app = make_app(REFEREE_PUBLIC_URL="https://referee.example/club/")
    response = app.test_client().get("/play?x=1", headers={"Host": "evil.example"})
    assert response.status_code == 308 and response.headers["Location"] == "/club/play/?x=1"
    assert 'href="/club/play/?x=1"' in response.get_data(as_text=True)


def test_real_gunicorn_answers_the_trailing_slash_redirect_without_the_host(gunicorn_url):
    response = requests.get(gunicorn_url + "/play", headers={"Host": "evil.example"}, allow_redirects=False,
                            timeout=5)
    assert response.status_code == 308 and response.headers["Location"] == "/play/", response.headers
    assert "evil" not in response.text
