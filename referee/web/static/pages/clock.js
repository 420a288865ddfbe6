// Correspondence clocks in the pages (docs/timecontrol.md): the time control of the new-game form, the
// clocks and the "Take vacation" button of the game page, the clock entries of the replay and the
// forfeits of a score table. The pages call in through a few small hooks; everything else is here.

import { api } from "../shared/api.js";
import { findKey, signEnvelope } from "../shared/keys.js";
import { seatName } from "../games/model.js";
import { describeError, download, el, showError } from "../shared/ui.js";
import { _, LANG, ngettext } from "../shared/i18n.js";

const DAY = 86400;
const HOUR = 3600;

// -- durations ------------------------------------------------------------------------------------

/** "2 d 3 h", "5 h 12 min", "4 min 10 s", "0 s": seconds in words, coarse when far away. */
export function formatDuration(seconds) {
  const t = Math.max(0, Math.floor(seconds));
  const d = Math.floor(t / DAY);
  const h = Math.floor((t % DAY) / HOUR);
  const m = Math.floor((t % HOUR) / 60);
  const s = t % 60;
  const D = _("{n} d", { n: d });
  const H = _("{n} h", { n: h });
  const M = _("{n} min", { n: m });
  const S = _("{n} s", { n: s });
  if (d) return `${D}${h ? ` ${H}` : ""}${m ? ` ${M}` : ""}`;
  if (h) return `${H}${m ? ` ${M}` : ""}`;
  if (m) return `${M}${s ? ` ${S}` : ""}`;
  return S;
}

