"""The contrast of the boards' SVG text (issue 24 item 4: "contrast passes WCAG 2.1 AA"), in Chromium against a
real referee with a real replay worker.

axe-core does not measure SVG text, so ``svg_contrast.js`` does: for every ``<text>``/``<tspan>`` a board draws
(site numbers, heights, floor letters, card values, tower names, labels, the players' boards) it takes the fill
colour getComputedStyle gives and the colour actually behind the text (the SVG painted at the text's centre and
at 20 % and 80 % along it: every shape under it in drawing order, with fill and stroke, their opacities and the
groups' opacities, gradients and patterns, over the page background), and WCAG 2.1's ratio must be at least
4.5:1 (3:1 for text of 24 CSS px, or 18.66 px bold, as drawn). The pages: Tower Up games of two and of four
players (both sides of the city, four seats' colours) with buildings and roofs, and a 5 Towers game in its
building phase with towers and a demolition pile, as the player to move (the
choosable sites and cards are highlighted), before and after a first choice (chosen, still choosable and
unavailable cards); at desktop and at phone size (the boards' narrow layout). The pages have one colour scheme:
no stylesheet rule depends on ``prefers-color-scheme`` (checked here, so that a dark scheme added one day is not
left unchecked: then parametrize ``scheme`` with "dark" too); the boards are checked in it. The lowest ratio of
each board is printed (docs/web.md quotes them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from browser_keys import keep_keys
from screens import shoot
from signed_requests import start, submit

pytestmark = pytest.mark.web

STEP_MS = 20_000
CHECKER = (Path(__file__).resolve().parent / "svg_contrast.js").read_text(encoding="utf-8")
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 360, "height": 740}}


def _start(base: str, ruleset: str, players: int = 2):
    return start(base, ruleset, [{"name": name} for name in ["Ann", "Bea", "Cem", "Dia"][:players]])


def _move(base: str, game: str, keys, legal: dict, move: dict) -> None:
    response = submit(base, game, keys[legal["to_move"]], legal["to_move"], "referee/move", move=move)
    assert response.status_code < 300, response.text


@pytest.fixture(scope="module")
def games(web_server):
    """{name: (game, key of the seat to move)}: Tower Up of two and of four players (the city's two sides)
    six rounds in (buildings, roofs, locomotives moved); 5 Towers in a building phase after three builds (a
    demolition whenever one was legal)."""
    base = web_server
    out = {}
    for name, players in (("towerup", 2), ("towerup-4", 4)):  # the two sides of the city; four seats' colours
        game, keys = _start(base, "towerup", players)
        for _ in range(6 * players):
            legal = requests.get(f"{base}/games/{game}/legal-moves", timeout=10).json()
            by_type = {m["type"]: m for m in reversed(legal["moves"])}
            _move(base, game, keys, legal, by_type.get("build") or by_type.get("place_start") or by_type.get("take")
                  or legal["moves"][0])
        legal = requests.get(f"{base}/games/{game}/legal-moves", timeout=10).json()
        assert legal["to_move"] is not None
        out[name] = (game, keys[legal["to_move"]])

    game, keys = _start(base, "fivetowers")
    builds = 0
    for _ in range(80):
        legal = requests.get(f"{base}/games/{game}/legal-moves", timeout=10).json()
        assert legal["to_move"] is not None, "the game ended before its fourth building phase"
        moves = legal["moves"]
        build = [m for m in moves if m["type"] == "build"]
        if build and builds >= 3:
            break
        if build:  # the most cards; a demolition when there is one (a pile to draw)
            move = max(build, key=lambda m: (len(m["cards"]), bool(m.get("demolish"))))
            builds += 1
        else:  # the highest bid: builds of several cards
            bids = [m for m in moves if m["type"] == "bid"]
            move = max(bids, key=lambda m: m["amount"]) if bids else moves[0]
        _move(base, game, keys, legal, move)
    out["fivetowers"] = (game, keys[legal["to_move"]])
    return out


def check(page, selector: str = "#board svg") -> list[dict]:
    if not page.evaluate("() => typeof window.svgContrast === 'object'"):
        page.evaluate(CHECKER)
    return page.evaluate("s => window.svgContrast.check(s)", selector)


def failures(found: list[dict]) -> list[str]:
    return [f"{f['where']} {f['text']!r}: {f['fg']} on {f['bg']} = {f['ratio']}:1 (needs {f['needed']}:1, "
            f"{f['size']} px{' bold' if f['bold'] else ''})" for f in found if f["ratio"] < f["needed"]]


def lowest(found: list[dict]) -> dict[str, dict]:
    """The lowest ratio of each board (by its SVG's name)."""
    out: dict[str, dict] = {}
    for f in found:
        board = f["where"].split(" › ")[0]
        if board not in out or f["ratio"] < out[board]["ratio"]:
            out[board] = f
    return out


#: the pages' colour schemes (one: see test_the_pages_have_one_colour_scheme)
SCHEMES = ["light"]


def test_the_pages_have_one_colour_scheme(browser, web_server, games, console_errors):
    """No stylesheet of a game page has a rule for ``prefers-color-scheme``, so a browser in dark mode draws the
    boards as in light mode, which the test below checks. A dark scheme must add "dark" to ``SCHEMES``."""
    game, _key = games["fivetowers"]
    context = browser.new_context(color_scheme="dark")
    page = console_errors.watch(context.new_page())
    try:
        page.goto(f"{web_server}/play/games/{game}")
        page.wait_for_selector("#game", timeout=STEP_MS)
        media = page.evaluate("""() => {
          const found = [];
          const walk = (rules) => { for (const rule of rules) {
            if (rule.media) found.push(rule.media.mediaText);
            if (rule.cssRules) walk(rule.cssRules);
          } };
          for (const sheet of document.styleSheets) walk(sheet.cssRules);
          return found;
        }""")
        sheets = page.evaluate("document.styleSheets.length")
    finally:
        context.close()
    assert sheets >= 1  # the page's own stylesheet was read (an empty list would prove nothing)
    assert [m for m in media if "prefers-color-scheme" in m] == [] or "dark" in SCHEMES, media
    console_errors.assert_none()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("ruleset", ["towerup", "towerup-4", "fivetowers"])
def test_every_text_of_the_board_has_aa_contrast(browser, web_server, games, console_errors, artifacts, *,
                                                 ruleset, size, scheme):
    game, key = games[ruleset]
    context = browser.new_context(viewport=SIZES[size], color_scheme=scheme)
    keep_keys(context, [("Me", key)])
    page = console_errors.watch(context.new_page())
    try:
        page.goto(f"{web_server}/play/games/{game}")
        page.wait_for_selector("#game[data-my-turn=true] #board [data-choice='1']", timeout=STEP_MS)
        assert page.evaluate(f"matchMedia('(prefers-color-scheme: {scheme})').matches")
        found = check(page)
        # a first choice: the chosen site or card, the next choices, the cards that cannot be built now
        page.locator("#board [data-choice='1']").first.click()
        page.wait_for_selector("#board .chosen, #move-controls .chosen-steps", timeout=STEP_MS)
        found += check(page)
        shoot(page.locator("#board"), artifacts / f"svg-contrast-{ruleset}-{size}-{scheme}.png")
    finally:
        context.close()
    texts = {f["text"] for f in found}
    # the board's texts were all found (a checker that sees nothing passes everything)
    expected = {"Display", "Bidding"} if ruleset == "fivetowers" else {"Market", "Box", "cone"}
    assert expected <= texts, sorted(texts)
    assert len(found) >= 60, len(found)
    board_mins = lowest(found)
    print(f"{ruleset} {size} {scheme}: {len(found)} texts; lowest per board: " + "; ".join(
        f"{board}: {f['ratio']}:1 ({f['text']!r}, {f['fg']} on {f['bg']})" for board, f in board_mins.items()))
    (artifacts / f"svg-contrast-{ruleset}-{size}-{scheme}.json").write_text(json.dumps(found, indent=1))
    bad = failures(found)
    assert not bad, f"{len(bad)} texts under WCAG 2.1 AA contrast:\n" + "\n".join(bad)
    console_errors.assert_none()


SAMPLE = """<svg xmlns="http://www.w3.org/2000/svg" id="sample" aria-label="sample" viewBox="0 0 400 100"
  width="400" height="100">
  <defs><pattern id="p" width="4" height="4" patternUnits="userSpaceOnUse">
    <rect width="4" height="4" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="4" stroke="#767676" stroke-width="2"/>
  </pattern></defs>
  <rect width="400" height="100" fill="#ffffff"/>
  <text id="grey" x="5" y="20" fill="#777777" font-size="12">grey</text>
  <text id="black" x="5" y="40" fill="#000000" font-size="12">black</text>
  <g opacity="0.5"><rect x="100" y="0" width="100" height="50" fill="#000000"/>
    <text id="faded" x="105" y="20" fill="#ffffff" font-size="12">faded</text></g>
  <g opacity="0.4"><circle cx="250" cy="20" r="30" fill="#000000"/><circle cx="260" cy="20" r="30" fill="#000000"/></g>
  <text id="group" x="240" y="24" fill="#000000" font-size="12">group</text>
  <rect x="300" y="0" width="100" height="50" fill="url(#p)"/>
  <text id="hatch" x="305" y="20" fill="#000000" font-size="12">hatch</text>
  <text id="big" x="5" y="90" fill="#949494" font-size="24">big</text>
</svg>"""


def test_the_ratio_and_the_painting_are_wcags(static_page):
    """The check can fail: WCAG 2.1's ratio on known pairs, and the colours it finds under drawn texts."""
    page = static_page
    page.evaluate(CHECKER)
    ratio = "([a, b]) => Math.round(window.svgContrast.ratio(a, b) * 100) / 100"
    assert page.evaluate(ratio, ["#777", "#fff"]) == 4.48  # just under AA
    assert page.evaluate(ratio, ["#767676", "#ffffff"]) == 4.54  # just over
    assert page.evaluate(ratio, ["black", "white"]) == 21
    assert page.evaluate(ratio, ["rgb(255, 255, 255)", "#fff"]) == 1
    assert page.evaluate(ratio, ["#0b5cad", "#fff"]) == page.evaluate(ratio, ["#fff", "#0b5cad"])
    page.evaluate("svg => document.body.insertAdjacentHTML('afterbegin', svg)", SAMPLE)
    got = {f["text"]: (f["fg"], f["bg"], f["ratio"], f["needed"]) for f in check(page, "#sample")}
    assert got["grey"] == ("#777777", "#ffffff", 4.48, 4.5)
    assert got["black"] == ("#000000", "#ffffff", 21, 4.5)
    # white text on black inside a group at half opacity: both composited with the group over white (127.5 grey)
    assert got["faded"][:2] == ("#ffffff", "#808080") and got["faded"][2] == pytest.approx(3.98, abs=0.01)
    # two overlapping circles in one translucent group darken once, not twice: 40 % black over white
    assert got["group"][1] == "#999999"
    # a hatch counts at its darkest colour
    assert got["hatch"][1] == "#767676" and got["hatch"][2] == pytest.approx(4.62, abs=0.01)
    # 24 px text needs 3:1 only
    assert got["big"][3] == 3 and got["big"][2] == pytest.approx(3.03, abs=0.01)
    assert [line.split(" ")[0] for line in failures(check(page, "#sample"))] == ["sample", "sample"]
    bad = failures(check(page, "#sample"))
    assert "'grey': #777777 on #ffffff = 4.48:1 (needs 4.5:1" in bad[0]
    assert "'faded': #ffffff on #808080 = 3.98:1" in bad[1]


# -- the replay page: the board at the last entry, the final score and the chart ----------------------------------


@pytest.fixture(scope="module")
def finished(web_server):
    """{name: game}: a finished game of each ruleset (random legal moves to the end; Tower Up of four players, so
    that its chart draws four seats' lines)."""
    import random

    rng = random.Random("replay-contrast")
    out = {}
    for name, ruleset, players in (("towerup-4", "towerup", 4), ("fivetowers", "fivetowers", 2)):
        game, keys = _start(web_server, ruleset, players)
        for _ in range(2000):
            legal = requests.get(f"{web_server}/games/{game}/legal-moves", timeout=10).json()
            if legal["to_move"] is None:
                break
            _move(web_server, game, keys, legal, rng.choice(legal["moves"]))
        assert requests.get(f"{web_server}/games/{game}", timeout=10).json()["status"] == "finished"
        out[name] = game
    return out


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("ruleset", ["towerup-4", "fivetowers"])
def test_every_text_of_the_replay_page_has_aa_contrast(browser, web_server, finished, console_errors, artifacts, *,
                                                       ruleset, size):
    """The replay of a finished game at its last entry: the board, and the chart of the final score (its axes
    and its lines' labels, which were drawn in the seats' line colours: orange 2.5:1, green 3.4:1 on white)."""
    context = browser.new_context(viewport=SIZES[size])
    page = console_errors.watch(context.new_page())
    try:
        page.goto(f"{web_server}/play/games/{finished[ruleset]}/replay")
        page.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
        page.locator("#last").click()
        page.wait_for_selector("#replay[data-result-loaded=true] #chart svg path.series", state="attached",
                               timeout=STEP_MS)
        page.wait_for_selector(f"#replay[data-at='{int(page.get_attribute('#replay', 'data-total')) - 1}'] #board svg",
                               timeout=STEP_MS)
        found = check(page, "#replay svg")  # every SVG of the page
        # the board's and the chart's texts among them (each result names its SVG: ``svg``, its index among the
        # selector's), as check(page, "#board svg") and check(page, "#chart svg") find them, without painting
        # them twice more
        kinds = page.evaluate("""() => [...document.querySelectorAll('#replay svg')].map((s) =>
            s.matches('#board svg') ? 'board' : s.matches('#chart svg') ? 'chart' : '')""")
        board, chart = ([f for f in found if kinds[f["svg"]] == kind] for kind in ("board", "chart"))
    finally:
        context.close()
    assert board and len(board) + len(chart) <= len(found)  # the board's texts are checked too
    labels = [f for f in chart if f["where"].endswith("text.series-label")]
    assert len(labels) == (16 if ruleset == "towerup-4" else 2), labels  # a label per line: checked, not skipped
    print(f"replay {ruleset} {size}: {len(found)} texts; lowest: " + "; ".join(
        f"{board}: {f['ratio']}:1 ({f['text']!r}, {f['fg']} on {f['bg']})" for board, f in lowest(found).items()))
    (artifacts / f"svg-contrast-replay-{ruleset}-{size}.json").write_text(json.dumps(found, indent=1))
    bad = failures(found)
    assert not bad, f"{len(bad)} texts under WCAG 2.1 AA contrast:\n" + "\n".join(bad)
    console_errors.assert_none()


def test_the_charts_labels_of_all_five_seat_colours_have_aa_contrast(static_page):
    """lineChart with a line for each of the five seat colours (no game has five seats today, 5 Towers and Tower Up
    stop at four): every label passes, the line colours themselves are kept for the lines."""
    page = static_page
    page.evaluate(CHECKER)
    page.evaluate("""async () => {
        const { lineChart } = await import("/play/static/games/score.js");
        const seats = ["Ann", "Bea", "Cem", "Dia", "Eve"].map((name) => ({ name }));
        const series = seats.map((_, seat) => ({ seat, label: "points",
          points: [{ x: 0, y: 0 }, { x: 9, y: seat * 3 }] }));
        const chart = lineChart({ title: "five", series, seats });
        chart.setAttribute("aria-label", "five");
        document.body.prepend(chart);
    }""")
    found = check(page, "svg[aria-label=five]")
    labels = [f for f in found if f["where"].endswith("text.series-label")]
    assert len(labels) == 5
    assert sorted({f["fg"] for f in labels}) == sorted({"#b01f20", "#1a6399", "#1e7b1e", "#7d4fa8", "#a65000"})
    strokes = page.eval_on_selector_all("svg[aria-label=five] path.series",
                                        "ps => ps.map(p => p.getAttribute('stroke'))")
    assert strokes == ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"]
    bad = failures(found)
    assert not bad, "\n".join(bad)
