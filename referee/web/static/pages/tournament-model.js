// Pure helpers of the tournament pages: exact numbers ("p/q" strings, as the referee writes them), the
// points of one game's result, the crosstable and a player's path, all from GET /tournaments/<id>.

import { _, LANG, ngettext } from "../shared/i18n.js";
import { formatWord } from "../shared/ui.js";

// the third member ("higher"/"lower") is a key, not words: the page says it with tieBreakBetter()
export const TIE_BREAKS = {
  game_score: [_("Game score"), _("sum of the player's game scores"), "higher"],
  opponents_points: [_("Opponents' points"), _("Buchholz: the final points of everyone met, per game"), "higher"],
  wins: [_("Wins"), _("games finished at rank 1, alone or shared"), "higher"],
  head_to_head: [_("Head to head"), _("among the players still tied: 1 per tied player ranked below, ½ per one level"), "higher"],
  average_rank: [_("Average rank"), _("mean rank over the player's games"), "lower"],
  lot: [_("Lot"), _("place in the lot drawn from the revealed seed (before the reveal: the order of creation)"), "lower"],
};

/** "higher" / "lower" (is better) in words. */
export function tieBreakBetter(which) {
  return which === "lower" ? _("lower") : which === "higher" ? _("higher") : which;
}

export function tieBreakName(id) {
  return (TIE_BREAKS[id] || [id])[0];
}

export function formatText(format) {
  if (!format) return "?";
  const sizes = (format.table_sizes || []).join("/");
  return `${formatWord(format.kind)}, ${ngettext("{n} round", "{n} rounds", format.rounds)}${sizes ? `, ${_("tables of {sizes}", { sizes })}` : ""}`;
}

function gcd(a, b) {
  let x = Math.abs(a);
  let y = Math.abs(b);
  while (y) [x, y] = [y, x % y];
  return x || 1;
}

/** [numerator, denominator] of an integer or a "p/q" string. */
export function fraction(value) {
  if (typeof value === "number") return [value, 1];
  const m = /^(-?\d+)\/(\d+)$/.exec(String(value));
  return m ? [Number(m[1]), Number(m[2])] : [Number(value) || 0, 1];
}

/** An exact number as the referee writes it: an integer, or "p/q" in lowest terms. */
export function exact([p, q]) {
  const g = gcd(p, q);
  const [n, d] = [p / g, q / g];
  return d === 1 ? String(n) : `${n}/${d}`;
}

/** A value of the standings as the referee writes it (exact: "7/2" stays "7/2"); null as a dash. */
export function show(value) {
  if (value === null || value === undefined) return "—";
  return String(value);
}

/** The points rank `ranks[seat]` earns at a table of ranks.length seats: a shared rank takes the mean. */
export function gamePoints(pointsTable, ranks, seat) {
  const list = (pointsTable || {})[String(ranks.length)];
  if (!Array.isArray(list)) return null;
  const rank = ranks[seat];
  const shared = ranks.filter((r) => r === rank).length;
  let [p, q] = [0, 1];
  for (let i = rank - 1; i < rank - 1 + shared; i += 1) {
    const [a, b] = fraction(list[i] ?? 0);
    [p, q] = [p * b + a * q, q * b];
  }
  return exact([p, q * shared]);
}

export function ordinal(n) {
  if (LANG === "de") return `${n}.`;
  if (LANG === "fr") return n === 1 ? "1er" : `${n}e`;
  const s = ["th", "st", "nd", "rd"];
  const v = n % 100;
  return `${n}${s[(v - 20) % 10] || s[v] || s[0]}`;
}

/** meetings[a][b] = [{round, game, mark}] with mark "+" (a ahead of b), "−", "=" or "…" (no result yet). */
export function crosstable(state) {
  const meetings = {};
  for (const rnd of state.rounds || []) {
    for (const table of rnd.tables || []) {
      const ranks = table.result ? table.result.ranks : null;
      table.players.forEach((a, i) => {
        table.players.forEach((b, j) => {
          if (i === j) return;
          let mark = "…";
          if (ranks) mark = ranks[i] < ranks[j] ? "+" : ranks[i] > ranks[j] ? "−" : "=";
          ((meetings[a] ||= {})[b] ||= []).push({ round: rnd.round, game: table.game, mark });
        });
      });
    }
  }
  return meetings;
}

/** A player's rounds: [{round, bye} | {round, game, players, seat, result, points}]; rounds without them left out. */
export function playerPath(state, key) {
  const path = [];
  for (const rnd of state.rounds || []) {
    if ((rnd.byes || []).includes(key)) {
      path.push({ round: rnd.round, bye: true, points: show(state.bye_points) });
      continue;
    }
    const table = (rnd.tables || []).find((t) => t.players.includes(key));
    if (!table) continue;
    const seat = table.players.indexOf(key);
    const result = table.result || null;
    path.push({ round: rnd.round, game: table.game, players: table.players, seat, result,
      points: result ? gamePoints(state.points, result.ranks, seat) : null });
  }
  return path;
}
