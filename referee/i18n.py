"""Languages: English, German, French (issue 24). A pure module — no Flask, no clock, no network.

The catalogs are gettext ``.po`` files, ``referee/translations/<lang>/LC_MESSAGES/<domain>.po`` (domain
``referee``: mails, the human part of API errors, the CLI; domain ``web``: the pages). A ``.po`` file is
the only source: :func:`translations` reads it with Babel and compiles it in memory once per process
(``read_po`` + ``write_mo``), so there is no ``.mo`` to build on a fresh clone and none to drift from its
``.po``. English is the source language: its texts are the msgids, and an entry missing from a catalog
falls back to them.

* :func:`negotiate` picks a language from an ``Accept-Language`` (or ``Content-Language``) header;
* :func:`env_language` from the environment, by gettext's rules (``LANGUAGE``, ``LC_ALL``,
  ``LC_MESSAGES``, ``LANG``: the first one set decides; ``C``/``POSIX`` is English);
* :class:`Text` is a message whose English is made now and whose translation later, where its reader's
  language is known (an error raised deep in a service, rendered by the API for a request).
"""

from __future__ import annotations

import functools
import gettext as _gettext
import io
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

SUPPORTED = ("en", "de", "fr")
DEFAULT = "en"
DOMAIN = "referee"
TRANSLATIONS = Path(__file__).parent / "translations"
ENV_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

_TAG = re.compile(r"^[A-Za-z]{1,8}(?:[-_][A-Za-z0-9]{1,8})*$")


def N_(message: str) -> str:
    """Marks ``message`` for extraction without translating it (translated later, where it is used)."""
    return message


def primary(tag: str | None) -> str | None:
    """The primary language of a tag or locale name: ``de-CH`` → ``de``, ``fr_FR.UTF-8@euro`` → ``fr``;
    ``C``/``POSIX`` → ``en``; None for nothing or something that is no tag."""
    if not tag:
        return None
    tag = tag.strip().split(".", 1)[0].split("@", 1)[0]
    if tag in ("C", "POSIX"):
        return "en"
    if not _TAG.match(tag):
        return None
    return re.split(r"[-_]", tag, maxsplit=1)[0].lower()


def negotiate(accept_language: str | None, supported: Iterable[str] = SUPPORTED, default: str = DEFAULT) -> str:
    """The best of ``supported`` for an ``Accept-Language`` header (RFC 9110 12.5.4: quality values, the
    first of equal ones; ``*`` is the default), else ``default``.

    >>> negotiate("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5")
    'fr'
    >>> negotiate("es, de;q=0.5, en;q=0.1")
    'de'
    >>> negotiate("de;q=0, en"), negotiate(None), negotiate("x-klingon")
    ('en', 'en', 'en')
    """
    wanted = list(supported)
    best: tuple[float, int, str] | None = None
    for index, item in enumerate((accept_language or "").split(",")):
        parts = [p.strip() for p in item.split(";")]
        quality = 1.0
        for param in parts[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality <= 0:
            continue
        language = default if parts[0] == "*" else primary(parts[0])
        if language not in wanted:
            continue
        if best is None or quality > best[0]:
            best = (quality, index, language)
    return best[2] if best else default


def env_language(environ: Mapping[str, str] | None = None, supported: Iterable[str] = SUPPORTED,
                 default: str = DEFAULT) -> str:
    """The language of a terminal by gettext's rules: the first of ``LANGUAGE`` (a ``:`` list, its first
    supported entry), ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set decides; one that names no supported
    language (``es_ES.UTF-8``, ``C``) means English.

    >>> env_language({"LANG": "de_DE.UTF-8"}), env_language({"LC_ALL": "C", "LANG": "fr_FR"})
    ('de', 'en')
    >>> env_language({"LANGUAGE": "es:fr", "LANG": "de_DE"})
    'fr'
    """
    environ = os.environ if environ is None else environ
    wanted = list(supported)
    for variable in ENV_VARIABLES:
        value = environ.get(variable)
        if not value:
            continue
        for name in value.split(":") if variable == "LANGUAGE" else [value]:
            language = primary(name)
            if language in wanted:
                return language
        return default
    return default


@functools.lru_cache(maxsize=32)
def translations(language: str, domain: str = DOMAIN) -> _gettext.NullTranslations:
    """The translations of ``domain`` into ``language``, compiled in memory from its ``.po`` file (once per
    process); English, or a language without a catalog, gets the identity."""
    from babel.messages.mofile import write_mo  # noqa: PLC0415 - only where a catalog is used
    from babel.messages.pofile import read_po  # noqa: PLC0415
    from babel.support import NullTranslations, Translations  # noqa: PLC0415

    path = TRANSLATIONS / language / "LC_MESSAGES" / f"{domain}.po"
    if language == DEFAULT or not path.is_file():
        return NullTranslations()  # Babel's: also what Flask-Babel's domains expect (ugettext, …)

    with path.open("rb") as handle:
        catalog = read_po(handle, locale=language, domain=domain)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return Translations(buffer, domain=domain)


def gettext(language: str, message: str, domain: str = DOMAIN) -> str:
    """``message`` in ``language`` (the English msgid itself when the catalog lacks it)."""
    return translations(language, domain).gettext(message)


def ngettext(language: str, singular: str, plural: str, n: int, domain: str = DOMAIN) -> str:
    return translations(language, domain).ngettext(singular, plural, n)


def translator(language: str, domain: str = DOMAIN) -> Any:
    """``_`` for one language: ``_(msgid, **params)`` → the translation, ``%``-formatted with ``params``."""
    table = translations(language, domain)

    def _(message: str, /, **params: Any) -> str:
        text = table.gettext(message)
        return text % params if params else text

    return _


class Text(str):
    """A message made in English now (``str(text)`` is the English) and translated later:
    ``Text("seat %(seat)s is to move", seat=1).in_language("de")``.

    >>> text = Text("the game is %(status)s", status="finished")
    >>> text, text.msgid, text.params
    ('the game is finished', 'the game is %(status)s', {'status': 'finished'})
    """

    msgid: str
    params: dict[str, Any]

    def __new__(cls, msgid: str, /, **params: Any) -> Text:
        made = super().__new__(cls, msgid % params if params else msgid)
        made.msgid = msgid
        made.params = params
        return made

    def in_language(self, language: str, domain: str = DOMAIN) -> str:
        text = gettext(language, self.msgid, domain)
        return text % self.params if self.params else text


#: where the msgids of each domain are made (paths under the ``referee`` package); ``web`` is the pages'
SOURCES = {DOMAIN: ("i18n.py", "error_texts.py", "notify", "api", "cli")}
#: what marks a msgid: gettext's usual names, and :class:`Text`
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None, "Text": None}


def extract(domain: str = DOMAIN) -> dict[str, list[str]]:
    """Every msgid of ``domain`` in the sources (Babel's Python extractor, as ``pybabel extract -k Text``
    would), with where each is made (``notify/render.py:42``)."""
    from babel.messages.extract import extract_from_file  # noqa: PLC0415 - only for the catalogs' upkeep

    found: dict[str, list[str]] = {}
    root = Path(__file__).parent
    for source in SOURCES[domain]:
        path = root / source
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            for line, message, _comments, _context in extract_from_file("python", str(file), keywords=KEYWORDS):
                msgid = message[0] if isinstance(message, tuple) else message
                if msgid:
                    found.setdefault(msgid, []).append(f"{file.relative_to(root)}:{line}")
    return found
