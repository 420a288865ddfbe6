"""The pages' languages (English, German, French): gettext catalogs of the domain ``web`` through Flask-Babel.

The catalogs are ``referee/translations/<lang>/LC_MESSAGES/web.po``: the ``.po`` files are the only source.
They are compiled in memory when first used (``babel.messages.pofile.read_po`` + ``mofile.write_mo``), so a
fresh clone needs no compile step and a ``.mo`` can never lag behind its ``.po``. English is the source
language (the msgids), so it has no catalog.

The templates translate with ``_()`` / ``{% trans %}``; the JavaScript's strings come from the same catalogs:
``GET /play/i18n/<lang>.json`` serves the translations of the msgids that ``static/*.js`` uses (found by
Babel's JavaScript extractor: calls of ``_("…")`` and ``ngettext("…", "…", n)``), read by ``static/shared/i18n.js``.

The language of a request: the cookie ``referee_lang`` (set by the selector on every page, which also keeps
the choice in ``localStorage``), else ``Accept-Language``, else English. Error codes, rule ids and move JSON
never change with the language.

``python -m referee.web.i18n`` re-extracts the msgids and updates the ``.po`` files (new msgids empty,
vanished ones dropped); ``tests/web/test_i18n_catalogs.py`` fails while a catalog misses a msgid, leaves one
empty or fuzzy.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po
from flask import Flask, request
from flask_babel import Babel, Domain, get_locale

from ..i18n import SUPPORTED, TRANSLATIONS, negotiate, translations

LANGUAGES = SUPPORTED
LANGUAGE_NAMES = {"en": "English", "de": "Deutsch", "fr": "Français"}
DOMAIN = "web"
COOKIE = "referee_lang"
WEB = Path(__file__).resolve().parent
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2)}


def po_path(lang: str) -> Path:
    return TRANSLATIONS / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def catalog(lang: str) -> Catalog | None:
    """The parsed ``web.po`` of ``lang`` (None for English and for a language without one)."""
    path = po_path(lang)
    if lang == "en" or not path.exists():
        return None
    with path.open("rb") as fp:
        return read_po(fp, locale=lang, domain=DOMAIN)


class WebDomain(Domain):
    """Flask-Babel's domain ``web``, from the ``.po`` files compiled in memory (no ``.mo`` on disk)."""

    def __init__(self) -> None:
        super().__init__(translation_directories=[str(TRANSLATIONS)], domain=DOMAIN)

    def get_translations(self) -> Any:
        locale = get_locale()
        return translations(str(locale) if locale is not None else "en", DOMAIN)


WEB_DOMAIN = WebDomain()


def select_language() -> str:
    """The cookie of the page's selector, else the best of ``Accept-Language``, else English."""
    chosen = request.cookies.get(COOKIE, "")
    if chosen in LANGUAGES:
        return chosen
    # by quality, on the primary subtag: "de-CH, fr;q=0.8" is German (werkzeug's best_match would take the
    # exact "fr" over the regional "de-CH")
    return negotiate(request.headers.get("Accept-Language"), LANGUAGES)


def init_app(app: Flask | Any) -> None:
    """Flask-Babel on the app (once): the locale from :func:`select_language`; the pages use the domain ``web``."""
    if "babel" not in app.extensions:
        Babel(app, locale_selector=select_language, default_translation_directories=str(TRANSLATIONS))


# ---- the msgids: extracted from the templates and the JavaScript ----

_METHODS = [("templates/**.html", "jinja2.ext:babel_extract"), ("static/**.js", "javascript")]
_OPTIONS: dict[str, dict[str, Any]] = {"templates/**.html": {"extensions": "jinja2.ext.i18n", "trimmed": "true"},
            "static/**.js": {"parse_template_string": True}}


def extract(which: str = "all") -> Catalog:
    """The msgids of the pages (``which``: ``all``, ``js`` or ``templates``) as a catalog with their locations."""
    methods = [m for m in _METHODS if which == "all" or (which == "js") == (m[1] == "javascript")]
    cat = Catalog(domain=DOMAIN, project="referee", charset="utf-8")
    found = extract_from_dir(str(WEB), method_map=methods, options_map=_OPTIONS, keywords=KEYWORDS,
                             comment_tags=("i18n:",), strip_comment_tags=True)
    for filename, lineno, message, comments, context in sorted(found, key=lambda m: (m[0], m[1])):
        cat.add(message, None, [(f"referee/web/{filename}", lineno)], auto_comments=comments, context=context)
    if which != "templates":
        _scan_javascript(cat)
    return cat


