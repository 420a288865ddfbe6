"""Every page has a ``<meta name="description">`` of its own in the page's language (issue 49: search engines and
link previews), from the gettext catalogs like the rest of the page."""

from __future__ import annotations

import re

PAGES = ["/play/", "/play/new", "/play/keys", "/play/me", "/play/tournaments", "/play/tournaments/t1",
         "/play/tournaments/t1/join", "/play/games/abc", "/play/games/abc/replay", "/play/join/abc", "/play/verify",
         "/play/confirm/c_abcdefghijklmnop", "/play/link/abc"]
DESCRIPTION = re.compile(r'<meta name="description" content="([^"]+)">')
GAME = {"en": "A game on the referee: the board, the moves, the clocks and the messages, as they happen.",
        "de": "Eine Partie beim Schiedsrichter: das Brett, die Züge, die Uhren und die Nachrichten, "
              "während sie geschehen.",
        "fr": "Une partie chez l’arbitre : le plateau, les coups, les pendules et les messages, en direct."}


def test_each_page_describes_itself_in_its_language(app):
    client = app.test_client()
    seen: dict[str, dict[str, str]] = {}
    for path in PAGES:
        for lang in ("en", "de", "fr"):
            html = client.get(path, headers={"Accept-Language": lang}).get_data(as_text=True)
            assert f'<html lang="{lang}">' in html, (path, lang)
            found = DESCRIPTION.findall(html.split("</head>")[0])
            assert len(found) == 1 and len(found[0]) >= 50, (path, lang, found)
            seen.setdefault(lang, {})[path] = found[0]
    for lang in ("en", "de", "fr"):
        assert len(set(seen[lang].values())) == len(PAGES), lang  # a description per page
    for path in PAGES:
        assert len({seen[lang][path] for lang in ("en", "de", "fr")}) == 3, path  # translated
    assert {lang: seen[lang]["/play/games/abc"] for lang in GAME} == GAME

