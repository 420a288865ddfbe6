"""Playable without a mouse and by a screen reader (issue 24 item 4), in Chromium against a real referee with a
real replay worker:

* axe-core on every page — the lobby, new game, my keys, my games, tournaments, a tournament, the game page and
  the replay of both games (mid-game; the boards' pages at phone size too; in English, and four of them in German
  or French; one test item per page, so that they spread over the workers), the confirmation page, the join page
  of an open seat, and the finished game's page and replay (with its score) of the keyboard game below: no serious
  or critical violation
  (WCAG 2.1 A and AA rules and axe's best practices); the counts per page are printed. axe-core is the npm
  package's ``axe.min.js``, vendored in ``tests/web/vendor/`` (never fetched at test time), put into each page
  through the DevTools protocol: the contexts bypass the pages' Content-Security-Policy for it (``test_csp.py``
  checks the policy).
* a whole 5 Towers game played by keyboard alone: two players, each in their own browser context holding their
  key; every acceptance, bid, pass, card of a build, demolition choice and submission is reached with Tab (or
  Shift+Tab) and taken with Enter or Space — the test never clicks. Each element reached this way shows a
  visible focus (``:focus-visible``, and an outline or, on the board, a drawn ring) and has an accessible name.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from pathlib import Path

import pytest
import requests
from browser_keys import keep_keys

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from seat_helpers import create_open_game
from signed_requests import start, submit
from svc_helpers import Http
from tournament_helpers import Players, join_all

from referee.protocol.signing import generate_key, public_key_b64

pytestmark = pytest.mark.web

STEP_MS = 20_000  # upper bound for one UI step (not a timing assertion)

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
IMPACTS = ("critical", "serious", "moderate", "minor")
RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + " :: " + (n.failureSummary || "").slice(0, 200)),
    count: v.nodes.length }));
}"""


@cache
def axe_source() -> str:
    return AXE.read_text(encoding="utf-8")


