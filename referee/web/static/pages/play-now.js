// "Play now" on the lobby (issue 36, item 3): a game, a player count and a clock; one click takes a seat in the
// oldest open game that fits (GET /games?open=true: the same ruleset, player count and clock, default options, not
// created by nor seating a key of this browser) — signed here by a key of this browser (made here if there is none)
// under the name beside the button — and shows the game's page; or, when none fits, creates one with the other seats
// open to anyone, signed by that key, and shows its page, which redraws when someone takes a seat.
//
// Two browsers pressing at once both find nothing and both create a game; they meet in one without any lock on the
// server: after creating, the page reads the open games again for a moment (SETTLE_MS) and, while nobody has taken a
// seat of its own game, when the first game of the list that fits (the list's order: created time, then id — the
// same for every reader) is someone else's, it cancels its own (a cancel signed for the log's position: a seat taken
// meanwhile makes it stale, and then it stays) and takes that seat. Of two such games only the newer moves; a take
// that loses its seat (seat/taken, game/cancelled…) looks again from the start.

import { api } from "../shared/api.js";
import { entropy, findKey, generateKey, listKeys, signEnvelope } from "../shared/keys.js";
import { gameName } from "../games/game-names.js";
import { cancelGame, noteNewKey, takeSeat } from "./seat-offers.js";
import { clearErrors, el, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const WEB = document.body.dataset.web || "/play/";
const DAY = 86400;
/** after creating a game, when to read the open games again (ms after the creation): see the top of this file */
const SETTLE_MS = [0, 500, 1500];
/** refusals of a take that mean "that seat went to someone else": look again */
const LOST = new Set(["seat/taken", "game/cancelled", "game/expired", "game/not_waiting", "submission/stale",
  "game/not_found"]);
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

/** The open games that fit, in the list's order (oldest first), and `own` (a game of this browser) where it is. */
async function fitting(ruleset, count, clock, own = null) {
  const out = [];
  for (let offset = 0; offset !== null && offset !== undefined;) {
    const page = await api.openGames(offset, 50);
    out.push(...(page.games || []).filter((g) => (g.game || g.id) === own || fits(g, ruleset, count, clock)));
    offset = page.next;
  }
  return out;
}

function openSeat(game) {
  return (game.seats || []).findIndex((s) => s && s.open === "anyone" && !s.taken && !s.key);
}

function goTo(id) {
  window.location.assign(`${WEB}games/${encodeURIComponent(id)}`);
}

/** Take the open seat of `listed` (an entry of the open games): true when taken, false when it went to another. */
async function take(listed, key, name) {
  const id = listed.game || listed.id;
  const seat = openSeat(listed);
  if (seat < 0) return false;
  try {
    await takeSeat(id, seat, key, name);
    return true;
  } catch (err) {
    if (LOST.has(err.code)) return false;
    throw err;
  }
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

async function create(ruleset, count, clock, name, key) {
  const body = { ruleset, seats: [{ name, key: key.public }, ...Array.from({ length: count - 1 }, () => ({ open: true }))],
    options: clock ? { time_control: clock } : {}, nonce: entropy() };
  body.creator = { key: key.public, sig: await signEnvelope(key, { v: 1, ctx: "referee/create", ...body }) };
  const created = await api.create(body);
  return created.game || created.id;
}

function sleep(ms) {
  return new Promise((resolve) => { setTimeout(resolve, ms); });
}

/** After creating `own`: the game to go to — `own`, or an older fitting game of someone else whose seat it took
 * (`own` cancelled then); null when it cancelled `own` but lost the other seat (look again). */
async function settle(own, key, name, want) {
  const started = Date.now();
  for (const at of SETTLE_MS) {
    await sleep(Math.max(0, started + at - Date.now()));
    const list = await fitting(...want, own);
    const mine = list.find((g) => (g.game || g.id) === own);
    if (!mine || (mine.seats || []).some((s, i) => i > 0 && s && s.taken)) return own; // someone sat down: stay
    const first = list[0];
    if ((first.game || first.id) === own) continue;
    try {
      await cancelGame(own, key);
    } catch (err) {
      if (LOST.has(err.code)) return own; // a seat was taken meanwhile (the cancel's position is stale): stay
      throw err;
    }
    return await take(first, key, name) ? first.game || first.id : null;
  }
  return own;
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
  const want = [ruleset, count, clock];
  button.disabled = true;
  stateLine.textContent = _("Looking for an open game…");
  try {
    const had = listKeys()[0] || null;
    const key = had || await generateKey(name);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const list = await fitting(...want);
      let id = null;
      for (const listed of list.slice(0, 3)) {
        if (await take(listed, key, name)) {
          id = listed.game || listed.id;
          break;
        }
      }
      if (!id) {
        stateLine.textContent = _("No open game fits: opening one…");
        id = await settle(await create(ruleset, count, clock, name, key), key, name, want);
      }
      if (id) {
        if (!had) noteNewKey(id, key.public);
        goTo(id);
        return;
      }
    }
    throw new Error(_("No seat could be taken: please try again."));
  } catch (err) {
    button.disabled = false;
    stateLine.textContent = "";
    showError(err, _("Play now"), { reveal: true });
  }
});

init().catch((err) => showError(err, _("Loading the rulesets")));
