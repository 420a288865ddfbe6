// The tournaments page: every tournament (GET /tournaments, newest first, paged) and the new-tournament form
// (POST /tournaments). Players are given with names and public keys, as on the new-game page; a key of this
// browser can be picked or generated here.

import { api } from "../shared/api.js";
import { gameName } from "../games/game-names.js";
import { initTimeControlForm, readTimeControl } from "./clock.js";
import { entropy, listKeys, makeKeyPair, signEnvelope } from "../shared/keys.js";
import { addRow, labelRows } from "./seat-rows.js";
import { formatText } from "./tournament-model.js";
import { clearErrors, el, shortKey, showError, statusWord } from "../shared/ui.js";
import { _, LANG } from "../shared/i18n.js";

const WEB = document.body.dataset.web || "/play/";
const PAGE = 50;
const playersList = document.getElementById("t-players");
// the key of the computer player `referee serve --house-bot` runs, or "": a player with that key is a bot
const houseBotKey = document.getElementById("tournament-form").dataset.houseBot;
const template = document.getElementById("t-player-template");
let rulesets = [];
let current = null;
let offset = 0;

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(LANG === "en" ? undefined : LANG);
}

async function loadList() {
  const body = document.getElementById("tournaments-body");
  try {
    const data = await api.tournaments(offset, PAGE);
    const rows = data.tournaments || [];
    if (!rows.length && offset === 0) {
      body.replaceChildren(el("tr", {}, el("td", { colspan: 7 }, _("No tournaments yet."))));
    } else {
      const made = rows.map((t) => el("tr", { dataset: { tournament: t.tournament, status: t.status } },
        el("td", { class: "game-id" }, el("a", { class: "mono", href: `${WEB}tournaments/${encodeURIComponent(t.tournament)}` }, t.tournament)),
        el("td", { dataset: { label: _("Ruleset") } }, gameName(t.ruleset && t.ruleset.name)),
        el("td", { dataset: { label: _("Format") } }, formatText(t.format)),
        el("td", { dataset: { label: _("Players") } }, t.status === "waiting" ? `${t.players} (${_("{n} joined", { n: t.joined })})`
          : `${t.players}${t.withdrawn ? ` (${_("{n} withdrawn", { n: t.withdrawn })})` : ""}`),
        el("td", { class: `status-${t.status}`, dataset: { label: _("Status") } }, t.status === "cancelled" ? _("cancelled") : statusWord(t.status)),
        el("td", { dataset: { label: _("Round") } }, t.round ? _("{n} of {total}", { n: t.round, total: t.format ? t.format.rounds : "?" }) : "—"),
        el("td", { dataset: { label: _("Created") } }, el("time", { datetime: t.created_at || "" }, when(t.created_at)))));
      if (offset === 0) body.replaceChildren(...made);
      else body.append(...made);
    }
    const more = document.getElementById("tournaments-more");
    more.hidden = data.next === null || data.next === undefined;
    offset = data.next ?? offset;
  } catch (err) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 7 }, _("Could not load the tournaments."))));
    showError(err, _("Loading the tournaments"));
  } finally {
    document.getElementById("tournament-list").setAttribute("aria-busy", "false");
  }
}

// -- ratings (GET /ratings/<ruleset>) ------------------------------------------------------------------

