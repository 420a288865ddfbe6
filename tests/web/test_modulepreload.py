"""The game page preloads its whole module graph (issue 49): every module Chromium loads for it is named by a
``<link rel="modulepreload">`` of its ``<head>`` (``referee.web.assets.modulepreload``), so the graph comes in one round
trip after the page instead of one per level of imports."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.web


def test_every_module_the_game_page_loads_is_preloaded(browser, pages_only):
    context = browser.new_context()
    try:
        page = context.new_page()
        scripts: list[str] = []
        page.on("request", lambda request: scripts.append(request.url)
                if request.resource_type == "script" and "/play/static/" in request.url else None)
        page.goto(f"{pages_only}/play/games/abc", wait_until="networkidle")
        preloaded = page.eval_on_selector_all('head link[rel="modulepreload"]', "links => links.map(l => l.href)")
        assert len(preloaded) >= 20 and len(set(preloaded)) == len(preloaded)
        loaded = set(scripts)
        assert loaded, "the page loaded no module"
        assert loaded <= set(preloaded), sorted(loaded - set(preloaded))
        assert set(preloaded) <= loaded, sorted(set(preloaded) - loaded)  # nothing preloaded that it never uses
    finally:
        context.close()
