// The replay viewer: step through every log entry (slider, buttons, arrow keys), see each entry's
// verdict and the board after it; at the end the score breakdown, the tie-break chain and a chart.

import { api } from "../shared/api.js";
import { allLogEntries, describeClockEntry, markForfeits, renderClockEntries } from "./clock.js";
import { chartHeading, describeVerdict, normGame, rulesetModule, seatName } from "../games/model.js";
import { el, showError, statusWord } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";
import { gameName, playersLine } from "../games/game-names.js";
import { followGame } from "../shared/live.js";
import { followedKeys } from "../shared/live-hub.js";
import { describeDecisionEntry, markDecisions } from "./decisions.js";

const root = document.getElementById("replay");
const gameId = root.dataset.game;
const slider = document.getElementById("step");
let game = null;
let components = null;
let mod = null;
let seats = [];
let current = 0;
let total = 0;
const cache = new Map();
let token = 0;
let logEntries = []; // the whole log once loaded: names the offer an answer or an agreement is about

function normStep(data) {
  if (!data) return null;
  if (Array.isArray(data)) return data[0] || null;
  if (data.step) return data.step;
  if (Array.isArray(data.steps)) return data.steps[0] || null;
  if (Array.isArray(data.entries)) return data.entries[0] || null;
  return data;
}

function normSteps(data) {
  if (Array.isArray(data)) return data;
  return data.steps || data.entries || data.replay || [];
}

function describeEntry(entry) {
  switch (entry.type) {
    case "created": {
      const rs = entry.ruleset || {};
      return _("Game created: {ruleset} version {version}, {names}; ", { ruleset: rs.name, version: rs.version,
        names: (entry.seats || []).map((x) => x.name).join(", ") }) +
        (entry.mode === "recorded" ? _("recorded deck (no commit–reveal)")
          : _("commitment {hash}…", { hash: String(entry.commitment || "").slice(0, 16) }));
    }
    case "accepted":
      return _("{name} accepted, with 32 bytes of entropy", { name: seatName(seats, entry.seat) });
    case "started":
      return _("Game started: the deck is shuffled from the committed seed and every seat's entropy");
    case "move": {
      const move = entry.submission && entry.submission.envelope ? entry.submission.envelope.move : entry.move;
      return `${seatName(seats, entry.seat)} ${mod ? mod.describeMove(move, components) : JSON.stringify(move)}`;
    }
    case "revealed":
      return _("Server seed revealed ({reason}): {seed}…", { reason: entry.reason ? statusWord(entry.reason) : statusWord("finished"),
        seed: String(entry.server_seed || "").slice(0, 16) });
    default:
      return describeClockEntry(entry, seats, moveText) || describeDecisionEntry(entry, seats, logEntries) || `${entry.type}`;
  }
}

function moveText(move) {
  return mod ? mod.describeMove(move, components) : JSON.stringify(move);
}

async function stepAt(n) {
  if (!cache.has(n)) cache.set(n, api.replayAt(gameId, n).then(normStep));
  try {
    return await cache.get(n);
  } catch (err) {
    cache.delete(n);
    throw err;
  }
}

async function show(n) {
  n = Math.max(0, Math.min(total - 1, n));
  current = n;
  slider.value = String(n);
  slider.setAttribute("aria-valuetext", _("entry {n} of {total}", { n: n + 1, total }));
  document.getElementById("step-label").textContent = _("Entry {n} of {total}", { n: n + 1, total });
  document.getElementById("prev").disabled = n <= 0;
  document.getElementById("first").disabled = n <= 0;
  document.getElementById("next").disabled = n >= total - 1;
  document.getElementById("last").disabled = n >= total - 1;
  const mine = ++token;
  let step;
  try {
    step = await stepAt(n);
  } catch (err) {
    showError(err, _("Loading entry {n}", { n }));
    return;
  }
  if (mine !== token || !step) return;
  const entry = step.entry || {};
  const verdict = step.verdict || null;
  const box = document.getElementById("entry");
  box.replaceChildren(
    el("span", { class: "entry-seq" }, `#${step.seq ?? n} ${entry.type || ""}`), " ",
    el("span", { class: "entry-text" }, describeEntry(entry)), el("br"),
    el("span", { class: `verdict verdict-${verdict ? verdict.status : "none"}`, dataset: { status: verdict ? verdict.status : "", rule: verdict && verdict.error ? verdict.error.rule || "" : "" } },
      `${_("Verdict")}: ${describeVerdict(verdict, seats)}`),
    entry.at ? el("small", { class: "muted" }, ` · ${entry.at}`) : "");
  root.dataset.at = String(n);
  const board = document.getElementById("board");
  if (step.state && mod) {
    const envelope = entry.type === "move" && verdict && verdict.status === "applied" && entry.submission ? entry.submission.envelope : null;
    const lastMove = envelope ? { ...envelope.move, seat: entry.seat } : null;
    mod.renderBoard(board, { components, view: step.state, seats, picker: null, lastMove });
  } else {
    board.replaceChildren(el("p", { class: "muted" }, _("No board yet: the game starts once every seat has accepted.")));
  }
  document.getElementById("result-section").hidden = !(game.status === "finished" && n === total - 1);
}

