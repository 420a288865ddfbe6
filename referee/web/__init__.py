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

import re
from functools import lru_cache
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    g,
    jsonify,
    render_template,
    request,
    url_for,
)
from flask.blueprints import BlueprintSetupState
from flask_babel import get_locale
from redis.exceptions import RedisError

from ..errors import ServiceError
from . import assets, compression, i18n, verify_page
from .defences import CONTENT_SECURITY_POLICY, WASM_CONTENT_SECURITY_POLICY, with_script_hash


class WebBlueprint(Blueprint):
    """The pages' blueprint; its static files (``/play/static/<file>``) are answered by ``assets``."""

    def send_static_file(self, filename: str) -> Response:
        return assets.send_static_file(filename)


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


# -- the static files (``assets``): their routes and the templates' globals ------------------------------------
bp.add_url_rule("/static/shared/keyfile-format.js", "keyfile_format", assets.keyfile_format)
bp.add_url_rule("/static/v/<version>/<path:filename>", "versioned_static", assets.versioned_static)
for _global in (assets.static_url, assets.modulepreload, assets.importmap):
    bp.add_app_template_global(_global)
for _rule, _view in verify_page.ROUTES:  # /play/verify and its worker, vendored files and engine files
    bp.add_url_rule(_rule, _view.__name__, _view)


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