# Babel's JavaScript extractor reads a call inside a template literal's ``${…}`` only while no ``}`` of the
# expression's own (an object of placeholders) closes it early: ``${_("… {n}", { n })}`` escapes it. So the
# sources are also scanned for every call with literal strings; what Babel missed is added.
_JS_STRING = r'"(?:[^"\\\n]|\\.)*"'
_JS_CALL = re.compile(rf"(?<![\w.$])(_|ngettext|pgettext)\(\s*({_JS_STRING})(?:\s*,\s*({_JS_STRING}))?")
_JS_COMMENT = re.compile(r"^\s*(//|/?\*).*$", re.MULTILINE)


def _js_string(literal: str) -> str:
    return json.loads(literal.replace("\\'", "'"))


def _scan_javascript(cat: Catalog) -> None:
    for path in sorted((WEB / "static").glob("[!v]*/*.js")):  # pages/, games/, shared/ (not vendor/)
        text = _JS_COMMENT.sub("", path.read_text(encoding="utf-8"))  # comment lines: emptied, lines kept
        for match in _JS_CALL.finditer(text):
            name, first, second = match.groups()
            if name != "_" and second is None:
                continue
            context = _js_string(first) if name == "pgettext" else None
            msgid: Any = (_js_string(first), _js_string(second)) if name == "ngettext" \
                else _js_string(second) if name == "pgettext" else _js_string(first)
            if cat.get(msgid, context=context) is None:
                lineno = text.count("\n", 0, match.start()) + 1
                cat.add(msgid, None, [(f"referee/web/static/{path.name}", lineno)], context=context)


@cache
def js_msgids() -> tuple[Any, ...]:
    """The msgids (a string, or a (singular, plural) pair) that ``static/*.js`` translates, with their context."""
    return tuple((message.id, message.context) for message in extract("js") if message.id)


@cache
def js_messages(lang: str) -> dict[str, Any]:
    """What ``GET /play/i18n/<lang>.json`` serves: each translated JS msgid (a plural: its key is the
    singular, its value the list of forms; with a context: ``context + "\\x04" + msgid``) and the catalog's
    plural rule."""
    cat = catalog(lang)
    messages: dict[str, Any] = {}
    if cat is not None:
        for msgid, context in js_msgids():
            entry = cat.get(msgid, context=context)
            if entry is None or entry.fuzzy or not entry.string:
                continue
            key = msgid[0] if isinstance(msgid, tuple | list) else msgid
            if context:
                key = f"{context}\x04{key}"  # gettext's separator of a context and its msgid
            if isinstance(msgid, tuple | list):
                forms = list(entry.string)
                if all(forms):
                    messages[key] = forms
            else:
                messages[key] = entry.string
    plural = cat.plural_expr if cat is not None else "(n != 1)"
    return {"lang": lang, "plural": plural, "messages": messages}


@cache
def js_version(lang: str) -> str:
    """A short hash of what :func:`js_messages` serves, for the URL (so it can be cached)."""
    body = json.dumps(js_messages(lang), sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(body).hexdigest()[:12]


def update_catalogs() -> None:
    """Re-extract the msgids and update every ``web.po``: new msgids empty, vanished ones dropped."""
    template = extract()
    for lang in LANGUAGES[1:]:
        path = po_path(lang)
        if path.exists():
            with path.open("rb") as fp:
                cat = read_po(fp, locale=lang, domain=DOMAIN)
        else:
            cat = Catalog(locale=lang, domain=DOMAIN, project="referee", charset="utf-8")
        cat.update(template, no_fuzzy_matching=True)
        cat.obsolete.clear()
        cat.fuzzy = False  # the header: the catalog is in use, not a draft
        cat.project, cat.version = "referee", "0.1.0"
        cat.last_translator = "the referee's developers"
        cat.language_team = LANGUAGE_NAMES[lang]
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fp:
            write_po(fp, cat, width=120, omit_header=False, sort_output=False)


if __name__ == "__main__":  # pragma: no cover - a developer's tool
    update_catalogs()