async function loadRatings() {
  const name = document.getElementById("ratings-ruleset").value;
  const box = document.getElementById("ratings-body");
  if (!name) return;
  try {
    const data = await api.ratings(name);
    const mine = new Map(listKeys().map((k) => [k.public, k.name]));
    // which tournaments count: vetted (organiser-signed only) or not, in the referee's own sentence
    const basis = el("p", { id: "ratings-basis", class: data.vetted ? "hint" : "forfeit-note",
                            dataset: { vetted: String(data.vetted) } },
                     data.vetted ? null : el("strong", {}, `${_("Unvetted ratings.")} `), data.basis,
                     ` ${_("Tournaments rated: {n}.", { n: data.tournaments.length })}`);
    if (!data.ratings.length) {
      box.replaceChildren(basis, el("p", { class: "hint" }, _("No rated games yet.")));
      return;
    }
    box.replaceChildren(basis, el("table", { class: "ratings stack-on-phone", dataset: { ruleset: data.ruleset } },
      el("caption", { class: "sr-only" }, _("Ratings of {ruleset}", { ruleset: gameName(data.ruleset) })),
      el("thead", {}, el("tr", {}, ["#", _("Player key"), _("Ordinal (μ − 3σ)"), "μ", "σ", _("Games")].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, data.ratings.map((r, i) => el("tr", { dataset: { key: r.key } },
        el("td", { dataset: { label: "#" } }, String(i + 1)),
        el("td", { dataset: { label: _("Player key") } }, el("span", { class: "mono", title: r.key }, shortKey(r.key)),
          mine.has(r.key) ? el("span", { class: "muted" }, ` (${_("{name}, this browser", { name: mine.get(r.key) })})`) : null),
        el("td", { dataset: { label: _("Ordinal") } }, r.ordinal.toFixed(2)),
        el("td", { dataset: { label: "μ" } }, r.mu.toFixed(2)),
        el("td", { dataset: { label: "σ" } }, r.sigma.toFixed(2)),
        el("td", { dataset: { label: _("Games") } }, String(r.games)))))));
  } catch (err) {
    box.replaceChildren();
    showError(err, _("Loading the ratings"));
  }
}

// -- the form ----------------------------------------------------------------------------------------

function renumber() {
  labelRows(playersList, "player");
  const n = playersList.children.length;
  document.getElementById("t-remove-player").disabled = n <= 2;
  document.getElementById("t-player-count").textContent = _("{n} players", { n });
}

function addPlayer() {
  addRow(template, playersList);
  renumber();
}

function chooseRuleset(name) {
  current = rulesets.find((r) => r.name === name) || null;
  const sizes = document.getElementById("t-table-sizes");
  if (current) {
    sizes.placeholder = _("default, e.g. {n} ({min}–{max} a table)", { n: Math.min(4, current.max_players || 4),
      min: current.min_players, max: current.max_players });
  }
}

function numberField(id, label, problems, { integer = false } = {}) {
  const text = document.getElementById(id).value.trim();
  if (text === "") return 0;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    problems.push(integer ? _("{label} must be a whole number of 0 or more", { label }) : _("{label} must be a number of 0 or more", { label }));
    return 0;
  }
  return value;
}

// An invitation's seed is kept in this browser only (and in the link's fragment): the tournament's page shows the link.
const INVITATIONS = "referee.tournament-invitations.v1";

function keepInvitation(tournamentId, seed) {
  let kept = {};
  try {
    kept = JSON.parse(localStorage.getItem(INVITATIONS) || "{}") || {};
  } catch {
    kept = {};
  }
  localStorage.setItem(INVITATIONS, JSON.stringify({ ...kept, [tournamentId]: seed }));
}

function registrationKind() {
  return document.getElementById("t-registration").value;
}

/** The POST /tournaments body the form describes; problems found in the page are thrown as form/invalid. */
function readForm() {
  const problems = [];
  if (!current) problems.push(_("choose a ruleset"));
  const open = registrationKind() !== "listed";
  // with an open registration a row without a key is no player: the others join from the tournament's page
  const rows = [...playersList.children].filter((li) => !open || li.querySelector(".seat-key").value.trim());
  const players = rows.map((li, i) => {
    const p = { name: li.querySelector(".seat-name").value.trim().normalize("NFC"), key: li.querySelector(".seat-key").value.trim() };
    if (!p.name) problems.push(_("player {n} has no name", { n: i + 1 }));
    if (!p.key) problems.push(_("player {n} has no public key", { n: i + 1 }));
    if (houseBotKey && p.key === houseBotKey) p.bot = true;
    return p;
  });
  const format = { kind: document.getElementById("t-format").value };
  const rounds = numberField("t-rounds", _("Rounds"), problems, { integer: true });
  if (rounds) format.rounds = rounds;
  const sizesText = document.getElementById("t-table-sizes").value.trim();
  if (sizesText) {
    const sizes = sizesText.split(/[\s,;/]+/).filter(Boolean).map(Number);
    if (sizes.some((n) => !Number.isInteger(n) || n < 2)) problems.push(_("table sizes are whole numbers of 2 or more, e.g. 4 or 4, 3"));
    else format.table_sizes = sizes;
  }
  const days = numberField("t-deadline-days", _("The deadline's days"), problems);
  const hours = numberField("t-deadline-hours", _("The deadline's hours"), problems);
  const seconds = Math.round(days * 86400 + hours * 3600);
  if (seconds > 365 * 86400) problems.push(_("the round deadline is at most 365 days"));
  let timeControl = null;
  try {
    timeControl = readTimeControl();
  } catch (err) {
    problems.push(...((err.details && err.details.problems) || [err.message]));
  }
  const registration = {};
  if (open) {
    const max = numberField("t-max-players", _("Max players"), problems, { integer: true });
    if (max) registration.max_players = max;
    const closes = document.getElementById("t-closes").value;
    if (closes) {
      const at = new Date(closes);
      if (Number.isNaN(at.getTime()) || at.getTime() <= Date.now()) problems.push(_("the registration must close in the future"));
      else registration.closes = at.toISOString().replace(/\.\d{3}Z$/, "Z");
    }
    if (!document.getElementById("t-organiser").value) problems.push(_("an open registration is signed by its organiser: choose a key under Organiser"));
  }
  if (problems.length) {
    throw Object.assign(new Error(_("the form is not complete")), { code: "form/invalid", details: { problems } });
  }
  const body = { ruleset: current.name, players, format, adjudication: document.getElementById("t-adjudication").value, ...registration };
  if (timeControl) body.options = { time_control: timeControl };
  if (seconds > 0) body.round_deadline = seconds;
  return body;
}

