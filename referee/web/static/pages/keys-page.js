import { api } from "../shared/api.js";
import { exportEncrypted, exportText, generateKey, importKey, keepSeed, keptByPasskey, listKeys, markExported,
  removeKey, signEnvelope } from "../shared/keys.js";
import { bringBackWithPasskey, sendToDevice } from "./key-travel.js";
import { createPasskeyKey, NoPrfError, passkeysAvailable } from "../shared/passkey.js";
import { clearErrors, download, el, showError } from "../shared/ui.js";
import { _, ngettext } from "../shared/i18n.js";

const dialog = document.getElementById("export-dialog");
let exporting = null; // the key the export dialog is for

function fileName(entry, suffix = "") {
  return `referee-${entry.name.replace(/[^A-Za-z0-9_-]+/g, "_")}${suffix}.key`;
}

function render() {
  document.dispatchEvent(new Event("referee:keys-changed")); // the Notifications section lists the keys too
  const body = document.getElementById("keys-body");
  const keys = listKeys();
  if (!keys.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 4 }, _("No key yet: make, generate or import one."))));
    return;
  }
  body.replaceChildren(...keys.map((k) => el("tr", { dataset: { public: k.public } },
    el("td", { class: "key-name", dataset: { label: _("Name") } }, k.name),
    el("td", { dataset: { label: _("Public key") } }, el("input", { class: "mono public-key", readonly: true,
      value: k.public, size: 46, "aria-label": _("Public key of {name}", { name: k.name }), onfocus: (e) => e.target.select() })),
    el("td", { class: "key-kept", dataset: { label: _("Kept by"), kept: keptByPasskey(k) ? "passkey" : "browser" } },
      keptByPasskey(k) ? _("a passkey: on every device where it is") : _("this browser only")
        + (k.exported ? ` ${_("(and a file)")}` : "")),
    el("td", { class: "key-actions" },
      el("button", { type: "button", class: "send-key", onclick: () => send(k) }, _("Send to another device…")), " ",
      keys.length > 1 ? el("button", { type: "button", class: "move-seats", onclick: (e) => moveSeatsTo(k, e.target) },
        _("Move my seats to this key…")) : "", keys.length > 1 ? " " : "",
      el("button", { type: "button", onclick: () => openExport(k) }, _("Export to file…")), " ",
      el("button", { type: "button", onclick: (e) => forget(k, e.target) }, _("Forget"))))));
}

function openExport(entry) {
  exporting = entry;
  document.getElementById("export-form").reset();
  document.getElementById("export-problem").textContent = "";
  document.getElementById("export-name").textContent = `“${entry.name}”`;
  dialog.showModal();
  document.getElementById("export-pass").focus();
}

document.getElementById("export-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const problem = document.getElementById("export-problem");
  const pass = document.getElementById("export-pass").value;
  if (!pass) {
    problem.textContent = _("Enter a passphrase.");
    return;
  }
  if (pass !== document.getElementById("export-pass2").value) {
    problem.textContent = _("The two passphrases differ.");
    return;
  }
  try {
    problem.textContent = _("Encrypting…");
    download(fileName(exporting), await exportEncrypted(exporting, pass));
    markExported(exporting.public);
    dialog.close();
  } catch (err) {
    problem.textContent = _("Could not export the key: {problem}", { problem: err.message });
  }
});
document.getElementById("export-plain").addEventListener("click", () => {
  download(fileName(exporting, "-unencrypted"), exportText(exporting));
  markExported(exporting.public);
  dialog.close();
});
document.getElementById("export-cancel").addEventListener("click", () => dialog.close());

/** The games on this referee where `publicKey` holds a seat (null when the referee could not be asked). */
async function gamesOf(publicKey) {
  const found = [];
  try {
    let offset = 0;
    for (let page = 0; page < 50 && offset !== null && offset !== undefined; page += 1) {
      const data = await api.games(offset, 100); // the largest page GET /games gives
      const games = Array.isArray(data) ? data : data.games || [];
      for (const g of games) {
        if ((g.seats || []).some((s) => s.key === publicKey)) found.push(g);
      }
      offset = Array.isArray(data) ? null : data.next;
    }
  } catch {
    return null;
  }
  return found;
}

async function forget(entry, button) {
  clearErrors();
  button.disabled = true;
  const games = await gamesOf(entry.public);
  button.disabled = false;
  const backup = keptByPasskey(entry) ? _("Your passkey brings it back whenever you ask it to.")
    : entry.exported ? _("Keep the file you exported: it is then the only copy.")
    : _("It has never been exported from this browser: export it first, or it is gone for good.");
  let message;
  if (games === null) {
    message = `${_("Forget the key \"{name}\"? The referee could not be asked whether it holds seats in games.", { name: entry.name })} ${backup}`;
  } else if (games.length) {
    const open = games.filter((g) => g.status !== "finished" && g.status !== "aborted").length;
    message = `${ngettext("The key \"{name}\" holds seats in {n} game ({open} not finished).",
      "The key \"{name}\" holds seats in {n} games ({open} not finished).", games.length, { name: entry.name, open })}`
      + ` ${_("Without it those seats cannot move or accept any more.")} ${backup} ${_("Forget it anyway?")}`;
  } else {
    message = `${_("Forget the key \"{name}\"? It holds no seat in any game on this referee.", { name: entry.name })} ${backup}`;
  }
  if (confirm(message)) {
    removeKey(entry.public);
    render();
  }
}