def run_axe(page) -> tuple[dict[str, int], list[dict]]:
    """axe-core's violations in ``page``: the count of failing nodes by impact, and the serious or critical
    violations themselves."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    found = page.evaluate(RUN_AXE)
    tally = dict.fromkeys(IMPACTS, 0)
    for violation in found:
        tally[violation["impact"] or "minor"] += violation["count"]
    return tally, [v for v in found if v["impact"] in ("serious", "critical")]


def tally_line(name: str, tally: dict[str, int]) -> str:
    return f"  {name}: " + ", ".join(f"{impact} {tally[impact]}" for impact in IMPACTS)


def _play(base: str, ruleset: str, turns: int, bot: bool = False):
    """A game of Ann and Bea (``bot``: Bea declared a program), accepted and ``turns`` moves in (builds preferred,
    so towers stand)."""
    game, keys = start(base, ruleset, [{"name": "Ann"}, {"name": "Bea", **({"bot": True} if bot else {})}])
    for _ in range(turns):
        legal = requests.get(f"{base}/games/{game}/legal-moves", timeout=10).json()
        if legal["to_move"] is None:
            break
        builds = [m for m in legal["moves"] if m["type"] == "build"]
        by_type = {m["type"]: m for m in reversed(legal["moves"])}
        move = (max(builds, key=lambda m: len(m.get("cards", []))) if builds else None) or by_type.get(
            "place_start") or by_type.get("take") or by_type.get("bid") or legal["moves"][0]
        response = submit(base, game, keys[legal["to_move"]], legal["to_move"], "referee/move", move=move)
        assert response.status_code < 300, response.text
    to_move = requests.get(f"{base}/games/{game}", timeout=10).json()["to_move"]
    return game, keys, to_move


PAGES = ("lobby", "new game", "my keys", "my games", "tournaments", "tournament", "5 Towers game", "5 Towers replay",
         "Tower Up game", "Tower Up replay", "confirm", "join")
#: every page at desktop size in English; the boards' game pages at phone size too (their layout changes there);
#: German and French on two pages each, a board among them: a language changes texts, whose every page
#: tests/web/test_i18n_pages.py checks, not the layout or the colours
RUNS = ([(name, "desktop", "en") for name in PAGES]
        + [("5 Towers game", "phone", "en"), ("Tower Up game", "phone", "en")]
        + [("new game", "desktop", "de"), ("5 Towers game", "desktop", "de"),
           ("tournament", "desktop", "fr"), ("Tower Up replay", "desktop", "fr")])


@pytest.fixture(scope="module")
def axe_pages(web_server):
    """The pages axe-core looks at, by name: (path, selector of the page being ready, key the browser holds)."""
    base = web_server
    fivetowers, towerup = _play(base, "fivetowers", 9, bot=True), _play(base, "towerup", 12)
    http = Http(requests.Session(), base)
    players = Players(3)
    status, created = http.post("/tournaments", players.body(format={"kind": "round_robin", "table_sizes": [2]}))
    assert status == 201, created
    join_all(http, created["tournament"], players)

    def key_of(game):
        _id, keys, to_move = game
        return keys[to_move if to_move is not None else 0]

    pages = {
        "lobby": ("/play/", "#games-body tr[data-game]", key_of(fivetowers)),
        "new game": ("/play/new", "#seats li", None),
        "my keys": ("/play/keys", "#keys-body tr[data-public]", key_of(fivetowers)),
        "my games": ("/play/me", "#all-my-games[aria-busy=false]", key_of(fivetowers)),
        "tournaments": ("/play/tournaments", "#t-ruleset-choices input", None),
        "tournament": (f"/play/tournaments/{created['tournament']}", ".round[data-round='1']", None),
        "5 Towers game": (f"/play/games/{fivetowers[0]}", "#game[data-my-turn=true]", key_of(fivetowers)),
        "5 Towers replay": (f"/play/games/{fivetowers[0]}/replay", "#replay[data-ready=true]", None),
        "Tower Up game": (f"/play/games/{towerup[0]}", "#game[data-my-turn=true]", key_of(towerup)),
        "Tower Up replay": (f"/play/games/{towerup[0]}/replay", "#replay[data-ready=true]", None),
        "confirm": ("/play/confirm/c_aaaaaaaaaaaaaaaa", "#confirm-form, form, main", None),
        "join": (f"/play/join/{create_open_game(http, 'fivetowers', ['key', 'open']).game_id}",
                 "#join[data-state=open]", None),
    }
    assert set(pages) == set(PAGES)
    return pages


@pytest.mark.parametrize(("name", "size", "lang"), RUNS, ids=[f"{n}-{s}-{lang}" for n, s, lang in RUNS])
def test_axe_finds_no_serious_or_critical_violation(browser, web_server, axe_pages, console_errors, artifacts, *,
                                                    name, size, lang):
    base = web_server
    path, ready, key = axe_pages[name]
    viewports = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 360, "height": 740}}
    context = browser.new_context(viewport=viewports[size], bypass_csp=True)
    context.add_cookies([{"name": "referee_lang", "value": lang, "url": base}])
    page = console_errors.watch(context.new_page())
    if key is not None:
        keep_keys(context, [("Me", key)])
    page.goto(f"{base}{path}")
    page.wait_for_selector(ready, timeout=STEP_MS, state="attached")
    if "replay" in name:
        page.locator("#last").click()
    page.wait_for_timeout(300)  # (not "networkidle": the pages hold an event stream open)
    assert page.evaluate("document.documentElement.lang") == lang, (name, lang)
    tally, serious = run_axe(page)
    context.close()
    label = f"{name} ({size}, {lang})"
    print("axe-core violations (nodes, by impact):", tally_line(label, tally))
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    (artifacts / f"axe-{slug}.json").write_text(json.dumps({"counts": tally, "serious_or_critical": serious}, indent=1))
    assert serious == [], serious
    console_errors.assert_none()


MAX_TABS = 250

#: what the focused element is, and how it shows its focus
FOCUSED = """() => {
  const e = document.activeElement;
  const marked = Boolean(document.querySelector('[data-kbd-target]'));
  if (!e || e === document.body) return { target: false, marked };
  const style = getComputedStyle(e);
  const ring = e.querySelector && e.querySelector('rect');
  const ringStyle = ring ? getComputedStyle(ring) : null;
  return { marked, tag: `${e.tagName}#${e.id}.${e.getAttribute('class') || ''}`,
           target: e.hasAttribute('data-kbd-target'), visible: e.matches(':focus-visible'),
           outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
           ring: Boolean(ringStyle && parseFloat(ringStyle.strokeWidth) >= 3),
           name: (e.getAttribute('aria-label') || e.textContent || '').trim() };
}"""


def _mark(page, script: str) -> bool:
    """Marks the element ``script`` (a function returning an element or null) finds as the keyboard's target."""
    return page.evaluate(f"""() => {{
      for (const old of document.querySelectorAll('[data-kbd-target]')) old.removeAttribute('data-kbd-target');
      const e = ({script})();
      if (!e) return false;
      e.setAttribute('data-kbd-target', '');
      return true;
    }}""")


