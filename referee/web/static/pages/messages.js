// The game page's message panel (CONTRACT section 12; docs/web.md "Messages"): the game's messages — the
// public ones for everyone, and with this browser's seat keys the signed read that adds the private ones to
// or from those seats — a text box with Send (to everyone, or to the chosen seats), and a per-seat Mute.
// Every message and mute request is signed in the browser; the text is NFC-normalised before signing, since
// the referee refuses a signed text that is not (it cannot normalise what was signed).

import { api } from "../shared/api.js";
import { findKey, signEnvelope } from "../shared/keys.js";
import { seatName } from "../games/model.js";
import { el, showError } from "../shared/ui.js";
import { _, formatCount, LANG } from "../shared/i18n.js";

export const MESSAGE_MAX = 2000;

function nowMs() {
  return new Date().toISOString(); // milliseconds: two messages (or mutes) in one second sign different times
}

/**
 * The problem with a message's text as the referee would see it (1–2,000 characters, NFC, no control or
 * format characters but line feeds, no lone surrogate), or null. `text` is already normalised.
 */
export function textProblem(text) {
  const length = [...text].length;
  if (length === 0) return _("write something first");
  if (length > MESSAGE_MAX) return _("{n} characters: at most {max}", { n: length, max: formatCount(MESSAGE_MAX) });
  if (typeof text.isWellFormed === "function" && !text.isWellFormed()) return _("the text holds a lone surrogate");
  const other = [...text].find((c) => c !== "\n" && /[\p{Cc}\p{Cf}]/u.test(c));
  if (other) {
    return _("no control or format characters (U+{code}) but line feeds",
      { code: other.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") });
  }
  return null;
}

/** The text as it will be signed: line ends as line feeds, trimmed, NFC. */
export function prepareText(raw) {
  return String(raw).replace(/\r\n?/g, "\n").trim().normalize("NFC");
}

function localTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(LANG === "en" ? undefined : LANG, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/**
 * The panel: `section` holds `#message-list`, `#message-form` (with `#message-seat`, `#message-text`,
 * `#message-count`, `#message-to`, `#message-send`), `#message-mutes` and `#message-status`.
 * `getGame()` gives the page's normalised game, `mySeats()` this browser's seats.
 */
export function messagesPanel({ section, gameId, getGame, mySeats, intervalMs = 5000 }) {
  const list = section.querySelector("#message-list");
  const form = section.querySelector("#message-form");
  const seatSelect = section.querySelector("#message-seat");
  const seatRow = section.querySelector("#message-seat-row");
  const textBox = section.querySelector("#message-text");
  const count = section.querySelector("#message-count");
  const toBox = section.querySelector("#message-to");
  const mutesBox = section.querySelector("#message-mutes");
  const status = section.querySelector("#message-status");
  const shown = new Map(); // position -> message
  const since = new Map(); // reader ("public" or a key) -> the stream length it has read up to
  const mutedBy = new Map(); // seat -> [seats it mutes]
  let formKey = null;
  let running = null;
  let again = false;
  let againFull = false;
  let timer = null;
  let sending = false;

  function readers() {
    const game = getGame();
    const keys = [...new Set(mySeats().map((i) => game.seats[i].key))];
    return keys.map((k) => findKey(k)).filter(Boolean);
  }

  async function readOnce() {
    const keys = readers();
    // With a seat's key, only signed reads: a public read would bring back the messages of the muted seats.
    // The messages come in pages (`next`: there is more); each page is read until the last.
    if (!keys.length) {
      let data;
      do {
        data = await api.messages(gameId, { since: since.get("public") || 0 });
        take(data, "public");
      } while (data.next != null);
      return;
    }
    for (const entry of keys) {
      const at = nowMs();
      const sig = await signEnvelope(entry, { v: 1, ctx: "referee/messages", game: gameId, key: entry.public, at });
      let data;
      do {
        data = await api.messages(gameId, { since: since.get(entry.public) || 0, key: entry.public, at, sig });
        take(data, entry.public);
      } while (data.next != null);
      for (const seat of data.reader || []) mutedBy.set(seat, data.muted || []);
    }
  }

  function take(data, reader) {
    for (const m of data.messages || []) shown.set(m.position, m);
    since.set(reader, data.length ?? 0);
  }

  /** Read the messages that are new (or, with `full`, all of them again: after a mute) and redraw. */
  async function refresh({ full = false } = {}) {
    if (running) {
      again = true;
      againFull = againFull || full;
      return running;
    }
    running = (async () => {
      try {
        if (full) {
          shown.clear();
          since.clear();
        }
        await readOnce();
        section.dataset.loaded = "true";
      } catch (err) {
        if (!document.querySelector(`.error[data-code="${err.code}"][data-context="messages"]`)) {
          const item = showError(err, _("Reading the messages"));
          if (item) item.dataset.context = "messages";
        }
      } finally {
        renderList();
        renderForm();
        running = null;
      }
    })();
    await running;
    if (again) {
      const wasFull = againFull;
      again = false;
      againFull = false;
      await refresh({ full: wasFull });
    }
    return undefined;
  }

  function renderList() {
    const game = getGame();
    if (!game) return;
    const mine = mySeats();
    const muted = new Set(mine.flatMap((s) => mutedBy.get(s) || []));
    const messages = [...shown.values()].filter((m) => !(muted.has(m.seat) && !mine.includes(m.seat)))
      .sort((a, b) => a.position - b.position);
    section.dataset.count = String(messages.length);
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    const have = new Set([...list.querySelectorAll("li[data-position]")].map((li) => Number(li.dataset.position)));
    const want = new Set(messages.map((m) => m.position));
    if (have.size === want.size && [...want].every((p) => have.has(p))) return;
    list.replaceChildren(...(messages.length ? messages.map((m) => messageItem(m, game, mine))
      : [el("li", { class: "hint no-messages" }, _("No messages yet."))]));
    if (atBottom || mine.includes(messages.length ? messages[messages.length - 1].seat : -1)) list.scrollTop = list.scrollHeight;
  }

  function messageItem(m, game, mine) {
    const from = seatName(game.seats, m.seat);
    const to = Array.isArray(m.to) ? m.to.map((i) => (mine.includes(i) ? `${seatName(game.seats, i)} ${_("(you)")}` : seatName(game.seats, i))) : null;
    return el("li", { class: `message${to ? " private" : ""}${mine.includes(m.seat) ? " mine" : ""}`,
      dataset: { position: String(m.position), seat: String(m.seat), private: to ? "true" : "false" } },
    el("div", { class: "message-head" },
      el("strong", { class: "name", title: from }, from), mine.includes(m.seat) ? ` ${_("(you)")}` : "",
      to ? el("span", { class: "message-to" }, ` ${_("to {names}", { names: to.join(", ") })} `) : " ",
      to ? el("span", { class: "badge badge-private" }, _("private")) : "", " ",
      el("time", { datetime: m.at, class: "muted", title: `${m.at} · ${_("log length {n}", { n: m.log_seq })} · ${_("message #{n}", { n: m.position })}` }, localTime(m.at))),
    el("p", { class: "message-text" }, m.text));
  }

  function renderForm() {
    const game = getGame();
    if (!game) return;
    const mine = mySeats();
    form.hidden = mine.length === 0;
    mutesBox.hidden = mine.length === 0 || game.seats.length - mine.length === 0;
    const seat = currentSeat();
    const key = JSON.stringify([mine, game.seats.map((s) => s.name), seat, [...mutedBy.entries()], sending]);
    if (key === formKey) return;
    formKey = key;
    if (!mine.length) return;
    const chosen = seatSelect.value;
    seatSelect.replaceChildren(...mine.map((i) => el("option", { value: String(i) }, seatName(game.seats, i))));
    if (mine.map(String).includes(chosen)) seatSelect.value = chosen;
    seatRow.hidden = mine.length < 2;
    const ticked = new Set([...toBox.querySelectorAll("input:checked")].map((b) => b.value));
    const others = game.seats.map((s, i) => i).filter((i) => i !== currentSeat());
    toBox.querySelector(".to-choices").replaceChildren(...others.map((i) => el("label", { class: "to-choice" },
      el("input", { type: "checkbox", name: "message-to", value: String(i), checked: ticked.has(String(i)) }),
      " ", el("span", { class: "name", title: seatName(game.seats, i) }, seatName(game.seats, i)))));
    const me = currentSeat();
    const muted = new Set(mutedBy.get(me) || []);
    const targets = game.seats.map((s, i) => i).filter((i) => !mine.includes(i));
    mutesBox.querySelector(".mute-buttons").replaceChildren(...targets.map((i) => el("button", {
      type: "button", class: "mute", "aria-pressed": muted.has(i) ? "true" : "false", dataset: { seat: String(i) },
      disabled: sending, onclick: () => toggleMute(me, i),
    }, muted.has(i) ? _("Unmute {name}", { name: seatName(game.seats, i) }) : _("Mute {name}", { name: seatName(game.seats, i) }))));
  }

  function currentSeat() {
    const mine = mySeats();
    const value = Number(seatSelect.value);
    return mine.includes(value) ? value : mine[0];
  }

  function updateCount() {
    const text = prepareText(textBox.value);
    const n = [...text].length;
    count.textContent = _("{n} / {max} characters", { n: formatCount(n), max: formatCount(MESSAGE_MAX) });
    count.dataset.over = n > MESSAGE_MAX ? "true" : "false";
  }

  async function signFor(seat, envelope) {
    const game = getGame();
    const entry = findKey(game.seats[seat].key);
    if (!entry) throw new Error(_("this browser has no key for that seat"));
    return { envelope, sig: await signEnvelope(entry, envelope) };
  }

  async function send(event) {
    event.preventDefault();
    if (sending) return;
    const text = prepareText(textBox.value);
    const problem = textProblem(text);
    if (problem) {
      showError({ code: "form/invalid_text", message: problem }, _("Your message"), { reveal: true });
      textBox.focus();
      return;
    }
    const seat = currentSeat();
    const to = [...toBox.querySelectorAll("input:checked")].map((b) => Number(b.value)).sort((a, b) => a - b);
    const envelope = { v: 1, ctx: "referee/message", game: gameId, seat, text, to: to.length ? to : null, at: nowMs() };
    sending = true;
    const button = form.querySelector("#message-send");
    button.disabled = true;
    status.textContent = _("Signing and sending…");
    try {
      const receipt = await api.say(gameId, await signFor(seat, envelope));
      textBox.value = "";
      updateCount();
      status.textContent = to.length ? _("Sent (message #{n}, private).", { n: receipt.position }) : _("Sent (message #{n}).", { n: receipt.position });
    } catch (err) {
      status.textContent = "";
      showError(err, _("Your message was refused"), { reveal: true });
    } finally {
      sending = false;
      button.disabled = false;
      await refresh();
    }
  }

  async function toggleMute(seat, other) {
    const now = new Set(mutedBy.get(seat) || []);
    if (now.has(other)) now.delete(other);
    else now.add(other);
    const mute = [...now].sort((a, b) => a - b);
    sending = true;
    formKey = null;
    renderForm();
    try {
      const answer = await api.mute(gameId, await signFor(seat, { v: 1, ctx: "referee/mute", game: gameId, seat, mute, at: nowMs() }));
      mutedBy.set(seat, answer.muted || mute);
      status.textContent = now.has(other) ? _("Muted {name}.", { name: seatName(getGame().seats, other) })
        : _("Unmuted {name}.", { name: seatName(getGame().seats, other) });
    } catch (err) {
      status.textContent = "";
      showError(err, _("The mute was refused"), { reveal: true });
    } finally {
      sending = false;
      formKey = null;
      await refresh({ full: true });
      const again = mutesBox.querySelector(`button.mute[data-seat='${other}']`);
      if (again) again.focus();
    }
  }

  function startTimer() {
    if (timer || !intervalMs) return;
    timer = setInterval(() => {
      if (!document.hidden) refresh();
    }, intervalMs);
  }

  form.addEventListener("submit", send);
  textBox.addEventListener("input", updateCount);
  textBox.addEventListener("keydown", (event) => {
    // Ctrl+Enter (or Cmd+Enter) sends; Enter alone makes a new line.
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  seatSelect.addEventListener("change", () => {
    formKey = null;
    renderForm();
  });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });
  updateCount();

  return {
    refresh,
    start() {
      section.hidden = false;
      startTimer();
      return refresh();
    },
    stop() {
      clearInterval(timer);
      timer = null;
    },
  };
}
