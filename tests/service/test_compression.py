"""Every text answer compressed when the request asks for it (issue 49): pages, modules, the style sheet, JSON, the
verifier's worker and engine files (brotli or gzip, as ``Accept-Encoding`` prefers; the body decompresses to the
uncompressed answer), none when it does not, never an event stream, and conditional requests still answered 304.
The static files are compressed once into ``<REFEREE_VAR>/cache/static`` (``referee.web.compression``); the
vendored Pyodide files beside themselves (``referee.web.vendor.precompress``)."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import brotli
import pytest
from flask import Flask
from sse_helpers import SSEClient
from svc_helpers import create_game

from referee.web import assets, compression, vendor

DECODE = {"br": brotli.decompress, "gzip": gzip.decompress}


def urls() -> list[str]:
    version = assets.static_version()
    return ["/play/games/abc", "/play/", "/play/verify", f"/play/static/v/{version}/pages/game-page.js",
            f"/play/static/v/{version}/style.css", "/play/static/games/towerup.js", "/rulesets", "/play/i18n/fr.json",
            "/play/verify/worker.js", "/play/verify/engine/manifest.json",
            "/play/verify/engine/referee/verify/__init__.py"]


@pytest.mark.parametrize("encoding", ["br", "gzip"])
def test_every_text_answer_is_compressed_when_asked_and_not_when_not(app, encoding):
    client = app.test_client()
    for url in urls():
        plain = client.get(url)
        assert plain.status_code == 200 and "Content-Encoding" not in plain.headers, url
        assert len(plain.get_data()) >= 500, url
        packed = client.get(url, headers={"Accept-Encoding": f"{encoding}, identity;q=0.5"})
        assert packed.status_code == 200 and packed.headers["Content-Encoding"] == encoding, url
        assert "accept-encoding" in packed.headers["Vary"].lower(), url
        body = packed.get_data()
        assert len(body) < len(plain.get_data()) and DECODE[encoding](body) == plain.get_data(), url


def test_the_preferred_encoding_wins_and_refused_ones_are_not_sent(app):
    client = app.test_client()
    url = f"/play/static/v/{assets.static_version()}/games/towerup.js"
    for accept, sent in [("gzip, br", "br"), ("br;q=0.4, gzip;q=0.9", "gzip"), ("br;q=0, gzip;q=0", None),
                         ("*", "br"), ("identity", None), ("deflate", None)]:
        for page in (url, "/play/games/abc"):
            assert client.get(page, headers={"Accept-Encoding": accept}).headers.get("Content-Encoding") == sent, \
                (page, accept)


def test_a_tiny_answer_goes_as_it_is(app):
    client = app.test_client()
    tiny = client.get("/play/static/v/0/favicon.svg", headers={"Accept-Encoding": "br, gzip"})
    assert len((assets.STATIC / "favicon.svg").read_bytes()) < 500
    assert tiny.status_code == 200 and "Content-Encoding" not in tiny.headers
    missing = client.get("/games/nope", headers={"Accept-Encoding": "br, gzip"})  # a short JSON error
    assert missing.status_code == 404 and "Content-Encoding" not in missing.headers


@pytest.mark.parametrize("encoding", ["br", "gzip"])
def test_conditional_requests_answer_304_for_each_encoding(app, encoding):
    client = app.test_client()
    for url in ("/play/games/abc", f"/play/static/v/{assets.static_version()}/pages/game-page.js"):
        first = client.get(url, headers={"Accept-Encoding": encoding})
        etag = first.headers["ETag"]
        assert etag != client.get(url).headers["ETag"], url  # the compressed copy is another representation
        again = client.get(url, headers={"Accept-Encoding": encoding, "If-None-Match": etag})
        assert again.status_code == 304 and not again.get_data(), url
        other = client.get(url, headers={"If-None-Match": etag})  # identity asked with the br copy's tag: 200
        assert other.status_code == 200 and "Content-Encoding" not in other.headers, url


def test_a_static_file_is_compressed_once_into_the_cache(app):
    client = app.test_client()
    url = f"/play/static/v/{assets.static_version()}/games/fivetowers.js"
    client.get(url, headers={"Accept-Encoding": "br"})
    digest = hashlib.sha256((assets.STATIC / "games/fivetowers.js").read_bytes()).hexdigest()
    cached = Path(app.config["REFEREE_VAR"]) / "cache" / "static" / f"{digest}.br"
    assert brotli.decompress(cached.read_bytes()) == (assets.STATIC / "games/fivetowers.js").read_bytes()
    stamp = cached.stat().st_mtime_ns
    assert client.get(url, headers={"Accept-Encoding": "br"}).get_data() == cached.read_bytes()
    assert cached.stat().st_mtime_ns == stamp  # sent from the copy, not compressed again


def test_the_event_stream_is_never_compressed(app, http, server):
    game = create_game(http, "towerup", 2)
    stream = SSEClient(server, f"/games/{game.game_id}/events", headers={"Accept-Encoding": "br, gzip"})
    try:
        assert stream.status == 200 and stream.headers["Content-Type"].startswith("text/event-stream")
        assert stream.headers.get("Content-Encoding") is None
        opening = stream.next_block()  # the opening block arrives as plain text, not held in a compressor's buffer
        assert opening is not None and opening.retry
    finally:
        stream.close()


def test_the_vendored_files_are_compressed_once_beside_themselves_and_sent_by_accept_encoding(tmp_path):
    for package in vendor.PACKAGES:
        for name in package.files:
            (tmp_path / package.folder).mkdir(exist_ok=True)
            body = (f"{package.name} {name} " * 200).encode()
            (tmp_path / package.folder / name).write_bytes(body)
    (tmp_path / "pins.json").write_text("{}")
    assert vendor.precompress(tmp_path, log=lambda *_: None) > 0 and vendor.precompressed(tmp_path)
    assert vendor.precompress(tmp_path, log=lambda *_: None) == 0  # done once
    wasm = tmp_path / "pyodide" / "pyodide.asm.wasm"
    assert brotli.decompress((tmp_path / "pyodide" / "pyodide.asm.wasm.br").read_bytes()) == wasm.read_bytes()
    assert gzip.decompress((tmp_path / "pyodide" / "pyodide.asm.wasm.gz").read_bytes()) == wasm.read_bytes()
    assert not (tmp_path / "pyodide" / "python_stdlib.zip.br").exists()  # a zip is compressed already
    app = Flask("vendored")
    for accept, sent in [("br, gzip", "br"), ("gzip", "gzip"), ("", None)]:
        with app.test_request_context(headers={"Accept-Encoding": accept} if accept else {}):
            answer = compression.send_static(wasm, "application/wasm", max_age=3600, beside=True)
            answer.direct_passthrough = False
            assert answer.headers.get("Content-Encoding") == sent and "Accept-Encoding" in answer.vary
            assert (DECODE[sent](answer.get_data()) if sent else answer.get_data()) == wasm.read_bytes()
            answer.close()


def test_a_relative_var_folder_serves_the_compressed_copies(make_app, tmp_path, monkeypatch):
    """``referee serve``'s ``REFEREE_VAR`` is ``var``, relative to its working directory: the copies are read from
    there, not from the app's package folder (where Flask's ``send_file`` looks for a relative path)."""
    monkeypatch.chdir(tmp_path)
    app = make_app(REFEREE_VAR="var")
    client = app.test_client()
    with app.test_request_context():
        url = assets.static_url("pages/game-page.js")
    for encoding in ("br", "gzip"):
        answer = client.get(url, headers={"Accept-Encoding": encoding})
        assert answer.status_code == 200 and answer.headers["Content-Encoding"] == encoding, encoding
    assert list((tmp_path / "var" / "cache" / "static").iterdir())
