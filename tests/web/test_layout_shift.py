"""No layout shift (issue 49): the new-game form and the game page's board keep their size from the first paint, as
a player's phone sees them — the sum of the page's ``layout-shift`` entries (a ``PerformanceObserver``, buffered, as
Lighthouse's CLS counts them) stays under 0.1 while the scripts fill them. The page's scripts are held back until
its first contentful paint (every ``.js`` request waits in a Playwright route): whatever they fill, they fill in a
page already painted, every time. (The test slowed the CPU four times before, as Lighthouse's mobile run does, for
the same order; that made it likely, not certain, and cost two to four times the CPU of each page load.)"""

from __future__ import annotations

import pytest
from browser_keys import keep_keys
from signed_requests import start

pytestmark = pytest.mark.web
STEP_MS = 20_000  # upper bound for one UI step (not a timing assertion)

SHIFTS = """() => new Promise((resolve) => {
  const shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const nodes = e.sources.map((s) => s.node ? (s.node.id || s.node.className || s.node.nodeName) : "?");
      if (!e.hadRecentInput) shifts.push({ value: e.value, nodes });
    }
  }).observe({ type: "layout-shift", buffered: true });
  setTimeout(() => resolve(shifts), 1000);
})"""


FIRST_PAINT = "() => performance.getEntriesByName('first-contentful-paint').length > 0"


def shifts_of(browser, url: str, ready: str, key=None, lang: str = "en") -> list[dict]:
    context = browser.new_context(viewport={"width": 412, "height": 823}, device_scale_factor=2, is_mobile=True,
                                  has_touch=True)
    context.add_cookies([{"name": "referee_lang", "value": lang, "url": url}])
    if key is not None:
        keep_keys(context, [("Ann", key)])
    page = context.new_page()
    held: list = []  # the scripts' requests, answered once the page has painted without them
    painted = False

    def hold(route) -> None:
        if painted:
            route.continue_()
        else:
            held.append(route)

    page.route("**/*.js", hold)
    page.goto(url, wait_until="commit")
    page.wait_for_function(FIRST_PAINT, timeout=STEP_MS)
    assert held, "no script was held back"  # (the page's modules were asked for before it painted)
    painted = True
    for route in held:
        route.continue_()
    page.wait_for_selector(ready, timeout=STEP_MS, state="attached")
    shifts = page.evaluate(SHIFTS)
    context.close()
    return shifts


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_new_game_form_does_not_move_as_its_script_fills_it(browser, web_server, lang):
    shifts = shifts_of(browser, f"{web_server}/play/new", "#options .option, #options .hint", lang=lang)
    assert sum(s["value"] for s in shifts) < 0.1, shifts


@pytest.mark.parametrize("ruleset", ["fivetowers", "towerup"])
def test_the_game_page_does_not_move_as_the_board_comes(browser, web_server, ruleset):
    game, keys = start(web_server, ruleset, [{"name": "Ann"}, {"name": "Bo"}])
    for key in (keys[0], None):  # the player to move, and a visitor without a key (who is asked "Is this your seat?")
        shifts = shifts_of(browser, f"{web_server}/play/games/{game}", "#game[data-loaded=true]", key=key)
        assert sum(s["value"] for s in shifts) < 0.1, (key is not None, shifts)
