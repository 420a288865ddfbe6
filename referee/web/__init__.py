"""Play-by-web pages: the lobby, the new-game form, the game page with its SVG board, and the replay viewer.

The pages are plain HTML from Jinja templates plus ES modules in ``static/`` (no build step, no CDN).
Everything a page shows comes from the JSON API of the same app (``GET /games``, ``/rulesets/<name>``,
``/games/<id>``, ``/legal-moves``, ``/replay``, ``/result``); every move is signed in the browser with
WebCrypto Ed25519 over the RFC 8785 bytes of its envelope and posted to ``/games/<id>/moves``. The
server renders no game state itself, so the pages cannot disagree with the API.

Registered by :func:`referee.app.create_app` under ``/play`` (see ``docs/web.md``)::

    /play/                      lobby
    /play/new                   new game form
    /play/keys                  the keys kept in this browser (generate, import, export)
    /play/games/<id>            game page (board, moves, live updates)
    /play/games/<id>/replay     replay viewer
    /play/join/<id>             take an open seat: by an invitation link (its key in the #fragment) or open to anyone
    /play/link/<link>           a device link's page: keeps the key sealed in the link's box (its secret in the
                                #fragment) in this browser (section 15; ``/keys/links``)
    /play/confirm/<contact>     confirm an e-mail address with its code (a button: never the GET alone)
    /play/tournaments           the tournaments (newest first) and the new-tournament form
    /play/tournaments/<id>      a tournament: rounds and tables, standings, crosstable, a player's path, join
    /play/verify                a game's bundle verified in the browser by the referee's own verifier on Pyodide
                                (``verify_page.py``: its worker, Pyodide and the engine files under /play/verify/…)
    /play/i18n/<lang>.json      the JavaScript's strings in a language, from the gettext catalogs (``i18n.py``)
    /play/static/v/<version>/…  the ES modules, style sheet and icon under the version of their contents: kept by
                                browsers for a year (``static_url``); ``/play/static/…`` serves them unversioned

Every page is in English, German or French (``i18n.py``, ``docs/languages.md``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import posixpath
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    g,
    has_app_context,
    jsonify,
    render_template,
    request,
    url_for,
)
from flask.blueprints import BlueprintSetupState
from flask_babel import get_locale
from jinja2 import pass_context
from markupsafe import Markup, escape
from redis.exceptions import RedisError
from werkzeug.security import safe_join

from ..errors import ServiceError
from ..protocol.keyfile import FORMAT_CONSTANTS
from . import compression, i18n
from .defences import CONTENT_SECURITY_POLICY, WASM_CONTENT_SECURITY_POLICY, with_script_hash


class WebBlueprint(Blueprint):
    """The pages' blueprint; its static files (``/play/static/<file>``, unversioned) are answered compressed from
    their copies made once (``compression.send_static``), revalidated by their ETag."""

    def send_static_file(self, filename: str) -> Response:
        hashed = HASHED_MODULE.match(filename)
        if hashed is None or file_version(f"{hashed['stem']}.js") is None:
            return send_static(filename, max_age=None)
        name = f"{hashed['stem']}.js"  # a module under its own version (static_url): a year, when it is today's
        response = keyfile_format() if name in GENERATED_MODULES else send_static(name, max_age=None)
        return cached_for_a_year(response) if hashed["version"] == file_version(name) else response


bp = WebBlueprint(
    "web",
    __name__,
    url_prefix="/play",
    template_folder="templates",
    static_folder="static",
    static_url_path="/static",
)


@bp.record_once
def _babel(state: BlueprintSetupState) -> None:
    i18n.init_app(state.app)


@bp.before_request
def _web_domain() -> None:
    i18n.WEB_DOMAIN.as_default()


@bp.context_processor
def _languages() -> dict[str, Any]:
    lang = str(get_locale() or "en")
    if lang not in i18n.LANGUAGES:
        lang = "en"
    return {"lang": lang, "languages": i18n.LANGUAGE_NAMES,
            "i18n_url": url_for("web.i18n_json", lang=lang, v=i18n.js_version(lang))}


@bp.after_request
def _fresh_pages(response: Response) -> Response:
    """A page is asked again at every visit (``no-cache``), and answered 304 when it is unchanged (its ETag: the
    page names its modules by their version, so a new release's page is a new page)."""
    if (response.status_code == 200 and response.mimetype == "text/html" and not response.is_streamed
            and "Cache-Control" not in response.headers):
        response.cache_control.no_cache = True
        response.vary.add("Accept-Encoding")  # (on its 304 too: compress_answer sees only the 200s)
        response.add_etag()
        response.make_conditional(request)
    return response


@bp.get("/i18n/<lang>.json")
def i18n_json(lang: str) -> Response:
    """The translations of the JavaScript's msgids in ``lang`` (``static/shared/i18n.js``), from its ``web.po``: the
    largest answer of a first visit (~50 KB), so compressed once per language and catalog version at the best
    level, like the static files (not per request)."""
    if lang not in i18n.LANGUAGES:
        abort(404)
    version = i18n.js_version(lang)
    encoding = compression.chosen_encoding() if len(_i18n_body(lang, version, None)) >= compression.MIN_SIZE else None
    response = Response(_i18n_body(lang, version, encoding), mimetype="application/json")
    response.vary.add("Accept-Encoding")
    if encoding is not None:
        response.headers["Content-Encoding"] = encoding
    if request.args.get("v") == version:
        response.cache_control.max_age = 86400
        response.cache_control.public = True
    return response


@lru_cache(maxsize=16)
def _i18n_body(lang: str, version: str, encoding: str | None) -> bytes:
    body = jsonify(i18n.js_messages(lang)).get_data()
    return body if encoding is None else compression.compress(body, encoding)


# Game ids are short opaque tokens; anything else is not a page we serve (and never reaches a template).
_GAME_ID = re.compile(r"^[A-Za-z0-9_\-]{1,80}$")

# How often a game page asks ``GET /games/<id>`` whether the log grew (milliseconds). Tests lower it
# through the app config ``WEB_POLL_MS``.
DEFAULT_POLL_MS = 1500
# How often a game page reads ``GET /games/<id>/messages`` (milliseconds) besides after every change of the
# game: messages go to their own stream, not the log, so the log's event stream does not announce them.
# Tests lower it through the app config ``WEB_MESSAGES_POLL_MS``.
DEFAULT_MESSAGES_POLL_MS = 5000


def _checked(game_id: str) -> str:
    if not _GAME_ID.match(game_id):
        abort(404)
    return game_id


def _poll_ms(name: str = "WEB_POLL_MS", default: int = DEFAULT_POLL_MS) -> int:
    value = current_app.config.get(name, default)
    try:
        return max(200, int(value))
    except (TypeError, ValueError):
        return default


@bp.get("/static/shared/keyfile-format.js")
def keyfile_format() -> Response:
    """The encrypted key file's constants for ``static/shared/key-file-crypto.js``, from
    ``referee.protocol.keyfile`` (one source)."""
    return Response(_keyfile_format_body(), mimetype="text/javascript")


def _keyfile_format_body() -> str:
    body = "// generated from referee.protocol.keyfile.FORMAT_CONSTANTS: the same key file format as the command line\n"
    return body + "".join(f"export const {name} = {json.dumps(value)};\n" for name, value in FORMAT_CONSTANTS.items())


STATIC = Path(bp.static_folder or "")  # the blueprint's static folder, referee/web/static
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
            generated = _keyfile_format_body().encode()
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


@bp.app_template_global()
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
#: ``export … from "./x.js"`` (over several lines too); dynamic ``import()`` is not followed (loaded on demand)
_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;"'`]*?["'](\.{1,2}/[\w./-]+\.js)["']""", re.MULTILINE)
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


@bp.app_template_global()
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


@bp.get("/static/v/<version>/<path:filename>")
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


@bp.app_template_global()
def importmap() -> Markup:
    """``<script type="importmap">`` mapping every module's unversioned URL (``/play/static/shared/keys.js``: what
    ``import … from "./keys.js"`` resolves to, and dynamic ``import()`` too) to its URL under its own version
    (:func:`static_url`). So a module's import lines stay plain, each module is cached a year under its own contents,
    and a release changes the URLs of just the modules it changed. The page allows this one inline script by its
    hash (:func:`_allow_importmap`, ``referee.web.defences.with_script_hash``)."""
    key = (static_version(), url_for("web.static", filename="x.js"))  # the release, and where this app's files are
    found = _importmaps.get(key)
    if found is None:
        names = sorted(module_graph())
        text = json.dumps({"imports": {url_for("web.static", filename=name): static_url(name) for name in names}},
                          separators=(",", ":"), sort_keys=True)
        found = _importmaps[key] = (text, base64.b64encode(hashlib.sha256(text.encode()).digest()).decode())
    g.importmap_sha256 = found[1]
    return Markup(f'<script type="importmap">{found[0]}</script>')


@bp.after_request
def _allow_importmap(response: Response) -> Response:
    """A page that holds the import map allows it, and only it, by its hash (the verifier's page keeps its
    ``'wasm-unsafe-eval'``)."""
    sha = g.pop("importmap_sha256", None)
    if sha is not None:
        policy = response.headers.get("Content-Security-Policy") or CONTENT_SECURITY_POLICY
        if policy not in (CONTENT_SECURITY_POLICY, WASM_CONTENT_SECURITY_POLICY):
            policy = CONTENT_SECURITY_POLICY
        response.headers["Content-Security-Policy"] = with_script_hash(policy, sha)
    return response


@bp.get("/")
def lobby() -> str:
    return render_template("web/lobby.html", page="lobby")


@bp.get("/me")
def my_games() -> str:
    """Every game of the keys kept in this browser (``static/pages/my-games.js``, from ``GET /players/{key}/games``)."""
    return render_template("web/my_games.html", page="me")


@bp.get("/new")
def new_game() -> str:
    """The form renders its rulesets and its first two seats at once, so it keeps its size from the first paint (the
    script adopts them; ``GET /rulesets`` still gives the details)."""
    return render_template("web/new.html", page="new", rulesets=_ruleset_choices())


#: the games' names as the pages show them (static/games/game-names.js; the same msgids)
GAME_TITLES = {"towerup": "Tower Up", "fivetowers": "5 Towers"}


def _ruleset_choices() -> list[dict[str, Any]]:
    from ..games import names, ruleset  # noqa: PLC0415 - the registry, as GET /rulesets reads it

    choices = []
    for name in names():
        try:
            rules = ruleset(name)
        except ImportError:  # as GET /rulesets: a ruleset whose engine is not installed is not offered
            continue
        choices.append({"name": name, "title": GAME_TITLES.get(name, name), "min_players": rules.min_players,
                        "max_players": rules.max_players})
    return choices


@bp.get("/keys")
def keys() -> str:
    return render_template("web/keys.html", page="keys")


@bp.get("/games/<game_id>")
def game(game_id: str) -> str:
    game_id = _checked(game_id)
    return render_template("web/game.html", page="game", game_id=game_id, poll_ms=_poll_ms(),
                           messages_ms=_poll_ms("WEB_MESSAGES_POLL_MS", DEFAULT_MESSAGES_POLL_MS),
                           ruleset=_ruleset_of(game_id))


def _ruleset_of(game_id: str) -> str | None:
    """The game's ruleset, when the store knows the game: the page asks for the game, its ruleset and its log at
    once (preloaded in its head) instead of one after the other — three round trips fewer on a slow phone
    (issue 49). ``None`` (the page asks in turn) for an unknown game or an unreachable store: the page says why."""
    from ..games import names  # noqa: PLC0415 - the registry, as GET /rulesets reads it

    service = current_app.extensions.get("referee.service")
    try:
        ruleset = service.created_entry(game_id).get("ruleset") if service is not None else None
    except (ServiceError, RedisError):
        return None
    name = ruleset.get("name") if isinstance(ruleset, dict) else ruleset
    return name if isinstance(name, str) and name in names() else None


@bp.get("/games/<game_id>/replay")
def replay(game_id: str) -> str:
    return render_template("web/replay.html", page="replay", game_id=_checked(game_id))


@bp.get("/join/<game_id>")
def join(game_id: str) -> str:
    """Take a seat left open (CONTRACT section 14). An invitation's seed is in the link's fragment, which the
    browser never sends: only ``static/pages/join-page.js`` reads it."""
    return render_template("web/join.html", page="join", game_id=_checked(game_id))


@bp.get("/tournaments")
def tournaments() -> str:
    return render_template("web/tournaments.html", page="tournaments")


@bp.get("/tournaments/<tournament_id>")
def tournament(tournament_id: str) -> str:
    return render_template("web/tournament.html", page="tournament", tournament_id=_checked(tournament_id),
                           poll_ms=_poll_ms())


@bp.get("/tournaments/<tournament_id>/join")
def tournament_join(tournament_id: str) -> str:
    """Join a tournament's open registration (CONTRACT section 14) from a browser that may have no key yet; an
    invitation's seed is in the link's fragment, read only by ``static/pages/tournament-join-page.js``."""
    return render_template("web/tournament_join.html", page="tournament-join", tournament_id=_checked(tournament_id))


_CONTACT_ID = re.compile(r"^c_[a-z2-7]{16}$")


@bp.get("/confirm/<contact_id>")
def confirm(contact_id: str) -> str:
    """The page a confirmation mail links to: the code is typed (or taken from the link's #fragment) and
    sent by a button, so a mail scanner that opens the link confirms nothing (CONTRACT section 11)."""
    if not _CONTACT_ID.match(contact_id):
        abort(404)
    return render_template("web/confirm.html", page="confirm", contact_id=contact_id)


@bp.get("/link/<link>")
def device_link(link: str) -> str:
    """A device link's page (section 15): its script takes the box once and opens it with the fragment's secret."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", link):
        abort(404)
    return render_template("web/link.html", page="link", link=link)


from . import verify_page  # noqa: E402, F401 - its routes are this blueprint's (it imports bp from here)
