// A device link's page (/play/link/<link>#<secret>, CONTRACT section 15): one button takes the sealed box from the
// referee (once), opens it with the secret of the link's fragment (read here only: a browser never sends it) and
// keeps the key in this browser. The box is taken only when the player presses the button, so a link previewer
// that merely loads the page does not use it up.

import { api } from "../shared/api.js";
import { openBox } from "../shared/device-link.js";
import { keepSeed } from "../shared/keys.js";
import { clearErrors, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const root = document.getElementById("link-page");
const link = root.dataset.link;
const secret = window.location.hash.slice(1);
const state = document.getElementById("link-state");
const takeRow = document.getElementById("link-take-row");

function say(text, name) {
  state.textContent = text;
  root.dataset.state = name;
}

async function show() {
  if (!secret) {
    say(_("This link is incomplete: the part after # is missing. Copy the whole link, or scan the QR code."), "incomplete");
    return;
  }
  try {
    const status = await api.deviceLinkStatus(link);
    if (status.taken) {
      say(_("This link has been used: a link brings a key once. Make a new one on the other device."), "gone");
      return;
    }
    say(_("A key is waiting for this browser."), "ready");
    takeRow.hidden = false;
    document.getElementById("link-take").focus();
  } catch (err) {
    if (err.code === "link/gone") say(_("This link has been used or has expired. Make a new one on the other device."), "gone");
    else throw err;
  }
}

document.getElementById("link-take").addEventListener("click", async (event) => {
  clearErrors();
  event.currentTarget.disabled = true;
  try {
    const { box } = await api.takeDeviceLink(link);
    const opened = await openBox(box, secret);
    const entry = await keepSeed(opened.name, opened.private);
    history.replaceState(null, "", window.location.pathname); // the secret has done its work
    document.getElementById("link-key-name").textContent = entry.name;
    document.getElementById("link-key-public").textContent = entry.public;
    document.getElementById("link-key").hidden = false;
    document.getElementById("link-next").hidden = false;
    takeRow.hidden = true;
    say(_("The key “{name}” is kept in this browser: its seats can move here now.", { name: entry.name }), "kept");
  } catch (err) {
    event.currentTarget.disabled = false;
    if (err.code === "link/gone") {
      takeRow.hidden = true;
      say(_("This link has been used or has expired. Make a new one on the other device."), "gone");
    } else {
      say(err.message, "error");
      showError(err, _("The key was not kept"));
    }
  }
});

show().catch((err) => {
  say(_("The link could not be checked."), "error");
  showError(err, _("Loading the link"));
}).finally(() => {
  root.dataset.loaded = "true";
});
