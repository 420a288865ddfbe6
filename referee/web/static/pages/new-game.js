import { api } from "../shared/api.js";
import { gameName } from "../games/game-names.js";
import { initTimeControlForm, readTimeControl } from "./clock.js";
import { entropy, findKey, generateKey, listKeys, makeKeyPair, signEnvelope } from "../shared/keys.js";
import { addRow, adoptRows, labelRows } from "./seat-rows.js";
import { keepInvitations, seatOffersPanel } from "./seat-offers.js";
import { clearErrors, el, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const WEB = document.body.dataset.web || "/play/";
const seatsList = document.getElementById("seats");
const template = document.getElementById("seat-template");
let rulesets = [];
let current = null;
// the key of the computer player `referee serve --house-bot` runs (as GET /house-bot names it), or ""
const houseBotKey = document.getElementById("house-bot").dataset.key;

function limits() {
  return { min: (current && current.min_players) || 2, max: (current && current.max_players) || 5 };
}

function renumber() {
  labelRows(seatsList, "seat");
  const { min, max } = limits();
  const n = seatsList.children.length;
  document.getElementById("add-seat").disabled = n >= max;
  document.getElementById("remove-seat").disabled = n <= min;
  document.getElementById("seat-count").textContent = `${n} players (${min}–${max} allowed)`;
}

function addSeat() {
  addRow(template, seatsList);
  renumber();
}

function numberOrNull(x) {
  return typeof x === "number" ? x : null;
}

// Options of recorded games (a given deck order) only; this form creates seeded games. The time control
// has its own fieldset (clock.js).
const RECORDED_ONLY = new Set(["reshuffles", "time_control"]);

function optionControl(name, spec) {
  // Options are described by the ruleset (GET /rulesets/<name>): a default and, where known, the
  // allowed values. Unknown shapes fall back to a JSON text field.
  const id = `opt-${name}`;
  const def = spec && typeof spec === "object" && "default" in spec ? spec.default : spec;
  const choices = spec && (spec.enum || spec.choices || spec.values);
  const label = el("label", { for: id }, spec && spec.description ? `${name} — ${spec.description}` : name);
  let input;
  if (Array.isArray(choices) && choices.every((c) => typeof c !== "object")) {
    input = el("select", { id, dataset: { option: name, kind: "choice" } },
      choices.map((c) => el("option", { value: JSON.stringify(c), selected: JSON.stringify(c) === JSON.stringify(def) }, String(c))));
  } else if (typeof def === "number") {
    input = el("input", { id, type: "number", value: def, step: 1, dataset: { option: name, kind: "int" },
      min: numberOrNull(spec.minimum ?? spec.min), max: numberOrNull(spec.maximum ?? spec.max) });
  } else {
    input = el("input", { id, class: "mono", value: JSON.stringify(def ?? null), dataset: { option: name, kind: "json" } });
  }
  input.dataset.default = JSON.stringify(def ?? null);
  return el("p", { class: "option" }, label, " ", input);
}

function renderOptions() {
  const box = document.getElementById("options");
  const schema = (current && (current.options || current.options_schema)) || {};
  const props = schema.properties || schema;
  const names = Object.keys(props || {}).filter((n) => !RECORDED_ONLY.has(n));
  box.replaceChildren(...(names.length ? names.map((n) => optionControl(n, props[n]))
    : [el("p", { class: "hint" }, _("This ruleset has no options."))]));
}

function chooseRuleset(name) {
  current = rulesets.find((r) => r.name === name) || null;
  const { min, max } = limits();
  while (seatsList.children.length < min) addSeat();
  while (seatsList.children.length > max) seatsList.lastElementChild.remove();
  renumber();
  renderOptions();
  // Full details (options with defaults) come from GET /rulesets/<name>.
  api.ruleset(name).then((full) => {
    if (current && current.name === name) {
      current = { ...current, ...full };
      renderOptions();
      renumber();
    }
  }).catch((err) => showError(err, _("Loading the ruleset {name}", { name })));
}

function readOptions() {
  // Only options changed from their defaults are sent: the ruleset applies its own defaults.
  const options = {};
  for (const input of document.querySelectorAll("[data-option]")) {
    const name = input.dataset.option;
    let value;
    if (input.dataset.kind === "int") value = Number.parseInt(input.value, 10);
    else {
      try {
        value = JSON.parse(input.value);
      } catch {
        throw Object.assign(new Error(_("option {name} is not valid JSON", { name })), { code: "form/invalid" });
      }
    }
    if (JSON.stringify(value) !== input.dataset.default) options[name] = value;
  }
  return options;
}

async function init() {
  try {
    const data = await api.rulesets();
    rulesets = Array.isArray(data) ? data : data.rulesets || [];
  } catch (err) {
    showError(err, _("Loading the rulesets"));
    return;
  }
  const box = document.getElementById("ruleset-choices");
  // the server rendered the same choices (the form keeps its size from the first paint): the one chosen stays chosen
  const picked = box.querySelector("input[name=ruleset]:checked");
  const chosen = rulesets.some((r) => picked && r.name === picked.value) ? picked.value : rulesets[0] && rulesets[0].name;
  box.replaceChildren(...rulesets.map((r) => el("label", { class: "choice" },
    el("input", { type: "radio", name: "ruleset", value: r.name, checked: r.name === chosen,
      onchange: () => chooseRuleset(r.name) }),
    ` ${gameName(r.name)} `, el("small", {}, _("({min}–{max} players)", { min: r.min_players ?? "?", max: r.max_players ?? "?" })))));
  if (rulesets.length) chooseRuleset(chosen);
}

document.getElementById("organiser").append(...listKeys().map((k) => el("option", { value: k.public }, k.name)));
document.getElementById("add-seat").addEventListener("click", addSeat);
document.getElementById("remove-seat").addEventListener("click", () => {
  if (seatsList.children.length > limits().min) seatsList.lastElementChild.remove();
  renumber();
});

// "Play against the computer": the last seat becomes the house bot's, declared a bot ("bot": true).
document.getElementById("house-bot").addEventListener("click", () => {
  const li = seatsList.lastElementChild;
  if (!li || !houseBotKey) return;
  li.querySelector(".seat-name").value = "Computer";
  li.querySelector(".seat-key").value = houseBotKey;
  li.querySelector(".seat-mine").value = "";
  li.querySelector(".seat-kind").value = "pasted";
  li.dataset.kind = "pasted";
});
document.getElementById("house-bot").hidden = !houseBotKey; // no house bot here: no option

async function creatorKey(seats, kinds) {
  const mine = seats.map((s, i) => (kinds[i] === "mine" || kinds[i] === "pasted" ? findKey(s.key) : null)).find(Boolean);
  return mine || listKeys()[0] || generateKey(_("my key"));
}

/** After creating a game with seats left open: the invitation links and join links, and the way to the game. */
async function showCreated(id) {
  const gameUrl = `${WEB}games/${encodeURIComponent(id)}`;
  const panel = seatOffersPanel({ section: document.getElementById("seat-offers"), gameId: id, manage: false });
  await panel.render(await api.game(id));
  document.getElementById("go-to-game").href = gameUrl;
  document.getElementById("new-form").hidden = true;
  const box = document.getElementById("created");
  box.hidden = false;
  document.getElementById("created-h").focus();
}

document.getElementById("new-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const status = document.getElementById("create-status");
  const rows = [...seatsList.children];
  const kinds = rows.map((li) => li.dataset.kind || "pasted");
  const seats = rows.map((li, i) => (kinds[i] === "open" ? { open: true } : kinds[i] === "invite" ? { invite: "" } : {
    name: li.querySelector(".seat-name").value.trim().normalize("NFC"), // the form the referee stores (and an organiser signs)
    key: li.querySelector(".seat-key").value.trim(),
  })).map((s) => (houseBotKey && s.key === houseBotKey ? { ...s, bot: true } : s));
  const missing = seats.flatMap((s, i) => ("key" in s ? [!s.name && _("player {n} has no name", { n: i + 1 }),
    !s.key && _("player {n} has no public key", { n: i + 1 })] : [])).filter(Boolean);
  if (!current) missing.push(_("choose a ruleset"));
  if (missing.length) {
    showError({ code: "form/incomplete", message: missing.join("; ") }, _("The game cannot be created yet"));
    return;
  }
  let options;
  try {
    options = readOptions();
    const timeControl = readTimeControl();
    if (timeControl) options.time_control = timeControl;
  } catch (err) {
    showError(err, _("Options"));
    return;
  }
  status.textContent = _("Creating…");
  try {
    // An invited seat gets an invitation key made here: its public key goes into the body, its seed only into the
    // link's fragment (seat-offers.js keeps it in this browser for the creator's pages).
    const seeds = {};
    for (const [i, seat] of seats.entries()) {
      if (!("invite" in seat)) continue;
      const pair = await makeKeyPair("invitation");
      seat.invite = pair.public;
      seeds[i] = pair.private;
    }
    const body = { ruleset: current.name, seats, options };
    const organiser = listKeys().find((k) => k.public === document.getElementById("organiser").value);
    const offered = kinds.some((k) => k === "invite" || k === "open");
    // A game with a seat left open is created by a signed request: the organiser's, else the creator's (a key of this
    // browser: the first seat's of this browser, else any, else a new one).
    const signer = organiser || (offered ? await creatorKey(seats, kinds) : null);
    if (signer) {
      // {v: 1, ctx: "referee/create", ...body} is signed; the nonce keeps two equal requests apart.
      body.nonce = entropy();
      body[organiser ? "organiser" : "creator"] = { key: signer.public,
        sig: await signEnvelope(signer, { v: 1, ctx: "referee/create", ...body }) };
    }
    const created = await api.create(body);
    const id = created.id || created.game;
    status.textContent = _("Created {id}.", { id });
    if (!offered) {
      window.location.assign(`${WEB}games/${encodeURIComponent(id)}`);
      return;
    }
    keepInvitations(id, seeds);
    await showCreated(id);
  } catch (err) {
    status.textContent = "";
    showError(err, _("The referee refused the game"));
  }
});

initTimeControlForm();
adoptRows(seatsList); // the first two seats, rendered by the server
renumber();
init();
