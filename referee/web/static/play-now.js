// "Play now" on the lobby (issue 36, item 3): a game, a player count and a clock; the button takes a seat in the
// oldest open game that fits (GET /games?open=true: the same ruleset, player count and clock, default options, not
// created by nor seating a key of this browser) through its join page, or else creates one with the other seats
// open to anyone, signed by a key of this browser (made here if there is none), and shows its page, which redraws
// when someone takes a seat.

import { api } from "./api.js";
import { entropy, findKey, generateKey, listKeys, signEnvelope } from "./keys.js";
import { gameName } from "./game-names.js";
import { noteNewKey } from "./seat-offers.js";
import { clearErrors, el, showError } from "./ui.js";
import { _ } from "./i18n.js";

const WEB = document.body.dataset.web || "/play/";
const DAY = 86400;
// The clocks of the new-game form's defaults (templates/web/_time_control.html): none, 3 days a move, a bank.
const CLOCKS = {
  none: null,
  per_move: { kind: "per_move", per_move: 3 * DAY, vacation: 7 * DAY, on_timeout: "auto_move", max_auto_moves: 3 },
  bank: { kind: "bank", initial: 10 * DAY, increment: DAY, max: 20 * DAY, vacation: 7 * DAY, on_timeout: "auto_move",
    max_auto_moves: 3 },
};

const form = document.getElementById("play-now");
const rulesetChoice = document.getElementById("pn-ruleset");
const countChoice = document.getElementById("pn-players");
const stateLine = document.getElementById("pn-state");
let rulesets = [];

/** Whether a game's resolved clock is the chosen one (every field the choice names). */
function sameClock(tc, wanted) {
  if (!wanted) return !tc || tc.kind === "none";
  return Boolean(tc) && Object.entries(wanted).every(([k, v]) => tc[k] === v);
}

function fits(game, ruleset, count, clock) {
  const name = typeof game.ruleset === "object" && game.ruleset ? game.ruleset.name : game.ruleset;
  const options = Object.keys(game.options || {}).filter((k) => k !== "time_control");
  return name === ruleset && (game.seats || []).length === count && sameClock(game.time_control, clock)
    && !options.length && !(game.creator && findKey(game.creator.key))
    && !(game.seats || []).some((s) => s && s.key && findKey(s.key));
}

async function oldestFitting(ruleset, count, clock) {
  for (let offset = 0; offset !== null && offset !== undefined;) {
    const page = await api.openGames(offset, 50);
    const found = (page.games || []).find((g) => fits(g, ruleset, count, clock));
    if (found) return found.game || found.id;
    offset = page.next;
  }
  return null;
}

function chooseRuleset() {
  const r = rulesets.find((x) => x.name === rulesetChoice.value);
  const min = (r && r.min_players) || 2;
  const max = (r && r.max_players) || min;
  countChoice.replaceChildren(...Array.from({ length: max - min + 1 }, (_x, i) => el("option",
    { value: String(min + i) }, String(min + i))));
}

async function init() {
  const data = await api.rulesets();
  rulesets = Array.isArray(data) ? data : data.rulesets || [];
  rulesetChoice.replaceChildren(...rulesets.map((r) => el("option", { value: r.name }, gameName(r.name))));
  rulesetChoice.addEventListener("change", chooseRuleset);
  chooseRuleset();
  const name = document.getElementById("pn-name");
  if (!name.value && listKeys().length) name.value = listKeys()[0].name || "";
  form.dataset.ready = "true";
}

async function create(ruleset, count, clock, name) {
  const had = listKeys()[0] || null;
  const key = had || await generateKey(name);
  const body = { ruleset, seats: [{ name, key: key.public }, ...Array.from({ length: count - 1 }, () => ({ open: true }))],
    options: clock ? { time_control: clock } : {}, nonce: entropy() };
  body.creator = { key: key.public, sig: await signEnvelope(key, { v: 1, ctx: "referee/create", ...body }) };
  const created = await api.create(body);
  const id = created.game || created.id;
  if (!had) noteNewKey(id, key.public);
  return id;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const name = document.getElementById("pn-name").value.trim().normalize("NFC");
  if (!name) {
    showError({ code: "form/incomplete", message: _("Your name, please: the other players see it.") }, _("Play now"));
    return;
  }
  const ruleset = rulesetChoice.value;
  const count = Number(countChoice.value);
  const clock = CLOCKS[document.getElementById("pn-clock").value] || null;
  const button = document.getElementById("pn-go");
  button.disabled = true;
  stateLine.textContent = _("Looking for an open game…");
  try {
    const found = await oldestFitting(ruleset, count, clock);
    if (found) {
      window.location.assign(`${WEB}join/${encodeURIComponent(found)}`);
      return;
    }
    stateLine.textContent = _("No open game fits: opening one…");
    const id = await create(ruleset, count, clock, name);
    window.location.assign(`${WEB}games/${encodeURIComponent(id)}`);
  } catch (err) {
    button.disabled = false;
    stateLine.textContent = "";
    showError(err, _("Play now"), { reveal: true });
  }
});

init().catch((err) => showError(err, _("Loading the rulesets")));
