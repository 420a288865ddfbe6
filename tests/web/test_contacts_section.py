"""Notifications on the My keys page (CONTRACT section 9): a key made in the page registers a webhook, the
page shows the secret once and lists the contact, and removes it — every request signed in the browser."""

from __future__ import annotations

import requests


def test_a_key_registers_lists_and_removes_a_webhook_from_the_keys_page(browser, web_server, console_errors):
    context = browser.new_context()
    page = console_errors.watch(context.new_page())
    page.goto(f"{web_server}/play/keys")
    page.fill("#gen-name", "dora")
    page.click("#gen-form button[type=submit]")
    page.wait_for_function("() => document.querySelectorAll('#notify-key option').length === 1")
    page.fill("#notify-webhook", "http://127.0.0.1:9/dora-hook")
    page.click("#notify-form button[type=submit]")
    page.wait_for_function("() => document.getElementById('notify-status').textContent.includes('whsec_')")
    item = page.locator("#notify-contacts li[data-contact]")
    item.wait_for()
    assert "http://127.0.0.1:9/dora-hook" in item.inner_text()
    contact = item.get_attribute("data-contact")
    public = page.evaluate("() => document.getElementById('notify-key').value")
    assert requests.get(f"{web_server}/contacts/{contact}/deliveries", timeout=5).status_code == 400  # unsigned
    item.locator("button").click()
    page.wait_for_function("() => document.getElementById('notify-status').textContent === 'Removed.'")
    assert page.locator("#notify-contacts li[data-contact]").count() == 0
    assert public
    context.close()
    console_errors.assert_none()
