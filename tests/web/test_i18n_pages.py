"""A German and a French browser see their language on every page (issue 24, item 3), in Chromium against the
real app, Redis and worker:

* a browser whose ``Accept-Language`` is German gets every page in German: ``<html lang="de">``, the
  templates' texts and the JavaScript's (status lines, the boards' labels, tables drawn by the modules);
* a browser that says English but picks "Français" in the selector of a page gets every page in French from
  then on (localStorage and the cookie ``referee_lang``; a lost cookie is restored from localStorage);
* on every page no text node is an English msgid left untranslated (compared with the catalogs);
* error codes and rule ids stay as they are: a refused move shows ``form/invalid_json`` and the referee's
  rule id and code in a French page.

One browser context per language, looping over the pages. With ``REFEREE_SCREENSHOTS=1``, screenshots:
``de-towerup-game.png``, ``fr-fivetowers-game.png`` in ``test-artifacts/``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import requests
from browser_keys import storage_state

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from screens import shoot
from seat_helpers import create_open_game
from svc_helpers import Http
from test_site import play
from tournament_helpers import Players, join_all

from referee.web import i18n

pytestmark = pytest.mark.web

STEP_MS = 20_000

# Every text node and every aria-label / title of the page, trimmed (the SVG boards' too).
TEXTS = """() => {
  const out = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const parent = walker.currentNode.parentElement;
    if (parent && (parent.closest('script, noscript, style') || parent.closest('[hidden]'))) continue;
    const t = walker.currentNode.textContent.trim();
    if (t) out.add(t);
  }
  for (const e of document.querySelectorAll('[aria-label], [title], [placeholder]')) {
    for (const a of ['aria-label', 'title', 'placeholder']) if (e.getAttribute(a)) out.add(e.getAttribute(a).trim());
  }
  out.add(document.title);
  return [...out];
}"""


def untranslated(lang: str) -> set[str]:
    """The English msgids (without placeholders) whose translation in ``lang`` differs: seen on a page of
    that language, they are text left in English."""
    catalog = i18n.catalog(lang)
    return {m.id for m in catalog if isinstance(m.id, str) and m.id and m.string and m.string != m.id
            and "{" not in m.id and "%(" not in m.id and len(m.id) > 3}


@pytest.fixture(scope="module")
def world(web_server):
    """A game of each ruleset a few moves in, a waiting game, a finished one and a paired tournament."""
    http = Http(requests.Session(), web_server)
    players = Players(3)
    status, created = http.post("/tournaments", players.body(format={"kind": "round_robin", "table_sizes": [2]}))
    assert status == 201, created
    join_all(http, created["tournament"], players)
    return {"towerup": play(web_server, "towerup", 8), "fivetowers": play(web_server, "fivetowers", 6),
            "finished": play(web_server, "fivetowers", 1000), "tournament": created["tournament"],
            "open": create_open_game(http, "fivetowers", ["key", "open"]).game_id}


def pages(world):
    """(path, a selector that is there once the page's modules have drawn it) for every page."""
    tu, ft, done = world["towerup"][0], world["fivetowers"][0], world["finished"][0]
    return [
        ("/play/", f"tr[data-game='{tu}'] td.game-name"),
        ("/play/me", "#all-my-games[aria-busy=false] tr[data-game]"),
        ("/play/new", "#seats li .seat-name[aria-label]"),
        ("/play/keys", "#keys-body tr[data-public]"),
        ("/play/tournaments", "#t-ruleset-choices input"),
        (f"/play/tournaments/{world['tournament']}", ".round[data-round='1']"),
        (f"/play/games/{tu}", "#game[data-my-turn=true] #board svg"),
        (f"/play/games/{ft}", "#game[data-my-turn=true] #board svg"),
        (f"/play/games/{done}", "#result-section:not([hidden]) table.score"),
        (f"/play/games/{tu}/replay", "#replay[data-ready=true] #entry:not(:empty)"),
        (f"/play/games/{done}/replay", "#replay[data-result-loaded=true]"),
        ("/play/confirm/c_abcdefghijklmnop", "#confirm"),
        (f"/play/join/{world['open']}", "#join[data-state=open]"),
    ]


# What each language says on the pages: a template's text and, where the modules draw, theirs.
SAYS = {
    "de": {
        "nav": "Neue Partie",
        "/play/": ["Partien", "Wer ist am Zug", "läuft"],
        "/play/me": ["Meine Partien", "dein Zug"],
        "/play/new": ["Personen in Sitzreihenfolge", "Name von Person 1"],
        "/play/keys": ["Einen Schlüssel erzeugen", "In Datei exportieren …"],
        "/play/tournaments": ["Neues Turnier", "Jeder gegen jeden"],
        "tournament": ["Tabelle", "Runde 1", "Kreuztabelle"],
        "game-towerup": ["Du bist dran", "Markt", "Stadt vergrößern"],
        "game-fivetowers": ["Du bist dran", "Auslage", "Bieten", "Spielfeld vergrößern"],
        "finished": ["Endwertung", "Hauptturm", "Abrisse"],
        "replay": ["Eintrag", "Urteil"],
        "/play/confirm": ["Bestätige deine E-Mail-Adresse"],
        "join": ["Bei einer Partie mitspielen", "Dein Name", "Platz nehmen", "offen für alle"],
    },
    "fr": {
        "nav": "Nouvelle partie",
        "/play/": ["Parties", "À qui le tour", "en cours"],
        "/play/me": ["Mes parties", "votre coup"],
        "/play/new": ["Joueurs dans l’ordre des places", "Nom du joueur 1"],
        "/play/keys": ["Créer une clé", "Exporter dans un fichier…"],
        "/play/tournaments": ["Nouveau tournoi", "Toutes rondes"],
        "tournament": ["Classement", "Ronde 1", "Tableau croisé"],
        "game-towerup": ["À vous", "Marché", "Zoomer sur la ville"],
        "game-fivetowers": ["À vous", "Étalage", "Enchères", "Zoomer sur le plateau"],
        "finished": ["Score final", "Tour principale", "Démolitions"],
        "replay": ["Entrée", "Verdict"],
        "/play/confirm": ["Confirmez votre adresse e-mail"],
        "join": ["Rejoindre une partie", "Votre nom", "Prendre la place", "ouverte à tous"],
    },
}


def kind_of(path: str, world) -> str:
    if path.startswith("/play/tournaments/"):
        return "tournament"
    if path.endswith("/replay"):
        return "replay"
    if path.startswith("/play/confirm"):
        return "/play/confirm"
    if path.startswith("/play/join/"):
        return "join"
    for name in ("towerup", "fivetowers", "finished"):
        if path == f"/play/games/{world[name][0]}":
            return "finished" if name == "finished" else f"game-{name}"
    return path


def see_every_page(page, base_url: str, world, lang: str, *, last: str) -> None:
    """Every page, ``last`` the last one (the page stays there for the test's own checks); a page the browser
    is already on (the lobby the language selector has just reloaded) is checked as it is."""
    english = untranslated(lang)
    order = sorted(pages(world), key=lambda p: p[0] == last)
    assert order[-1][0] == last, last
    for path, ready in order:
        if page.url != f"{base_url}{path}":
            page.goto(f"{base_url}{path}")
        page.wait_for_selector(ready, state="attached", timeout=STEP_MS)
        page.wait_for_timeout(200)  # the modules' last redraw ("networkidle" never comes: event streams)
        assert page.evaluate("() => document.documentElement.lang") == lang, path
        body = page.locator("body").inner_text()
        texts = page.evaluate(TEXTS)  # once per page: the page has drawn (above), its texts read once
        for words in [SAYS[lang]["nav"], *SAYS[lang][kind_of(path, world)]]:
            assert words in body or any(words in t for t in texts), f"{path} ({lang}): no {words!r}"
        left = sorted(t for t in texts if t in english)
        assert not left, f"{path} ({lang}) still says in English: {left}"


def with_keys(base_url: str, world) -> dict:
    """A context's ``storage_state``: its localStorage holds the key of the seat to move in the Tower Up and the
    5 Towers game (the keys page's entry, there before the first page loads)."""
    return storage_state(base_url, [(["Ann", "Bea"][to_move], keys[to_move])
                                    for _game, keys, to_move in (world["towerup"], world["fivetowers"])])


def test_a_german_browser_sees_german_everywhere(browser, web_server, world, console_errors, artifacts):
    game = world["towerup"][0]
    context = browser.new_context(locale="de-DE", storage_state=with_keys(web_server, world))  # Accept-Language
    page = console_errors.watch(context.new_page())
    see_every_page(page, web_server, world, "de", last=f"/play/games/{game}")
    # the game page (the loop's last), word for word: title, next step, the seats
    page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
    assert page.title() == "Du bist dran · Ann gegen Bea · Tower Up · der Schiedsrichter"
    assert page.locator("#status-line").inner_text().startswith("Du bist dran: ")
    assert "(du)" in page.locator("#seat-list").inner_text()
    shoot(page, artifacts / "de-towerup-game.png", full_page=True)
    context.close()
    console_errors.assert_none()


def test_a_french_choice_in_the_selector_holds_on_every_page(browser, web_server, world, console_errors, artifacts):
    game = world["fivetowers"][0]
    context = browser.new_context(locale="en-US", storage_state=with_keys(web_server, world))
    page = console_errors.watch(context.new_page())
    page.goto(f"{web_server}/play/")
    assert page.evaluate("() => document.documentElement.lang") == "en"
    assert page.get_by_role("link", name="New game", exact=True).is_visible()
    with page.expect_navigation():
        page.select_option("#lang-select", "fr")
    page.wait_for_selector("html[lang=fr]")
    assert page.evaluate("() => localStorage.getItem('referee.lang')") == "fr"
    assert {c["name"]: c["value"] for c in context.cookies()}.get("referee_lang") == "fr"
    see_every_page(page, web_server, world, "fr", last=f"/play/games/{game}")
    # error codes and rule ids never change with the language (on the game page, the loop's last)
    page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
    assert page.locator("#status-line").inner_text().startswith("À vous : ")
    shoot(page, artifacts / "fr-fivetowers-game.png", full_page=True)
    page.locator("#manual summary").click()
    page.fill("#manual-json", "{")
    page.click("#manual-submit")
    error = page.locator("#errors .error[data-code='form/invalid_json']")
    assert "Votre coup" in error.inner_text() and "pas du JSON" in error.inner_text()
    assert error.locator("code").inner_text() == "form/invalid_json"
    console_errors.expect("422")
    page.fill("#manual-json", '{"type": "bid", "amount": 99}')
    page.click("#manual-submit")
    refused = page.locator("#errors .error[data-rule^='FT-']")
    refused.wait_for(timeout=STEP_MS)
    assert refused.get_attribute("data-code").startswith("bid/")
    assert refused.locator(".rule").inner_text() == refused.get_attribute("data-rule")
    assert "Votre coup a été refusé" in refused.inner_text()
    # the cookie lost (a cleared site cookie), the choice kept in localStorage brings it back
    context.clear_cookies()
    page.goto(f"{web_server}/play/tournaments")
    page.wait_for_selector("html[lang=fr]", timeout=STEP_MS)
    assert page.get_by_role("heading", name="Nouveau tournoi").is_visible()
    context.close()
    console_errors.assert_none()
