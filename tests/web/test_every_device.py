"""One player, every device (CONTRACT section 15) in Chromium: a key made by a passkey (a virtual authenticator with
PRF, over the DevTools protocol) takes a seat, survives a cleared browser and moves; the key equals the one this test
derives itself from the authenticator's PRF output; a key moves to a second browser by a device link and moves
there; a key goes from a browser to ``referee key fetch`` and ``referee move``, and from ``referee key link`` into a
browser. WebAuthn wants the pages at ``localhost``, not at an IP address. (The API's limits: tests/service/
test_device_links.py.)"""

from __future__ import annotations

import json

import pytest
import requests
from browser_keys import keep_keys
from click.testing import CliRunner
from screens import shoot
from signed_requests import submit
from test_a11y import run_axe

from referee.cli import main as cli
from referee.protocol.keyfile import passkey_key, passkey_prf_input
from referee.protocol.signing import b64url_decode, b64url_encode, generate_key, private_key_b64, public_key_b64

pytestmark = pytest.mark.web
STEP_MS = 20_000  # upper bound for one UI step (not a timing assertion)

#: the page's own call: the raw PRF output of an assertion of this host's passkey, as any client could ask for it
RAW_PRF = """async (first) => {
  const b = (t) => Uint8Array.from(atob(t.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - t.length % 4) % 4)),
    c => c.charCodeAt(0));
  const a = await navigator.credentials.get({ publicKey: { challenge: new Uint8Array(32), rpId: location.hostname,
    userVerification: 'required', extensions: { prf: { eval: { first: b(first) } } } } });
  const out = new Uint8Array(a.getClientExtensionResults().prf.results.first);
  return btoa(String.fromCharCode(...out)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
}"""


@pytest.fixture(scope="module")
def site(web_server):
    """The test server at ``localhost`` (WebAuthn refuses an IP address as its RP ID)."""
    return web_server.replace("127.0.0.1", "localhost")


def with_authenticator(context, page):
    """A virtual platform authenticator with resident keys, user verification and PRF on ``page``'s browser."""
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "ctap2Version": "ctap2_1", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True, "hasPrf": True, "automaticPresenceSimulation": True}})
    return cdp


def stored_keys(page) -> list[dict]:
    return json.loads(page.evaluate("localStorage.getItem('referee.keys.v1') || '[]'"))


def two_seat_game(base: str, first_public: str) -> tuple[str, object]:
    """A 5 Towers game of ``first_public`` (seat 0) and a key of this test's (seat 1, accepted)."""
    other = generate_key()
    created = requests.post(f"{base}/games", timeout=10, json={"ruleset": "fivetowers", "seats": [
        {"name": "Ann", "key": first_public}, {"name": "Bo", "key": public_key_b64(other)}]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]
    assert submit(base, game, other, 1, "referee/accept", entropy=b64url_encode(bytes([1]) * 32)).ok
    return game, other


def log_types(base: str, game: str) -> list[tuple[str, int | None]]:
    entries = requests.get(f"{base}/games/{game}/log", timeout=10).json()["entries"]
    return [(e["type"], e.get("seat")) for e in entries]


def move_by_hand(page, move: dict) -> None:
    page.wait_for_selector("#game[data-my-turn=true]", timeout=STEP_MS)
    page.click("#manual summary")
    page.fill("#manual-json", json.dumps(move))
    page.click("#manual-submit")


def test_a_passkey_key_takes_a_seat_comes_back_after_the_browser_is_cleared_and_moves(browser, site, console_errors,
                                                                                     artifacts):
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = console_errors.watch(context.new_page())
    with_authenticator(context, page)
    page.goto(f"{site}/play/keys")
    page.locator("#passkey-name").fill("Ann")
    page.get_by_role("button", name="Make a key with a passkey").click()
    page.wait_for_selector("#keys-body tr[data-public] .key-kept[data-kept=passkey]", timeout=STEP_MS)
    made = stored_keys(page)[0]
    assert made["name"] == "Ann" and made["passkey"] is True
    shoot(page, artifacts / "every-device-keys-phone.png", full_page=True)
    # any client derives the same key from the authenticator's PRF output (section 15): here, this test
    prf = b64url_decode(page.evaluate(RAW_PRF, b64url_encode(passkey_prf_input())))
    assert public_key_b64(passkey_key(prf)) == made["public"]
    assert private_key_b64(passkey_key(prf)) == made["private"]

    game, _other = two_seat_game(site, made["public"])
    page.evaluate("localStorage.clear()")  # the browser's data is cleared: the key is gone from it
    page.goto(f"{site}/play/games/{game}")
    panel = page.locator("#bring-key-panel")
    panel.wait_for(state="visible", timeout=STEP_MS)
    shoot(page, artifacts / "every-device-game-without-key-phone.png", full_page=True)
    _tally, serious = run_axe(page)
    assert serious == [], serious
    panel.get_by_role("button", name="With my passkey").click()
    panel.wait_for(state="hidden", timeout=STEP_MS)
    assert stored_keys(page)[0]["public"] == made["public"] and stored_keys(page)[0]["name"] == "Ann"
    page.locator("#accept-buttons button").first.click()  # the key signs the acceptance...
    move_by_hand(page, {"type": "bid", "amount": 1})  # ...and a move
    page.wait_for_function("() => Number(document.querySelector('#game').dataset.seq) >= 5", timeout=STEP_MS)
    assert ("move", 0) in log_types(site, game)
    context.close()
    console_errors.assert_none()


def test_without_a_prf_result_the_page_says_so_in_words(browser, site, console_errors):
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {  # an authenticator without PRF (hmac-secret)
        "protocol": "ctap2", "ctap2Version": "ctap2_1", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True, "automaticPresenceSimulation": True}})
    page.goto(f"{site}/play/keys")
    page.locator("#passkey-name").fill("Cy")
    page.get_by_role("button", name="Make a key with a passkey").click()
    said = page.locator("#passkey-said")
    said.filter(has_text="no PRF result").wait_for(timeout=STEP_MS)
    assert "device link" in said.inner_text() and not stored_keys(page)
    context.close()
    console_errors.assert_none()


