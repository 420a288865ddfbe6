// Small DOM helpers shared by the pages.

import { _ } from "./i18n.js";

/** A game's or tournament's status ("waiting", "active", "finished"…) in words of the page's language. */
export function statusWord(status) {
  const words = { waiting: _("waiting"), active: _("active"), finished: _("finished"), aborted: _("aborted"),
    open: _("open"), closed: _("closed") };
  return words[status] || status;
}

/** A tournament's format ("round_robin", "swiss", "series") in words. */
export function formatWord(kind) {
  const words = { round_robin: _("round robin"), swiss: _("Swiss"), series: _("series") };
  return words[kind] || String(kind).replace(/_/g, " ");
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "style") node.style.cssText = value; // the CSSOM, which a strict CSP allows
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** One line describing an API error: rule id first when there is one, then the code and the message. */
export function describeError(err) {
  const parts = [];
  if (err.rule) parts.push(`[${err.rule}]`);
  if (err.code) parts.push(err.code);
  return `${parts.join(" ")}${parts.length ? ": " : ""}${err.message || String(err)}`;
}

/**
 * Show an error in the page's alert region (and keep it until cleared). With `reveal`, scroll it into view:
 * on a phone the region at the top of the page is far from the button that caused the error.
 */
export function showError(err, context = "", { reveal = false } = {}) {
  const box = document.getElementById("errors");
  if (!box) return;
  const item = el("div", { class: "error", dataset: { code: err.code || "", rule: err.rule || "" } });
  if (context) item.append(el("strong", {}, context + ": "));
  if (err.rule) item.append(el("span", { class: "rule" }, err.rule), " ");
  if (err.code) item.append(el("code", {}, err.code), " ");
  item.append(el("span", { class: "message" }, err.message || String(err)));
  const fields = err.details && Array.isArray(err.details.problems) ? err.details.problems
    : err.details && Array.isArray(err.details.fields) ? err.details.fields : null;
  if (fields) {
    item.append(el("ul", {}, fields.map((p) => el("li", {}, typeof p === "string" ? p : `${p.path || p.field || ""} ${p.problem || p.message || JSON.stringify(p)}`))));
  }
  item.append(el("button", { type: "button", class: "dismiss", "aria-label": _("Dismiss this error"), onclick: () => item.remove() }, "×"));
  box.append(item);
  if (reveal) item.scrollIntoView({ block: "nearest" });
  return item;
}

export function clearErrors() {
  const box = document.getElementById("errors");
  if (box) box.replaceChildren();
}

/** The signer's time of an envelope's `at`: now, in whole seconds (RFC 3339, UTC). */
export function nowIso() {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function shortKey(key) {
  return key ? `${key.slice(0, 6)}…${key.slice(-4)}` : "";
}

export function download(filename, text) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  const a = el("a", { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Call fn on Enter or Space, as a button would: for SVG elements made focusable with tabindex. */
export function onActivate(node, fn) {
  node.addEventListener("click", fn);
  node.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      fn(event);
    }
  });
}

/** A link to pass on, in a read-only field with a Copy button and a polite note of what happened (the clipboard;
 * where the browser refuses, the field is selected): [field, button, note]. */
export function copyField(label, link, id) {
  const input = el("input", { class: "invite-link mono", id, readonly: true, value: link, "aria-label": label });
  const said = el("span", { class: "hint", "aria-live": "polite" });
  const copy = el("button", { type: "button", class: "copy-link", onclick: async () => {
    try {
      await navigator.clipboard.writeText(link);
      said.textContent = _("Copied.");
    } catch {
      input.select();
      said.textContent = _("Selected: copy it with Ctrl+C (or your phone's Copy).");
    }
  } }, _("Copy"));
  return [input, copy, said];
}

/** Resolves once the page has painted what is in it now (the next frame, then a task after it); after 100 ms
 * at most, since a page in a background tab gets no frames. */
export function afterPaint() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100);
    requestAnimationFrame(() => {
      clearTimeout(timer);
      setTimeout(resolve, 0);
    });
  });
}
