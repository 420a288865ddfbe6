"""The pages' static files under the version of their contents (``referee/web/__init__.py``, ``static_url``): a
page names every module under one ``/play/static/v/<version>/`` (the modules' version), the style sheet and the icon
each under its own, its modules' relative imports resolve under the same version, a browser keeps them a year
without asking again, a page of an older release gets today's files uncached, and each version follows the contents
of its files."""

from __future__ import annotations

import hashlib
import re
import shutil

import pytest

from referee import web

PAGES = ["/play/", "/play/new", "/play/keys", "/play/me", "/play/tournaments", "/play/games/abc",
         "/play/games/abc/replay", "/play/verify"]
ASSET = re.compile(r'(?:src|href)="(/play/static/[^"]+)"')


@pytest.mark.parametrize("path", PAGES)
def test_every_page_names_its_static_files_under_their_versions(app, path):
    client = app.test_client()
    page = client.get(path)
    assert page.status_code == 200
    assets = ASSET.findall(page.get_data(as_text=True))
    assert assets, "the page names no static file"
    version = web.static_version()
    assert re.fullmatch(r"[0-9a-f]{12}", version)
    for url in assets:
        name = url.removeprefix("/play/static/v/").split("/", 1)[1]  # (vendor/qr.js: a subfolder)
        if name.endswith(".js"):
            assert url == f"/play/static/v/{version}/{name}", url
        else:
            own = hashlib.sha256((web.STATIC / name).read_bytes()).hexdigest()[:12]
            assert url == f"/play/static/v/{own}/{name}" and own != version, url
        answer = client.get(url)
        assert answer.status_code == 200, url
        assert answer.cache_control.max_age == 365 * 24 * 3600 and answer.cache_control.immutable, url
        assert answer.cache_control.public and not answer.cache_control.no_cache, url


def test_a_modules_relative_import_resolves_under_the_same_version(app):
    """``key-file-crypto.js`` imports ``./keyfile-format.js``, which the app generates: under the version too."""
    client = app.test_client()
    version = web.static_version()
    crypto = client.get(f"/play/static/v/{version}/key-file-crypto.js")
    assert 'from "./keyfile-format.js"' in crypto.get_data(as_text=True)
    generated = client.get(f"/play/static/v/{version}/keyfile-format.js")
    assert generated.status_code == 200 and generated.mimetype == "text/javascript"
    assert generated.cache_control.immutable
    assert generated.get_data() == client.get("/play/static/keyfile-format.js").get_data()


def test_an_older_version_gets_todays_file_uncached_and_nothing_else_is_served(app):
    client = app.test_client()
    old = client.get("/play/static/v/000000000000/game-page.js")
    assert old.status_code == 200 and old.cache_control.no_cache and not old.cache_control.immutable
    assert old.get_data() == (web.STATIC / "game-page.js").read_bytes()
    version = web.static_version()
    assert client.get(f"/play/static/v/{version}/no-such-file.js").status_code == 404
    assert client.get(f"/play/static/v/{version}/../__init__.py").status_code == 404
    unversioned = client.get("/play/static/game-page.js")  # still served, revalidated as before
    assert unversioned.status_code == 200 and unversioned.cache_control.no_cache


def test_the_version_follows_the_files_contents(app, tmp_path, monkeypatch):
    """In debug mode (files edited while the server runs) a changed file gives a new version at once; a file
    changed back gives the old version again: the version is of the contents, not of the time."""
    static = tmp_path / "static"
    shutil.copytree(web.STATIC, static)
    monkeypatch.setattr(web, "STATIC", static)
    monkeypatch.setattr(web, "_static_version", {"stamp": (), "version": "", "files": {}})
    app.debug = True
    with app.test_request_context():
        before = web.static_version(), web.static_version("style.css")
        text = (static / "ui.js").read_text()
        (static / "ui.js").write_text(text + "\n// edited\n")
        edited = web.static_version(), web.static_version("style.css")
        (static / "ui.js").write_text(text)
        again = web.static_version(), web.static_version("style.css")
        (static / "style.css").write_text((static / "style.css").read_text() + "\n/* edited */\n")
        styled = web.static_version("keys.js"), web.static_version("style.css")
        client = app.test_client()
        module, style = client.get(web.static_url("keys.js")), client.get(web.static_url("style.css"))
    assert edited[0] != before[0] and edited[1] == before[1]  # a module changed: the modules' URLs, not the style's
    assert again == before
    assert styled[0] == before[0] and styled[1] != before[1]  # the style changed: its URL only
    assert module.cache_control.immutable and style.cache_control.immutable
    assert style.get_data() == (static / "style.css").read_bytes()
