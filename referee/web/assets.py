"""The pages' static files (``static/``: the ES modules, the style sheet, the icon): each under the version of its
contents, the modules' graph a page preloads, the import map that maps each module's plain URL to its versioned one,
and the files sent from their compressed copies. The blueprint (``referee.web``) routes to these and registers the
template globals ``static_url``, ``modulepreload`` and ``importmap``; ``docs/web.md`` says how the pages use them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import posixpath
import re
from pathlib import Path
from typing import Any

from flask import Response, abort, current_app, g, has_app_context, url_for
from jinja2 import pass_context
from markupsafe import Markup, escape
from werkzeug.security import safe_join

from ..protocol.keyfile import FORMAT_CONSTANTS
from . import compression


def keyfile_format() -> Response:
    """The encrypted key file's constants for ``static/shared/key-file-crypto.js``, from
    ``referee.protocol.keyfile`` (one source)."""
    return Response(keyfile_format_body(), mimetype="text/javascript")


def keyfile_format_body() -> str:
    body = "// generated from referee.protocol.keyfile.FORMAT_CONSTANTS: the same key file format as the command line\n"
    return body + "".join(f"export const {name} = {json.dumps(value)};\n" for name, value in FORMAT_CONSTANTS.items())


STATIC = Path(__file__).resolve().parent / "static"  # the blueprint's static folder
YEAR = 365 * 24 * 3600  # how long a browser keeps a versioned static file
_static_version: dict[str, Any] = {"stamp": (), "version": "", "files": {}}  # the files' (name, time, size), the
# modules' version and each other file's own


def static_version(filename: str | None = None) -> str:
    """The version of a static file: 12 hex digits of a SHA-256 of contents. For a module (``.js``; and for no
    ``filename``) the version of **all** the modules (their names and contents, and the generated
    ``shared/keyfile-format.js``): a module's relative imports (``from "./keys.js"``) resolve under its own URL's
    version, so every module of a page is of one release, and a change of any module changes all their URLs (an
    import map would give each its own: ``docs/performance.md``, "The pages on a phone"). For any other file (the style
    sheet, the icon) the version of its own contents: a new style sheet leaves the modules' URLs as they were, and
    the other way round. Computed once per process; in debug mode (files edited while it runs) again whenever a
    file's size or time changed."""
    known = _static_version
    if not known["version"] or (has_app_context() and current_app.debug):
        files = sorted(path for path in STATIC.rglob("*") if path.is_file())
        stamp = tuple((path.relative_to(STATIC).as_posix(), path.stat().st_mtime_ns, path.stat().st_size)
                      for path in files)
        if stamp != known["stamp"]:
            generated = keyfile_format_body().encode()
            modules = hashlib.sha256(generated)
            own: dict[str, str] = {name: hashlib.sha256(generated).hexdigest()[:12] for name in GENERATED_MODULES}
            for path in files:
                name, body = path.relative_to(STATIC).as_posix(), path.read_bytes()
                if name.endswith(".js"):
                    modules.update(b"\0" + name.encode() + b"\0" + body)
                own[name] = hashlib.sha256(body).hexdigest()[:12]
            known.update(stamp=stamp, version=modules.hexdigest()[:12], files=own)
    if filename is None or filename.endswith(".js"):
        return str(known["version"])
    return str(known["files"].get(filename, known["version"]))


def file_version(filename: str) -> str | None:
    """12 hex digits of the SHA-256 of ``static/<filename>``'s own contents (a module's too), or None for no such
    file: a module's URL under the import map (:func:`importmap`)."""
    static_version()
    found = _static_version["files"].get(filename)
    return None if found is None else str(found)


#: a module's name with its own version in it: ``pages/game-page.<12 hex>.js`` (``static_url``, the import map)
HASHED_MODULE = re.compile(r"^(?P<stem>.+)\.(?P<version>[0-9a-f]{12})\.js$")


