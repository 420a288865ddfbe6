"""Every page preloads the modules it loads (issue 49, ``referee.web.modulepreload``): its module scripts and every
module they import, directly or not, each once, under its own version (an import resolves through the page's import
map, as the browser resolves it); and only those. The imports are read here from the served modules' text (the
browser's view of the same is ``tests/web/test_modulepreload.py``)."""

from __future__ import annotations

import json
import re
from urllib.parse import urljoin

import pytest

PAGES = ["/play/", "/play/new", "/play/keys", "/play/me", "/play/tournaments", "/play/tournaments/t1",
         "/play/tournaments/t1/join", "/play/games/abc", "/play/games/abc/replay", "/play/join/abc", "/play/verify",
         "/play/confirm/c_abcdefghijklmnop", "/play/link/abc"]
PRELOAD = re.compile(r'<link rel="modulepreload" href="([^"]+)">')
SCRIPT = re.compile(r'<script type="module" src="([^"]+)">')
FROM = re.compile(r'(?:from|import)\s*"(\.{1,2}/[^"]+)"')  # a static import (not ``import(…)``: on demand)
IMPORTMAP = re.compile(r'<script type="importmap">(.*?)</script>')


@pytest.mark.parametrize("path", PAGES)
def test_a_page_preloads_exactly_its_module_graph(app, path):
    client = app.test_client()
    html = client.get(path).get_data(as_text=True)
    head = html.split("</head>")[0]
    preloaded = PRELOAD.findall(head)
    imports = json.loads(IMPORTMAP.search(head).group(1))["imports"]
    assert len(preloaded) == len(set(preloaded))
    graph: set[str] = set()
    todo = SCRIPT.findall(html)
    assert todo, "the page has no module script"
    while todo:
        url = todo.pop()
        if url in graph:
            continue
        graph.add(url)
        answer = client.get(url)
        assert answer.status_code == 200, url
        resolved = [urljoin(url, spec) for spec in FROM.findall(answer.get_data(as_text=True))]
        todo += [imports.get(plain, plain) for plain in resolved]
    assert set(preloaded) == graph
