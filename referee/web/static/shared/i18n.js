// The pages' languages: the JavaScript's strings come from the same gettext catalogs as the templates
// (referee/translations/<lang>/LC_MESSAGES/web.po). The page's <html lang> is the language the server chose
// (the selector's cookie, else Accept-Language, else English); body[data-i18n] is the URL of
// GET /play/i18n/<lang>.json, the translations of every msgid used by these modules (Babel's JavaScript
// extractor finds the calls of _, ngettext and pgettext: keep their string arguments literal, in double quotes).
// English is the source language: no request, every msgid is its own translation.

export const LANG = document.documentElement.lang || "en";

let messages = {};
let plural = (n) => (n !== 1 ? 1 : 0);

const url = document.body && document.body.dataset.i18n;
if (LANG !== "en" && url) {
  try {
    const response = await fetch(url, { credentials: "same-origin" });
    if (response.ok) {
      const data = await response.json();
      messages = data.messages || {};
      // the catalogs' plural rules: German as English, French counts 0 and 1 as singular
      if (LANG === "fr") plural = (n) => (n > 1 ? 1 : 0);
    }
  } catch (err) {
    // the English text stays: better than no page
  }
}

/** "{name} to move" with {name: "Ann"} → "Ann to move": named placeholders in braces. */
export function format(text, vars) {
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (whole, key) => (key in vars ? String(vars[key]) : whole));
}

/** The translation of msgid in the page's language, with its {placeholders} filled from vars. */
export function _(msgid, vars) {
  const found = messages[msgid];
  return format(typeof found === "string" && found ? found : msgid, vars);
}

/** The translation of msgid in a context (one English word, two meanings: a game's round, a tournament's). */
export function pgettext(context, msgid, vars) {
  const found = messages[`${context}\u0004${msgid}`];
  return format(typeof found === "string" && found ? found : msgid, vars);
}

/** Singular or plural by n ({n} is filled in, with vars). */
export function ngettext(singular, pluralText, n, vars) {
  const found = messages[singular];
  const index = plural(n);
  const text = Array.isArray(found) && found[index] ? found[index] : n === 1 ? singular : pluralText;
  return format(text, { n, ...(vars || {}) });
}

/** A whole number with its digits grouped as the page's language writes them ("2,000", "2.000", "2 000"), as
 * toLocaleString() would — without Intl, whose first use on a page costs about 100 ms of a slow phone's CPU. */
export function formatCount(n) {
  const sep = { de: ".", fr: "\u202f" }[LANG] || ",";
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, sep);
}

/** "A, B and C" / "A, B und C" / "A, B et C". */
export function listAnd(items) {
  if (items.length <= 1) return items.join("");
  return _("{list} and {last}", { list: items.slice(0, -1).join(", "), last: items[items.length - 1] });
}

/** "A, B or C". */
export function listOr(items) {
  if (items.length <= 1) return items.join("");
  return _("{list} or {last}", { list: items.slice(0, -1).join(", "), last: items[items.length - 1] });
}
