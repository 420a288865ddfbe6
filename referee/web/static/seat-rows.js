// The player rows of the new-game and new-tournament forms: a name, a public key, "generate a key in this
// browser" and "use a key of this browser". One implementation for both forms.
import { generateKey, listKeys } from "./keys.js";
import { clearErrors, el, showError } from "./ui.js";

/** Fill a "key of this browser" select with this browser's keys, keeping its choice. */
export function fillMine(select) {
  const chosen = select.value;
  select.replaceChildren(el("option", { value: "" }, "—"),
    ...listKeys().map((k) => el("option", { value: k.public }, k.name)));
  select.value = chosen;
}

/** Label every row of `list` for its position (1-based) and set `dataset[field]` to its index. */
export function labelRows(list, field) {
  [...list.children].forEach((li, i) => {
    li.querySelector(".seat-name").setAttribute("aria-label", `Name of player ${i + 1}`);
    li.querySelector(".seat-key").setAttribute("aria-label", `Public key of player ${i + 1}`);
    li.querySelector(".seat-generate").setAttribute("aria-label", `Generate a key in this browser for player ${i + 1}`);
    li.querySelector(".seat-mine").setAttribute("aria-label", `Use a key of this browser for player ${i + 1}`);
    li.dataset[field] = String(i);
  });
}

/** A new row from `template` (a <template> holding one <li>), appended to `list`. */
export function addRow(template, list) {
  const li = template.content.firstElementChild.cloneNode(true);
  const name = li.querySelector(".seat-name");
  const key = li.querySelector(".seat-key");
  const mine = li.querySelector(".seat-mine");
  fillMine(mine);
  name.value = `Player ${list.children.length + 1}`;
  li.querySelector(".seat-generate").addEventListener("click", async () => {
    clearErrors();
    try {
      const entry = await generateKey(name.value.trim() || "player");
      key.value = entry.public;
      document.querySelectorAll(".seat-mine").forEach(fillMine);
      mine.value = entry.public;
    } catch (err) {
      showError(err, "Could not generate a key");
    }
  });
  mine.addEventListener("change", () => {
    if (!mine.value) return;
    key.value = mine.value;
    const entry = listKeys().find((k) => k.public === mine.value);
    if (entry && /^Player \d+$/.test(name.value)) name.value = entry.name;
  });
  list.append(li);
  return li;
}