document.getElementById("gen-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const name = document.getElementById("gen-name").value.trim();
  try {
    await generateKey(name || _("player"));
    document.getElementById("gen-name").value = "";
    render();
  } catch (err) {
    showError(err, _("Could not generate a key"));
  }
});

document.getElementById("imp-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const name = document.getElementById("imp-name").value.trim();
  const file = document.getElementById("imp-file").files[0];
  try {
    const text = file ? await file.text() : document.getElementById("imp-text").value;
    if (!text.trim()) throw new Error(_("choose a key file or paste a private key"));
    await importKey(name, text, document.getElementById("imp-pass").value);
    event.target.reset();
    render();
  } catch (err) {
    showError(err, _("Could not import the key"));
  }
});

async function send(entry) {
  clearErrors();
  try {
    await sendToDevice(entry);
  } catch (err) {
    showError(err, _("The device link could not be made"));
  }
}

// -- a key kept by a passkey (section 15)
const passkeySaid = document.getElementById("passkey-said");

function passkeyProblem(err) {
  passkeySaid.textContent = err.message;
  if (!(err instanceof NoPrfError) && err.code !== "passkey/cancelled") showError(err, _("The passkey gave no key"));
}

document.getElementById("passkey-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const name = document.getElementById("passkey-name").value.trim().normalize("NFC") || _("player");
  passkeySaid.textContent = _("Making a passkey…");
  try {
    const made = await createPasskeyKey(name);
    const entry = await keepSeed(made.name, made.seed, { passkey: true });
    passkeySaid.textContent = _("The key “{name}” is made and kept by your passkey.", { name: entry.name });
    document.getElementById("passkey-name").value = "";
    render();
  } catch (err) {
    passkeyProblem(err);
  }
});

document.getElementById("passkey-back").addEventListener("click", async () => {
  clearErrors();
  passkeySaid.textContent = _("Asking for your passkey…");
  try {
    const entry = await bringBackWithPasskey();
    passkeySaid.textContent = _("Your key “{name}” is back in this browser.", { name: entry.name });
    render();
  } catch (err) {
    passkeyProblem(err);
  }
});

if (!passkeysAvailable()) {
  document.getElementById("passkey-make").disabled = true;
  document.getElementById("passkey-back").disabled = true;
  passkeySaid.textContent = _("This browser offers no passkeys here (they need https, or http://localhost): send your key by a device link or a file instead.");
}

// -- a seat's new key, by its holder (section 15): every seat of this browser's other keys in a game not finished
//    moves to one key, one signed rekey each (the old key's signature and the new one's over the same envelope)
const moveSaid = document.getElementById("move-said");

async function seatsToMove(target) {
  const found = [];
  for (const old of listKeys()) {
    if (old.public === target.public) continue;
    for (let offset = 0, page = 0; offset !== null && offset !== undefined && page < 20; page += 1) {
      const data = await api.playerGames(old.public, `?status=open&offset=${offset}`);
      for (const g of data.games || []) {
        if (g.tournament) continue; // a tournament's player is moved by its organiser (docs/keys.md)
        for (const seat of g.my_seats || []) found.push({ game: g.game, seat, old });
      }
      offset = data.next;
    }
  }
  return found;
}

async function rekey(target, { game, seat, old }) {
  for (let attempt = 0; ; attempt += 1) {
    const state = await api.game(game);
    const envelope = { v: 1, ctx: "referee/rekey", game, seat, key: target.public, seq: state.seq, prev: state.head,
      at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z") };
    try {
      return await api.rekey(game, { envelope, sig: await signEnvelope(old, envelope),
        new_sig: await signEnvelope(target, envelope) });
    } catch (err) {
      if (err.code !== "submission/stale" || attempt > 0) throw err;
    }
  }
}

async function moveSeatsTo(target, button) {
  clearErrors();
  button.disabled = true;
  try {
    moveSaid.textContent = _("Looking for the seats of this browser's other keys…");
    const seats = await seatsToMove(target);
    if (!seats.length) {
      moveSaid.textContent = _("No other key of this browser holds a seat in a game that is not finished.");
      return;
    }
    if (!confirm(ngettext("Move {n} seat to “{name}”? Each move is a signed entry of its game's log; the old key then signs nothing there.",
      "Move {n} seats to “{name}”? Each move is a signed entry of its game's log; the old key then signs nothing there.",
      seats.length, { name: target.name }))) {
      moveSaid.textContent = "";
      return;
    }
    let moved = 0;
    const failed = [];
    for (const [i, item] of seats.entries()) {
      moveSaid.textContent = _("Moving seat {i} of {n}…", { i: i + 1, n: seats.length });
      try {
        await rekey(target, item);
        moved += 1;
      } catch (err) {
        failed.push(`${item.game}: ${err.code || err.message}`);
      }
    }
    moveSaid.textContent = failed.length
      ? _("{moved} of {n} seats moved to “{name}”; not moved: {failed}", { moved, n: seats.length, name: target.name, failed: failed.join(", ") })
      : _("{moved} of {n} seats moved to “{name}”.", { moved, n: seats.length, name: target.name });
  } catch (err) {
    moveSaid.textContent = "";
    showError(err, _("The seats were not moved"));
  } finally {
    button.disabled = false;
  }
}

render();
