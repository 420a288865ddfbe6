// A tournament's page: what it is, its players (with Join / Withdraw for this browser's keys), the standings
// with every tie-break value, a player's path, the rounds with their tables and byes, the crosstable, the
// points and the tie-break chain. Everything comes from GET /tournaments/<id>; joins and withdrawals are
// signed here (Ed25519 over RFC 8785, like moves) and posted to /join and /withdraw.

import { api, ApiError } from "../shared/api.js";
import { gameName } from "../games/game-names.js";
import { entropy, findKey, listKeys, signEnvelope } from "../shared/keys.js";
import { TIE_BREAKS, crosstable, formatText, ordinal, playerPath, show, tieBreakBetter, tieBreakName } from "./tournament-model.js";
import { clearErrors, copyField, el, shortKey, showError, statusWord } from "../shared/ui.js";
import { _, LANG } from "../shared/i18n.js";

const METHODS = { provisional: _("provisional"), organiser: _("organiser"), forfeit: _("forfeit") };

const WEB = document.body.dataset.web || "/play/";
const API = document.body.dataset.api || "";
const root = document.getElementById("tournament");
const tournamentId = root.dataset.tournament;
// A tournament changes slowly (a finished game, a join): a few times slower than a game page polls.
const POLL_MS = Math.max(1000, 4 * (Number(root.dataset.pollMs) || 1500));
// A crosstable grows with the square of the players: beyond this many, the players' paths say whom each met.
const CROSSTABLE_MAX = 64;
let state = null;
let names = new Map();
let selected = null;
let busy = false;

// An invitation's seed exists only in the organiser's browser and in the link's fragment (the server never has it):
// the new-tournament form keeps it here, by tournament, for this page to show the link.
const INVITATIONS = "referee.tournament-invitations.v1";

function invitationSeed() {
  try {
    const kept = JSON.parse(localStorage.getItem(INVITATIONS) || "{}");
    return (kept && typeof kept[tournamentId] === "string" && kept[tournamentId]) || "";
  } catch {
    return "";
  }
}

