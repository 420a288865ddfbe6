"""``/play/verify``: a game's bundle re-checked in the browser by the referee's own verifier on Pyodide (issue 38).

The page (``templates/web/verify.html``, ``static/pages/verify-page.js``) runs ``static/pages/verify-worker.js`` in a
Web Worker: it loads Pyodide and the Ed25519 check from ``/play/verify/vendor/…`` (``referee.web.vendor``, installed by
``python -m referee.web.vendor``), writes the engine's own files (:func:`engine_files`, served from
``/play/verify/engine/…`` with their sha256 in ``manifest.json``) into Pyodide's file system with the same relative
paths as in the repository, and calls :func:`referee.verify.verify_bundle` through ``pyodide_boot.py``. So the
ruleset ``version`` the page reports is the content hash of the very files it ran (``referee.games.base``), and the
report is the one ``referee verify --json`` prints.

Only this page and its worker need WebAssembly: their answers carry the CSP of ``docs/service.md`` with
``'wasm-unsafe-eval'`` added to ``script-src`` (:data:`referee.web.defences.WASM_CONTENT_SECURITY_POLICY`); every other
answer keeps the CSP unchanged.

:func:`write_static` writes the page as a folder any static server serves (``referee verify-page --out DIR``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, abort, render_template, url_for

from . import compression, i18n, vendor
from .assets import YEAR
from .defences import WASM_CONTENT_SECURITY_POLICY

#: this page's routes, ``(rule, view)``: the pages' blueprint (``referee.web``) adds them, endpoint = the view's name
ROUTES: list[tuple[str, Callable[..., Response]]] = []


def _route(rule: str) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    def add(view: Callable[..., Response]) -> Callable[..., Response]:
        ROUTES.append((rule, view))
        return view
    return add

WEB = Path(__file__).resolve().parent
#: the verifier's modules of the referee package (relative to it), besides the games: exactly what
#: ``referee.verify`` and ``referee.verify.bundle.load_bundle`` import (``tests/web/test_verify_files.py`` checks it)
_REFEREE_GLOBS = ("__init__.py", "clock.py", "protocol/__init__.py", "protocol/canonical.py", "protocol/logchain.py",
                  "protocol/signing.py", "rulings/*.py", "games/*.py", "games/fivetowers/*.py", "games/towerup/*.py",
                  "replay/*.py", "timecontrol/*.py", "verify/*.py")
#: matched by a glob above, but no part of the verifier (the operator's ``referee shadow-replay``)
_LEFT_OUT = ("replay/shadow.py",)
#: third-party pure-Python packages the verifier imports (``rfc8785``: RFC 8785 bytes). The message-text rule it
#: shares with the API is ``schemas.text``, without marshmallow.
_LIBRARIES = ("rfc8785",)
#: the JavaScript of the page and the worker, and what they import (copied by :func:`write_static`)
STATIC_FILES = ("pages/verify-page.js", "pages/verify-worker.js", "shared/i18n.js", "style.css", "favicon.svg",
                "games/model.js", "games/fivetowers.js", "games/towerup.js", "games/svg.js", "games/score.js",
                "shared/ui.js", "games/zoom.js")


@cache
def engine_files() -> dict[str, Path]:
    """``{path in the browser's file system: file}``: the verifier, the engines and their data, ``schemas.text``,
    the libraries and ``pyodide_boot.py``. The paths of the engine and its data are those of the repository, so the
    ruleset versions computed in the browser (:func:`referee.games.base.content_version`) are the installed ones."""
    import schemas  # noqa: PLC0415

    from .. import __file__ as referee_init  # noqa: PLC0415
    from ..games.base import REPO_ROOT  # noqa: PLC0415
    from ..games.data import fixtures_dir  # noqa: PLC0415

    files: dict[str, Path] = {"pyodide_boot.py": WEB / "pyodide_boot.py"}
    package = Path(referee_init).resolve().parent
    for pattern in _REFEREE_GLOBS:
        for path in sorted(package.glob(pattern)):
            if path.relative_to(package).as_posix() not in _LEFT_OUT:
                files[f"referee/{path.relative_to(package).as_posix()}"] = path
    schemas_dir = Path(schemas.__file__).resolve().parent
    for name in ("__init__.py", "text.py"):
        files[f"schemas/{name}"] = schemas_dir / name
    data = fixtures_dir().resolve()
    prefix = data.relative_to(REPO_ROOT).as_posix() if data.is_relative_to(REPO_ROOT) else "fixtures"
    for path in sorted(data.glob("*/*.json")):
        if path.parent.name in ("fivetowers", "towerup"):
            files[f"{prefix}/{path.relative_to(data).as_posix()}"] = path
    for library in _LIBRARIES:
        module = __import__(library)
        root = Path(str(module.__file__)).resolve().parent
        for path in sorted(root.rglob("*.py")):
            files[f"{library}/{path.relative_to(root).as_posix()}"] = path
    return files


@cache
def engine_manifest() -> dict[str, Any]:
    """What the worker fetches first: every engine file with its sha256 (the worker checks each one)."""
    return {"format": "referee-verify-engine/1",
            "files": [{"path": path, "sha256": hashlib.sha256(file.read_bytes()).hexdigest()}
                      for path, file in sorted(engine_files().items())]}


def _wasm(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = WASM_CONTENT_SECURITY_POLICY
    return response


def _urls(static: bool) -> dict[str, str]:
    if static:
        return {"worker": "verify-worker.js", "vendor": "vendor/", "engine": "engine/", "static": "static/"}
    return {"worker": url_for("web.verify_worker"),
            "vendor": url_for("web.verify_vendor_versioned", version=vendor_version(), path="x")[:-1],
            "engine": url_for("web.verify_engine", path="x")[:-1], "static": url_for("web.static", filename="x")[:-1]}


@_route("/verify")
def verify() -> Response:
    """The page: choose or drop a bundle, or give a game's export URL; the report check by check."""
    body = render_template("web/verify.html", page="verify", urls=_urls(False), ready=vendor.installed(),
                           pyodide=vendor.PYODIDE_VERSION)
    return _wasm(Response(body, mimetype="text/html"))


@_route("/verify/worker.js")
def verify_worker() -> Response:
    """The worker's script, with the page's CSP (a worker's CSP is its own script's)."""
    return _wasm(compression.send_static(WEB / "static" / "pages" / "verify-worker.js", "text/javascript", max_age=0))


@cache
def vendor_version() -> str:
    """12 hex digits of the SHA-256 of the pinned versions (``vendor.pins()``): the vendored files' URLs change
    with them, so those files are kept a year."""
    return hashlib.sha256(json.dumps(vendor.pins(), sort_keys=True).encode()).hexdigest()[:12]


@_route("/verify/vendor/<path:path>")
def verify_vendor(path: str) -> Response:
    """Pyodide's and the Ed25519 check's files (``referee.web.vendor``), from the compressed copy beside each one that
    the request accepts; 404 for anything else. Kept an hour (the page names :func:`verify_vendor_versioned`)."""
    if path not in vendor.vendor_files():
        abort(404)
    return compression.send_static(vendor.VENDOR_DIR / path, _mimetype(path), max_age=3600, beside=True)


@_route("/verify/vendor/v/<version>/<path:path>")
def verify_vendor_versioned(version: str, path: str) -> Response:
    """The same under the version of the pins (:func:`vendor_version`): kept a year, immutable, when it is today's;
    revalidated otherwise (a page of an older release)."""
    response = verify_vendor(path)
    if version == vendor_version():
        response.cache_control.public = True
        response.cache_control.max_age = YEAR
        response.cache_control.immutable = True
    else:
        response.cache_control.max_age = 0
        response.cache_control.no_cache = True
    return response


@_route("/verify/engine/manifest.json")
def verify_engine_manifest() -> Response:
    return Response(json.dumps(engine_manifest()), mimetype="application/json")


@_route("/verify/engine/<path:path>")
def verify_engine(path: str) -> Response:
    """One file of :func:`engine_files` (as text: the worker writes its bytes); 404 for anything else."""
    file = engine_files().get(path)
    if file is None:
        abort(404)
    return compression.send_static(file, "text/plain", max_age=0)


def _mimetype(path: str) -> str:
    if path.endswith((".js", ".mjs")):
        return "text/javascript"
    if path.endswith(".wasm"):
        return "application/wasm"
    if path.endswith(".json"):
        return "application/json"
    return "application/zip" if path.endswith(".zip") else "text/plain"


# -- the static export ---------------------------------------------------------------------------
def write_static(out: Path, pages: Blueprint) -> list[str]:
    """The page as a static folder, rendered with ``pages`` (the blueprint ``referee.web.bp``): ``index.html``
    (English), ``de.html`` and ``fr.html``, the worker, the page's modules under ``static/``, the translations under
    ``i18n/``, Pyodide and Ed25519 under ``vendor/`` and the engine files under ``engine/``. Returns the files written
    (relative to ``out``). ``FileNotFoundError`` when the vendored files are not installed (``python -m
    referee.web.vendor``)."""
    if not vendor.installed():
        raise FileNotFoundError(f"the Pyodide and Ed25519 files are not in {vendor.VENDOR_DIR}: "
                                "run python -m referee.web.vendor first")
    written: list[str] = []

    def put(rel: str, body: bytes) -> None:
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        written.append(rel)

    app = Flask("referee-verify-page")
    app.register_blueprint(pages)
    for lang in i18n.LANGUAGES:
        with app.test_request_context("/play/verify", headers={"Accept-Language": lang}):
            i18n.WEB_DOMAIN.as_default()
            html = render_template("web/verify_static.html", page="verify", urls=_urls(True), ready=True,
                                   pyodide=vendor.PYODIDE_VERSION, i18n_static=f"i18n/{lang}.json",
                                   pages={code: ("index.html" if code == "en" else f"{code}.html")
                                          for code in i18n.LANGUAGES})
        put("index.html" if lang == "en" else f"{lang}.html", html.encode("utf-8"))
        put(f"i18n/{lang}.json", json.dumps(i18n.js_messages(lang), ensure_ascii=False).encode("utf-8"))
    put("verify-worker.js", (WEB / "static" / "pages" / "verify-worker.js").read_bytes())
    for name in STATIC_FILES:
        put(f"static/{name}", (WEB / "static" / name).read_bytes())
    for rel in vendor.vendor_files():
        target = out / "vendor" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(vendor.VENDOR_DIR / rel, target)
        written.append(f"vendor/{rel}")
    put("engine/manifest.json", json.dumps(engine_manifest()).encode("utf-8"))
    for rel, file in engine_files().items():
        put(f"engine/{rel}", file.read_bytes())
    return written