async function submit(event) {
  event.preventDefault();
  clearErrors();
  const status = document.getElementById("t-create-status");
  let body;
  try {
    body = readForm();
  } catch (err) {
    showError(err, _("The tournament cannot be created yet"), { reveal: true });
    return;
  }
  status.textContent = _("Creating…");
  try {
    let seed = "";
    if (registrationKind() === "invite") {
      // the invitation's key is made here: its public key goes into the body, its seed only into the link's fragment
      const pair = await makeKeyPair("invitation");
      body.registration = { invite: pair.public };
      seed = pair.private;
    } else if (registrationKind() === "open") {
      body.registration = { open: true };
    }
    const organiser = listKeys().find((k) => k.public === document.getElementById("t-organiser").value);
    if (organiser) {
      // The organiser signs {v: 1, ctx: "referee/tournament", ...body}; the nonce keeps two equal requests apart.
      body.nonce = entropy();
      body.organiser = { key: organiser.public, sig: await signEnvelope(organiser, { v: 1, ctx: "referee/tournament", ...body }) };
    }
    const created = await api.createTournament(body);
    if (seed) keepInvitation(created.tournament, seed);
    status.textContent = _("Created {id}.", { id: created.tournament });
    window.location.assign(`${WEB}tournaments/${encodeURIComponent(created.tournament)}`);
  } catch (err) {
    status.textContent = "";
    showError(err, _("The referee refused the tournament"), { reveal: true });
  }
}

async function init() {
  try {
    const data = await api.rulesets();
    rulesets = Array.isArray(data) ? data : data.rulesets || [];
  } catch (err) {
    showError(err, _("Loading the rulesets"));
    return;
  }
  const box = document.getElementById("t-ruleset-choices");
  box.replaceChildren(...rulesets.map((r, i) => el("label", { class: "choice" },
    el("input", { type: "radio", name: "t-ruleset", value: r.name, checked: i === 0, onchange: () => chooseRuleset(r.name) }),
    ` ${gameName(r.name)} `, el("small", {}, _("({min}–{max} a table)", { min: r.min_players ?? "?", max: r.max_players ?? "?" })))));
  if (rulesets.length) chooseRuleset(rulesets[0].name);
  const select = document.getElementById("ratings-ruleset");
  select.replaceChildren(...rulesets.map((r) => el("option", { value: r.name }, gameName(r.name))));
  select.addEventListener("change", loadRatings);
  loadRatings();
}

document.getElementById("t-organiser").append(...listKeys().map((k) => el("option", { value: k.public }, k.name)));
document.getElementById("t-add-player").addEventListener("click", addPlayer);
document.getElementById("t-remove-player").addEventListener("click", () => {
  if (playersList.children.length > 2) playersList.lastElementChild.remove();
  renumber();
});
// "Add the computer as a player": the house bot's key in the first row without a key (or a new one), once; the form
// then sends that player as a bot ("bot": true, readForm).
const houseBotButton = document.getElementById("t-house-bot");
houseBotButton.hidden = !houseBotKey;
houseBotButton.addEventListener("click", () => {
  const rows = [...playersList.children];
  if (rows.some((li) => li.querySelector(".seat-key").value.trim() === houseBotKey)) return;
  let li = rows.find((row) => !row.querySelector(".seat-key").value.trim());
  if (!li) {
    addPlayer();
    li = playersList.lastElementChild;
  }
  li.querySelector(".seat-name").value = "Computer";
  li.querySelector(".seat-key").value = houseBotKey;
});
document.getElementById("t-registration").addEventListener("change", () => {
  document.getElementById("t-registration-limits").hidden = registrationKind() === "listed";
});
document.getElementById("tournaments-next").addEventListener("click", loadList);
document.getElementById("tournament-form").addEventListener("submit", submit);
for (let i = 0; i < 4; i += 1) addPlayer();
initTimeControlForm();
init();
loadList();