function joinLink(seed = "") {
  return new URL(`${WEB}tournaments/${encodeURIComponent(tournamentId)}/join${seed ? `#${seed}` : ""}`, window.location.href).href;
}

function linkRow(label, link) {
  const [input, copy, said] = copyField(label, link, "t-invite-link");
  return el("p", { class: "invite-row" }, el("strong", {}, label), " ", input, " ", copy, " ", said);
}

/** The open registration (CONTRACT section 14): how many joined, when it closes, the Join button, the invitation
 * link for the organiser's browser, and the organiser's "Start now". */
function registrationPanel() {
  const reg = state.registration;
  if (!reg) return [];
  const joined = (state.players || []).filter((p) => p.joined).length;
  const parts = [el("p", { class: "hint", id: "t-registration" },
    reg.invite ? _("Registration by invitation link.") : _("Open registration: anyone may join."), " ",
    state.max_players ? _("{n} of at most {max} joined.", { n: joined, max: state.max_players }) : _("{n} joined.", { n: joined }), " ",
    state.registration_open
      ? (state.closes ? _("It closes at {time}; round 1 is paired then, when it is full, or when the organiser starts it.", { time: when(state.closes) })
        : _("Round 1 is paired when it is full or when the organiser starts it."))
      : _("The registration has closed."))];
  if (!state.registration_open) return parts;
  const seed = invitationSeed();
  const actions = [];
  if (reg.open || seed) {
    actions.push(el("a", { class: "button primary", id: "t-join-open", href: joinLink(seed) }, _("Join this tournament")));
  }
  const organiser = state.organiser && findKey(state.organiser);
  if (organiser) {
    actions.push(el("button", { type: "button", id: "t-start", disabled: busy, onclick: () => sendStart(organiser) }, _("Start now")));
  }
  if (seed) parts.push(linkRow(_("Invitation link"), joinLink(seed)),
    el("p", { class: "hint" }, _("Send the link to the players you invite. It holds the invitation's key after the #, which never reaches the server.")));
  if (actions.length) parts.push(el("p", { class: "inline" }, actions));
  return parts;
}

function nowIso() {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return el("time", { datetime: iso, title: iso }, Number.isNaN(d.getTime()) ? iso : d.toLocaleString(LANG === "en" ? undefined : LANG));
}

function duration(seconds) {
  if (!seconds) return _("none");
  const days = Math.floor(seconds / 86400);
  const hours = Math.floor((seconds % 86400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  return [days && _("{n} d", { n: days }), hours && _("{n} h", { n: hours }), minutes && _("{n} min", { n: minutes }),
    rest && _("{n} s", { n: rest })].filter(Boolean).join(" ");
}

function clockText(tc) {
  const main = tc.kind === "per_move" ? _("time per move {time}", { time: duration(tc.per_move) })
    : tc.kind === "bank" ? _("time bank {initial}, + {increment} a move, at most {max}", { initial: duration(tc.initial),
      increment: duration(tc.increment), max: duration(tc.max) })
      : JSON.stringify(tc);
  const timeout = tc.on_timeout === "forfeit" ? _("a timeout forfeits")
    : tc.on_timeout ? _("a timeout plays a default move (forfeit after {n})", { n: tc.max_auto_moves }) : "";
  return [main, tc.vacation ? _("vacation {time}", { time: duration(tc.vacation) }) : "", timeout].filter(Boolean).join("; ");
}

function nameOf(key) {
  return names.get(key) || shortKey(key);
}

function nameSpan(key) {
  return el("span", { class: "name", title: nameOf(key) }, nameOf(key));
}

/** A name that opens the player's path. */
function playerButton(key) {
  return el("button", { type: "button", class: "link player-link", dataset: { key }, title: _("{name}: path", { name: nameOf(key) }),
    "aria-label": _("Show the path of {name}", { name: nameOf(key) }), onclick: () => choosePlayer(key, true) }, nameSpan(key));
}

function gameLink(game) {
  return el("a", { class: "mono", href: `${WEB}games/${encodeURIComponent(game)}` }, game);
}

function resultText(table) {
  const result = table.result;
  if (!result) return _("playing");
  const order = table.players.map((k, i) => i).sort((a, b) => result.ranks[a] - result.ranks[b]);
  const parts = order.map((i) => `${ordinal(result.ranks[i])} ${nameOf(table.players[i])}` +
    (result.scores && result.scores[i] !== null && result.scores[i] !== undefined ? ` (${result.scores[i]})` : ""));
  return parts.join(", ") + (result.method && result.method !== "played" ? ` — ${_("adjudicated ({method})", { method: METHODS[result.method] || result.method })}` : "");
}

// -- sections ----------------------------------------------------------------------------------------

function renderSummary() {
  const status = document.getElementById("t-status");
  status.textContent = state.status === "cancelled" ? _("cancelled") : statusWord(state.status);
  status.className = `status status-${state.status}`;
  const rows = [
    [_("Game"), `${gameName(state.ruleset && state.ruleset.name)}${state.ruleset && state.ruleset.version ? ` (${_("engine {version}", { version: state.ruleset.version })})` : ""}`],
    [_("Format"), formatText(state.format)],
    [_("Round deadline"), duration(state.round_deadline)],
    [_("Adjudication at a deadline"), state.adjudication === "organiser" ? _("the organiser's signed decision") : _("the engine's provisional result")],
    [_("Organiser"), state.organiser ? el("span", { class: "mono", title: state.organiser }, shortKey(state.organiser)) : _("none")],
    [_("Created"), when(state.created_at)],
    [_("Log"), [`${_("{n} entries, head", { n: state.seq })} `, el("code", { class: "hash" }, state.head)]],
    [_("Seed commitment"), el("code", { class: "hash" }, state.commitment || "")],
  ];
  const tc = state.options && state.options.time_control;
  if (tc) rows.splice(3, 0, [_("Games' clock"), clockText(tc)]);
  document.getElementById("t-summary").replaceChildren(el("dl", { class: "facts" },
    rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
}

function renderPlayers() {
  const mine = new Map(listKeys().map((k) => [k.public, k]));
  const list = document.getElementById("t-player-list");
  list.replaceChildren(...(state.players || []).map((p) => el("li", { dataset: { key: p.key, joined: String(p.joined) } },
    playerButton(p.key), p.bot ? [" ", el("span", { class: "bot-mark", title: _("played by a program") }, _("bot"))] : "",
    " ", el("span", { class: "mono muted", title: p.key }, shortKey(p.key)), " ",
    p.withdrawn ? el("span", { class: "badge badge-forfeited" }, _("withdrawn"))
      : el("span", { class: p.joined ? "joined" : "muted" }, p.joined ? _("joined") : _("not joined yet")),
    mine.has(p.key) ? el("span", { class: "muted" }, ` (${_("this browser")})`) : null)));
  const actions = [];
  for (const p of state.players || []) {
    const key = mine.get(p.key);
    if (!key) continue;
    if (state.status === "waiting" && !p.joined) {
      actions.push(el("button", { type: "button", class: "primary join", dataset: { key: p.key }, disabled: busy,
        onclick: () => sendJoin(key) }, _("Join as {name}", { name: p.name })));
    } else if (state.status === "active" && p.joined && !p.withdrawn) {
      actions.push(el("button", { type: "button", class: "withdraw", dataset: { key: p.key }, disabled: busy,
        onclick: () => sendWithdraw(key, p.name) }, _("Withdraw {name}", { name: p.name })));
    }
  }
  const waiting = (state.players || []).filter((p) => !p.joined).length;
  const note = state.status === "waiting" && !state.registration
    ? el("p", { class: "hint" }, _("{n} of {total} players still to join; round 1 is paired when everybody has joined.",
      { n: waiting, total: (state.players || []).length }))
    : null;
  document.getElementById("t-join").replaceChildren(...[note, ...registrationPanel(),
    actions.length ? el("p", { class: "inline" }, actions) : null].filter(Boolean));
}

function renderStandings() {
  const chain = state.tie_breaks || [];
  const box = document.getElementById("t-standings");
  if (!(state.standings || []).length) {
    box.replaceChildren(el("p", { class: "hint" }, _("No standings yet.")));
    return;
  }
  box.replaceChildren(el("table", { class: "standings stack-on-phone" },
    el("caption", { class: "sr-only" }, _("Standings: rank, name, points and every tie-break value")),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, _("Rank")), el("th", { scope: "col" }, _("Player")),
      el("th", { scope: "col" }, _("Points")),
      chain.map((id) => el("th", { scope: "col", title: (TIE_BREAKS[id] || [])[1] || id, dataset: { tieBreak: id } }, tieBreakName(id))))),
    el("tbody", {}, state.standings.map((row) => el("tr", { dataset: { key: row.key, rank: String(row.rank) },
      class: selected === row.key ? "selected" : null },
    el("td", { class: "rank", dataset: { label: _("Rank") } }, String(row.rank)),
    el("td", { dataset: { label: _("Player") } }, playerButton(row.key)),
    el("td", { class: "points", dataset: { label: _("Points") } }, show(row.points)),
    chain.map((id) => el("td", { dataset: { label: tieBreakName(id), tieBreak: id } }, show(row.tie_breaks[id]))))))));
  const links = [el("a", { href: `${API}/tournaments/${encodeURIComponent(tournamentId)}/standings.csv`, download: "" }, _("Standings as CSV")),
    " · ", el("a", { href: `${API}/tournaments/${encodeURIComponent(tournamentId)}/log` }, _("the log (JSON)"))];
  if (state.revealed) {
    links.push(" · ", el("a", { id: "t-certificate", href: `${API}/tournaments/${encodeURIComponent(tournamentId)}/export` },
      _("the certificate")), el("span", { class: "hint" }, ` (${_("check it offline with referee verify-tournament")})`));
  } else {
    links.push(el("span", { class: "hint" }, ` · ${_("the certificate comes when the tournament is finished and its seed revealed")}`));
  }
  document.getElementById("t-downloads").replaceChildren(...links);
}

function renderRounds() {
  const box = document.getElementById("t-rounds");
  if (!(state.rounds || []).length) {
    box.replaceChildren(el("p", { class: "hint" }, _("No round paired yet.")));
    return;
  }
  box.replaceChildren(...[...state.rounds].reverse().map((rnd) => el("section", { class: "round", dataset: { round: String(rnd.round) } },
    el("h3", {}, `${_("Round {n}", { n: rnd.round })} `, el("small", { class: rnd.closed ? "muted" : "status-active" }, rnd.closed ? _("closed") : _("open")),
      rnd.deadline && !rnd.closed ? el("small", { class: "muted" }, ` · ${_("deadline")} `, when(rnd.deadline)) : null),
    el("table", { class: "round-tables stack-on-phone" },
      el("caption", { class: "sr-only" }, _("Tables of round {n}", { n: rnd.round })),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, _("Table")), el("th", { scope: "col" }, _("Game")),
        el("th", { scope: "col" }, _("Players in seat order")), el("th", { scope: "col" }, _("Result")))),
      el("tbody", {}, rnd.tables.map((table, i) => el("tr", { dataset: { game: table.game } },
        el("td", { dataset: { label: _("Table") } }, String(i + 1)),
        el("td", { dataset: { label: _("Game") } }, gameLink(table.game)),
        el("td", { class: "players", dataset: { label: _("Players") } }, table.players.map((k, s) => [s ? ", " : "", playerButton(k)]).flat()),
        el("td", { class: table.result ? "result" : "result muted", dataset: { label: _("Result") } }, resultText(table)))))),
    (rnd.byes || []).length ? el("p", { class: "byes" }, `${_("Bye ({points} points)", { points: show(state.bye_points) })}: `,
      rnd.byes.map((k, i) => [i ? ", " : "", playerButton(k)]).flat()) : null)));
}