#: whether the keyboard's target comes before the focused element in the document (then Shift+Tab is the way)
TARGET_BEFORE_FOCUS = """() => {
  const target = document.querySelector('[data-kbd-target]');
  const focused = document.activeElement;
  return Boolean(target && focused && focused !== document.body
                 && (target.compareDocumentPosition(focused) & Node.DOCUMENT_POSITION_FOLLOWING));
}"""


def _press_on(page, script: str, key: str, stats: dict) -> str:
    """Tab to the element ``script`` finds — with Tab, or with Shift+Tab when it comes before the focused element,
    the shorter way as a person takes it (the other way round the page takes a few times the presses) — check
    its focus is visible and it has a name, and press ``key`` on it. Returns its name."""
    assert _mark(page, script), f"nothing to press: {script}"
    back = page.evaluate(TARGET_BEFORE_FOCUS)
    stats["back" if back else "forward"] += 1
    trail = []
    for _ in range(MAX_TABS):
        focused = page.evaluate(FOCUSED)
        trail.append((focused.get("tag"), focused.get("name", "")[:30]))
        if not focused["marked"]:  # the page redrew (a live update): find the element again
            assert _mark(page, script), f"nothing to press any more: {script}"
            continue
        if focused["target"]:
            assert focused["visible"] and (focused["outline"] or focused["ring"]), focused
            assert focused["name"], focused
            page.keyboard.press(key)
            stats["presses"] += 1
            return focused["name"]
        page.keyboard.press("Shift+Tab" if back else "Tab")
        stats["tabs"] += 1
    raise AssertionError(f"Tab never reached {script}: {trail[-40:]}")


BEST_BID = """() => [...document.querySelectorAll('#move-controls button[data-move=bid]')]
  .sort((a, b) => Number(b.dataset.amount) - Number(a.dataset.amount))[0] || null"""
BOARD_CARD = "() => document.querySelector(\"#board .display [data-choice='1']\")"
NO_DEMOLITION = """() => document.querySelector('#move-controls button[data-demolish=none][aria-checked=false]')
  || (document.querySelector('#move-controls button[data-demolish][aria-checked=true]') ? null
      : document.querySelector('#move-controls button[data-demolish]'))"""
SUBMIT = "() => { const b = document.getElementById('submit-move'); return b.disabled ? null : b; }"


def _choose_and_submit(page, stats: dict) -> str:
    """One move by keyboard on the page of the seat to move: the highest bid, or a build of every card the bid
    won (from the board, in order) without demolition when that is allowed."""
    kinds = page.evaluate("""() => [...document.querySelectorAll('#move-controls button[data-move]')]
      .map(b => b.dataset.move)""")
    if kinds:
        if "bid" in kinds:
            _press_on(page, BEST_BID, "Enter", stats)
        else:
            _press_on(page, "() => document.querySelector('#move-controls button[data-move=pass]')", "Space", stats)
        kind = "bid" if "bid" in kinds else "pass"
    else:
        kind = "build"
        for _ in range(20):
            if page.evaluate(SUBMIT.replace("return b.disabled ? null : b;", "return !b.disabled;")):
                break
            if _mark(page, BOARD_CARD):
                _press_on(page, BOARD_CARD, "Enter" if stats["presses"] % 2 else " ", stats)
            else:
                _press_on(page, NO_DEMOLITION, "Enter", stats)
    before = int(page.get_attribute("#game", "data-seq"))
    _press_on(page, SUBMIT, "Enter", stats)
    # the page posts the move and shows the log with it (so the next look at the game is not too early)
    page.wait_for_function(f"() => Number(document.getElementById('game').dataset.seq) > {before}", timeout=STEP_MS)
    return kind


