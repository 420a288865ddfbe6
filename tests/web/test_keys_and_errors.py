"""Keys made outside the browser, and the errors a player can meet:

* a ``referee keygen`` key pasted into "My keys" plays its seat (the page finds the seat by its key);
* a move made on a page that has not seen the opponent's move is refused with 409 and the page says so
  (``submission/stale``), then catches up by itself;
* on a referee that lets only organisers create games, the new-game form signs the request with an
  organiser key of this browser, and without one the refusal is shown with its code.
"""

from __future__ import annotations

import json
import threading

import pytest
import requests
from live_server import serving

from referee.protocol.signing import b64url_encode, generate_key, private_key_b64, public_key_b64, sign

pytestmark = pytest.mark.web

STEP_MS = 20_000


def import_key(page, base_url: str, name: str, key) -> None:
    page.goto(f"{base_url}/play/keys")
    page.locator("#imp-name").fill(name)
    page.locator("#imp-text").fill(private_key_b64(key))
    page.get_by_role("button", name="Import").click()
    page.locator(f"#keys-body tr[data-public='{public_key_b64(key)}']").wait_for()


def accept_in_python(base_url: str, game: str, seat: int, key) -> None:
    state = requests.get(f"{base_url}/games/{game}", timeout=10).json()
    envelope = {"v": 1, "ctx": "referee/accept", "game": game, "seat": seat, "seq": state["seq"],
                "prev": state["head"], "entropy": b64url_encode(bytes([seat + 1]) * 32)}
    response = requests.post(f"{base_url}/games/{game}/accept", json={"envelope": envelope, "sig": sign(key, envelope)},
                             timeout=10)
    assert response.status_code == 202, response.text


