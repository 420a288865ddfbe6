"""The pages' catalogs (issue 24, item 3): every string the English templates and JavaScript use is translated
in German and French, and the pages pick their language as documented (docs/languages.md).

* The msgids are extracted from the sources as ``pybabel extract`` would (Jinja's extractor for the
  templates, Babel's JavaScript extractor for ``static/*.js``), in-process, and compared with
  ``referee/translations/{de,fr}/LC_MESSAGES/web.po``: a msgid missing, empty or fuzzy fails, and so does a
  translation that drops or invents a placeholder (``{name}``, ``%(id)s``).
* ``GET /play/i18n/<lang>.json`` serves the JavaScript's strings from those catalogs (no second table).
* The language: the selector's cookie, else ``Accept-Language``, else English; ``<html lang>`` follows it.

No browser and no Redis: the app's test client."""

from __future__ import annotations

import re

import pytest
from babel.messages.catalog import Catalog

from referee.web import i18n

PLACEHOLDER = re.compile(r"\{\w+\}|%\(\w+\)s")


def catalog_problems(template: Catalog, translated: Catalog) -> list[str]:
    """What is wrong with ``translated`` for the msgids of ``template``: missing, empty, fuzzy, placeholders."""
    problems = []
    for message in template:
        if not message.id:
            continue
        entry = translated.get(message.id, context=message.context)
        name = message.id if isinstance(message.id, str) else message.id[0]
        if entry is None:
            problems.append(f"missing: {name!r}")
            continue
        strings = entry.string if isinstance(entry.string, tuple | list) else (entry.string,)
        if not all(strings):
            problems.append(f"empty: {name!r}")
        elif entry.fuzzy:
            problems.append(f"fuzzy: {name!r}")
        else:
            ids = message.id if isinstance(message.id, tuple | list) else (message.id,)
            wanted = {p for text in ids for p in PLACEHOLDER.findall(text)}
            for text in strings:
                if set(PLACEHOLDER.findall(text)) - wanted or (wanted - {"{n}"}) - set(PLACEHOLDER.findall(text)):
                    problems.append(f"placeholders differ: {name!r} → {text!r}")
    return problems


@pytest.fixture(scope="module")
def extracted() -> Catalog:
    return i18n.extract()


def test_the_extraction_finds_the_templates_and_the_javascript(extracted):
    ids = {m.id for m in extracted if m.id}
    # a template string, a {% trans %} block, a JavaScript string and a JavaScript plural
    assert "Skip to content" in ids and "New game" in ids
    assert any(isinstance(i, str) and i.startswith("Your moves are signed in this browser") for i in ids)
    assert "Waiting for {name}" in ids and "Demolish the top of your {tower}" in ids
    assert ("{n} day", "{n} days") in ids
    js = {msgid for msgid, _context in i18n.js_msgids()}
    assert "Waiting for {name}" in js and "Skip to content" not in js
    assert len(ids) > 500


@pytest.mark.parametrize("lang", ["de", "fr"])
def test_every_msgid_of_the_pages_is_translated(extracted, lang):
    translated = i18n.catalog(lang)
    assert translated is not None, f"{i18n.po_path(lang)} is missing"
    problems = catalog_problems(extracted, translated)
    assert not problems, f"{lang}/web.po ({len(problems)}): run `python -m referee.web.i18n`, then translate:\n" + \
        "\n".join(problems[:40])
    stale = sorted(str(m.id) for m in translated if m.id and extracted.get(m.id, context=m.context) is None)
    assert not stale, f"{lang}/web.po holds msgids no page uses any more: {stale[:20]}"


def test_the_check_fails_on_a_missing_an_empty_a_fuzzy_or_a_mangled_entry(extracted):
    """The comparison above is not a check that cannot fail: a catalog with one of each defect fails it."""
    broken = Catalog(locale="de", domain="web")
    for message in extracted:
        if message.id:
            broken.add(message.id, message.id if isinstance(message.id, str) else tuple(message.id),
                       context=message.context)
    broken.delete("Skip to content")
    broken["New game"].string = ""
    broken["Lobby"].flags.add("fuzzy")
    broken["Waiting for {name}"].string = "Warten auf {nom}"
    problems = catalog_problems(extracted, broken)
    assert sorted(problems) == sorted(["missing: 'Skip to content'", "empty: 'New game'", "fuzzy: 'Lobby'",
                                       "placeholders differ: 'Waiting for {name}' → 'Warten auf {nom}'"])


@pytest.fixture(scope="module")
def client():
    from referee.app import create_app

    return create_app({"TESTING": True}).test_client()


def test_the_javascript_gets_its_strings_from_the_same_catalogs(client):
    german = client.get("/play/i18n/de.json")
    assert german.status_code == 200
    body = german.get_json()
    assert body["lang"] == "de" and body["plural"] == "(n != 1)"
    assert body["messages"]["Waiting for {name}"] == i18n.catalog("de").get("Waiting for {name}").string
    assert body["messages"]["{n} day"] == ["{n} Tag", "{n} Tage"]
    assert "Skip to content" not in body["messages"]  # only what the JavaScript uses
    assert body["messages"]["game round\x04Round {n}"] == "Runde {n}"  # a context: a game's round, not a tournament's
    assert body["messages"]["{which} is better"] == "{which} ist besser"  # a call inside a template literal
    french = client.get("/play/i18n/fr.json").get_json()
    assert french["plural"] == "(n > 1)" and french["messages"]["Waiting for {name}"] == "En attente de {name}"
    assert french["messages"]["game round\x04Round {n}"] == "Manche {n}"
    assert french["messages"]["Round {n}"] == "Ronde {n}"
    assert client.get("/play/i18n/en.json").get_json()["messages"] == {}
    assert client.get("/play/i18n/xx.json").status_code == 404
    # the page names the versioned URL, which may be cached
    page = client.get("/play/", headers={"Accept-Language": "de"}).text
    url = re.search(r'data-i18n="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert url.startswith("/play/i18n/de.json?v=")
    assert "max-age=86400" in client.get(url).headers["Cache-Control"]


@pytest.mark.parametrize(("headers", "cookie", "lang", "nav"), [
    ({}, None, "en", "New game"),
    ({"Accept-Language": "de-CH, fr;q=0.8, en;q=0.5"}, None, "de", "Neue Partie"),
    ({"Accept-Language": "fr-FR,fr;q=0.9"}, None, "fr", "Nouvelle partie"),
    ({"Accept-Language": "it, es;q=0.9"}, None, "en", "New game"),
    ({"Accept-Language": "de"}, "fr", "fr", "Nouvelle partie"),  # the selector's choice wins
    ({"Accept-Language": "de"}, "xx", "de", "Neue Partie"),  # a cookie of no known language is ignored
])
def test_the_language_of_a_page(client, headers, cookie, lang, nav):
    client.delete_cookie(i18n.COOKIE)
    if cookie:
        client.set_cookie(i18n.COOKIE, cookie)
    page = client.get("/play/", headers=headers).text
    assert f'<html lang="{lang}">' in page
    assert f">{nav}</a>" in page
    assert f'<option value="{lang}" lang="{lang}" selected>' in page
    client.delete_cookie(i18n.COOKIE)
