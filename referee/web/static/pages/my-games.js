// "My games": every game of the keys kept in this browser (keys.js), from GET /players/{key}/games (all pages
// of each key, merged when the browser holds several keys): the games waiting for me first (my seat to move,
// or my acceptance awaited), then by deadline (soonest first), then newest; the count of games waiting for me
// in the tab title: "(2) Lobby · …". Two views of the same rows: the lobby's "My games" section (the games
// waiting for me and a few others, with a link to all) and the page /play/me (every game, however many).

import { listKeys } from "../shared/keys.js";
import { el, formatWord, showError, statusWord } from "../shared/ui.js";
import { _, ngettext } from "../shared/i18n.js";
import { gameName } from "../games/game-names.js";
import { subscribe } from "../shared/live-hub.js";
import { notifyButton, turnNotice } from "../shared/attention.js";

const BASE_TITLE = document.title;
const ROOT = (document.body && document.body.dataset.api) || "";
const WEB = (document.body && document.body.dataset.web) || "/play/";
/** the page size asked of GET /players/{key}/games (its maximum) */
const PAGE = 100;
/** in the lobby's section: the games not waiting for me shown besides those waiting */
const LOBBY_OTHERS = 10;

/** My seats in `game` (indices of seats whose key is in this browser). */
export function mySeatsIn(game, keys) {
  return (game.seats || []).map((s, i) => (s && keys.has(s.key) ? i : -1)).filter((i) => i >= 0);
}

/** The seats of mine that `game` waits for: the seat to move, or seats whose acceptance is awaited. */
export function waitingFor(game, mine) {
  if (game.status === "active") return mine.filter((i) => i === game.to_move);
  if (game.status === "waiting") return mine.filter((i) => !(game.seats[i] && game.seats[i].accepted));
  return [];
}

function inWords(ms) {
  const s = Math.round(Math.abs(ms) / 1000);
  const text = s < 90 ? _("{n} s", { n: s }) : s < 5400 ? _("{n} min", { n: Math.round(s / 60) })
    : s < 172800 ? _("{n} h", { n: Math.round(s / 3600) }) : ngettext("{n} day", "{n} days", Math.round(s / 86400));
  return ms < 0 ? _("{time} ago", { time: text }) : _("in {time}", { time: text });
}

async function getJson(path) {
  const response = await fetch(ROOT + path, { headers: { Accept: "application/json" } });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error((data && data.error && data.error.message) || `HTTP ${response.status}`);
    error.code = data && data.error && data.error.code;
    throw error;
  }
  return data;
}

/** Every game of one key: all pages of GET /players/{key}/games. */
export async function gamesOfKey(key) {
  const out = [];
  let offset = 0;
  while (offset !== null && offset !== undefined) {
    const page = await getJson(`/players/${encodeURIComponent(key)}/games?offset=${offset}&limit=${PAGE}`);
    out.push(...(page.games || []));
    offset = page.next;
  }
  return out;
}

/** The API's order: your turn first, then by deadline (soonest; none last), then newest. */
export function compareRows(a, b) {
  const deadline = (r) => (r.deadline !== null ? r.deadline : Infinity);
  return (b.waiting.length > 0) - (a.waiting.length > 0) || deadline(a) - deadline(b)
    || (Date.parse(b.game.created_at) || 0) - (Date.parse(a.game.created_at) || 0);
}

/** Rows of the games of several keys, merged (a game where the browser holds two seats is one row). */
export function mergeRows(lists) {
  const byGame = new Map();
  for (const games of lists) {
    for (const game of games) {
      const known = byGame.get(game.game);
      if (known) {
        known.mine = [...new Set([...known.mine, ...game.my_seats])].sort((x, y) => x - y);
        known.your = known.your || game.your_turn;
        if (game.your_turn && game.deadline) known.game = { ...known.game, deadline: game.deadline };
      } else {
        byGame.set(game.game, { game, mine: [...game.my_seats], your: game.your_turn });
      }
    }
  }
  const rows = [...byGame.values()].map(({ game, mine, your }) => {
    const waiting = your ? waitingFor(game, mine) : [];
    const due = game.deadline ? Date.parse(game.deadline) : NaN;
    return { game, mine, waiting: your && !waiting.length ? mine : waiting, deadline: Number.isNaN(due) ? null : due };
  });
  rows.sort(compareRows);
  return rows;
}