function renderCrosstable() {
  const box = document.getElementById("t-crosstable");
  const order = (state.standings || []).map((r) => r.key);
  if (!(state.rounds || []).length || !order.length) {
    box.replaceChildren(el("p", { class: "hint" }, _("Nobody has met yet.")));
    return;
  }
  if (order.length > CROSSTABLE_MAX) {
    box.replaceChildren(el("p", { class: "hint" }, _("The crosstable is drawn for up to {max} players; this tournament has {n}: choose a player to see whom they met.",
      { max: CROSSTABLE_MAX, n: order.length })));
    return;
  }
  const meetings = crosstable(state);
  box.replaceChildren(el("div", { class: "scroll-x" }, el("table", { class: "crosstable stack-on-phone" },
    el("caption", { class: "sr-only" }, _("Crosstable: who met whom, with the result")),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, _("Player")),
      order.map((k, i) => el("th", { scope: "col", title: nameOf(k) }, `${i + 1}`)))),
    el("tbody", {}, order.map((a, i) => el("tr", { dataset: { key: a } },
      el("th", { scope: "row" }, `${i + 1}. `, playerButton(a)),
      order.map((b) => {
        if (a === b) return el("td", { class: "self", "aria-hidden": "true" }, "×");
        const met = (meetings[a] || {})[b] || [];
        if (!met.length) return el("td", { class: "unmet" });
        return el("td", { dataset: { label: `${_("vs")} ${nameOf(b)}`, opponent: b }, title: `${nameOf(a)}${_(" vs ")}${nameOf(b)}` },
          met.map((m, j) => [j ? " " : "", el("a", { href: `${WEB}games/${encodeURIComponent(m.game)}`, class: "meeting",
            title: `${_("round {n}", { n: m.round })}: ${m.game}` }, `r${m.round}${m.mark}`)]).flat());
      })))))));
}

