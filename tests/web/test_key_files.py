"""Keys outlive the browser: a key exported from My keys as a passphrase-encrypted file is read by the CLI's
code, a file encrypted by the CLI's code imports into the page, and forgetting a key that holds seats warns.
(The format itself: ``tests/test_keyfile.py``; the CLI: ``tests/service/test_cli_keys.py``.)"""

from __future__ import annotations

import json

import pytest
import requests
from click.testing import CliRunner

from referee.cli import main as cli
from referee.protocol.keyfile import decrypt_key, encrypt_key
from referee.protocol.signing import generate_key, public_key_b64

pytestmark = pytest.mark.web


def generate_in_page(page, name: str) -> str:
    page.locator("#gen-name").fill(name)
    page.get_by_role("button", name="Generate key in this browser").click()
    row = page.locator("#keys-body tr", has_text=name)
    return row.locator("input.public-key").input_value()


def stored_keys(page) -> list[dict]:
    return json.loads(page.evaluate("localStorage.getItem('referee.keys.v1') || '[]'"))


def test_an_exported_encrypted_key_is_read_by_the_cli(browser, pages_only, console_errors, tmp_path):
    context = browser.new_context(accept_downloads=True)
    page = console_errors.watch(context.new_page())
    page.goto(f"{pages_only}/play/keys")
    public = generate_in_page(page, "Dee")
    assert not stored_keys(page)[0].get("exported")
    page.locator("#keys-body tr", has_text="Dee").get_by_role("button", name="Export to file").click()
    dialog = page.locator("#export-dialog")
    dialog.get_by_label("Passphrase").fill("two different")
    dialog.get_by_label("Repeat it").fill("passphrases")
    dialog.get_by_role("button", name="Download encrypted key file").click()
    assert "differ" in page.locator("#export-problem").inner_text()
    dialog.get_by_label("Repeat it").fill("two different")
    with page.expect_download() as download:
        dialog.get_by_role("button", name="Download encrypted key file").click()
    assert download.value.suggested_filename == "referee-Dee.key"
    path = tmp_path / "dee.key"
    download.value.save_as(path)
    document = json.loads(path.read_text())
    assert (document["format"], document["version"], document["public"], document["name"]) == (
        "referee-key", 1, public, "Dee")
    assert public_key_b64(decrypt_key(path.read_text(), "two different")) == public
    assert stored_keys(page)[0]["exported"]
    assert not dialog.is_visible()
    # ... and the command line signs with it, asking for the passphrase (a create signed as organiser, to a
    # server that is not there: the key is read and used before anything is sent)
    result = CliRunner().invoke(cli, ["create", "fivetowers", "--seat", f"a={public}", "--organiser-key", str(path),
                                      "--server", "http://127.0.0.1:9"], input="two different\n",
                                env={"REFEREE_KEY_PASSPHRASE": None})
    assert "cannot reach" in result.output and "cannot read a private key" not in result.output
    context.close()
    console_errors.assert_none()


def test_a_cli_encrypted_key_file_imports_into_the_page(browser, pages_only, console_errors, tmp_path):
    key = generate_key()
    path = tmp_path / "eve.key"
    path.write_text(encrypt_key(key, "gänseblümchen", name="Eve (CLI)"))
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    page.goto(f"{pages_only}/play/keys")
    page.locator("#imp-file").set_input_files(str(path))
    page.get_by_role("button", name="Import").click()
    error = page.locator("#errors .error")
    error.wait_for()
    assert "enter its passphrase" in error.inner_text()
    page.locator("#imp-pass").fill("wrong")
    page.get_by_role("button", name="Import").click()
    page.locator("#errors .error", has_text="wrong passphrase").wait_for()
    assert stored_keys(page) == []
    page.locator("#imp-pass").fill("gänseblümchen")
    page.get_by_role("button", name="Import").click()
    row = page.locator(f"#keys-body tr[data-public='{public_key_b64(key)}']")
    row.wait_for()
    assert row.locator(".key-name").inner_text() == "Eve (CLI)"
    assert page.locator("#errors .error").count() == 0
    # the imported key signs in the page exactly as the CLI's key would
    sig_ok = page.evaluate(
        """async () => {
             const keys = await import('./static/shared/keys.js');
             const entry = keys.listKeys()[0];
             return await keys.signEnvelope(entry, {v: 1});
           }""")
    from referee.protocol.signing import verify
    assert verify(public_key_b64(key), {"v": 1}, sig_ok)
    context.close()
    console_errors.assert_none()


def test_forgetting_a_key_that_holds_seats_warns(browser, web_server, console_errors):
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    page.goto(f"{web_server}/play/keys")
    seated = generate_in_page(page, "Fay")
    generate_in_page(page, "Gil")
    created = requests.post(f"{web_server}/games", timeout=10, json={
        "ruleset": "fivetowers", "seats": [{"name": "Fay", "key": seated},
                                           {"name": "Hal", "key": public_key_b64(generate_key())}]})
    assert created.status_code == 201, created.text
    messages = []

    def answer(dialog, accept):
        messages.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda d: answer(d, False))
    page.locator("#keys-body tr", has_text="Fay").get_by_role("button", name="Forget").click()
    page.wait_for_function("() => !document.querySelector('#keys-body button:disabled')")
    assert 'The key "Fay" holds seats in 1 game (1 not finished)' in messages[-1]
    assert "never been exported" in messages[-1]
    assert [k["name"] for k in stored_keys(page)] == ["Fay", "Gil"]  # dismissed: kept

    page.once("dialog", lambda d: answer(d, True))
    page.locator("#keys-body tr", has_text="Gil").get_by_role("button", name="Forget").click()
    page.locator("#keys-body tr", has_text="Gil").wait_for(state="detached")
    assert "holds no seat in any game" in messages[-1]
    assert [k["name"] for k in stored_keys(page)] == ["Fay"]

    page.once("dialog", lambda d: answer(d, True))
    page.locator("#keys-body tr", has_text="Fay").get_by_role("button", name="Forget").click()
    page.locator("#keys-body tr", has_text="Fay").wait_for(state="detached")
    assert stored_keys(page) == []
    context.close()
    console_errors.assert_none()