def test_an_imported_key_plays_and_a_stale_page_is_told(browser, web_server, console_errors):
    ann, bea = generate_key(), generate_key()
    created = requests.post(f"{web_server}/games", timeout=10, json={
        "ruleset": "fivetowers", "seats": [{"name": "Ann", "key": public_key_b64(ann)},
                                           {"name": "Bea", "key": public_key_b64(bea)}]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]
    accept_in_python(web_server, game, 0, ann)
    accept_in_python(web_server, game, 1, bea)

    context = browser.new_context()
    fresh, stale = console_errors.watch(context.new_page()), console_errors.watch(context.new_page())
    import_key(fresh, web_server, "Ann (from the CLI)", ann)
    url = f"{web_server}/play/games/{game}"
    for page in (fresh, stale):
        page.goto(url)
        page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
    assert "(you)" in fresh.locator("#seat-list li[data-seat='0']").inner_text()

    # The second page stops hearing about the game (as on a flaky connection): it keeps the old position.
    old = requests.get(f"{web_server}/games/{game}", timeout=10).text
    hold = threading.Event()
    hold.set()

    def frozen(route):
        if hold.is_set():
            route.fulfill(status=200, content_type="application/json", body=old)
        else:
            route.continue_()

    stale.route(f"{web_server}/games/{game}", frozen)
    before = int(fresh.get_attribute("#game", "data-seq"))
    fresh.locator("#move-controls button[data-move=bid][data-amount='2']").click()
    fresh.locator("#submit-move").click()
    fresh.wait_for_function("seq => Number(document.querySelector('#game').dataset.seq) === seq", arg=before + 1,
                            timeout=STEP_MS)

    # Still showing Ann's turn, the stale page signs a bid for the old position: 409, nothing appended.
    console_errors.expect("status of 409")
    stale.locator("#move-controls button[data-move=bid][data-amount='1']").click()
    stale.locator("#submit-move").click()
    error = stale.locator("#errors .error[data-code='submission/stale']")
    error.wait_for(timeout=STEP_MS)
    assert "moved on" in error.inner_text()
    log = requests.get(f"{web_server}/games/{game}/log", timeout=10).json()
    assert log["total"] == before + 1
    assert [e["submission"]["envelope"]["move"] for e in log["entries"] if e["type"] == "move"] == [
        {"type": "bid", "amount": 2}]

    # Connection back: the page catches up without a reload (Bea is to move now, not Ann).
    hold.clear()
    stale.wait_for_function("seq => Number(document.querySelector('#game').dataset.seq) === seq", arg=before + 1,
                            timeout=STEP_MS)
    assert stale.get_attribute("#game", "data-my-turn") == "false"
    assert "Waiting for Bea" in stale.locator("#status-line").inner_text()
    context.close()
    console_errors.assert_none()


@pytest.fixture(scope="module")
def organiser_server(tmp_path_factory):
    """A referee where only one organiser key may create games (no worker: only creation is used)."""

    from referee.app import create_app

    key = generate_key()
    app = create_app({"REFEREE_STORE": "memory", "REFEREE_VAR": str(tmp_path_factory.mktemp("org-var")),
                      "REFEREE_ORGANISER_KEYS": public_key_b64(key), "TESTING": True})
    with serving(app) as url:
        yield url, key


def test_the_new_game_form_signs_as_organiser(browser, organiser_server, console_errors):
    base_url, organiser = organiser_server
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    bea = public_key_b64(generate_key())

    def fill_form():
        page.goto(f"{base_url}/play/new")
        page.locator("input[name=ruleset][value=towerup]").check()
        seats = page.locator("#seats li")
        seats.nth(1).wait_for()
        seats.nth(0).get_by_role("button", name="Generate a key in this browser for player 1").click()
        page.wait_for_function("() => document.querySelector('#seats li .seat-key').value.length === 43")
        seats.nth(1).locator(".seat-key").fill(bea)

    # Without an organiser signature this referee refuses, and the page shows why.
    fill_form()
    console_errors.expect("status of 401")
    page.get_by_role("button", name="Create the game").click()
    page.locator("#errors .error[data-code='organiser/required']").wait_for(timeout=STEP_MS)

    import_key(page, base_url, "Tournament director", organiser)
    fill_form()
    page.get_by_label("Sign the request as").select_option(label="Tournament director")
    page.get_by_role("button", name="Create the game").click()
    page.wait_for_url(f"{base_url}/play/games/*", timeout=STEP_MS)
    game = page.url.rsplit("/", 1)[1]
    created = requests.get(f"{base_url}/games/{game}", timeout=10).json()
    assert created["organiser"] == public_key_b64(organiser)
    assert [s["key"] for s in created["seats"]][1] == bea
    page.wait_for_selector("#accept-panel:not([hidden])", timeout=STEP_MS)
    context.close()
    console_errors.assert_none()


def test_a_malformed_import_is_refused_with_a_message(browser, pages_only, console_errors):
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    page.goto(f"{pages_only}/play/keys")
    page.locator("#imp-text").fill("not a key!")
    page.get_by_role("button", name="Import").click()
    error = page.locator("#errors .error")
    error.wait_for()
    assert "Could not import the key" in error.inner_text()
    assert page.locator("#keys-body").inner_text().startswith("No key yet")
    assert json.loads(page.evaluate("localStorage.getItem('referee.keys.v1') || '[]'")) == []
    context.close()
    console_errors.assert_none()


def test_a_key_generated_in_the_page_exports_as_a_plain_referee_key_file(browser, pages_only, console_errors, tmp_path):
    from referee.protocol.signing import load_private_key

    context = browser.new_context(accept_downloads=True)
    page = console_errors.watch(context.new_page())
    page.goto(f"{pages_only}/play/keys")
    page.locator("#gen-name").fill("Cy")
    page.get_by_role("button", name="Generate key in this browser").click()
    row = page.locator("#keys-body tr", has_text="Cy")
    public = row.locator("input.public-key").input_value()
    row.get_by_role("button", name="Export to file").click()
    page.locator("#export-dialog summary").click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download unencrypted key file").click()
    assert download.value.suggested_filename == "referee-Cy-unencrypted.key"
    path = tmp_path / "cy.key"
    download.value.save_as(path)
    assert public_key_b64(load_private_key(path.read_text())) == public
    context.close()
    console_errors.assert_none()