function renderPath() {
  const section = document.getElementById("t-path");
  if (!selected || !names.has(selected)) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  section.dataset.key = selected;
  const row = (state.standings || []).find((r) => r.key === selected);
  const path = playerPath(state, selected);
  document.getElementById("t-path-title").textContent = `${nameOf(selected)}'s path`;
  const body = document.getElementById("t-path-body");
  body.replaceChildren(
    row ? el("p", {}, _("Rank {rank}, {points} points", { rank: row.rank, points: show(row.points) })) : null,
    path.length ? el("table", { class: "path stack-on-phone" },
      el("caption", { class: "sr-only" }, _("The games of {name}, round by round", { name: nameOf(selected) })),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, _("Round")), el("th", { scope: "col" }, _("Game")),
        el("th", { scope: "col" }, _("Table")), el("th", { scope: "col" }, _("Rank")), el("th", { scope: "col" }, _("Points")))),
      el("tbody", {}, path.map((step) => (step.bye
        ? el("tr", { dataset: { round: String(step.round) } }, el("td", { dataset: { label: _("Round") } }, String(step.round)),
          el("td", { dataset: { label: _("Game") } }, _("bye")), el("td", { dataset: { label: _("Table") } }, "—"),
          el("td", { dataset: { label: _("Rank") } }, "—"), el("td", { dataset: { label: _("Points") } }, step.points))
        : el("tr", { dataset: { round: String(step.round), game: step.game } },
          el("td", { dataset: { label: _("Round") } }, String(step.round)),
          el("td", { dataset: { label: _("Game") } }, gameLink(step.game)),
          el("td", { dataset: { label: _("Table") } }, step.players.map((k, s) => [s ? ", " : "",
            k === selected ? el("strong", {}, nameSpan(k)) : nameSpan(k)]).flat()),
          el("td", { dataset: { label: _("Rank") } }, step.result ? _("{rank} of {n}", { rank: ordinal(step.result.ranks[step.seat]), n: step.players.length }) : _("playing")),
          el("td", { dataset: { label: _("Points") } }, step.points ?? "—")))))) : el("p", { class: "hint" }, _("No games yet.")),
    el("p", {}, el("button", { type: "button", onclick: () => choosePlayer(null, false) }, _("Close the path"))));
}

function render() {
  names = new Map((state.players || []).map((p) => [p.key, p.name]));
  document.title = `${_("Tournament {id}", { id: tournamentId })} · ${_("the referee")}`;
  root.dataset.seq = String(state.seq);
  root.dataset.status = state.status;
  renderSummary();
  renderPlayers();
  renderStandings();
  renderPath();
  renderRounds();
  renderCrosstable();
  renderRules();
}

