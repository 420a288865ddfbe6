// "My games" on the lobby: the games of the keys kept in this browser (keys.js) first, those waiting
// for me on top (my seat to move, or my acceptance awaited), with their deadlines (seats[i].clock of
// games with a clock), and the count of games waiting for me in the tab title: "(2) Lobby · …".

import { listKeys } from "./keys.js";
import { el } from "./ui.js";

const BASE_TITLE = document.title;

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

function deadlineOf(game, seats) {
  const times = seats.map((i) => game.seats[i] && game.seats[i].clock && game.seats[i].clock.deadline)
    .filter(Boolean).map((d) => Date.parse(d)).filter((t) => !Number.isNaN(t));
  return times.length ? Math.min(...times) : null;
}

function inWords(ms) {
  const s = Math.round(Math.abs(ms) / 1000);
  const text = s < 90 ? `${s} s` : s < 5400 ? `${Math.round(s / 60)} min` : s < 172800 ? `${Math.round(s / 3600)} h`
    : `${Math.round(s / 86400)} days`;
  return ms < 0 ? `${text} ago` : `in ${text}`;
}

/** Sort `games` for me: waiting for me (soonest deadline first; no deadline after), then my other games. */
export function myGames(games, keys = new Set(listKeys().map((k) => k.public))) {
  const rows = [];
  for (const game of games) {
    const mine = mySeatsIn(game, keys);
    if (!mine.length) continue;
    const waiting = waitingFor(game, mine);
    rows.push({ game, mine, waiting, deadline: waiting.length ? deadlineOf(game, waiting) : null });
  }
  const rank = (r) => (r.waiting.length ? 0 : r.game.status === "active" || r.game.status === "waiting" ? 1 : 2);
  rows.sort((a, b) => rank(a) - rank(b) || (a.deadline ?? Infinity) - (b.deadline ?? Infinity));
  return rows;
}

/** Draw the "My games" section above the lobby's table (created on first use) and set the tab title. */
export function renderMyGames(games, web) {
  const rows = myGames(games);
  let section = document.getElementById("my-games");
  if (!section) {
    section = el("section", { id: "my-games", "aria-labelledby": "my-games-h" });
    const lobby = document.getElementById("lobby");
    lobby.parentNode.insertBefore(section, lobby);
  }
  const count = rows.filter((r) => r.waiting.length).length;
  document.title = count ? `(${count}) ${BASE_TITLE}` : BASE_TITLE;
  section.dataset.waiting = String(count);
  section.hidden = !rows.length;
  if (!rows.length) {
    section.replaceChildren();
    return rows;
  }
  const now = Date.now();
  section.replaceChildren(
    el("h2", { id: "my-games-h" }, count ? `My games · ${count} waiting for me` : "My games"),
    el("ul", { class: "my-games" }, ...rows.map((r) => {
      const id = r.game.game;
      const names = r.mine.map((i) => (r.game.seats[i] && r.game.seats[i].name) || `seat ${i + 1}`).join(", ");
      const what = r.waiting.length ? (r.game.status === "waiting" ? "your acceptance" : "your move") : r.game.status;
      const due = r.deadline !== null
        ? el("span", { class: "deadline", title: new Date(r.deadline).toISOString() }, ` · deadline ${inWords(r.deadline - now)}`)
        : "";
      return el("li", { dataset: { game: id, waiting: r.waiting.length ? "true" : "false" }, class: r.waiting.length ? "waiting-for-me" : "" },
        el("a", { class: "mono", href: `${web}games/${encodeURIComponent(id)}` }, id), ` · ${names} · `,
        el("strong", {}, what), due);
    })));
  return rows;
}

const ROOT = (document.body && document.body.dataset.api) || "";
let source = null;
let followed = "";
let pending = null;

/**
 * Follow my running games over one event stream (GET /games/events?games=…): `reload()` on each new
 * entry in any of them (bursts coalesced), so "waiting for me" and the title change as soon as the
 * opponent moves. The lobby's 10 s poll stays as the fallback (and covers every other game).
 */
export function followMyGames(rows, reload) {
  const ids = rows.filter((r) => r.game.status === "active" || r.game.status === "waiting")
    .map((r) => r.game.game).slice(0, 100).sort().join(",");
  const section = document.getElementById("my-games");
  if (ids === followed) return;
  followed = ids;
  if (source) source.close();
  source = null;
  if (!ids || typeof EventSource === "undefined") {
    if (section) section.dataset.live = "poll";
    return;
  }
  source = new EventSource(`${ROOT}/games/events?games=${encodeURIComponent(ids)}`);
  source.addEventListener("open", () => { if (section) section.dataset.live = "sse"; });
  source.addEventListener("error", () => { if (section) section.dataset.live = "poll"; });
  source.addEventListener("message", () => {
    if (section) section.dataset.liveEvents = String(Number(section.dataset.liveEvents || 0) + 1);
    clearTimeout(pending);
    pending = setTimeout(reload, 200);
  });
}