def test_a_whole_fivetowers_game_by_keyboard_alone(browser, web_server, console_errors):
    base = web_server
    keys = [generate_key(), generate_key()]
    created = requests.post(f"{base}/games", timeout=10, json={
        "ruleset": "fivetowers", "seats": [{"name": "Ann", "key": public_key_b64(keys[0])},
                                           {"name": "Bea", "key": public_key_b64(keys[1])}]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]
    contexts, pages = [], []
    stats = {"tabs": 0, "presses": 0, "forward": 0, "back": 0}
    try:
        for name, key in zip(("Ann", "Bea"), keys, strict=True):
            context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # (for axe)
            keep_keys(context, [(name, key)])
            page = console_errors.watch(context.new_page())
            page.goto(f"{base}/play/games/{game}")
            page.wait_for_selector("#accept-panel:not([hidden]) button.accept", timeout=STEP_MS)
            contexts.append(context)
            pages.append(page)
        for page in pages:  # the acceptances, by keyboard too
            name = _press_on(page, "() => document.querySelector('#accept-buttons button.accept')", "Enter", stats)
            assert name.startswith("Accept as ")
            page.wait_for_selector("#accept-panel[hidden]", state="attached", timeout=STEP_MS)
        kinds: dict[str, int] = {}
        for _ in range(200):
            state = requests.get(f"{base}/games/{game}", timeout=10).json()
            if state["status"] == "finished":
                break
            page = pages[state["to_move"]]
            page.wait_for_selector(f"#game[data-seq='{state['seq']}'][data-my-turn=true]", timeout=STEP_MS)
            kind = _choose_and_submit(page, stats)
            kinds[kind] = kinds.get(kind, 0) + 1
        assert state["status"] == "finished", state
        print(f"keyboard game: {sum(kinds.values())} moves {kinds}, {stats['tabs']} Tab presses, "
              f"{stats['presses']} Enter/Space; targets reached with Tab {stats['forward']}, with Shift+Tab "
              f"{stats['back']} times")
        assert stats["forward"] >= 10 and stats["back"] >= 10, stats  # both directions
        # the page keeps the focus in the move panel from one turn to the next (the button of the last move is
        # disabled, then hidden): a move is a few presses away, not a walk from the top of the page (6.6 Tabs a
        # target before, 1.1 since)
        assert stats["tabs"] <= 2 * stats["presses"], stats
        assert kinds.get("build", 0) >= 3 and kinds.get("bid", 0) >= 3
        for page in pages:
            page.wait_for_function("() => document.getElementById('status-line').textContent.startsWith('Game over')",
                                   timeout=STEP_MS)
            # the score table follows its own GET /result, a moment after the status line says the game is over
            page.wait_for_selector("#result-section", state="visible", timeout=STEP_MS)
            assert page.locator("#result tbody tr").count() == len(pages)  # one row a seat
        # axe-core on the finished game (with its score) and its replay
        found = {}
        ann, bea = pages
        bea.set_viewport_size({"width": 360, "height": 740})
        for name, page in (("finished game (desktop)", ann), ("finished game (phone)", bea)):
            found[name] = run_axe(page)
        ann.goto(f"{base}/play/games/{game}/replay")
        ann.wait_for_selector("#replay[data-ready=true]", timeout=STEP_MS)
        ann.keyboard.press("End")
        ann.wait_for_selector("#result-section:not([hidden])", timeout=STEP_MS)
        found["finished replay (desktop)"] = run_axe(ann)
        print("axe-core violations per page (nodes, by impact):")
        print("\n".join(tally_line(name, tally) for name, (tally, _serious) in found.items()))
        assert {name: serious for name, (_tally, serious) in found.items() if serious} == {}
        log = requests.get(f"{base}/games/{game}/log?from=0&limit=1000", timeout=10).json()["entries"]
        moves = [e for e in log if e["type"] == "move"]
        assert len(moves) == sum(kinds.values())
    finally:
        for context in contexts:
            context.close()
    console_errors.assert_none()
