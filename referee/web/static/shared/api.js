// The referee's JSON API, as the pages use it. Every failure becomes an ApiError carrying the error
// JSON's code, message, rule and details ({"error": {...}}), so the pages can show the rule id.
import { _, LANG } from "./i18n.js";

const ROOT = (document.body && document.body.dataset.api) || "";

export class ApiError extends Error {
  constructor(status, error) {
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || `http/${status}`;
    this.rule = error.rule || null;
    this.details = error.details || null;
  }
}

async function request(method, path, body) {
  // the human part of the referee's error messages in the page's language (codes and rule ids never change)
  const init = { method, headers: { Accept: "application/json", "Accept-Language": LANG } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(ROOT + path, init);
  } catch (exc) {
    throw new ApiError(0, { code: "network/unreachable", message: _("the referee could not be reached ({problem})", { problem: exc.message }) });
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const error = data && typeof data.error === "object" && data.error ? data.error
      : { code: `http/${response.status}`, message: (data && data.message) || response.statusText || text.slice(0, 200) };
    throw new ApiError(response.status, error);
  }
  return data;
}

export const api = {
  rulesets: () => request("GET", "/rulesets"),
  ruleset: (name) => request("GET", `/rulesets/${encodeURIComponent(name)}`),
  games: (offset = 0, limit = 100) => request("GET", `/games?offset=${offset}&limit=${limit}`),
  openGames: (offset = 0, limit = 50) => request("GET", `/games?open=true&offset=${offset}&limit=${limit}`),
  game: (id) => request("GET", `/games/${encodeURIComponent(id)}`),
  legalMoves: (id) => request("GET", `/games/${encodeURIComponent(id)}/legal-moves`),
  log: (id, query = "") => request("GET", `/games/${encodeURIComponent(id)}/log${query}`),
  replay: (id) => request("GET", `/games/${encodeURIComponent(id)}/replay`),
  replayAt: (id, n) => request("GET", `/games/${encodeURIComponent(id)}/replay?at=${n}`),
  result: (id) => request("GET", `/games/${encodeURIComponent(id)}/result`),
  create: (body) => request("POST", "/games", body),
  accept: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/accept`, submission),
  rematch: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/rematch`, submission),
  takeSeat: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/seat`, submission),
  leave: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/leave`, submission),
  cancel: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/cancel`, submission),
  vacation: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/vacation`, submission),
  contacts: (query) => request("GET", `/contacts?${new URLSearchParams(query)}`),
  addContact: (body) => request("POST", "/contacts", body),
  removeContact: (id, body) => request("DELETE", `/contacts/${encodeURIComponent(id)}`, body),
  tournaments: (offset = 0, limit = 100) => request("GET", `/tournaments?offset=${offset}&limit=${limit}`),
  tournament: (id) => request("GET", `/tournaments/${encodeURIComponent(id)}`),
  ratings: (ruleset) => request("GET", `/ratings/${encodeURIComponent(ruleset)}`),
  createTournament: (body) => request("POST", "/tournaments", body),
  joinTournament: (id, submission) => request("POST", `/tournaments/${encodeURIComponent(id)}/join`, submission),
  withdrawTournament: (id, submission) => request("POST", `/tournaments/${encodeURIComponent(id)}/withdraw`, submission),
  startTournament: (id, submission) => request("POST", `/tournaments/${encodeURIComponent(id)}/start`, submission),
  resign: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/resign`, submission),
  offer: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/offers`, submission),
  answer: (id, position, submission) =>
    request("POST", `/games/${encodeURIComponent(id)}/offers/${encodeURIComponent(position)}/answer`, submission),
  messages: (id, query = {}) => request("GET", `/games/${encodeURIComponent(id)}/messages?${new URLSearchParams(query)}`),
  say: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/messages`, submission),
  mute: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/messages/mute`, submission),
  rekey: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/rekey`, submission),
  recover: (id, submission) => request("POST", `/games/${encodeURIComponent(id)}/recover`, submission),
  playerGames: (key, query = "") => request("GET", `/players/${encodeURIComponent(key)}/games${query}`),
  makeDeviceLink: (box) => request("POST", "/keys/links", { box }),
  takeDeviceLink: (link) => request("GET", `/keys/links/${encodeURIComponent(link)}`),
  deviceLinkStatus: (link) => request("GET", `/keys/links/${encodeURIComponent(link)}/status`),
  move: (id, submission, wait = 5) => request("POST", `/games/${encodeURIComponent(id)}/moves?wait=${wait}`, submission),
};