let loading = null;
let lastRows = [];
let lastError = null;

/** Every game of this browser's keys, merged and sorted (one load at a time; the rows of the last load). */
export async function loadMyGames(keys = listKeys().map((k) => k.public)) {
  if (!loading) {
    loading = Promise.all([...new Set(keys)].map((key) => gamesOfKey(key)))
      .then((lists) => { lastRows = mergeRows(lists); lastError = null; return lastRows; })
      .catch((err) => { lastError = err; return lastRows; })
      .finally(() => { loading = null; });
  }
  return loading;
}

function ruleName(game) {
  const name = game.ruleset && typeof game.ruleset === "object" ? game.ruleset.name : game.ruleset;
  return gameName(name);
}

function whatNow(r) {
  if (r.waiting.length) return r.game.status === "waiting" ? _("your acceptance") : _("your move");
  if (r.game.status === "active") {
    const seat = r.game.seats[r.game.to_move];
    return seat ? _("{name} to move", { name: seat.name || _("seat {n}", { n: r.game.to_move + 1 }) }) : statusWord("active");
  }
  if (r.game.status === "waiting") return _("waiting for the others");
  return statusWord(r.game.status);
}

function offerText(game) {
  const offer = game.pending_offer;
  if (!offer) return "";
  const by = game.seats[offer.seat];
  const kinds = { draw: _("draw"), end: _("end"), abort: _("abort"), takeback: _("take-back"), take_back: _("take-back") };
  return _("{kind} offer by {name}", { kind: kinds[offer.kind] || offer.kind,
    name: (by && by.name) || _("seat {n}", { n: offer.seat + 1 }) });
}

function players(r) {
  return r.game.seats.map((s, i) => (r.mine.includes(i) ? `${s.name} ${_("(you)")}` : s.name)).join(_(" vs "));
}

function deadlineNode(r, now) {
  return r.deadline !== null
    ? el("span", { class: "deadline", title: new Date(r.deadline).toISOString() }, ` · ${_("deadline {when}", { when: inWords(r.deadline - now) })}`)
    : "";
}

function setTitle(count) {
  document.title = count ? `(${count}) ${BASE_TITLE}` : BASE_TITLE;
  turnNotice("my-games", count, ngettext("Your turn in {n} game", "Your turn in {n} games", count, { n: count }));
}

function listItem(r, now) {
  const id = r.game.game;
  const offer = offerText(r.game);
  return el("li", { dataset: { game: id, waiting: r.waiting.length ? "true" : "false" }, class: r.waiting.length ? "waiting-for-me" : "" },
    el("a", { class: "game-link", href: `${WEB}games/${encodeURIComponent(id)}`, title: _("Game {id}", { id }) },
      players(r)), ` · ${ruleName(r.game)} · `,
    el("strong", {}, whatNow(r)), deadlineNode(r, now), offer ? ` · ${offer}` : "");
}

