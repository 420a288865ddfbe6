// One live connection per browser: every page of the site (game pages, replays, the lobby, "My games") shares
// ONE EventSource on GET /players/events?keys=…&games=… (docs/service.md, "A browser's one stream"): the
// running games of every key kept in this browser, the other games that open pages follow, and the lobby's
// new games.
//
// The tabs elect a leader with the Web Locks API (navigator.locks): the tab holding the lock "referee-live"
// opens the stream and relays every notice to the other tabs over a BroadcastChannel; when it closes, the
// lock passes to a waiting tab, which asks every tab what it follows and opens the stream again from the
// last event id (`?last_event_id=`), so nothing is missed. A tab that follows a game the stream does not
// cover tells the leader, which reopens the stream with it (again from the last id).
// Without locks or BroadcastChannel (old browsers) each tab holds a stream of its own.
//
// subscribe({games, onNotice, onState}) → {setGames(games), stop()}: `onNotice({game, position, type})` for
// every notice (a page filters what concerns it), `onState("open" | "down")` when the stream opens (a page
// reloads then, to catch up) or fails (a page polls meanwhile).

import { listKeys } from "./keys.js";

const ROOT = (document.body && document.body.dataset.api) || "";
const CHANNEL = "referee-live";
const LOCK = "referee-live";
/** how long a new leader waits for the other tabs to say what they follow before it connects (ms) */
const GATHER_MS = 60;
/** the most games one stream is asked for besides the keys' (the server's limit) */
const MAX_GAMES = 100;

const tab = Math.random().toString(36).slice(2);
const subscribers = new Set();
const shared = typeof BroadcastChannel !== "undefined" && Boolean(navigator.locks);
let channel = null;
let leader = false;
let state = "connecting";
// leader only: what each tab follows, the stream, the last event id
const wanted = new Map();
let source = null;
let sourceUrl = "";
let lastId = "";
let reconnectTimer = null;

function myGames() {
  const games = new Set();
  for (const s of subscribers) for (const g of s.games) games.add(g);
  return [...games];
}

function deliver(message) {
  if (message.id) lastId = message.id; // every tab knows it: a new leader resumes from it
  if (message.t === "notice") for (const s of subscribers) s.onNotice(message.notice);
  if (message.t === "state") {
    state = message.state;
    for (const s of subscribers) s.onState(state);
  }
}

function broadcast(message) {
  deliver(message); // BroadcastChannel does not deliver to its sender
  if (channel) channel.postMessage(message);
}

/** The keys whose running games the stream follows (the server takes at most 10). */
export function followedKeys() {
  return [...new Set(listKeys().map((k) => k.public))].slice(0, 10);
}

/** This browser's own id for the stream (`?client=`): its streams share one of the server's slots per address
 * (a new one takes over the slot of the one it replaces). Per browser when the tabs share the stream, else per tab. */
function randomId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
let clientId = "";
function streamClient() {
  if (clientId) return clientId;
  clientId = randomId();
  if (shared) {
    try {
      const kept = localStorage.getItem("referee.live-client.v1");
      if (kept && /^[0-9a-f]{24}$/.test(kept)) clientId = kept;
      else localStorage.setItem("referee.live-client.v1", clientId);
    } catch {
      // no storage: an id for this tab
    }
  }
  return clientId;
}

function streamUrl() {
  const keys = followedKeys();
  const games = new Set(myGames());
  for (const list of wanted.values()) for (const g of list) games.add(g);
  const params = [];
  if (keys.length) params.push(`keys=${encodeURIComponent(keys.join(","))}`);
  if (games.size) params.push(`games=${encodeURIComponent([...games].sort().slice(0, MAX_GAMES).join(","))}`);
  if (params.length) params.push(`client=${streamClient()}`);
  return params.length ? `${ROOT}/players/events?${params.join("&")}` : "";
}

function connect() {
  clearTimeout(reconnectTimer);
  reconnectTimer = null;
  const url = streamUrl();
  if (url === sourceUrl && source) return;
  if (source) source.close();
  source = null;
  sourceUrl = url;
  if (!url || typeof EventSource === "undefined") {
    broadcast({ t: "state", state: "down" });
    return;
  }
  const opened = new EventSource(lastId ? `${url}&last_event_id=${encodeURIComponent(lastId)}` : url);
  source = opened;
  opened.addEventListener("open", () => {
    if (source === opened) broadcast({ t: "state", state: "open", id: lastId });
  });
  opened.addEventListener("error", () => { if (source === opened) broadcast({ t: "state", state: "down" }); });
  opened.addEventListener("message", (event) => {
    if (source !== opened) return;
    let notice;
    try {
      notice = JSON.parse(event.data);
    } catch {
      return;
    }
    broadcast({ t: "notice", notice, id: event.lastEventId });
  });
}

/** leader: connect again soon (several tabs announcing at once make one reconnection) */
function reconnectSoon() {
  if (!leader || reconnectTimer) return;
  reconnectTimer = setTimeout(connect, 30);
}

function onMessage(event) {
  const message = event.data || {};
  if (message.t === "notice" || (message.t === "state" && (!message.to || message.to === tab))) {
    deliver(message);
  } else if (message.t === "want" && leader) {
    const before = streamUrl();
    wanted.set(message.tab, message.games || []);
    if (streamUrl() !== before || !source) reconnectSoon();
    else if (state === "open") channel.postMessage({ t: "state", state: "open", to: message.tab }); // a newcomer learns it
  } else if (message.t === "bye" && leader) {
    wanted.delete(message.tab);
  } else if (message.t === "who") {
    announce();
  }
}

function announce() {
  if (channel) channel.postMessage({ t: "want", tab, games: myGames() });
}

function becomeLeader() {
  leader = true;
  document.documentElement.dataset.liveLeader = "true";
  channel.postMessage({ t: "who" });
  setTimeout(connect, GATHER_MS);
  return new Promise(() => {}); // the lock is held until this tab goes away
}

function start() {
  if (channel !== null || leader) return;
  if (!shared) {
    leader = true; // a stream of its own
    connect();
    return;
  }
  channel = new BroadcastChannel(CHANNEL);
  channel.addEventListener("message", onMessage);
  navigator.locks.request(LOCK, becomeLeader);
  window.addEventListener("storage", (event) => { if (event.key === "referee.keys.v1") changed(); }); // a key added
  window.addEventListener("pagehide", () => {
    if (channel) channel.postMessage({ t: "bye", tab });
    if (source) source.close();
  });
  announce();
}

function changed() {
  if (leader) reconnectSoon();
  else announce();
}

/** Follow notices of the browser's stream (see the top of this file). */
export function subscribe({ games = [], onNotice = () => {}, onState = () => {} }) {
  const sub = { games: [...games], onNotice, onState };
  subscribers.add(sub);
  start();
  changed();
  if (state === "open") setTimeout(() => onState("open"), 0);
  return {
    setGames(next) {
      const before = sub.games.join(",");
      sub.games = [...next];
      if (sub.games.join(",") !== before) changed();
    },
    stop() {
      subscribers.delete(sub);
    },
  };
}