/** The deadline in the viewer's local time zone. */
export function localTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(LANG === "en" ? undefined : LANG, { weekday: "short", year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
}

/** One line describing a resolved time control. */
export function describeTimeControl(tc) {
  if (!tc || tc.kind === "none") return _("No time control");
  const main = tc.kind === "per_move" ? _("{time} per move", { time: formatDuration(tc.per_move) })
    : _("bank: {initial} to start, + {increment} per move, at most {max}", { initial: formatDuration(tc.initial),
      increment: formatDuration(tc.increment), max: formatDuration(tc.max) });
  const timeout = tc.on_timeout === "forfeit" ? _("a timeout forfeits")
    : _("a timeout plays the default move (forfeit after {n} in a row)", { n: tc.max_auto_moves ?? 3 });
  return `${main} · ${_("vacation {time} per player", { time: formatDuration(tc.vacation ?? 0) })} · ${timeout}`;
}

// -- new game: the time control fieldset (templates/web/new.html) ---------------------------------

function secondsOf(daysId, hoursId) {
  const days = Number(document.getElementById(daysId).value || 0);
  const hours = hoursId ? Number(document.getElementById(hoursId).value || 0) : 0;
  if (!Number.isFinite(days) || !Number.isFinite(hours) || days < 0 || hours < 0) return NaN;
  return Math.round(days * DAY + hours * HOUR);
}

/** Show the fields of the chosen kind only. */
export function initTimeControlForm() {
  const form = document.getElementById("tc-fieldset");
  if (!form) return;
  const sync = () => {
    const kind = form.querySelector("input[name=tc-kind]:checked").value;
    for (const part of form.querySelectorAll("[data-tc-kind]")) {
      part.hidden = !part.dataset.tcKind.split(" ").includes(kind);
    }
    const forfeit = document.getElementById("tc-on-timeout").value === "forfeit";
    document.getElementById("tc-max-auto").disabled = forfeit;
  };
  form.addEventListener("change", sync);
  sync();
}

/**
 * The `time_control` option of the form, in integer seconds, or null for "none" (the default, so it is
 * not sent). Throws an error with code form/invalid listing every problem.
 */
export function readTimeControl() {
  const form = document.getElementById("tc-fieldset");
  if (!form) return null;
  const kind = form.querySelector("input[name=tc-kind]:checked").value;
  if (kind === "none") return null;
  const problems = [];
  const need = (name, seconds, min = 1) => {
    if (!Number.isInteger(seconds) || seconds < min) {
      problems.push(min ? _("{name} must be at least 1 second", { name }) : _("{name} must be at least 0", { name }));
    } else if (seconds > 365 * DAY) problems.push(_("{name} must be at most 365 days", { name }));
    return seconds;
  };
  const tc = { kind };
  if (kind === "per_move") {
    tc.per_move = need(_("time per move"), secondsOf("tc-per-move-days", "tc-per-move-hours"));
  } else {
    tc.initial = need(_("initial bank"), secondsOf("tc-initial-days", "tc-initial-hours"));
    tc.increment = need(_("increment"), secondsOf("tc-increment-days", "tc-increment-hours"));
    tc.max = need(_("maximum bank"), secondsOf("tc-max-days", "tc-max-hours"));
    if (tc.max < tc.initial) problems.push(_("the maximum bank must be at least the initial bank"));
  }
  tc.vacation = need(_("vacation"), secondsOf("tc-vacation-days"), 0);
  tc.on_timeout = document.getElementById("tc-on-timeout").value;
  if (tc.on_timeout === "auto_move") {
    const n = Number(document.getElementById("tc-max-auto").value);
    if (!Number.isInteger(n) || n < 1 || n > 100) problems.push(_("auto moves before a forfeit must be a whole number from 1 to 100"));
    tc.max_auto_moves = n;
  }
  if (problems.length) {
    throw Object.assign(new Error(_("the time control is not valid")), { code: "form/invalid", details: { problems } });
  }
  return tc;
}

// -- game page: the clocks panel (templates/web/game.html) ----------------------------------------

let ticker = null;

function tick() {
  const now = performance.now();
  for (const node of document.querySelectorAll(".clock-left[data-ends]")) {
    const left = (Number(node.dataset.ends) - now) / 1000;
    node.textContent = formatDuration(left);
    node.closest(".clock").classList.toggle("clock-low", left < DAY);
    node.closest(".clock").classList.toggle("clock-out", left <= 0);
  }
}

function nowIso() {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The vacation envelope for the log's current position (a vacation means the same at any position). */
async function vacationSubmission(gameId, seat, seconds) {
  const game = await api.game(gameId);
  const entry = findKey(game.seats[seat].key);
  if (!entry) throw new Error(_("this browser has no key for that seat"));
  const envelope = { v: 1, ctx: "referee/vacation", game: gameId, seat, seq: game.seq, prev: game.head, seconds, at: nowIso() };
  return { envelope, sig: await signEnvelope(entry, envelope) };
}

async function takeVacation(gameId, seat, form, reload) {
  const status = form.querySelector(".vacation-status");
  const button = form.querySelector("button");
  const days = Number(form.querySelector("input").value);
  const seconds = Math.round(days * DAY);
  if (!Number.isFinite(days) || seconds < 1) {
    status.textContent = _("Enter a number of days greater than 0.");
    status.dataset.state = "error";
    return;
  }
  button.disabled = true;
  status.dataset.state = "busy";
  status.textContent = _("Signing and submitting…");
  try {
    let answer;
    try {
      answer = await api.vacation(gameId, await vacationSubmission(gameId, seat, seconds));
    } catch (err) {
      if (err.code !== "submission/stale") throw err;
      answer = await api.vacation(gameId, await vacationSubmission(gameId, seat, seconds)); // the log moved on: once more
    }
    // Kept for this tab, so the receipt is still offered after the page redraws.
    sessionStorage.setItem(`referee.vacation.${gameId}.${seat}`, JSON.stringify({ ...answer, seconds }));
    await reload();
  } catch (err) {
    status.dataset.state = "error";
    status.textContent = `${_("The vacation was refused")}: ${describeError(err)}`;
    button.disabled = false;
    showError(err, _("The vacation was refused"));
    if (err.status === 409) await reload(); // the game moved on (a timeout, the end): catch up
  }
}

function showReceipt(status, gameId, answer) {
  const receipt = answer.receipt || {};
  const { seconds, ...saved } = answer;
  status.dataset.state = "ok";
  status.replaceChildren(_("Vacation of {time} granted: log entry #{seq}, at {at}. ", { time: formatDuration(seconds ?? 0),
    seq: receipt.seq, at: localTime(receipt.at) }),
    el("button", { type: "button", class: "link", onclick: () => download(`receipt-${gameId}-${receipt.seq}.json`,
      JSON.stringify(saved, null, 2) + "\n") }, _("Save the signed receipt")));
}

function vacationForm(gameId, seat, clock, reload) {
  const id = `vacation-days-${seat}`;
  const maxDays = Math.floor((clock.vacation_left / DAY) * 100) / 100;
  // novalidate: the referee judges the allowance (422 vacation/exceeded) and the page shows its answer.
  const form = el("form", { class: "vacation-form inline", novalidate: true },
    el("label", { for: id }, _("Vacation days")),
    el("input", { id, type: "number", min: "0.01", max: String(maxDays), step: "any", value: String(Math.min(1, maxDays)),
      inputmode: "decimal", class: "vacation-days" }),
    el("button", { type: "submit" }, _("Take vacation")),
    el("span", { class: "vacation-status", role: "status", "aria-live": "polite" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    takeVacation(gameId, seat, form, reload);
  });
  const saved = sessionStorage.getItem(`referee.vacation.${gameId}.${seat}`);
  if (saved) showReceipt(form.querySelector(".vacation-status"), gameId, JSON.parse(saved));
  return form;
}

/** What the clocks panel shows, except the seconds left (those are re-anchored on every poll): the receipts of
 * this tab's vacations too, so that the redraw after one's answer shows it even when the live stream's notice of
 * its entry redrew the clocks before the answer came. */
function clocksKey(raw, mine) {
  const receipts = mine.map((seat) => sessionStorage.getItem(`referee.vacation.${raw.game ?? raw.id}.${seat}`));
  return JSON.stringify([raw.seq, raw.status, mine, receipts, (raw.seats || []).map((s) => {
    const { left, ...rest } = (s && s.clock) || {};
    return rest;
  })]);
}

/**
 * Draw every seat's clock into `box` (the game page's #clocks) from the raw GET /games/<id>, and hide
 * `panel` when the game has no clock. `mine`: the seats this browser holds; `reload`: redraw the page.
 * Called on every poll: when nothing but the seconds left changed, only the countdown is re-anchored
 * (a half-typed number of days is kept); a vacation that ended shows up at the next poll.
 */
export function renderClocks(panel, box, raw, mine, reload) {
  const tc = raw.time_control;
  const seats = raw.seats || [];
  const hasClock = tc && tc.kind !== "none" && seats.some((s) => s && s.clock);
  panel.hidden = !hasClock;
  if (!hasClock) {
    box.replaceChildren();
    return;
  }
  const started = performance.now();
  const key = clocksKey(raw, mine);
  if (box.dataset.key === key) {
    seats.forEach((seat, i) => {
      const node = box.querySelector(`.clock[data-seat='${i}'] .clock-left[data-ends]`);
      const left = seat && seat.clock ? seat.clock.left : null;
      // `left` is whole seconds: re-anchor only when the countdown is off by more than that.
      if (node && typeof left === "number" && Math.abs(Number(node.dataset.ends) - (started + left * 1000)) > 1500) {
        node.dataset.ends = String(started + left * 1000);
      }
    });
    tick();
    return;
  }
  box.dataset.key = key;
  const active = raw.status === "active";
  box.replaceChildren(el("p", { class: "hint tc-summary" }, describeTimeControl(tc)),
    el("ul", { class: "clocks" }, seats.map((seat, i) => {
      const c = seat.clock || {};
      const item = el("li", { class: "clock", dataset: { seat: String(i) } });
      const flags = [];
      if (c.forfeited) flags.push(el("span", { class: "badge badge-forfeited" }, _("forfeited")));
      if (c.on_vacation) flags.push(el("span", { class: "badge badge-vacation" }, _("on vacation")));
      item.append(el("strong", {}, seatName(seats, i)), mine.includes(i) ? ` ${_("(you)")}` : "", " ", ...flags);
      if (c.deadline && active && !c.forfeited) {
        item.classList.add("clock-running");
        const left = el("span", { class: "clock-left", dataset: c.on_vacation ? {} : { ends: String(started + (c.left ?? 0) * 1000) } },
          formatDuration(c.left ?? 0));
        item.append(el("br"), `${_("Time left")}: `, left, c.on_vacation ? ` (${_("stopped: on vacation")})` : "",
          el("br"), `${_("Deadline")}: `, el("time", { datetime: c.deadline, class: "clock-deadline" }, localTime(c.deadline)));
        if ((c.left ?? 0) < DAY) item.classList.add("clock-low");
      }
      if (typeof c.bank === "number") item.append(el("br"), `${_("Bank")}: `, el("span", { class: "clock-bank" }, formatDuration(c.bank)));
      item.append(el("br"), el("small", { class: "muted" }, `${_("Vacation left")}: ${formatDuration(c.vacation_left ?? 0)}`));
      if (mine.includes(i) && active && !c.forfeited && (c.vacation_left ?? 0) > 0) {
        item.append(vacationForm(raw.game ?? raw.id, i, c, reload));
      }
      return item;
    })));
  tick();
  if (!ticker) ticker = setInterval(tick, 1000);
  scheduleVacationEnd(seats, reload);
}

let vacationTimer = null;

/** A vacation that ends logs nothing (no event on the live stream): redraw the page when it ends. */
function scheduleVacationEnd(seats, reload) {
  const ends = seats.map((s) => s && s.clock && s.clock.vacation_until).filter(Boolean).map((t) => Date.parse(t));
  if (vacationTimer) clearTimeout(vacationTimer);
  vacationTimer = null;
  if (!ends.length) return;
  const wait = Math.max(250, Math.min(...ends) - Date.now() + 500);
  vacationTimer = setTimeout(() => { vacationTimer = null; reload(); }, Math.min(wait, 2147483000));
}

/** The context line of a refused move when the seat's time had run out (409 time/expired), else null. */
export function expiredContext(err) {
  if (!err || err.code !== "time/expired") return null;
  const d = err.details || {};
  const ran = d.deadline ? _("Your time ran out at {at} before the move arrived", { at: localTime(d.deadline) })
    : _("Your time ran out before the move arrived");
  return ran + (d.timeout !== undefined ? `; ${_("the referee logged the timeout as entry #{seq}", { seq: d.timeout })}` : "");
}

// -- replay: clock entries and forfeits ------------------------------------------------------------

/** The words for a `timeout`, `forfeited`, `auto_move` or `vacation` entry, else null. */
export function describeClockEntry(entry, seats, describeMove) {
  const who = seatName(seats, entry.seat);
  switch (entry.type) {
    case "timeout": {
      const ran = entry.deadline ? _("{name} ran out of time (deadline {at})", { name: who, at: localTime(entry.deadline) })
        : _("{name} ran out of time", { name: who });
      if (entry.action === "forfeit") {
        return `${ran}: ${_("the seat forfeits")}${entry.move ? `; ${_("the referee played its default move: {move}", { move: describeMove(entry.move) })}` : ""}`;
      }
      return `${ran}: ${_("the referee played its default move: {move}", { move: entry.move ? describeMove(entry.move) : _("none") })}`;
    }
    case "forfeited":
      return _("{name} forfeited", { name: who }) + (entry.reason ? ` (${entry.reason === "timeout" ? _("on time") : entry.reason}` +
        `${entry.timeout !== undefined ? `, ${_("timeout at entry #{seq}", { seq: entry.timeout })}` : ""})` : "");
    case "auto_move":
      return _("{name} has forfeited: the referee played its default move: {move}", { name: who, move: describeMove(entry.move) });
    case "vacation": {
      const seconds = entry.submission && entry.submission.envelope ? entry.submission.envelope.seconds : entry.seconds;
      const s = seconds ?? 0;
      const time = s > 0 && s % DAY === 0 ? ngettext("{n} day", "{n} days", s / DAY) : formatDuration(s);
      return _("{name} took {time} of vacation", { name: who, time });
    }
    default:
      return null;
  }
}

/** Every entry of the log (GET /games/<id>/log, page after page). */
export async function allLogEntries(gameId) {
  const entries = [];
  let start = 0;
  for (;;) {
    const page = await api.log(gameId, `?from=${start}&limit=1000`);
    entries.push(...(page.entries || []));
    if (page.next === null || page.next === undefined || page.next <= start) return entries;
    start = page.next;
  }
}

const CLOCK_TYPES = new Set(["timeout", "forfeited", "auto_move", "vacation"]);

/**
 * The list of the log's clock entries (into `box`, hidden when there are none), each a button that
 * shows that entry (`show(n)`).
 */
export function renderClockEntries(box, entries, seats, describeMove, show) {
  const clockEntries = entries.filter((e) => e && CLOCK_TYPES.has(e.type));
  box.hidden = clockEntries.length === 0;
  const list = box.querySelector("ol") || box.appendChild(el("ol", { class: "clock-entries" }));
  list.replaceChildren(...clockEntries.map((e) => el("li", { dataset: { type: e.type, seq: String(e.seq) } },
    el("button", { type: "button", class: "link", onclick: () => show(e.seq) }, `#${e.seq}`), " ",
    describeClockEntry(e, seats, describeMove))));
}

/** Mark forfeited seats in a score table (rows `tr[data-seat]` in `box`) and say how the game ended. */
export function markForfeits(box, result, seats) {
  const forfeited = (result.seats || []).filter((r) => r.forfeited);
  for (const r of forfeited) {
    const row = box.querySelector(`tr[data-seat='${r.seat}']`);
    if (!row) continue;
    row.classList.add("forfeited");
    row.dataset.forfeited = "true";
    const f = r.forfeit || {};
    const cell = row.querySelector("th") || row.cells[1];
    cell.append(" ", el("span", { class: "badge badge-forfeited", title: f.reason || "" },
      `${_("forfeited")}${f.rule ? ` [${f.rule}]` : ""}${f.position !== undefined ? ` ${_("at #{seq}", { seq: f.position })}` : ""}`));
  }
  const notes = [];
  if (forfeited.length) {
    notes.push(_("Forfeited: {names} — ranked below every player who did not forfeit (TC-F1).",
      { names: forfeited.map((r) => seatName(seats, r.seat)).join(", ") }));
  }
  if (result.ended_by) {
    notes.push(_("The game ended early [{rule}]: {reason}.", { rule: result.ended_by.rule || "", reason: result.ended_by.reason || "" }) +
      `${result.provisional ? ` ${_("The score is provisional.")}` : ""}`);
  }
  if (notes.length) box.prepend(el("div", { class: "forfeit-note" }, notes.map((n) => el("p", {}, n))));
}