/** Draw the lobby's "My games" section (created on first use) from `rows`, and set the tab title. */
function drawSection(rows, web) {
  let section = document.getElementById("my-games");
  if (!section) {
    section = el("section", { id: "my-games", "aria-labelledby": "my-games-h" });
    const lobby = document.getElementById("lobby");
    lobby.parentNode.insertBefore(section, lobby);
  }
  const count = rows.filter((r) => r.waiting.length).length;
  setTitle(count);
  section.dataset.waiting = String(count);
  section.dataset.total = String(rows.length);
  section.hidden = !rows.length;
  if (!rows.length) {
    section.replaceChildren();
    return;
  }
  const now = Date.now();
  const shown = rows.filter((r, i) => r.waiting.length || i < count + LOBBY_OTHERS);
  section.replaceChildren(
    el("h2", { id: "my-games-h" }, count ? _("My games · {n} waiting for me", { n: count }) : _("My games")),
    el("ul", { class: "my-games" }, ...shown.map((r) => listItem(r, now))),
    el("p", {}, el("a", { class: "all-my-games", href: `${web}me` },
      shown.length < rows.length ? _("All my games ({n}) →", { n: rows.length }) : _("My games page →"))));
}

/**
 * The lobby's "My games" section: called on each load of the lobby (the lobby's own `games` are not used:
 * the rows come from GET /players/{key}/games, every game of my keys). Draws the rows of the last load at
 * once, loads again, draws and follows them; returns the rows drawn now.
 */
export function renderMyGames(_games, web = WEB) {
  drawSection(lastRows, web);
  if (listKeys().length) {
    loadMyGames().then((rows) => {
      drawSection(rows, web);
      if (reloadLobby) followMyGames(rows, reloadLobby);
    });
  }
  return lastRows;
}

let subscription = null;
let pending = null;
let reloadLobby = null;

/**
 * Follow my games over the browser's one event stream (live-hub.js: every running game of this browser's
 * keys, and the lobby's new games): `reload()` on each notice (bursts coalesced), so "waiting for me" and the
 * title change as soon as the opponent moves, and a new game shows at once. The page's poll stays as the
 * fallback.
 */
export function followMyGames(_rows, reload) {
  reloadLobby = reload;
  if (subscription) return;
  const section = () => document.getElementById("my-games") || document.getElementById("all-my-games");
  subscription = subscribe({
    onState(state) {
      const s = section();
      if (s) s.dataset.live = state === "open" ? "sse" : "poll";
    },
    onNotice() {
      const s = section();
      if (s) s.dataset.liveEvents = String(Number(s.dataset.liveEvents || 0) + 1);
      clearTimeout(pending);
      pending = setTimeout(() => reloadLobby && reloadLobby(), 200);
    },
  });
}

// -- the page /play/me: every game of my keys in one table --------------------------------------------------

/** The game's id, folded into a details line as on the game page (a game is named by its players and its game). */
function detailsLine(id) {
  return el("details", { class: "details-line" }, el("summary", {}, _("Game details")),
    el("dl", { class: "facts" }, el("dt", {}, _("Game id")), el("dd", { class: "mono game-id" }, id)));
}

function tableRow(r, now) {
  const id = r.game.game;
  const offer = offerText(r.game);
  const last = r.game.last_move_at ? Date.parse(r.game.last_move_at) : NaN;
  return el("tr", { dataset: { game: id, yourTurn: r.waiting.length ? "true" : "false", status: r.game.status },
    class: r.waiting.length ? "waiting-for-me" : "" },
  el("td", { class: "players" }, el("a", { href: `${WEB}games/${encodeURIComponent(id)}`,
    "aria-label": `${players(r)} · ${ruleName(r.game)}` }, players(r)), detailsLine(id)),
  el("td", { dataset: { label: _("Game") } }, ruleName(r.game),
    r.game.tournament ? [" · ", el("a", { href: `${WEB}tournaments/${encodeURIComponent(r.game.tournament)}` }, _("tournament"))] : ""),
  el("td", { dataset: { label: _("Now") } }, el("strong", {}, whatNow(r))),
  el("td", { dataset: { label: _("Deadline") } }, r.deadline !== null
    ? el("span", { class: "deadline", title: new Date(r.deadline).toISOString() }, inWords(r.deadline - now)) : "—"),
  el("td", { dataset: { label: _("Last move") } }, Number.isNaN(last) ? "—" : inWords(last - now)),
  el("td", { dataset: { label: _("Offer") } }, offer || "—"));
}

