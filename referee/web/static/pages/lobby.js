import { api } from "../shared/api.js";
import { el, showError, statusWord } from "../shared/ui.js";
import { findKey } from "../shared/keys.js";
import { followMyGames, renderMyGames } from "./my-games.js";
import { gameName, playersLine } from "../games/game-names.js";
import { describeTimeControl, formatDuration } from "./clock.js";
import { _ } from "../shared/i18n.js";

const WEB = document.body.dataset.web || "/play/";

function seatName(game, seat) {
  const seats = game.seats || [];
  const s = seats[seat];
  return (s && s.name) || _("seat {n}", { n: seat + 1 });
}

function turnText(game) {
  if (game.status === "finished") return "—";
  if (game.status === "waiting") {
    const accepted = new Set(game.accepted || (game.seats || []).map((x, i) => (x.accepted ? i : -1)));
    const waiting = (game.seats || []).map((_, i) => i).filter((i) => !accepted.has(i));
    return waiting.length ? _("{names} to accept", { names: waiting.map((i) => seatName(game, i)).join(", ") }) : _("starting");
  }
  const toMove = game.to_move;
  if (toMove === null || toMove === undefined) return "—";
  const mine = (game.seats || [])[toMove] && findKey(game.seats[toMove].key);
  return mine ? `${seatName(game, toMove)} ${_("(you)")}` : seatName(game, toMove);
}

function joiner(seats, i) {
  return i ? (i === seats.length - 1 && i > 1 ? _(" and ") : i === 1 && seats.length === 2 ? _(" vs ") : ", ") : "";
}

/** The players as the lobby's link shows them ("Ann vs Bea bot"): its accessible name starts with it (WCAG
 * 2.5.3, the label in the name), then says the game. */
function shown(seats) {
  return seats.map((s, i) => `${joiner(seats, i)}${s.name}${s.bot ? ` ${_("bot")}` : ""}`).join("");
}

async function load() {
  const body = document.getElementById("games-body");
  try {
    const data = await api.games();
    const games = Array.isArray(data) ? data : data.games || [];
    // this browser's games first, those waiting for me on top; count in the title; followed live
    followMyGames(renderMyGames(games, WEB), load);
    if (!games.length) {
      body.replaceChildren(el("tr", {}, el("td", { colspan: 5 }, _("No games yet."))));
    } else {
      body.replaceChildren(...games.map((g) => {
        const id = g.id || g.game;
        const ruleset = typeof g.ruleset === "object" && g.ruleset ? g.ruleset.name : g.ruleset;
        // A game is named by its players; its id is in the link's title and on the game page's details line.
        return el("tr", { dataset: { game: id, status: g.status, ruleset: ruleset || "" } },
          el("td", { class: "players" }, el("a", { class: "game-link", href: `${WEB}games/${encodeURIComponent(id)}`,
            title: _("Game {id}", { id }), "aria-label": `${shown(g.seats || [])} · ${gameName(ruleset)}` },
          (g.seats || []).map((s, i) => [joiner(g.seats, i),
            el("span", { class: "name", title: s.name }, s.name),
            s.bot ? [" ", el("span", { class: "bot-mark", title: _("played by a program") }, _("bot"))] : []]).flat(2))),
          el("td", { class: "game-name", dataset: { label: _("Game") } }, gameName(ruleset)),
          el("td", { class: `status-${g.status}`, dataset: { label: _("Status") } }, statusWord(g.status)),
          el("td", { dataset: { label: _("Whose turn") } }, turnText(g)),
          el("td", { class: "links" }, el("a", { href: `${WEB}games/${encodeURIComponent(id)}/replay`,
            "aria-label": _("Replay of {players}", { players: playersLine(g.seats) }) }, _("Replay"))));
      }));
    }
  } catch (err) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 5 }, _("Could not load the games."))));
    showError(err, _("Loading the games"));
  } finally {
    document.getElementById("lobby").setAttribute("aria-busy", "false");
  }
}

/** The games with a seat open to anyone (GET /games?open=true, oldest first): each with "Take a seat", the join
 * page of that game, which works from a browser with no key (it makes one). */
async function loadOpen() {
  const body = document.getElementById("open-games-body");
  try {
    const data = await api.openGames();
    const games = data.games || [];
    if (!games.length) {
      body.replaceChildren(el("tr", {}, el("td", { colspan: 6 }, _("No open games: start one."))));
      return;
    }
    const now = Date.now();
    body.replaceChildren(...games.map((g) => {
      const id = g.game || g.id;
      const ruleset = typeof g.ruleset === "object" && g.ruleset ? g.ruleset.name : g.ruleset;
      const total = (g.seats || []).length;
      const creator = (g.creator && g.creator.name) || _("unnamed");
      const mine = g.creator && findKey(g.creator.key);
      const age = formatDuration(Math.max(0, (now - Date.parse(g.created_at)) / 1000));
      return el("tr", { dataset: { openGame: id, ruleset: ruleset || "" } },
        el("td", { class: "game-name" }, gameName(ruleset)),
        el("td", { dataset: { label: _("Players") } },
          _("{taken} of {total} seated, {open} open", { taken: g.seats_taken, total, open: g.seats_open })),
        el("td", { class: "clock", dataset: { label: _("Clock") } }, describeTimeControl(g.time_control)),
        el("td", { class: "name", dataset: { label: _("Created by") } }, mine ? `${creator} ${_("(you)")}` : creator),
        el("td", { dataset: { label: _("Open for") } }, age),
        el("td", { class: "links" }, mine
          ? el("a", { href: `${WEB}games/${encodeURIComponent(id)}` }, _("Your game"))
          : el("a", { class: "button take-seat", href: `${WEB}join/${encodeURIComponent(id)}`,
            "aria-label": _("Take a seat in {creator}'s game of {game}", { creator, game: gameName(ruleset) }) },
          _("Take a seat"))));
    }));
  } catch (err) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 6 }, _("Could not load the open games."))));
    showError(err, _("Loading the open games"));
  } finally {
    document.getElementById("open-games").setAttribute("aria-busy", "false");
  }
}

function loadAll() {
  loadOpen();
  return load();
}

loadAll();
// The lobby polls every 10 s; this browser's running games are also followed over one event stream
// (my-games.js), so a move in one of them shows at once.
setInterval(loadAll, 10000);
