// A seat's new key on the game page (CONTRACT section 15, docs/keys.md "A seat's new key"): a seat that moved away
// from a key of this browser is said so; a pending recovery of a lost key is shown to every seat — its holder may
// decline it (any act of the holder keeps the seat), the other seats accept or decline it; and a visitor without the
// seat's key may ask to take a seat over ("I lost my key"), with a new key made here (by a passkey where there is one).

import { api } from "../shared/api.js";
import { entryOfSeed, findKey, makeKeyPair, rememberKey, signEnvelope } from "../shared/keys.js";
import { createPasskeyKey, passkeysAvailable } from "../shared/passkey.js";
import { clearErrors, el, shortKey, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

function nowIso() {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

function when(iso) {
  return new Date(iso).toLocaleString(document.documentElement.lang || undefined, { dateStyle: "medium", timeStyle: "short" });
}

function seatLabel(raw, seat) {
  const s = (raw.seats || [])[seat] || {};
  return s.name ? _("seat {n} ({name})", { n: seat + 1, name: s.name }) : _("seat {n}", { n: seat + 1 });
}

/** Sign `fields` for `seat` at the game's tip and post it by `send`; again once if the log moved meanwhile. */
async function signedAtTip(gameId, entry, seat, fields, send) {
  for (let attempt = 0; ; attempt += 1) {
    const game = await api.game(gameId);
    const envelope = { v: 1, game: gameId, seat, seq: game.seq, prev: game.head, ...fields, at: nowIso() };
    try {
      return await send(envelope, await signEnvelope(entry, envelope));
    } catch (err) {
      if (err.code !== "submission/stale" || attempt > 0) throw err;
    }
  }
}

/** Ask to take `seat` over with a new key of this browser: the key (made by a passkey where asked), kept here. */
export async function askRecovery(gameId, seat, name, { withPasskey = false } = {}) {
  let key;
  if (withPasskey) {
    const made = await createPasskeyKey(name);
    key = await entryOfSeed(made.name, made.seed, { passkey: true });
  } else {
    key = await makeKeyPair(name);
  }
  const receipt = await signedAtTip(gameId, key, seat, { ctx: "referee/recover", key: key.public },
    (envelope, sig) => api.recover(gameId, { envelope, sig }));
  rememberKey(key); // the seat is this key's once the recovery completes
  return { key, receipt };
}

/**
 * The panel in `box` (an element on the game page): `render(raw, mine)` with the raw GET /games/<id> and this
 * browser's seats; `reload()` after an answer.
 */
export function seatKeysPanel({ box, gameId, reload = () => {} }) {
  async function answer(seat, position, accept) {
    clearErrors();
    const entry = findKey(lastRaw.seats[seat].key);
    try {
      await signedAtTip(gameId, entry, seat, { ctx: "referee/answer", offer: position, accept },
        (envelope, sig) => api.answer(gameId, position, { envelope, sig }));
    } catch (err) {
      showError(err, _("Your answer was refused"), { reveal: true });
    } finally {
      reload();
    }
  }

  let lastRaw = null;

  function render(raw, mine = []) {
    lastRaw = raw;
    const decisions = raw.decisions || {};
    const items = [];
    for (const moved of decisions.rekeys || []) {
      const now = (raw.seats[moved.seat] || {}).key;
      const old = findKey(moved.old);
      if (old && !findKey(now)) {
        items.push(el("p", { class: "seat-moved", dataset: { seat: String(moved.seat) } },
          _("{seat} has moved to another key ({key}): “{name}” of this browser no longer signs for it.",
            { seat: seatLabel(raw, moved.seat), key: shortKey(now || ""), name: old.name })));
      }
    }
    for (const rec of decisions.recoveries || []) {
      if (rec.ended_by !== undefined && rec.ended_by !== null) continue;
      const seat = rec.seat;
      const label = seatLabel(raw, seat);
      const until = when(rec.not_before);
      const row = el("div", { class: "recovery", role: "group", dataset: { recovery: String(rec.recovery), seat: String(seat) },
        "aria-label": _("Recovery of {seat}", { seat: label }) });
      if (findKey(rec.key)) {
        row.append(el("p", {}, _("Your request to take over {seat} waits: it completes after {time} once every other seat has accepted.",
          { seat: label, time: until })));
      } else if (mine.includes(seat)) {
        row.classList.add("recovery-mine");
        row.append(el("p", { role: "alert" }, _("Someone asks to take over your {seat} in this game — if it is not you, press Decline.",
          { seat: label })),
        el("p", {}, el("button", { type: "button", class: "primary recovery-decline", onclick: () => answer(seat, rec.recovery, false) },
          _("Decline: it is my seat"))));
      } else {
        const needed = Array.isArray(rec.needed) ? rec.needed : [];
        const answerable = mine.filter((m) => m !== seat && (!needed.length || needed.includes(m)) && !(rec.accepted || []).includes(m));
        row.append(el("p", {}, _("Someone asks to take over {seat}, saying its key is lost (new key {key}). It completes after {time} if every other seat accepts; whoever holds the old key keeps the seat by any move.",
          { seat: label, key: shortKey(rec.key), time: until })));
        for (const m of answerable) {
          row.append(el("p", { class: "inline" },
            el("button", { type: "button", class: "recovery-accept", onclick: () => answer(m, rec.recovery, true) },
              mine.length > 1 ? _("Accept as {seat}", { seat: seatLabel(raw, m) }) : _("Accept")), " ",
            el("button", { type: "button", class: "recovery-decline", onclick: () => answer(m, rec.recovery, false) },
              mine.length > 1 ? _("Decline as {seat}", { seat: seatLabel(raw, m) }) : _("Decline"))));
        }
      }
      items.push(row);
    }
    box.replaceChildren(...items);
    box.hidden = !items.length;
  }

  return { render };
}

/** "I lost my key": a button that asks which seat, then asks the referee for a recovery of it with a new key. */
export function lostKeyButton({ gameId, seatsOf, onAsked }) {
  const said = el("p", { class: "hint", role: "status", "aria-live": "polite" });
  const choices = el("div", { class: "lost-key-seats", hidden: true });
  const withPasskey = el("input", { type: "checkbox", id: "lost-key-passkey", checked: passkeysAvailable() });
  const button = el("button", { type: "button", id: "lost-key", "aria-expanded": "false", onclick: () => {
    const seats = seatsOf();
    choices.replaceChildren(
      el("p", {}, _("Which seat is yours? A new key of this browser asks to take it over. The other seats must accept, and it completes only after a wait (three days unless this referee says otherwise); whoever still holds the old key keeps the seat by any move.")),
      passkeysAvailable() ? el("p", {}, el("label", {}, withPasskey, " ", _("Make the new key with a passkey"))) : "",
      el("p", { class: "inline" }, ...seats.map(({ seat, name }) => el("button", { type: "button", class: "lost-key-seat",
        dataset: { seat: String(seat) }, onclick: () => ask(seat, name) }, _("Seat {n}: {name}", { n: seat + 1, name })))));
    choices.hidden = !choices.hidden;
    button.setAttribute("aria-expanded", String(!choices.hidden));
  } }, _("I lost my key"));

  async function ask(seat, name) {
    clearErrors();
    said.textContent = _("Asking to take over seat {n}…", { n: seat + 1 });
    try {
      const { receipt } = await askRecovery(gameId, seat, name, { withPasskey: withPasskey.checked && passkeysAvailable() });
      const until = receipt && receipt.recovery && receipt.recovery.not_before;
      said.textContent = until ? _("Asked. It completes after {time} once the other seats accept.", { time: when(until) })
        : _("Asked. The other seats are told.");
      choices.hidden = true;
      onAsked();
    } catch (err) {
      said.textContent = err.message;
      if (err.code !== "passkey/cancelled") showError(err, _("The seat was not asked for"), { reveal: true });
    }
  }

  return el("div", { class: "lost-key" }, button, choices, said);
}
