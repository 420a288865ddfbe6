// The confirmation page (CONTRACT section 11): the code goes to POST /contacts/<id>/confirm only when the
// button is pressed; opening the link (as mail scanners do) changes nothing.
import { _ } from "../shared/i18n.js";

const form = document.getElementById("confirm");
const status = document.getElementById("confirm-status");
const input = document.getElementById("code");
const api = document.body.dataset.api || "";
if (location.hash.length > 1) input.value = decodeURIComponent(location.hash.slice(1));

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  status.textContent = _("Confirming…");
  const response = await fetch(`${api}/contacts/${form.dataset.contact}/confirm`, {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({code: input.value.trim()}),
  });
  const body = await response.json().catch(() => ({}));
  if (response.ok) {
    status.textContent = _("Confirmed: {email} will get the notices of key {key}…", { email: body.email, key: body.key.slice(0, 12) });
    form.hidden = true;
  } else {
    status.textContent = (body.error && body.error.message) || _("The referee answered {status}.", { status: response.status });
  }
});
