// The player rows of the new-game and new-tournament forms: a name, a public key, "generate a key in this
// browser" and "use a key of this browser"; in the new-game form also who takes the seat (a key of this browser,
// a pasted key, an invitation link, anyone: li[data-kind], the CSS shows its fields). One implementation for both.
import { generateKey, keepSeed, listKeys } from "../shared/keys.js";
import { createPasskeyKey, NoPrfError, passkeysAvailable } from "../shared/passkey.js";
import { clearErrors, el, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

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
    li.querySelector(".seat-name").setAttribute("aria-label", _("Name of player {n}", { n: i + 1 }));
    li.querySelector(".seat-key").setAttribute("aria-label", _("Public key of player {n}", { n: i + 1 }));
    li.querySelector(".seat-generate").setAttribute("aria-label", _("Generate a key in this browser for player {n}", { n: i + 1 }));
    const passkey = li.querySelector(".seat-passkey");
    if (passkey) passkey.setAttribute("aria-label", _("Make a key with a passkey for player {n}", { n: i + 1 }));
    li.querySelector(".seat-mine").setAttribute("aria-label", _("Use a key of this browser for player {n}", { n: i + 1 }));
    const kind = li.querySelector(".seat-kind");
    if (kind) kind.setAttribute("aria-label", _("Who takes seat {n}", { n: i + 1 }));
    li.dataset[field] = String(i);
  });
}

/** A new row from `template` (a <template> holding one <li>), appended to `list`. */
export function addRow(template, list) {
  const li = template.content.firstElementChild.cloneNode(true);
  wire(li, list, list.children.length);
  list.append(li);
  return li;
}

/** Wire the rows the server rendered into `list` (the new-game form's first two: it keeps its size from the first
 * paint) as addRow wires a new one. */
export function adoptRows(list) {
  [...list.children].forEach((li, i) => wire(li, list, i));
}

function wire(li, list, index) {
  const name = li.querySelector(".seat-name");
  const key = li.querySelector(".seat-key");
  const mine = li.querySelector(".seat-mine");
  fillMine(mine);
  const kind = li.querySelector(".seat-kind"); // the new-game form's: a key, a pasted key, an invitation, open
  if (kind) {
    if (index === 0) kind.value = "mine"; // the first seat: most often the creator's own
    li.dataset.kind = kind.value;
    kind.addEventListener("change", () => { li.dataset.kind = kind.value; });
  }
  if (!name.value) name.value = _("Player {n}", { n: index + 1 });
  li.querySelector(".seat-generate").addEventListener("click", async () => {
    clearErrors();
    try {
      const entry = await generateKey(name.value.trim() || _("player"));
      key.value = entry.public;
      document.querySelectorAll(".seat-mine").forEach(fillMine);
      mine.value = entry.public;
    } catch (err) {
      showError(err, _("Could not generate a key"));
    }
  });
  const passkey = li.querySelector(".seat-passkey");
  if (passkey && !passkeysAvailable()) passkey.hidden = true;
  passkey?.addEventListener("click", async () => {
    clearErrors();
    try {
      const made = await createPasskeyKey(name.value.trim().normalize("NFC") || _("player"));
      const entry = await keepSeed(made.name, made.seed, { passkey: true });
      key.value = entry.public;
      document.querySelectorAll(".seat-mine").forEach(fillMine);
      mine.value = entry.public;
    } catch (err) {
      if (err.code !== "passkey/cancelled") showError(err, err instanceof NoPrfError ? _("No passkey key here") : _("The passkey gave no key"));
    }
  });
  mine.addEventListener("change", () => {
    if (!mine.value) return;
    key.value = mine.value;
    const entry = listKeys().find((k) => k.public === mine.value);
    if (entry && name.value === _("Player {n}", { n: [...list.children].indexOf(li) + 1 })) name.value = entry.name;
  });
}
