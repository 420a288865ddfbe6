"""The pages' static files under the version of their contents (``referee/web/assets.py``, ``static_url``,
``importmap``): a page names every module as ``/play/static/<name>.<its own version>.js`` and maps, in its import
map, every module's unversioned URL (what a relative import resolves to) to that one; the style sheet and the icon
are under ``/play/static/v/<own version>/``; a browser keeps them a year without asking again, a page of an older
release gets today's files uncached, each version follows the contents of its own file, and the page's
Content-Security-Policy allows its import map by its hash and no other inline script."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil

import pytest

from referee.web import assets
from referee.web.defences import CONTENT_SECURITY_POLICY, WASM_CONTENT_SECURITY_POLICY, with_script_hash

PAGES = ["/play/", "/play/new", "/play/keys", "/play/me", "/play/tournaments", "/play/games/abc",
         "/play/games/abc/replay", "/play/verify"]
ASSET = re.compile(r'(?:src|href)="(/play/static/[^"]+)"')
IMPORTMAP = re.compile(r'<script type="importmap">(.*?)</script>')
PAGE_TEMPLATES = {"/play/": "web/lobby.html", "/play/games/abc": "web/game.html", "/play/new": "web/new.html",
                  "/play/verify": "web/verify.html"}


def own_version(name: str) -> str:
    if name in assets.GENERATED_MODULES:
        return hashlib.sha256(assets.keyfile_format_body().encode()).hexdigest()[:12]
    return hashlib.sha256((assets.STATIC / name).read_bytes()).hexdigest()[:12]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_names_its_static_files_under_their_versions(app, path):
    client = app.test_client()
    page = client.get(path)
    assert page.status_code == 200
    named = ASSET.findall(page.get_data(as_text=True))
    assert named, "the page names no static file"
    version = assets.static_version()
    assert re.fullmatch(r"[0-9a-f]{12}", version)
    for url in named:
        hashed = assets.HASHED_MODULE.match(url.removeprefix("/play/static/"))
        if hashed:  # a module: its own version in its name
            name = f"{hashed['stem']}.js"
            assert hashed["version"] == own_version(name), url
        else:
            name = url.removeprefix("/play/static/v/").split("/", 1)[1]
            assert url == f"/play/static/v/{own_version(name)}/{name}" and not name.endswith(".js"), url
        answer = client.get(url)
        assert answer.status_code == 200, url
        assert answer.cache_control.max_age == 365 * 24 * 3600 and answer.cache_control.immutable, url
        assert answer.cache_control.public and not answer.cache_control.no_cache, url


def test_a_modules_relative_import_resolves_under_the_same_version(app):
    """``shared/key-file-crypto.js`` imports ``./keyfile-format.js``, which the app generates: under the version too."""
    client = app.test_client()
    version = assets.static_version()
    crypto = client.get(f"/play/static/v/{version}/shared/key-file-crypto.js")
    assert 'from "./keyfile-format.js"' in crypto.get_data(as_text=True)
    generated = client.get(f"/play/static/v/{version}/shared/keyfile-format.js")
    assert generated.status_code == 200 and generated.mimetype == "text/javascript"
    assert generated.cache_control.immutable
    assert generated.get_data() == client.get("/play/static/shared/keyfile-format.js").get_data()


def test_an_older_version_gets_todays_file_uncached_and_nothing_else_is_served(app):
    client = app.test_client()
    old = client.get("/play/static/v/000000000000/pages/game-page.js")
    assert old.status_code == 200 and old.cache_control.no_cache and not old.cache_control.immutable
    assert old.get_data() == (assets.STATIC / "pages/game-page.js").read_bytes()
    version = assets.static_version()
    assert client.get(f"/play/static/v/{version}/no-such-file.js").status_code == 404
    assert client.get(f"/play/static/v/{version}/../__init__.py").status_code == 404
    unversioned = client.get("/play/static/pages/game-page.js")  # still served, revalidated as before
    assert unversioned.status_code == 200 and unversioned.cache_control.no_cache


def test_the_version_follows_the_files_contents(app, tmp_path, monkeypatch):
    """In debug mode (files edited while the server runs) a changed file gives a new version at once; a file
    changed back gives the old version again: the version is of the contents, not of the time."""
    static = tmp_path / "static"
    shutil.copytree(assets.STATIC, static)
    monkeypatch.setattr(assets, "STATIC", static)
    monkeypatch.setattr(assets, "_static_version", {"stamp": (), "version": "", "files": {}})
    app.debug = True
    with app.test_request_context():
        before = assets.static_version(), assets.static_version("style.css")
        urls_before = assets.static_url("shared/ui.js"), assets.static_url("shared/keys.js")
        text = (static / "shared/ui.js").read_text()
        (static / "shared/ui.js").write_text(text + "\n// edited\n")
        edited = assets.static_version(), assets.static_version("style.css")
        urls_edited = assets.static_url("shared/ui.js"), assets.static_url("shared/keys.js")
        (static / "shared/ui.js").write_text(text)
        again = assets.static_version(), assets.static_version("style.css")
        (static / "style.css").write_text((static / "style.css").read_text() + "\n/* edited */\n")
        styled = assets.static_version("shared/keys.js"), assets.static_version("style.css")
        client = app.test_client()
        module, style = client.get(assets.static_url("shared/keys.js")), client.get(assets.static_url("style.css"))
    assert edited[0] != before[0] and edited[1] == before[1]  # a module changed: the modules' URLs, not the style's
    assert again == before
    # under the import map each module has its own URL: the edited one's changed, the others' did not
    assert urls_edited[0] != urls_before[0] and urls_edited[1] == urls_before[1]
    assert styled[0] == before[0] and styled[1] != before[1]  # the style changed: its URL only
    assert module.cache_control.immutable and style.cache_control.immutable
    assert style.get_data() == (static / "style.css").read_bytes()

@pytest.mark.parametrize("path", ["/play/", "/play/games/abc", "/play/new", "/play/verify"])
def test_the_import_map_names_every_module_and_the_policy_allows_it_alone(app, path):
    client = app.test_client()
    page = client.get(path)
    text = page.get_data(as_text=True)
    found = IMPORTMAP.findall(text)
    assert len(found) == 1, "one import map, in the head"
    assert text.index('type="importmap"') < text.index('rel="modulepreload"') < text.index('type="module"')
    imports = json.loads(found[0])["imports"]
    every = {path.relative_to(assets.STATIC).as_posix() for path in assets.STATIC.rglob("*.js")}
    every |= set(assets.GENERATED_MODULES)
    assert set(imports) == {f"/play/static/{name}" for name in every}
    for plain, versioned in imports.items():
        name = plain.removeprefix("/play/static/")
        assert versioned == f"/play/static/{name[:-3]}.{own_version(name)}.js"
    # every module the page loads (its scripts and all they import) is in the map, under its own version
    with app.test_request_context(path):
        entries = assets.template_modules(app.jinja_env, PAGE_TEMPLATES[path])
        for name in assets.module_closure(entries):
            answer = client.get(imports[f"/play/static/{name}"])
            assert answer.status_code == 200 and answer.cache_control.immutable, name
    sha = base64.b64encode(hashlib.sha256(found[0].encode()).digest()).decode()
    base = WASM_CONTENT_SECURITY_POLICY if path == "/play/verify" else CONTENT_SECURITY_POLICY
    assert page.headers["Content-Security-Policy"] == with_script_hash(base, sha)
    # an API answer, a module, an error: the plain policy
    assert client.get("/rulesets").headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    module = client.get(imports["/play/static/shared/ui.js"])
    assert module.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_a_module_under_a_version_not_its_own_is_todays_file_uncached(app):
    client = app.test_client()
    old = client.get("/play/static/pages/game-page.000000000000.js")
    assert old.status_code == 200 and old.cache_control.no_cache and not old.cache_control.immutable
    assert old.get_data() == (assets.STATIC / "pages/game-page.js").read_bytes()
    assert client.get("/play/static/no-such-module.000000000000.js").status_code == 404
    generated = client.get(f"/play/static/shared/keyfile-format.{own_version('shared/keyfile-format.js')}.js")
    assert generated.status_code == 200 and generated.mimetype == "text/javascript"
    assert generated.cache_control.immutable
