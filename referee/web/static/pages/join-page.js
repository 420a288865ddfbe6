// The join page (/play/join/<game>[#<seed>]): take a seat left open (CONTRACT section 14) in one click, from a
// browser that may have no key yet. It shows the game (its game, players and clock), asks for a name, makes a key in
// this browser, signs the seat's envelope with it and, for an invitation, with the invitation key whose 32-byte seed is
// the link's fragment (read here only: a browser never sends a fragment), then goes to the game's page, which says
// once how to keep the key (seat-offers.js). A taken seat, a cancelled game or a lapsed invitation is said in words.

import { api } from "../shared/api.js";
import { describeTimeControl, localTime } from "./clock.js";
import { entryOfSeed, findKey, makeKeyPair, publicOfSeed, rememberKey } from "../shared/keys.js";
import { createPasskeyKey, NoPrfError, passkeysAvailable } from "../shared/passkey.js";
import { gameName } from "../games/game-names.js";
import { noteNewKey, takeSeat } from "./seat-offers.js";
import { clearErrors, el, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const WEB = document.body.dataset.web || "/play/";
const root = document.getElementById("join");
const gameId = root.dataset.game;
const seed = decodeURIComponent(window.location.hash.slice(1));
const form = document.getElementById("join-form");
const stateLine = document.getElementById("join-state");
const gameUrl = `${WEB}games/${encodeURIComponent(gameId)}`;

let created = null; // the log's `created` entry: the invitation keys, the clock, accept_by
let seat = -1; // the seat this page offers

/** The words for a refusal of the referee's (its code never changes; its message may be English). */
function refusal(code) {
  return {
    "seat/taken": _("This seat is taken: someone else opened the link first."),
    "game/cancelled": _("This game was cancelled by its creator."),
    "game/expired": _("This invitation has lapsed: the seats were not all taken in time."),
    "game/not_waiting": _("This game has started: no seat is free any more."),
    "seat/bad_invite": _("This invitation link is not valid for this game: was it copied whole?"),
    "seat/same_key": _("This browser already sits in this game."),
    "seat/name_taken": _("Another player of this game has this name: choose another."),
  }[code] || null;
}

function say(text, state) {
  stateLine.textContent = text;
  root.dataset.state = state;
}

function seatLine(s, i) {
  const n = i + 1;
  const who = s.key ? s.name || _("Seat {n}", { n }) : s.open === "invite" ? _("invited player") : _("open to anyone");
  const here = i === seat ? ` — ${_("your seat")}` : "";
  return el("li", { dataset: { seat: String(i) } }, el("strong", { class: "name", title: s.name || null }, who),
    ` (${_("seat {n}", { n })})${here}`);
}

/** Which seat this page offers: the invitation's (from the fragment's seed), else the first open to anyone. */
async function chooseSeat(game) {
  if (seed) {
    let invite = null;
    try {
      invite = await publicOfSeed(seed);
    } catch {
      return { problem: refusal("seat/bad_invite"), state: "bad-invite" };
    }
    const found = (created.seats || []).findIndex((s) => s && s.invite === invite);
    return found >= 0 ? { seat: found } : { problem: refusal("seat/bad_invite"), state: "bad-invite" };
  }
  const open = game.seats.findIndex((s) => s && s.open === "anyone" && !s.taken);
  if (open >= 0) return { seat: open };
  if (game.seats.some((s) => s && s.open === "anyone")) {
    return { problem: _("Every seat open to anyone is taken."), state: "taken" };
  }
  return { problem: _("This game's seats are by invitation: open the link you were sent."), state: "no-seat" };
}

function problemOf(game) {
  if (game.status === "cancelled") return { problem: refusal("game/cancelled"), state: "cancelled" };
  if (game.status === "expired") return { problem: refusal("game/expired"), state: "expired" };
  if (game.status !== "waiting") return { problem: refusal("game/not_waiting"), state: "started" };
  if (game.seats.some((s) => s && s.key && findKey(s.key))) return { problem: _("You already sit in this game."), state: "seated" };
  if (game.seats[seat] && (game.seats[seat].taken || game.seats[seat].key)) return { problem: refusal("seat/taken"), state: "taken" };
  if (created.accept_by && Date.parse(created.accept_by) <= Date.now()) {
    return { problem: _("This invitation lapsed on {time}.", { time: localTime(created.accept_by) }), state: "expired" };
  }
  return null;
}

async function show() {
  const [game, page] = await Promise.all([api.game(gameId), api.log(gameId, "?from=0&limit=1")]);
  created = (page.entries || [])[0] || {};
  const ruleset = typeof game.ruleset === "object" ? game.ruleset.name : game.ruleset;
  document.getElementById("join-game").textContent = gameName(ruleset);
  document.getElementById("join-clock").textContent = describeTimeControl(game.time_control || created.time_control);
  document.getElementById("join-by").textContent = created.accept_by ? localTime(created.accept_by) : _("no limit");
  const chosen = game.status === "waiting" ? await chooseSeat(game) : {};
  seat = chosen.seat ?? -1;
  document.getElementById("join-players").replaceChildren(...game.seats.map(seatLine));
  const problem = chosen.problem ? chosen : problemOf(game);
  form.hidden = Boolean(problem);
  document.getElementById("join-go").hidden = !problem || problem.state !== "seated";
  if (problem) {
    say(problem.problem, problem.state);
    return;
  }
  document.getElementById("join-title").textContent = _("Join {game} as seat {n}", { game: gameName(ruleset), n: seat + 1 });
  say(game.seats.length === 2 && game.seats[1 - seat].name
    ? _("{name} invites you to a game of {game}.", { name: game.seats[1 - seat].name, game: gameName(ruleset) })
    : _("A seat of this game of {game} is free for you.", { game: gameName(ruleset) }), "open");
  const name = document.getElementById("join-name");
  if (!name.value) name.focus();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const name = document.getElementById("join-name").value.trim().normalize("NFC");
  if (!name) {
    showError({ code: "form/incomplete", message: _("Your name, please: the other players see it.") }, _("The seat is not taken yet"));
    return;
  }
  const button = document.getElementById("join-take");
  button.disabled = true;
  const withPasskey = document.getElementById("join-passkey").checked;
  say(withPasskey ? _("Asking for a passkey, then taking the seat…") : _("Making your key and taking the seat…"), "taking");
  try {
    let key;
    if (withPasskey) {
      const made = await createPasskeyKey(name);
      key = await entryOfSeed(made.name, made.seed, { passkey: true });
    } else {
      key = await makeKeyPair(name); // kept in this browser only once the seat is taken
    }
    await takeSeat(gameId, seat, key, name, seed);
    rememberKey(key);
    if (!withPasskey) noteNewKey(gameId, key.public); // the game's page says once that only this browser holds it
    window.location.assign(gameUrl);
  } catch (err) {
    button.disabled = false;
    if (err instanceof NoPrfError || err.code === "passkey/cancelled") {
      say(`${err.message} ${_("Untick the passkey to make the key in this browser instead.")}`, "open");
      return;
    }
    const words = refusal(err.code);
    if (words) showError({ ...err, code: err.code, message: words }, _("The seat was not taken"), { reveal: true });
    else showError(err, _("The seat was not taken"), { reveal: true });
    show().catch(() => {});
  }
});

document.getElementById("join-passkey-row").hidden = !passkeysAvailable();

show().then(() => {
  root.dataset.loaded = "true";
}).catch((err) => {
  say(err.code === "game/not_found" ? _("There is no such game here: is the link complete?") : _("The game could not be loaded."), "error");
  showError(err, _("Loading the game"));
  root.dataset.loaded = "true";
});