def static_url(filename: str) -> str:
    """The URL of a static file under the version of its contents: a browser keeps it a year and asks again only
    when the version changes (a page of a new release names the new URL). A module is ``/play/static/<name>.<its own
    version>.js``, beside the unversioned name its neighbours import it by (``./keys.js``), which the page's import
    map points at the versioned one (:func:`importmap`); the style sheet and the icon are
    ``/play/static/v/<version>/…``."""
    version = file_version(filename) if filename.endswith(".js") else None
    if version is not None:
        return url_for("web.static", filename=f"{filename[:-3]}.{version}.js")
    return url_for("web.versioned_static", version=static_version(filename), filename=filename)


def send_static(filename: str, max_age: int | None) -> Response:
    """``static/<filename>`` from its compressed copy the request accepts (``compression``); 404 for a name outside
    the folder or a missing file."""
    path = safe_join(str(STATIC), filename)
    if path is None or not Path(path).is_file():
        abort(404)
    mimetype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    if mimetype == "application/javascript":
        mimetype = "text/javascript"
    return compression.send_static(Path(path), mimetype, max_age=max_age)


# -- the module graph: every module a page loads, preloaded from its <head> ------------------------------------
#: a static import or re-export of a module beside it: ``import … from "./x.js"``, ``import "./x.js"``,
#: ``export … from "./x.js"`` (over several lines too); dynamic ``import()`` is not followed (loaded on demand), nor
#: a string after ``export function f(…)`` (no parenthesis comes before an import's or re-export's module)
_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;"'`(]*?["'](\.{1,2}/[\w./-]+\.js)["']""", re.MULTILINE)
#: a page's module script: ``<script type="module" src="{{ static_url('x.js') }}">``
_MODULE_SCRIPT = re.compile(r"""<script\s+type="module"\s+src="\{\{\s*static_url\(\s*['"]([^'"]+\.js)['"]\s*\)""")
#: a template's parent or included template
_TEMPLATE_USE = re.compile(r"""\{%-?\s*(?:extends|include)\s+["']([^"']+)["']""")
#: the modules the app makes rather than reads from ``static/`` (and what they import: nothing)
GENERATED_MODULES = ("shared/keyfile-format.js",)
_graphs: dict[Any, Any] = {}  # static_version() -> {module: its imports}; (version, template) -> its modules


def module_imports(source: str, name: str) -> list[str]:
    r"""The modules ``source`` (the module ``name`` of ``static/``) imports statically, as names in ``static/``.

    >>> module_imports('import { a } from "./a.js";\nimport {\n  b,\n} from "../y/b.js";\nimport "./c.js";', "x/m.js")
    ['x/a.js', 'y/b.js', 'x/c.js']
    >>> module_imports('export async function f() {\n  return import("./d.js");\n}', "x/m.js")
    []
    """
    folder = posixpath.dirname(name)
    return [posixpath.normpath(posixpath.join(folder, spec)) for spec in _IMPORT.findall(source)]


def module_graph() -> dict[str, list[str]]:
    """``{module: the modules it imports}`` of every ``.js`` of ``static/`` (and the generated ones), read once per
    version of the files."""
    version = static_version()
    graph = _graphs.get(version)
    if graph is None:
        graph = {name: [] for name in GENERATED_MODULES}
        for path in sorted(STATIC.rglob("*.js")):
            name = path.relative_to(STATIC).as_posix()
            graph[name] = module_imports(path.read_text(encoding="utf-8"), name)
        _graphs[version] = graph
    return dict(graph)


def module_closure(entries: list[str]) -> list[str]:
    """``entries`` and every module they import, directly or not (each once, in the order first met)."""
    graph = module_graph()
    seen: dict[str, None] = {}
    todo = list(entries)
    while todo:
        name = todo.pop(0)
        if name in seen or name not in graph:
            continue
        seen[name] = None
        todo.extend(graph[name])
    return list(seen)


def template_modules(environment: Any, template: str) -> list[str]:
    """The module scripts of ``template`` and of the templates it extends or includes (``static/`` names)."""
    found: list[str] = []
    todo, done = [template], set()
    while todo:
        name = todo.pop(0)
        if name in done:
            continue
        done.add(name)
        source = environment.loader.get_source(environment, name)[0]
        found += [entry for entry in _MODULE_SCRIPT.findall(source) if entry not in found]
        todo += _TEMPLATE_USE.findall(source)
    return found


@pass_context
def modulepreload(context: Any) -> Markup:
    """``<link rel="modulepreload">`` of every module the page being rendered loads: its module scripts (and those
    of the templates it extends or includes) and all they import, found once per template and version by reading
    the templates and the modules' ``import … from "./x.js"`` lines. In the ``<head>``: the browser asks for the
    whole graph at once instead of one level of imports per round trip."""
    key = (static_version(), context.name)
    modules = _graphs.get(key)
    if modules is None:
        modules = _graphs[key] = module_closure(template_modules(context.environment, context.name))
    return Markup("\n  ".join(f'<link rel="modulepreload" href="{escape(static_url(name))}">' for name in modules))


def versioned_static(version: str, filename: str) -> Response:
    """A static file under a version: cached for a year, immutable, when the version is the files' own; a page of
    an older release (open across an upgrade) gets today's file, never cached under the old version."""
    response = keyfile_format() if filename in GENERATED_MODULES else send_static(filename, max_age=None)
    if version == static_version(filename):
        return cached_for_a_year(response)
    response.cache_control.no_cache = True
    return response


def cached_for_a_year(response: Response) -> Response:
    """A static file under the version of its contents: public, a year, immutable."""
    response.cache_control.no_cache = None  # (send_file's default: revalidated by its ETag)
    response.cache_control.public = True
    response.cache_control.max_age = YEAR
    response.cache_control.immutable = True
    return response


# -- the import map: every module under its own version, its imports left as they are -------------------------
_importmaps: dict[Any, tuple[str, str]] = {}  # (static version, static URL) -> (the map's text, its SHA-256)


def importmap() -> Markup:
    """``<script type="importmap">`` mapping every module's unversioned URL (``/play/static/shared/keys.js``: what
    ``import … from "./keys.js"`` resolves to, and dynamic ``import()`` too) to its URL under its own version
    (:func:`static_url`). So a module's import lines stay plain, each module is cached a year under its own contents,
    and a release changes the URLs of just the modules it changed. The page allows this one inline script by its
    hash (``referee.web``'s ``_allow_importmap``, ``referee.web.defences.with_script_hash``)."""
    key = (static_version(), url_for("web.static", filename="x.js"))  # the release, and where this app's files are
    found = _importmaps.get(key)
    if found is None:
        names = sorted(module_graph())
        text = json.dumps({"imports": {url_for("web.static", filename=name): static_url(name) for name in names}},
                          separators=(",", ":"), sort_keys=True)
        found = _importmaps[key] = (text, base64.b64encode(hashlib.sha256(text.encode()).digest()).decode())
    g.importmap_sha256 = found[1]
    return Markup(f'<script type="importmap">{found[0]}</script>')


def send_static_file(filename: str) -> Response:
    """``/play/static/<file>`` (the blueprint's static route): a module under its own version
    (``<name>.<12 hex>.js``, :func:`static_url`) for a year when the version is today's; any other file unversioned,
    revalidated by its ETag. Each from its compressed copy made once (``compression.send_static``)."""
    hashed = HASHED_MODULE.match(filename)
    if hashed is None or file_version(f"{hashed['stem']}.js") is None:
        return send_static(filename, max_age=None)
    name = f"{hashed['stem']}.js"  # a module under its own version (static_url): a year, when it is today's
    response = keyfile_format() if name in GENERATED_MODULES else send_static(name, max_age=None)
    return cached_for_a_year(response) if hashed["version"] == file_version(name) else response
