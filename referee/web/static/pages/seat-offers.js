// Open seats and invitation links (CONTRACT section 14), on the new-game page once the game is created and on the
// game page until it starts: each invitation link with a copy button, the join link of the seats open to anyone,
// the creator's "Cancel the game" and a joiner's "Leave the seat"; and once, after a seat was taken on the join page,
// how to keep the new key.
//
// An invitation's private seed exists only in this browser and in the link's fragment: the server never has it, so
// the links are kept here (localStorage `referee.invitations.v1`, by game) for the creator's game page.

import { api } from "../shared/api.js";
import { entropy, findKey, signEnvelope } from "../shared/keys.js";
import { clearErrors, copyField, el, nowIso, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const INVITATIONS = "referee.invitations.v1";
const KEY_NOTICE = "referee.key-notice.v1";
const WEB = document.body.dataset.web || "/play/";

function readStore(name) {
  try {
    const value = JSON.parse(localStorage.getItem(name) || "{}");
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

function writeStore(name, value) {
  localStorage.setItem(name, JSON.stringify(value));
}

/** Keep the invitation seeds of a game just created ({seat: base64url seed}). */
export function keepInvitations(gameId, seeds) {
  writeStore(INVITATIONS, { ...readStore(INVITATIONS), [gameId]: { seeds, at: new Date().toISOString() } });
}

function invitationsOf(gameId) {
  const kept = readStore(INVITATIONS)[gameId];
  return (kept && kept.seeds) || {};
}

/** The join page's address: with an invitation's seed in the fragment (never sent to any server), or without. */
export function joinUrl(gameId, seed = "") {
  return new URL(`${WEB}join/${encodeURIComponent(gameId)}${seed ? `#${seed}` : ""}`, window.location.href).href;
}

/**
 * Take `seat` of `gameId` with `key` (an entry of keys.js) under `name`: the seat's envelope signed for the log's
 * position now, and with the invitation key when `seed` (the link's fragment) is given. A stale position (another
 * seat moved first) is signed again once. Resolves to the receipt; a refusal throws the ApiError (`seat/taken`, …).
 */
export async function takeSeat(gameId, seat, key, name, seed = "") {
  for (let attempt = 0; ; attempt += 1) {
    const game = await api.game(gameId);
    const envelope = { v: 1, ctx: "referee/seat", game: gameId, seat, key: key.public, name, entropy: entropy(),
      seq: game.seq, prev: game.head, at: nowIso() };
    const body = { envelope, sig: await signEnvelope(key, envelope) };
    if (seed) body.invite_sig = await signEnvelope({ private: seed }, envelope);
    try {
      return await api.takeSeat(gameId, body);
    } catch (err) {
      if (err.code !== "submission/stale" || attempt > 0) throw err;
    }
  }
}

/** Cancel `gameId`, signed by its creator's `key` for the log's position now (a seat taken meanwhile makes the
 * position stale: the cancel is refused with `submission/stale`, and the game goes on). */
export async function cancelGame(gameId, key) {
  const g = await api.game(gameId);
  const envelope = { v: 1, ctx: "referee/cancel", game: gameId, seq: g.seq, prev: g.head, at: nowIso() };
  return api.cancel(gameId, { envelope, sig: await signEnvelope(key, envelope) });
}

/** Ask the game page to say once how to keep the key that just took a seat of `gameId`. */
export function noteNewKey(gameId, publicKey) {
  writeStore(KEY_NOTICE, { ...readStore(KEY_NOTICE), [gameId]: publicKey });
}

/** The key notice of `gameId`, taken out of the store: it is said once. */
function takeKeyNotice(gameId) {
  const all = readStore(KEY_NOTICE);
  const key = all[gameId];
  if (key === undefined) return null;
  delete all[gameId];
  writeStore(KEY_NOTICE, all);
  return key;
}

function linkRow(label, link, id) {
  return el("li", {}, el("strong", {}, label), ...copyField(label, link, id));
}

/**
 * The panel in `section` (a <section> with a heading and a <div class="offers">); `render(game, mine)` with the raw
 * GET /games/<id> and this browser's seats. `reload()` after a cancel or a leave. Without `manage`, only the links.
 */
export function seatOffersPanel({ section, gameId, reload = () => {}, manage = true }) {
  let creator; // the creator's key, from the log's `created` entry (read once)
  let notice = takeKeyNotice(gameId);

  async function creatorKey() {
    if (creator === undefined) {
      const page = await api.log(gameId, "?from=0&limit=1").catch(() => null);
      const created = page && (page.entries || [])[0];
      const key = created && (created.creator || created.organiser);
      creator = typeof key === "string" ? key : null;
    }
    return creator;
  }

  async function signed(entry, envelope) {
    return { envelope, sig: await signEnvelope(entry, envelope) };
  }

  async function act(what, fn) {
    clearErrors();
    try {
      await fn();
    } catch (err) {
      showError(err, what, { reveal: true });
    } finally {
      reload();
    }
  }

  function cancel(entry) {
    return act(_("The game could not be cancelled"), async () => {
      const g = await api.game(gameId);
      await api.cancel(gameId, await signed(entry, { v: 1, ctx: "referee/cancel", game: gameId, seq: g.seq, prev: g.head, at: nowIso() }));
    });
  }

  function leave(seat, entry) {
    return act(_("The seat could not be left"), async () => {
      const g = await api.game(gameId);
      await api.leave(gameId, await signed(entry, { v: 1, ctx: "referee/leave", game: gameId, seat, seq: g.seq, prev: g.head, at: nowIso() }));
    });
  }

  function keyNotice() {
    if (!notice) return null;
    const box = el("div", { class: "key-notice", id: "key-notice", role: "note" },
      el("p", {}, _("Your seat is signed with a key that lives only in this browser. Clearing the browser's data loses it. To play from your phone or another computer, send it there by a device link (My keys, “Send to another device”); to keep it safe, export it to a file with a passphrase.")),
      el("p", {}, el("a", { href: `${WEB}keys` }, _("Keep my key: My keys")), " ",
        el("button", { type: "button", onclick: () => { notice = null; box.remove(); } }, _("Got it"))));
    return box;
  }

  async function render(game, mine = []) {
    const seats = (game && game.seats) || [];
    const rows = [];
    const buttons = [];
    if (game && game.status === "waiting") {
      const seeds = invitationsOf(gameId);
      seats.forEach((s, i) => {
        if (!s || !s.open || s.taken) return;
        const n = i + 1;
        if (s.open === "invite" && seeds[i]) {
          rows.push(linkRow(_("Invitation link for seat {n}", { n }), joinUrl(gameId, seeds[i]), `invite-link-${i}`));
        } else if (s.open === "invite") {
          rows.push(el("li", {}, _("Seat {n}: waiting for the invited player", { n })));
        } else {
          rows.push(linkRow(_("Seat {n} is open to anyone: join link", { n }), joinUrl(gameId), `open-link-${i}`));
        }
      });
      if (manage) {
        seats.forEach((s, i) => {
          const entry = s && s.open && s.taken && mine.includes(i) ? findKey(s.key) : null;
          if (entry) {
            buttons.push(el("button", { type: "button", class: "leave-seat", dataset: { seat: String(i) },
              onclick: () => leave(i, entry) }, _("Leave seat {n}", { n: i + 1 })));
          }
        });
        const key = await creatorKey();
        const entry = key ? findKey(key) : null;
        if (entry) buttons.push(el("button", { type: "button", id: "cancel-game", onclick: () => cancel(entry) }, _("Cancel the game")));
      }
    }
    const box = section.querySelector(".offers");
    box.replaceChildren(...[keyNotice(),
      rows.length ? el("ul", { class: "invite-list" }, rows) : null,
      rows.length ? el("p", { class: "hint" }, _("Send each link to one player: whoever opens it first takes the seat. An invitation link holds its key after the #, which never reaches the server.")) : null,
      buttons.length ? el("p", { class: "inline" }, buttons) : null].filter(Boolean));
    section.querySelector("h2, h3").hidden = !rows.length && !buttons.length; // the key notice alone needs no heading
    section.hidden = box.children.length === 0;
  }

  return { render };
}
