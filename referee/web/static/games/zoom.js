// A zoomable frame for an SVG that is too detailed for a small screen: −, +, and Fit buttons widen the
// SVG inside a frame that scrolls (the page itself never gets wider than the screen). The level and the
// scroll position are kept per name, so a board redrawn after every choice stays where the player left it.
// Pinch-zooming the page works as well (the viewport allows it).

import { el } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

/** The zoom buttons' names, per drawing (whole sentences, so that each language can say them its way). */
const NAMES = {
  city: { out: _("Zoom out of the city"), in: _("Zoom in on the city"), fit: _("Fit the city to the screen"), bar: _("Zoom the city") },
  board: { out: _("Zoom out of the board"), in: _("Zoom in on the board"), fit: _("Fit the board to the screen"), bar: _("Zoom the board") },
};

const LEVELS = [1, 1.5, 2, 3, 4];
const kept = new Map(); // name -> {level, left, top}

/** ``minScale``: on a phone (a screen at most 700 px wide), the first drawing starts at the first level at
 * which one unit of the drawing is at least this many CSS px, so that its text is readable without zooming;
 * "Fit" still shows it whole. ``focus``: an element of the drawing to centre in that first view (the sites
 * the player can choose, or the last move). */
export function zoomable(name, svg, label, { minScale = 0, focus = null, width = 0 } = {}) {
  const state = kept.get(name) || { level: 0, left: 0, top: 0, fresh: true };
  kept.set(name, state);
  // ``width``: the frame's width as the caller knows it (CSS px), so that the first level is chosen before the
  // frame is in the document: measuring the frame there laid the whole page out once more (issue 49).
  const firstLevel = (frameWidth) => {
    const units = svg.viewBox && svg.viewBox.baseVal ? svg.viewBox.baseVal.width : 0;
    const need = units ? (minScale * units) / frameWidth : 1;
    const index = LEVELS.findIndex((level) => level >= need);
    return index < 0 ? LEVELS.length - 1 : index;
  };
  const sizeFirst = state.fresh && minScale && window.innerWidth <= 700;
  if (sizeFirst && width > 0) state.level = firstLevel(width);
  // focusable, so that a keyboard scrolls it (arrow keys) once zoomed in
  const frame = el("div", { class: "zoom-frame", tabindex: "0", role: "region", "aria-label": _("{label}, zoomable", { label }),
    dataset: { zoom: String(LEVELS[state.level]) } }, svg);
  frame.addEventListener("scroll", () => {
    state.left = frame.scrollLeft;
    state.top = frame.scrollTop;
  }, { passive: true });
  const shown = el("output", { class: "zoom-level", "aria-live": "polite" });
  const names = NAMES[label] || NAMES.board;
  const out = el("button", { type: "button", class: "zoom-out", "aria-label": names.out }, "−");
  const into = el("button", { type: "button", class: "zoom-in", "aria-label": names.in }, "+");
  const fit = el("button", { type: "button", class: "zoom-fit", "aria-label": names.fit }, _("Fit"));

  function apply() {
    const level = LEVELS[state.level];
    svg.style.width = `${level * 100}%`;
    frame.dataset.zoom = String(level);
    shown.textContent = `${Math.round(level * 100)}%`;
    out.disabled = state.level === 0;
    fit.disabled = state.level === 0;
    into.disabled = state.level === LEVELS.length - 1;
  }

  function zoomTo(index) {
    const before = LEVELS[state.level];
    state.level = Math.max(0, Math.min(LEVELS.length - 1, index));
    const ratio = LEVELS[state.level] / before;
    // Keep the middle of what was in view in the middle.
    const cx = frame.scrollLeft + frame.clientWidth / 2;
    const cy = frame.scrollTop + frame.clientHeight / 2;
    apply();
    frame.scrollLeft = cx * ratio - frame.clientWidth / 2;
    frame.scrollTop = cy * ratio - frame.clientHeight / 2;
  }

  out.addEventListener("click", () => zoomTo(state.level - 1));
  into.addEventListener("click", () => zoomTo(state.level + 1));
  fit.addEventListener("click", () => zoomTo(0));
  apply();
  const node = el("div", { class: "zoomable" },
    el("div", { class: "zoom-bar", role: "toolbar", "aria-label": names.bar }, out, shown, into, fit), frame);
  return {
    node,
    /** Call once the node is in the document: scrolls back to where the player was. */
    restore() {
      if (sizeFirst && (width > 0 || frame.clientWidth)) {
        if (!(width > 0)) {
          state.level = firstLevel(frame.clientWidth);
          apply();
        }
        if (focus && state.level > 0) {
          const f = focus.getBoundingClientRect();
          const r = frame.getBoundingClientRect();
          state.left = Math.max(0, frame.scrollLeft + f.left + f.width / 2 - r.left - frame.clientWidth / 2);
          state.top = Math.max(0, frame.scrollTop + f.top + f.height / 2 - r.top - frame.clientHeight / 2);
        }
      }
      state.fresh = false;
      // The frame is new, scrolled to 0, 0: setting 0 would change nothing but lay the page out at once (and
      // again at the next frame, after the rest of the redraw) — a sixth of a redraw's CPU.
      if (state.left) frame.scrollLeft = state.left;
      if (state.top) frame.scrollTop = state.top;
    },
  };
}
