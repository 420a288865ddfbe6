// "Notifications" on the My keys page (CONTRACT section 9): register, list and remove a key's contacts,
// every request signed in the browser with that key (the same signing as moves).
import { api } from "../shared/api.js";
import { listKeys, signEnvelope } from "../shared/keys.js";
import { el, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const EMAIL_STATUS = { pending: _("pending"), confirmed: _("confirmed") };
const EVENTS = { turn: _("my turn"), reminder: _("reminders"), timeout: _("timeouts"), started: _("game started"),
  finished: _("game over") };

const form = document.getElementById("notify-form");
const select = document.getElementById("notify-key");
const status = document.getElementById("notify-status");
const list = document.getElementById("notify-contacts");

function fillKeys() {
  const keys = listKeys();
  const chosen = select.value;
  select.replaceChildren(...keys.map((k) => el("option", { value: k.public }, `${k.name} (${k.public.slice(0, 10)}…)`)));
  if (keys.some((k) => k.public === chosen)) select.value = chosen;
  form.querySelector("button[type=submit]").disabled = keys.length === 0;
}

function entry() {
  const found = listKeys().find((k) => k.public === select.value);
  if (!found) throw new Error("generate or import a key first");
  return found;
}

async function signed(ctx, fields = {}) {
  const key = entry();
  const envelope = { v: 1, ctx, key: key.public, ...fields, at: new Date().toISOString() };
  return { envelope, sig: await signEnvelope(key, envelope) };
}

async function refresh() {
  const body = await signed("referee/contacts");
  const answer = await api.contacts({ key: body.envelope.key, at: body.envelope.at, sig: body.sig });
  list.replaceChildren(...answer.contacts.map((c) => el("li", { class: "clock", dataset: { contact: c.id } },
    el("strong", {}, c.webhook || c.email), " ",
    c.webhook && c.email ? `${_("and {email}", { email: c.email })} ` : "",
    el("span", { class: "badge" }, c.email ? _("e-mail {status}", { status: EMAIL_STATUS[c.email_status] || c.email_status })
      : c.disabled ? _("disabled") : _("webhook")), " ",
    `${_("events: {events}", { events: c.events.map((e) => EVENTS[e] || e).join(", ") })} `,
    el("button", { type: "button", onclick: () => remove(c.id) }, _("Remove")))));
  if (!answer.contacts.length) list.replaceChildren(el("li", {}, _("No contact for this key yet.")));
}

async function remove(id) {
  try {
    await api.removeContact(id, await signed("referee/contact-delete", { contact: id }));
    await refresh();
    status.textContent = _("Removed.");
  } catch (err) {
    showError(err, _("Could not remove the contact"));
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const fields = { events: [...form.querySelectorAll("input[name=event]:checked")].map((box) => box.value) };
  const webhook = document.getElementById("notify-webhook").value.trim();
  const email = document.getElementById("notify-email").value.trim();
  if (webhook) fields.webhook = webhook;
  if (email) fields.email = email;
  try {
    const contact = await api.addContact(await signed("referee/contact", fields));
    const parts = [_("Registered {id}.", { id: contact.id })];
    if (contact.secret) parts.push(_("Webhook secret (shown only now, keep it): {secret}", { secret: contact.secret }));
    if (contact.email_status === "pending") parts.push(_("A confirmation code was mailed to {email}.", { email: contact.email }));
    status.textContent = parts.join(" ");
    await refresh();
  } catch (err) {
    status.textContent = "";
    showError(err, _("Could not register the contact"), { reveal: true });
  }
});

document.getElementById("notify-list").addEventListener("click", () => refresh().catch((err) =>
  showError(err, _("Could not list the contacts"))));
window.addEventListener("storage", fillKeys);
document.addEventListener("referee:keys-changed", fillKeys);
fillKeys();
