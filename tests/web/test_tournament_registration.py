"""Open tournament registration in the pages (CONTRACT section 14), in Chromium under the CSP: the organiser (a key
of this browser) creates a tournament "by invitation link" in the new-tournament form; the tournament's page shows
the link (the invitation's seed only in its #fragment, never on the server) with a copy button; a fresh browser with
no key opens the link, types a name and joins with one click (a key made in that browser); the same link without its
fragment says an invitation is needed; a second browser, which holds a key, joins with that key (offered with its
name) and fills the tournament, and round 1 is paired."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import requests
from test_csp import WATCH_CSP, violations

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from browser_keys import storage_state
from screens import shoot

from referee.protocol.signing import generate_key, public_key_b64

pytestmark = pytest.mark.web

STEP_MS = 20_000
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


def watched(browser, console_errors, **context_args):
    context = browser.new_context(**context_args)
    context.add_init_script(WATCH_CSP)
    return context, console_errors.watch(context.new_page())


def join_from_link(browser, console_errors, link: str, name: str, key=None):
    """Join from the invitation link in a browser with no key (the page makes one), or holding ``key`` under ``name``
    (the page offers it, with its name, and joins with it: one key keeps a player's games and rating together)."""
    state = storage_state(link.split("/play/", 1)[0], [(name, key)]) if key is not None else None
    context, page = watched(browser, console_errors, **PHONE, storage_state=state)
    page.goto(link)
    page.wait_for_selector("#tjoin[data-state=open] #tjoin-form:not([hidden])", timeout=STEP_MS)
    if key is None:
        assert page.locator("#tjoin-key-row").is_hidden()  # nothing to choose: a new key
        page.fill("#tjoin-name", name)
    else:
        assert page.locator("#tjoin-key").input_value() == public_key_b64(key)  # this browser's key, chosen
        assert page.locator("#tjoin-name").input_value() == name and page.locator("#tjoin-new-hint").is_hidden()
    page.click("#tjoin-take")
    page.wait_for_url(re.compile(r".*/play/tournaments/t_[a-z2-7]+$"), timeout=STEP_MS)
    page.wait_for_selector("#tournament[aria-busy=false]", timeout=STEP_MS)
    keys = page.evaluate("() => JSON.parse(localStorage.getItem('referee.keys.v1') || '[]')")
    assert [k["name"] for k in keys] == [name]  # with a key: that key, no second one
    assert key is None or keys[0]["public"] == public_key_b64(key)
    return context, page, keys[0]["public"]


def test_a_fresh_browser_joins_a_tournament_from_its_invitation_link(browser, web_server, console_errors, artifacts):
    organiser = generate_key()
    context, page = watched(browser, console_errors, viewport={"width": 1280, "height": 900},
                            storage_state=storage_state(web_server, [("Org", organiser)]))
    page.goto(f"{web_server}/play/tournaments")
    page.check("input[name=t-ruleset][value=fivetowers]")
    page.select_option("#t-format", "swiss")
    page.fill("#t-rounds", "1")
    page.fill("#t-table-sizes", "2")
    page.select_option("#t-registration", "invite")
    page.fill("#t-max-players", "2")
    page.select_option("#t-organiser", public_key_b64(organiser))
    page.click("#t-create")
    page.wait_for_url("**/play/tournaments/t_*", timeout=STEP_MS)
    tid = page.url.rsplit("/", 1)[-1]
    page.wait_for_selector("#t-invite-link", timeout=STEP_MS)
    link = page.locator("#t-invite-link").input_value()
    assert re.fullmatch(rf"{re.escape(web_server)}/play/tournaments/{tid}/join#[A-Za-z0-9_-]{{43}}", link), link
    assert page.locator("#t-join button.copy-link").count() == 1 and page.locator("#t-start").is_visible()
    shoot(page, artifacts / "tournament-invitation-link.png", full_page=True)
    seed = link.split("#", 1)[1]
    state = requests.get(f"{web_server}/tournaments/{tid}", timeout=10).json()
    assert state["registration"]["invite"] and state["max_players"] == 2 and state["registration_open"]
    assert seed not in requests.get(f"{web_server}/tournaments/{tid}/log", timeout=10).text

    # without the fragment the page says an invitation is needed, and offers no form
    bare_ctx, bare = watched(browser, console_errors, **PHONE)
    bare.goto(link.split("#", 1)[0])
    bare.wait_for_selector("#tjoin[data-state=no-invite]", timeout=STEP_MS)
    assert bare.locator("#tjoin-form").is_hidden()
    bare_ctx.close()

    bea_ctx, bea, bea_key = join_from_link(browser, console_errors, link, "Bea")
    shoot(bea, artifacts / "tournament-joined-by-link-phone.png", full_page=True)
    state = requests.get(f"{web_server}/tournaments/{tid}", timeout=10).json()
    assert [(p["name"], p["key"]) for p in state["players"]] == [("Bea", bea_key)] and state["status"] == "waiting"
    cy_ctx, cy, cy_key = join_from_link(browser, console_errors, link, "Cy", key=generate_key())  # a key of its own
    cy.wait_for_selector("#tournament[data-status=active]", timeout=STEP_MS)
    state = requests.get(f"{web_server}/tournaments/{tid}", timeout=10).json()
    assert state["status"] == "active" and [p["key"] for p in state["players"]] == [bea_key, cy_key]
    assert sorted(state["rounds"][0]["tables"][0]["players"]) == sorted([bea_key, cy_key])
    for ctx, p in ((bea_ctx, bea), (cy_ctx, cy), (context, page)):
        assert violations(p) == []
        ctx.close()
    console_errors.assert_none()
