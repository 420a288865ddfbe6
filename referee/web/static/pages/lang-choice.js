// The language selector of every page (in the header): the choice is kept in this browser, in
// localStorage ("referee.lang") and in the cookie "referee_lang" that the server reads to render the page.
// A browser whose cookie was cleared but whose localStorage still holds a choice gets the cookie back.

const KEY = "referee.lang";
const COOKIE = "referee_lang";
const LANGS = ["en", "de", "fr"];

function setCookie(lang) {
  document.cookie = `${COOKIE}=${lang}; path=/; max-age=${400 * 24 * 3600}; SameSite=Lax`;
}

function cookie() {
  const found = document.cookie.split(";").map((c) => c.trim()).find((c) => c.startsWith(`${COOKIE}=`));
  return found ? found.slice(COOKIE.length + 1) : "";
}

const current = document.documentElement.lang || "en";
let stored = null;
try {
  stored = localStorage.getItem(KEY);
} catch (err) {
  stored = null;
}

if (stored && LANGS.includes(stored) && cookie() !== stored) {
  setCookie(stored);
  // reload once into the stored language; a browser that refuses cookies keeps the page it got (no loop)
  let tried = null;
  try {
    tried = sessionStorage.getItem("referee.lang.restored");
    sessionStorage.setItem("referee.lang.restored", stored);
  } catch (err) {
    tried = stored;
  }
  if (stored !== current && cookie() === stored && tried !== stored) location.reload();
}

const select = document.getElementById("lang-select");
if (select) {
  select.value = current;
  select.addEventListener("change", () => {
    const lang = select.value;
    if (!LANGS.includes(lang)) return;
    try {
      localStorage.setItem(KEY, lang);
    } catch (err) {
      // private mode: the cookie alone keeps the choice
    }
    setCookie(lang);
    location.reload();
  });
}