async function showResult() {
  if (game.status !== "finished") return;
  try {
    const [result, replay] = await Promise.all([api.result(gameId), api.replay(gameId)]);
    document.getElementById("result").replaceChildren(mod.scoreTable(result.result || result, seats, components));
    markForfeits(document.getElementById("result"), result.result || result, seats);
    markDecisions(document.getElementById("result"), result.result || result, seats);
    const steps = normSteps(replay);
    document.getElementById("chart-h").textContent = chartHeading(game.ruleset);
    document.getElementById("chart").replaceChildren(mod.chart(steps, seats));
    root.dataset.resultLoaded = "true";
  } catch (err) {
    showError(err, _("Loading the result"));
  }
}

function onKey(event) {
  if (event.target && (event.target.tagName === "INPUT" || event.target.tagName === "TEXTAREA") && event.target !== slider) return;
  if (event.target === slider) return; // the range input steps by itself and fires "input"
  const keys = { ArrowLeft: current - 1, ArrowRight: current + 1, Home: 0, End: total - 1 };
  if (event.key in keys) {
    event.preventDefault();
    show(keys[event.key]);
  }
}

async function init() {
  try {
    game = normGame(await api.game(gameId));
    seats = game.seats;
    mod = rulesetModule(game.ruleset);
    const rs = await api.ruleset(game.ruleset);
    components = rs.components || rs;
    document.getElementById("ruleset-name").textContent = `${playersLine(seats)} · ${gameName(game.ruleset)} · ${statusWord(game.status)}`;
  } catch (err) {
    showError(err, _("Loading the game"));
    return;
  }
  total = game.seq;
  slider.max = String(Math.max(0, total - 1));
  slider.addEventListener("input", () => show(Number(slider.value)));
  document.getElementById("first").addEventListener("click", () => show(0));
  document.getElementById("prev").addEventListener("click", () => show(current - 1));
  document.getElementById("next").addEventListener("click", () => show(current + 1));
  document.getElementById("last").addEventListener("click", () => show(total - 1));
  document.addEventListener("keydown", onKey);
  root.dataset.total = String(total);
  const start = /^#\d+$/.test(location.hash) ? Number(location.hash.slice(1)) : 0;
  await show(start);
  allLogEntries(gameId).then((entries) => {
    logEntries = entries;
    renderClockEntries(document.getElementById("clock-entries"), entries, seats, moveText, show);
  }).catch((err) => showError(err, _("Loading the log")));
  await showResult();
  root.dataset.ready = "true";
  if (game.status === "waiting" || game.status === "active") {
    const covered = (game.seats || []).some((s) => s && followedKeys().includes(s.key)); // on the stream anyway
    followGame(gameId, { root, refresh: followLive, pollMs: 5000, seqOf: () => total, covered });
  }
}

// A live game grows: new entries extend the slider, and a viewer at the last entry moves on with them.
async function followLive() {
  const fresh = normGame(await api.game(gameId));
  if (fresh.seq === total && fresh.status === game.status) return false;
  const atEnd = current >= total - 1;
  for (const n of [...cache.keys()]) if (n >= total - 1) cache.delete(n); // its verdict may have come since
  game = fresh;
  total = fresh.seq;
  slider.max = String(Math.max(0, total - 1));
  root.dataset.total = String(total);
  document.getElementById("ruleset-name").textContent = document.getElementById("ruleset-name").textContent.replace(/ · \w+$/, ` · ${game.status}`);
  await show(atEnd ? total - 1 : current);
  await showResult();
  return true;
}

init();
