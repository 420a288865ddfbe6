// The games' names as players know them. The API names a ruleset by its id (`towerup`, `fivetowers`) and
// has no display name, so the pages keep this small table; an unknown ruleset shows its id.

export const GAME_NAMES = { towerup: "Tower Up", fivetowers: "5 Towers" };

export function gameName(ruleset) {
  const id = ruleset && typeof ruleset === "object" ? ruleset.name : ruleset;
  return GAME_NAMES[id] || id || "?";
}

/** "Ann vs Bob", "Ann, Bob and Cy": the players of a game, by their seats' names. */
export function playersLine(seats) {
  const names = (seats || []).map((s, i) => (s && s.name) || `Seat ${i + 1}`);
  if (names.length <= 2) return names.join(" vs ");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** What a move of this type is called in "Your turn: …". */
const ACTIONS = { bid: "bid", pass: "pass", build: "build", take: "take a card", place_start: "place your start buildings",
  decline_extra: "decline the extra turn" };

export function actionWords(moves) {
  const types = [...new Set((moves || []).map((m) => m && m.type).filter(Boolean))];
  const words = [...new Set(types.map((t) => ACTIONS[t] || t.replace(/_/g, " ")))];
  if (!words.length) return "";
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}
