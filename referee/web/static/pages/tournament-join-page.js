// The tournament join page (/play/tournaments/<id>/join[#<seed>]): join a tournament's open registration (CONTRACT
// section 14) in one click, from a browser that may have no key yet — as the game join page (join-page.js) does for a
// seat. It shows the tournament, asks for a name, joins with a key this browser has (its newest by default: one key
// keeps a player's games and rating together) or makes one, signs the join envelope (with the name)
// and, for a registration by invitation, signs the same envelope with the invitation key whose 32-byte seed is the
// link's fragment (read here only: a browser never sends a fragment), then goes to the tournament's page. A closed or
// full registration, or a link that does not fit, is said in words.

import { api } from "../shared/api.js";
import { localTime } from "./clock.js";
import { entropy, entryOfSeed, findKey, listKeys, makeKeyPair, publicOfSeed, rememberKey, signEnvelope } from "../shared/keys.js";
import { createPasskeyKey, NoPrfError, passkeysAvailable } from "../shared/passkey.js";
import { gameName } from "../games/game-names.js";
import { formatText } from "./tournament-model.js";
import { clearErrors, el, nowIso, shortKey, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const WEB = document.body.dataset.web || "/play/";
const root = document.getElementById("tjoin");
const tournamentId = root.dataset.tournament;
const seed = decodeURIComponent(window.location.hash.slice(1));
const form = document.getElementById("tjoin-form");
const stateLine = document.getElementById("tjoin-state");
const pageUrl = `${WEB}tournaments/${encodeURIComponent(tournamentId)}`;
const keyChoice = document.getElementById("tjoin-key");
const nameInput = document.getElementById("tjoin-name");
let nameTyped = false; // a name typed by hand is kept whatever key is chosen

/** The keys of this browser to join with, the newest first, and a new one; the name follows the key chosen. */
function offerKeys() {
  const keys = listKeys().reverse();
  document.getElementById("tjoin-key-row").hidden = !keys.length;
  keyChoice.replaceChildren(...keys.map((k) => el("option", { value: k.public }, `${k.name || "—"} (${shortKey(k.public)})`)),
    el("option", { value: "" }, _("a new key made in this browser")));
  keyChoice.value = keys.length ? keys[0].public : "";
  onKeyChosen();
}

function onKeyChosen() {
  const chosen = keyChoice.value ? findKey(keyChoice.value) : null;
  document.getElementById("tjoin-new-hint").hidden = Boolean(chosen);
  document.getElementById("tjoin-key-hint").hidden = !chosen;
  document.getElementById("tjoin-passkey-row").hidden = Boolean(chosen) || !passkeysAvailable();
  if (!nameTyped) nameInput.value = chosen && chosen.name ? chosen.name : "";
}

keyChoice.addEventListener("change", onKeyChosen);
nameInput.addEventListener("input", () => { nameTyped = true; });

/** The words for a refusal of the referee's (its code never changes; its message may be English). */
function refusal(code) {
  return {
    "registration/closed": _("The registration of this tournament has closed."),
    "registration/full": _("This tournament is full."),
    "registration/bad_invite": _("This invitation link is not valid for this tournament: was it copied whole?"),
    "registration/name_taken": _("Another player of this tournament has this name: choose another."),
    "join/duplicate": _("This browser has joined this tournament already."),
  }[code] || null;
}

function say(text, state) {
  stateLine.textContent = text;
  root.dataset.state = state;
}

async function problemOf(t) {
  if (!t.registration) return { problem: _("This tournament has no open registration: its players are named by the organiser."), state: "listed" };
  if (!t.registration_open) return { problem: refusal("registration/closed"), state: "closed" };
  if ((t.players || []).some((p) => findKey(p.key))) return { problem: _("You have joined this tournament already."), state: "joined" };
  if (t.max_players && (t.players || []).length >= t.max_players) return { problem: refusal("registration/full"), state: "full" };
  if (t.registration.invite) {
    if (!seed) return { problem: _("This tournament is by invitation: open the link you were sent."), state: "no-invite" };
    let invite = null;
    try {
      invite = await publicOfSeed(seed);
    } catch {
      invite = null;
    }
    if (invite !== t.registration.invite) return { problem: refusal("registration/bad_invite"), state: "bad-invite" };
  }
  return null;
}

async function show() {
  const t = await api.tournament(tournamentId);
  const ruleset = t.ruleset && t.ruleset.name;
  document.getElementById("tjoin-what").textContent = `${gameName(ruleset)}, ${formatText(t.format)}`;
  const joined = (t.players || []).length;
  document.getElementById("tjoin-players").textContent = t.max_players
    ? _("{n} of at most {max} joined", { n: joined, max: t.max_players }) : _("{n} joined", { n: joined });
  document.getElementById("tjoin-closes").textContent = t.closes ? localTime(t.closes) : _("when the organiser starts it");
  const problem = await problemOf(t);
  form.hidden = Boolean(problem);
  if (problem) {
    say(problem.problem, problem.state);
    return;
  }
  say(_("A place in this tournament of {game} is free for you.", { game: gameName(ruleset) }), "open");
  if (!keyChoice.options.length) offerKeys();
  if (!nameInput.value) nameInput.focus();
}

/** Sign the join for the log's position now; a stale position (someone joined first) is signed again once. */
async function join(key, name) {
  for (let attempt = 0; ; attempt += 1) {
    const t = await api.tournament(tournamentId);
    const envelope = { v: 1, ctx: "referee/join", tournament: tournamentId, key: key.public, name, entropy: entropy(),
      seq: t.seq, prev: t.head, at: nowIso() };
    const body = { envelope, sig: await signEnvelope(key, envelope) };
    if (seed) body.invite_sig = await signEnvelope({ private: seed }, envelope);
    try {
      return await api.joinTournament(tournamentId, body);
    } catch (err) {
      if (err.code !== "submission/stale" || attempt > 0) throw err;
    }
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const name = nameInput.value.trim().normalize("NFC");
  if (!name) {
    showError({ code: "form/incomplete", message: _("Your name, please: the other players see it.") }, _("You have not joined yet"));
    return;
  }
  const button = document.getElementById("tjoin-take");
  button.disabled = true;
  const chosen = keyChoice.value ? findKey(keyChoice.value) : null;
  say(chosen ? _("Joining…") : _("Making your key and joining…"), "joining");
  try {
    const withPasskey = !chosen && passkeysAvailable() && document.getElementById("tjoin-passkey").checked;
    let key = chosen;
    if (withPasskey) {
      const made = await createPasskeyKey(name);
      key = await entryOfSeed(made.name, made.seed, { passkey: true });
    }
    key = key || await makeKeyPair(name); // a new one kept in this browser only once the join is taken
    await join(key, name);
    if (!chosen) rememberKey(key);
    window.location.assign(pageUrl);
  } catch (err) {
    button.disabled = false;
    if (err instanceof NoPrfError || err.code === "passkey/cancelled") {
      say(`${err.message} ${_("Untick the passkey to make the key in this browser instead.")}`, "open");
      return;
    }
    const words = refusal(err.code);
    showError(words ? { ...err, code: err.code, message: words } : err, _("You have not joined"), { reveal: true });
    show().catch(() => {});
  }
});

show().then(() => {
  root.dataset.loaded = "true";
}).catch((err) => {
  say(err.code === "tournament/not_found" ? _("There is no such tournament here: is the link complete?") : _("The tournament could not be loaded."), "error");
  showError(err, _("Loading the tournament"));
  root.dataset.loaded = "true";
});
