// The games' names as players know them. The API names a ruleset by its id (`towerup`, `fivetowers`) and
// has no display name, so the pages keep this small table; an unknown ruleset shows its id. The names are the
// games' own in every language: the German and French rulebooks keep "Tower Up" and "5 Towers" (docs/languages.md).

import { _, listAnd, listOr } from "../shared/i18n.js";

export const GAME_NAMES = { towerup: _("Tower Up"), fivetowers: _("5 Towers") };

export function gameName(ruleset) {
  const id = ruleset && typeof ruleset === "object" ? ruleset.name : ruleset;
  return GAME_NAMES[id] || id || "?";
}

/** "Ann vs Bob", "Ann, Bob and Cy": the players of a game, by their seats' names. */
export function playersLine(seats) {
  const names = (seats || []).map((s, i) => (s && s.name) || _("Seat {n}", { n: i + 1 }));
  if (names.length <= 2) return names.join(_(" vs "));
  return listAnd(names);
}

/** What a move of this type is called in "Your turn: …". */
const ACTIONS = { bid: _("bid"), pass: _("pass"), build: _("build"), take: _("take a card"),
  place_start: _("place your start buildings"), decline_extra: _("decline the extra turn") };

export function actionWords(moves) {
  const types = [...new Set((moves || []).map((m) => m && m.type).filter(Boolean))];
  const words = [...new Set(types.map((t) => ACTIONS[t] || t.replace(/_/g, " ")))];
  if (!words.length) return "";
  return listOr(words);
}
