import { api } from "./api.js";
import { el, showError } from "./ui.js";
import { findKey } from "./keys.js";
import { followMyGames, renderMyGames } from "./my-games.js";

const WEB = document.body.dataset.web || "/play/";

function seatName(game, seat) {
  const seats = game.seats || [];
  const s = seats[seat];
  return s ? (s.name || `seat ${seat + 1}`) : `seat ${seat + 1}`;
}

function turnText(game) {
  if (game.status === "finished") return "—";
  if (game.status === "waiting") {
    const accepted = new Set(game.accepted || (game.seats || []).map((x, i) => (x.accepted ? i : -1)));
    const waiting = (game.seats || []).map((_, i) => i).filter((i) => !accepted.has(i));
    return waiting.length ? `acceptance of ${waiting.map((i) => seatName(game, i)).join(", ")}` : "starting";
  }
  const toMove = game.to_move;
  if (toMove === null || toMove === undefined) return "—";
  const mine = (game.seats || [])[toMove] && findKey(game.seats[toMove].key);
  return mine ? `${seatName(game, toMove)} (you)` : seatName(game, toMove);
}

async function load() {
  const body = document.getElementById("games-body");
  try {
    const data = await api.games();
    const games = Array.isArray(data) ? data : data.games || [];
    // this browser's games first, those waiting for me on top; count in the title; followed live
    followMyGames(renderMyGames(games, WEB), load);
    if (!games.length) {
      body.replaceChildren(el("tr", {}, el("td", { colspan: 7 }, "No games yet.")));
    } else {
      body.replaceChildren(...games.map((g) => {
        const id = g.id || g.game;
        const ruleset = typeof g.ruleset === "object" && g.ruleset ? g.ruleset.name : g.ruleset;
        return el("tr", { dataset: { game: id, status: g.status } },
          el("td", { class: "game-id" }, el("a", { class: "mono", href: `${WEB}games/${encodeURIComponent(id)}` }, id)),
          el("td", { dataset: { label: "Ruleset" } }, ruleset || "?"),
          el("td", { class: "players", dataset: { label: "Players" } }, (g.seats || []).map((s, i) => [i ? ", " : "",
            el("span", { class: "name", title: s.name }, s.name),
            s.bot ? [" ", el("span", { class: "bot-mark", title: "played by a program" }, "bot")] : []]).flat(2)),
          el("td", { class: `status-${g.status}`, dataset: { label: "Status" } }, g.status),
          el("td", { dataset: { label: "Whose turn" } }, turnText(g)),
          el("td", { dataset: { label: "Log entries" } }, String(g.seq ?? "")),
          el("td", {}, el("a", { href: `${WEB}games/${encodeURIComponent(id)}/replay` }, "replay")));
      }));
    }
  } catch (err) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 7 }, "Could not load the games.")));
    showError(err, "Loading the games");
  } finally {
    document.getElementById("lobby").setAttribute("aria-busy", "false");
  }
}

load();
// The lobby polls every 10 s; this browser's running games are also followed over one event stream
// (my-games.js), so a move in one of them shows at once.
setInterval(load, 10000);
