// Telling a player whose page is in the background that it is their turn: the page's title (each page sets
// it: "Your turn · …", "(2) My games · …") and, once the player asked for it with the button below (never on
// load), a browser notification (Notification API) when it becomes their turn while the page is hidden.

import { _ } from "./i18n.js";

/** A "Notify me when it is my turn" button (in `container`), shown while the browser has not been asked yet:
 * a click asks for the Notification permission. */
export function notifyButton(container) {
  if (!container || typeof Notification === "undefined") return null;
  const button = document.createElement("button");
  button.type = "button";
  button.id = "notify-turn";
  button.className = "notify-turn";
  button.textContent = _("Notify me when it is my turn");
  const note = document.createElement("span");
  note.className = "notify-state";
  note.setAttribute("role", "status");
  const show = () => {
    if (Notification.permission !== "default") button.remove(); // asked once: the browser keeps the answer
    note.textContent = Notification.permission === "granted" ? "" : Notification.permission === "denied"
      ? _("Notifications are blocked for this site in the browser's settings.") : "";
  };
  button.addEventListener("click", async () => {
    try {
      await Notification.requestPermission();
    } finally {
      show();
    }
  });
  // asked before (allowed or blocked): no button, and no line of text pushing the board down as the page loads
  if (Notification.permission !== "default") return null;
  container.append(button, note);
  return button;
}

const was = new Map();

/** Call after each redraw: `mine` says whether it is my turn in `tag` (a game id, or "my-games" with a count)
 * now; when it just became so (more of them for a count) while the page is hidden and notifications are
 * allowed, one notification says it. */
export function turnNotice(tag, mine, text, link = location.href) {
  const now = Number(mine);
  const before = was.has(tag) ? was.get(tag) : now; // the first redraw only learns the state
  was.set(tag, now);
  if (!(now > before) || !document.hidden) return false;
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return false;
  try {
    const notification = new Notification(text, { tag, body: document.title });
    notification.addEventListener("click", () => {
      window.focus();
      if (location.href !== link) location.href = link;
      notification.close();
    });
    document.documentElement.dataset.notified = String(Number(document.documentElement.dataset.notified || 0) + 1);
    return true;
  } catch {
    return false; // e.g. a browser that only notifies from a service worker
  }
}