function renderRules() {
  const points = state.points || {};
  const sizes = Object.keys(points).map(Number).sort((a, b) => b - a);
  const most = Math.max(0, ...sizes);
  const ranks = Array.from({ length: most }, (_, i) => i + 1);
  document.getElementById("t-rules").replaceChildren(
    el("table", { class: "points-table" },
      el("caption", {}, _("Points by rank at each table size")),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, _("Table of")), ranks.map((r) => el("th", { scope: "col" }, ordinal(r))))),
      el("tbody", {}, sizes.map((n) => el("tr", { dataset: { size: String(n) } }, el("th", { scope: "row" }, String(n)),
        ranks.map((r) => el("td", {}, r <= n ? show(points[String(n)][r - 1]) : "")))))),
    el("p", {}, _("A bye: {points} points. A rank shared by several seats gives each the mean of the places they share.", { points: show(state.bye_points) })),
    el("p", {}, _("Ties are broken in this order:")),
    el("ol", { class: "tie-break-chain" }, (state.tie_breaks || []).map((id) => el("li", { dataset: { tieBreak: id } },
      el("strong", {}, tieBreakName(id)), ` — ${(TIE_BREAKS[id] || [null, id])[1]} (${_("{which} is better", { which: tieBreakBetter((TIE_BREAKS[id] || [null, null, "?"])[2]) })})`))));
}

function choosePlayer(key, scroll) {
  selected = key;
  history.replaceState(null, "", key ? `#player=${encodeURIComponent(key)}` : window.location.pathname);
  renderStandings();
  renderPath();
  if (scroll && key) document.getElementById("t-path").scrollIntoView({ block: "start" });
}

// -- signed submissions -------------------------------------------------------------------------------

async function signed(keyEntry, envelope) {
  return { envelope, sig: await signEnvelope(keyEntry, envelope) };
}

/** Post a submission signed for the log's current position; a 409 stale (the log moved on) is signed once
 * more for the new position: a join or a withdrawal means the same at any position. */
async function post(keyEntry, make, send) {
  let fresh = await api.tournament(tournamentId);
  try {
    return await send(tournamentId, await signed(keyEntry, make(fresh)));
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "submission/stale") throw err;
    fresh = await api.tournament(tournamentId);
    return send(tournamentId, await signed(keyEntry, make(fresh)));
  }
}

async function act(what, fn) {
  clearErrors();
  busy = true;
  renderPlayers();
  try {
    await fn();
  } catch (err) {
    showError(err, what, { reveal: true });
  } finally {
    busy = false;
    await load(true);
  }
}

function sendJoin(keyEntry) {
  return act(_("The join was refused"), () => post(keyEntry, (s) => ({ v: 1, ctx: "referee/join", tournament: tournamentId,
    key: keyEntry.public, seq: s.seq, prev: s.head, entropy: entropy(), at: nowIso() }), api.joinTournament));
}

function sendStart(organiser) {
  if (!window.confirm(_("Close the registration now and pair round 1 with the players who have joined?"))) return null;
  return act(_("The start was refused"), () => post(organiser, (s) => ({ v: 1, ctx: "referee/start", tournament: tournamentId,
    seq: s.seq, prev: s.head, at: nowIso() }), api.startTournament));
}

function sendWithdraw(keyEntry, name) {
  if (!window.confirm(_("Withdraw {name} from this tournament? {name} will be paired no more.", { name }))) return null;
  return act(_("The withdrawal was refused"), () => post(keyEntry, (s) => ({ v: 1, ctx: "referee/withdraw",
    tournament: tournamentId, key: keyEntry.public, seq: s.seq, prev: s.head, at: nowIso() }), api.withdrawTournament));
}

// -- loading -------------------------------------------------------------------------------------------

async function load(force = false) {
  try {
    const fresh = await api.tournament(tournamentId);
    if (force || !state || fresh.seq !== state.seq || fresh.status !== state.status) {
      state = fresh;
      render();
    }
  } catch (err) {
    if (!state) {
      document.getElementById("t-summary").replaceChildren(el("p", {}, "Could not load the tournament."));
      showError(err, _("Loading the tournament"));
    }
  } finally {
    root.setAttribute("aria-busy", "false");
  }
}

const fromHash = /^#player=(.+)$/.exec(window.location.hash);
if (fromHash) selected = decodeURIComponent(fromHash[1]);
load().then(() => {
  if (selected && names.has(selected)) document.getElementById("t-path").scrollIntoView({ block: "start" });
});
setInterval(() => {
  if (!busy) load();
}, POLL_MS);
