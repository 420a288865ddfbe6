// A key that travels (CONTRACT section 15): the pieces the keys page, the join page and the game page share —
// "send this key to another device" (a device link: the link, a Copy button, its QR code made here, and word when
// the other device took it), and "bring my key here" (with a passkey, or from another device).

import { api } from "../shared/api.js";
import { sealKey, linkUrl } from "../shared/device-link.js";
import { keepSeed } from "../shared/keys.js";
import { NoPrfError, passkeyKey, passkeysAvailable } from "../shared/passkey.js";
import { s } from "../games/svg.js";
import { copyField, el, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const WEB = document.body.dataset.web || "/play/";
const POLL_MS = 1500;

/** The QR code of `text` as SVG, drawn from the module's matrix (four modules of quiet zone around it). The QR
 * encoder (a tenth of the game page's scripts) is loaded when a code is first drawn, not with the pages. */
export async function qrSvg(text, label) {
  const { encodeQR } = await import("../vendor/qr.js");
  const rows = encodeQR(text, "raw", { ecc: "low" });
  const n = rows.length + 8;
  let path = "";
  rows.forEach((row, y) => row.forEach((dark, x) => {
    if (dark) path += `M${x + 4} ${y + 4}h1v1h-1z`;
  }));
  return s("svg", { viewBox: `0 0 ${n} ${n}`, class: "qr", role: "img", "aria-label": label, "shape-rendering": "crispEdges" },
    s("rect", { width: n, height: n, class: "qr-light" }), s("path", { d: path, class: "qr-dark" }));
}

function localTime(iso) {
  return new Date(iso).toLocaleTimeString(document.documentElement.lang || undefined, { hour: "2-digit", minute: "2-digit" });
}

/** A dialog that sends `entry` to another device: made, shown and forgotten when closed (the link's poll stops). */
export async function sendToDevice(entry) {
  const { box, secret } = await sealKey(entry);
  const made = await api.makeDeviceLink(box);
  const url = linkUrl(WEB, made.link, secret);
  const status = el("p", { class: "status", id: "link-status", role: "status", "aria-live": "polite" },
    _("Waiting for the other device… The link works once, until {time}.", { time: localTime(made.expires) }));
  const close = el("button", { type: "button", id: "link-close" }, _("Close"));
  const dialog = el("dialog", { id: "link-dialog", class: "link-dialog", "aria-labelledby": "link-dialog-h" },
    el("h2", { id: "link-dialog-h" }, _("Send “{name}” to another device", { name: entry.name })),
    el("p", {}, _("On the other device, scan this code with the camera or open the link; its page keeps the key there. Anyone who opens the link first gets the key: send it only to yourself.")),
    await qrSvg(url, _("QR code of the link")),
    el("p", { class: "copy-row" }, ...copyField(_("Device link"), url, "device-link")),
    status, el("p", {}, close));
  document.body.append(dialog);
  let timer = null;
  const stop = () => {
    clearTimeout(timer);
    dialog.remove();
  };
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", stop);
  const poll = async () => {
    try {
      const state = await api.deviceLinkStatus(made.link);
      if (state.taken) {
        status.textContent = _("Taken at {time}: the key is on the other device now.", { time: localTime(new Date().toISOString()) });
        dialog.dataset.state = "taken";
        return;
      }
    } catch (err) {
      if (err.code === "link/gone") {
        status.textContent = _("The link has expired unused: make a new one.");
        dialog.dataset.state = "expired";
        return;
      }
    }
    timer = setTimeout(poll, POLL_MS);
  };
  dialog.showModal();
  close.focus();
  timer = setTimeout(poll, POLL_MS);
  return dialog;
}

/** Bring a key back with a passkey and keep it here: the key's entry. */
export async function bringBackWithPasskey() {
  const { name, seed } = await passkeyKey();
  return keepSeed(name || _("my key"), seed, { passkey: true });
}

/**
 * "Bring your key here": with a passkey (one button), or from another device (what to do there, one tap to show
 * it). `onKey(entry)` runs once a key is here. A player without PRF is told so in words, with the other ways.
 */
export function bringKeyHere({ onKey, idPrefix = "bring" }) {
  const said = el("p", { class: "hint", id: `${idPrefix}-said`, role: "status", "aria-live": "polite" });
  const other = el("div", { class: "bring-other", id: `${idPrefix}-other`, hidden: true },
    el("p", {}, _("On the device that holds the key, open My keys and press “Send to another device” beside it; then scan its QR code with this device, or open its link here.")),
    el("p", {}, el("a", { href: `${WEB}keys#receive-h` }, _("Or import a key file on My keys"))));
  const passkey = el("button", { type: "button", id: `${idPrefix}-passkey`, class: "primary", onclick: async () => {
    said.textContent = _("Asking for your passkey…");
    try {
      const entry = await bringBackWithPasskey();
      said.textContent = _("Your key “{name}” is here.", { name: entry.name });
      onKey(entry);
    } catch (err) {
      said.textContent = err.message;
      if (err instanceof NoPrfError) other.hidden = false;
      else if (err.code !== "passkey/cancelled") showError(err, _("The key did not come back"));
    }
  } }, _("With my passkey"));
  if (!passkeysAvailable()) passkey.disabled = true;
  const device = el("button", { type: "button", id: `${idPrefix}-device`, "aria-expanded": "false",
    "aria-controls": `${idPrefix}-other`, onclick: (event) => {
      other.hidden = !other.hidden;
      event.currentTarget.setAttribute("aria-expanded", String(!other.hidden));
    } }, _("From my other device"));
  return el("div", { class: "bring-key" }, el("p", { class: "inline" }, passkey, " ", device), said, other);
}