def test_a_key_moves_to_a_second_browser_by_a_device_link_and_moves_there(browser, site, console_errors, artifacts):
    key = generate_key()
    game, _other = two_seat_game(site, public_key_b64(key))
    assert submit(site, game, key, 0, "referee/accept", entropy=b64url_encode(bytes(32))).ok
    first = browser.new_context(viewport={"width": 360, "height": 740})
    keep_keys(first, [("Ann", key)])
    page = console_errors.watch(first.new_page())
    page.goto(f"{site}/play/keys")
    page.locator("#keys-body tr", has_text="Ann").get_by_role("button", name="Send to another device").click()
    dialog = page.locator("#link-dialog")
    dialog.wait_for(timeout=STEP_MS)
    url = dialog.locator("#device-link").input_value()
    assert url.startswith(f"{site}/play/link/") and "#" in url
    assert dialog.locator("svg.qr path").get_attribute("d")  # the QR code, made in the page
    shoot(page, artifacts / "every-device-link-qr-phone.png", full_page=True)
    _tally, serious = run_axe(page)
    assert serious == [], serious

    second = browser.new_context()
    there = console_errors.watch(second.new_page())
    there.goto(url)
    there.wait_for_selector("#link-page[data-state=ready]", timeout=STEP_MS)
    there.get_by_role("button", name="Keep the key in this browser").click()
    there.wait_for_selector("#link-page[data-state=kept]", timeout=STEP_MS)
    assert there.locator("#link-key-public").inner_text() == public_key_b64(key)
    _tally, serious = run_axe(there)
    assert serious == [], serious
    assert "#" not in there.url  # the secret is out of the address bar once used
    dialog.locator("#link-status").filter(has_text="Taken").wait_for(timeout=STEP_MS)  # the first device says so
    there.goto(f"{site}/play/games/{game}")
    move_by_hand(there, {"type": "bid", "amount": 1})
    there.wait_for_function("() => Number(document.querySelector('#game').dataset.seq) >= 5", timeout=STEP_MS)
    assert ("move", 0) in log_types(site, game)
    # the link works once
    console_errors.expect("404")
    again = second.new_page()
    again.goto(url)
    again.wait_for_selector("#link-page[data-state=gone]", timeout=STEP_MS)
    first.close()
    second.close()
    console_errors.assert_none()


def test_a_key_goes_from_a_browser_to_the_command_line_and_back(browser, site, console_errors, tmp_path):
    key = generate_key()
    context = browser.new_context()
    keep_keys(context, [("Ann", key)])
    page = console_errors.watch(context.new_page())
    page.goto(f"{site}/play/keys")
    page.locator("#keys-body tr", has_text="Ann").get_by_role("button", name="Send to another device").click()
    url = page.locator("#device-link").input_value()
    runner = CliRunner()
    fetched = runner.invoke(cli, ["key", "fetch", url, "--out", str(tmp_path / "ann.key")])
    assert fetched.exit_code == 0, fetched.output
    assert (tmp_path / "ann.key").read_text().strip() == private_key_b64(key)
    game, _other = two_seat_game(site, public_key_b64(key))
    for args in (["accept", game], ["move", game, '{"type": "bid", "amount": 1}', "--wait", "0"]):
        done = runner.invoke(cli, [*args, "--key", str(tmp_path / "ann.key"), "--server", site])
        assert done.exit_code == 0, done.output
    assert ("move", 0) in log_types(site, game)
    # and back: a key file of the command line into a fresh browser
    bea = generate_key()
    (tmp_path / "bea.key").write_text(private_key_b64(bea) + "\n")
    made = runner.invoke(cli, ["key", "link", "--key", str(tmp_path / "bea.key"), "--name", "Bea", "--no-wait",
                               "--no-qr", "--server", site])
    assert made.exit_code == 0, made.output
    fresh = browser.new_context()
    there = console_errors.watch(fresh.new_page())
    there.goto(made.output.splitlines()[0])
    there.get_by_role("button", name="Keep the key in this browser").click()
    there.wait_for_selector("#link-page[data-state=kept]", timeout=STEP_MS)
    assert [(k["name"], k["public"]) for k in stored_keys(there)] == [("Bea", public_key_b64(bea))]
    context.close()
    fresh.close()
    console_errors.assert_none()