/** Every tournament of one key: all pages of GET /players/{key}/tournaments. */
export async function tournamentsOfKey(key) {
  const out = [];
  let offset = 0;
  while (offset !== null && offset !== undefined) {
    const page = await getJson(`/players/${encodeURIComponent(key)}/tournaments?offset=${offset}&limit=${PAGE}`);
    out.push(...(page.tournaments || []));
    offset = page.next;
  }
  return out;
}

const TOURNAMENT_RANK = { active: 0, waiting: 1 };

/** The tournaments of several keys, merged: running ones first (active, then waiting), then newest. */
export function mergeTournaments(lists) {
  const byId = new Map();
  for (const list of lists) for (const t of list) byId.set(t.tournament, t);
  return [...byId.values()].sort((a, b) => (TOURNAMENT_RANK[a.status] ?? 2) - (TOURNAMENT_RANK[b.status] ?? 2)
    || (Date.parse(b.created_at) || 0) - (Date.parse(a.created_at) || 0));
}

async function drawTournaments(keys) {
  const section = document.getElementById("my-tournaments-section");
  const list = document.getElementById("my-tournaments");
  if (!section || !list) return;
  try {
    const found = mergeTournaments(await Promise.all(keys.map((key) => tournamentsOfKey(key))));
    section.dataset.total = String(found.length);
    list.replaceChildren(...(found.length ? found.map((t) => {
      const rules = t.ruleset && typeof t.ruleset === "object" ? t.ruleset.name : t.ruleset;
      const kind = t.format && t.format.kind ? formatWord(t.format.kind) : "";
      return el("li", { dataset: { tournament: t.tournament, status: t.status } },
        el("a", { href: `${WEB}tournaments/${encodeURIComponent(t.tournament)}` }, ruleName({ ruleset: rules })),
        ` · ${kind} · ${ngettext("{n} player", "{n} players", t.players)} · `, el("strong", {}, statusWord(t.status)),
        t.round ? ` · ${_("round {n}", { n: t.round })}` : "", el("span", { class: "mono details" }, ` ${t.tournament}`));
    }) : [el("li", {}, _("No tournaments for the keys in this browser."))]));
  } catch (err) {
    showError(err, _("Loading my tournaments"));
  } finally {
    section.setAttribute("aria-busy", "false");
  }
}

async function drawPage() {
  const root = document.getElementById("all-my-games");
  const body = document.getElementById("all-my-games-body");
  const summary = document.getElementById("all-my-games-summary");
  if (!listKeys().length) {
    summary.replaceChildren(_("No keys in this browser yet: make or load one on "),
      el("a", { href: `${WEB}keys` }, _("My keys")), ".");
    body.replaceChildren();
    root.setAttribute("aria-busy", "false");
    const section = document.getElementById("my-tournaments-section");
    if (section) section.hidden = true;
    return;
  }
  const [rows] = await Promise.all([loadMyGames(), drawTournaments([...new Set(listKeys().map((k) => k.public))])]);
  if (lastError) showError(lastError, _("Loading my games"));
  const count = rows.filter((r) => r.waiting.length).length;
  setTitle(count);
  root.dataset.waiting = String(count);
  root.dataset.total = String(rows.length);
  summary.textContent = rows.length
    ? `${ngettext("{n} game", "{n} games", rows.length)} · ${_("{n} waiting for you", { n: count })}`
    : _("No games for the keys in this browser yet.");
  const now = Date.now();
  body.replaceChildren(...rows.map((r) => tableRow(r, now)));
  root.setAttribute("aria-busy", "false");
  followMyGames(rows, drawPage);
}

if (document.getElementById("all-my-games")) {
  if (listKeys().length) {
    const place = el("p", { class: "notify" });
    document.getElementById("all-my-games-summary").after(place);
    notifyButton(place);
  }
  drawPage();
  setInterval(drawPage, 30000);
}
