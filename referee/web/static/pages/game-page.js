// The game page: board, players, acceptances, the move picker, signing and submission, live updates; the
// players' own decisions (decisions.js: resign, offers, answers) and the message panel (messages.js).

import { api, ApiError } from "../shared/api.js";
import { expiredContext, markForfeits, renderClocks } from "./clock.js";
import { entropy, findKey, signEnvelope } from "../shared/keys.js";
import { describeVerdict, normGame, normLegal, rulesetModule, seatName } from "../games/model.js";
import { afterPaint, clearErrors, el, shortKey, showError } from "../shared/ui.js";
import { followGame } from "../shared/live.js";
import { followedKeys, subscribe } from "../shared/live-hub.js";
import { notifyButton, turnNotice } from "../shared/attention.js";
import { decisionsPanel, logFacts, logReader, markDecisions } from "./decisions.js";
import { messagesPanel } from "./messages.js";
import { seatOffersPanel } from "./seat-offers.js";
import { bringKeyHere } from "./key-travel.js";
import { lostKeyButton, seatKeysPanel } from "./seat-keys.js";
import { actionWords, gameName, playersLine } from "../games/game-names.js";
import { _, listAnd, pgettext } from "../shared/i18n.js";

const WEB = document.body.dataset.web || "/play/";
const root = document.getElementById("game");
const gameId = root.dataset.game;
const pollMs = Number(root.dataset.pollMs) || 1500;
let pageTitle = document.title;

let game = null; // normalised GET /games/<id>
let components = null;
let mod = null;
let legal = null; // {seq, seat, moves}
let picker = null;
let busy = false;
let shownSeq = null;
let shownStatus = null;
let acceptedSeats = new Set();
let rematch = null; // the finished game's rematch: {id, asker (a seat of this game), mine (my seats there), accepted}
let boardDrawn = false; // whether the board was drawn once (its first drawing may finish after a paint)
let boardDrawing = null; // what is left of the board's drawing (a promise), or null
let facts = { moved: new Set(), lastMove: null, tournament: false }; // what the log says (decisions.js)
const logEntries = logReader(gameId);
// The first reads, all at once: the game, its ruleset (when the page names it) and its log — preloaded by the
// page's head, so that a slow phone waits one round trip for them, not three in turn (issue 49).
const firstLog = api.log(gameId, "?from=0&limit=1000");
logEntries.prime(firstLog);
let firstReads = { game: api.game(gameId), ruleset: root.dataset.ruleset
  ? api.ruleset(root.dataset.ruleset).catch(() => null) : null };

function nowIso() {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

function mySeats() {
  return game.seats.map((s, i) => (s && findKey(s.key) ? i : -1)).filter((i) => i >= 0);
}

async function loadAccepted() {
  if (game.accepted) {
    acceptedSeats = new Set(game.accepted);
    return;
  }
  // Older documents do not list acceptances: read them from the log.
  const data = await api.log(gameId);
  const entries = Array.isArray(data) ? data : data.entries || data.log || [];
  acceptedSeats = new Set(entries.filter((e) => e.type === "accepted").map((e) => e.seat));
}

/** What to do next, in words: "Your turn: bid or pass", "Waiting for Bob". Ids and log positions are in
 * the details line (renderDetails). */
function statusText() {
  const names = (seats) => seats.map((i) => seatName(game.seats, i)).join(", ");
  if (game.status === "waiting") {
    const mine = mySeats().filter((i) => !acceptedSeats.has(i));
    const others = game.seats.map((_, i) => i).filter((i) => !acceptedSeats.has(i) && !mine.includes(i));
    if (mine.length) {
      return others.length ? _("Your turn: accept the game (also waiting for {names})", { names: names(others) })
        : _("Your turn: accept the game");
    }
    return others.length ? _("Waiting for {names} to accept", { names: names(others) }) : _("Starting…");
  }
  if (game.status === "finished") return _("Game over");
  if (game.status === "aborted") return _("Game aborted");
  if (game.status === "cancelled") return _("Game cancelled");
  if (game.toMove === null || game.toMove === undefined) return game.status;
  const who = seatName(game.seats, game.toMove);
  if (mySeats().includes(game.toMove)) {
    const what = legal ? actionWords(legal.moves) : "";
    const turn = mySeats().length > 1 ? _("Your turn ({name})", { name: who }) : _("Your turn");
    return what ? _("{turn}: {what}", { turn, what }) : turn;
  }
  return _("Waiting for {name}", { name: who });
}

function renderDetails() {
  const mismatch = game.raw.version_mismatch;
  document.getElementById("detail-ruleset").textContent = `${game.ruleset}${game.version ? ` · ${_("version {version}", { version: game.version })}` : ""}` +
    `${mismatch ? ` · ${_("replayed by engine version {installed}, pinned {pinned}", { installed: mismatch.installed, pinned: mismatch.pinned })}` : ""}`;
  document.getElementById("detail-seq").textContent = _("{n} entries · status {status}", { n: game.seq, status: game.status });
}

function renderTitle() {
  const players = playersLine(game.seats);
  document.getElementById("game-title").replaceChildren(el("span", { class: "players-title" }, players),
    " ", el("small", { id: "ruleset-name" }, `· ${gameName(game.ruleset)}`));
  pageTitle = `${players} · ${gameName(game.ruleset)} · ${_("the referee")}`;
}

function renderSeats() {
  const mine = mySeats();
  document.getElementById("seat-list").replaceChildren(...game.seats.map((s, i) => el("li", {
    class: `${game.toMove === i ? "to-move" : ""}`, dataset: { seat: String(i) },
  }, el("strong", { class: "name", title: s.name || null }, s.name || _("Seat {n}", { n: i + 1 })),
  s.bot ? [" ", el("span", { class: "bot-mark", title: _("this seat is played by a program") }, _("bot"))] : "",
  mine.includes(i) ? ` ${_("(you)")}` : "",
  game.toMove === i && game.status === "active" ? ` — ${_("to move")}` : "",
  game.status === "waiting" && s.key ? (acceptedSeats.has(i) ? ` — ${_("accepted")}` : ` — ${_("not accepted yet")}`) : "",
  el("br"), seatKeyLine(s))));
}

/** A seat's key; a seat nobody holds yet (CONTRACT section 14) has none: it is open to anyone, or invited. */
function seatKeyLine(s) {
  if (!s.key) {
    return el("small", { class: "seat-open" }, s.open === "anyone" ? pgettext("seat", "open to anyone") : pgettext("seat", "invited"));
  }
  return el("small", { class: "mono", title: s.key }, _("key {key}", { key: shortKey(s.key) }));
}

function renderAccept() {
  const panel = document.getElementById("accept-panel");
  const buttons = document.getElementById("accept-buttons");
  const pending = game.status === "waiting" ? mySeats().filter((i) => !acceptedSeats.has(i)) : [];
  panel.hidden = pending.length === 0;
  buttons.replaceChildren(...pending.map((seat) => el("button", { type: "button", class: "primary accept",
    dataset: { seat: String(seat) }, onclick: () => accept(seat) }, _("Accept as {name}", { name: seatName(game.seats, seat) }))));
}

/** A finished game's "Rematch" for a seat of this browser (CONTRACT section 14): the same players, ruleset, options and
 * clock, the seats rotated; asked again (by any seat) it is the same game. Once another seat asked for it — learnt
 * from the game (`rematch`) or at once from the browser's live stream (the rematch's `created`, which names this game
 * in `rematch_of`) — the panel says "X asks for a rematch" and its one button accepts it (signed here) and goes there;
 * once this browser's seats there have accepted, it only goes there. */
function renderRematch() {
  const panel = document.getElementById("rematch-panel");
  const button = document.getElementById("rematch");
  const said = document.getElementById("rematch-ask");
  const mine = mySeats();
  panel.hidden = game.status !== "finished" || !mine.length;
  if (panel.hidden) return;
  const next = game.raw.rematch || (rematch && rematch.id);
  if (next && (!rematch || rematch.id !== next)) {
    learnRematch(next); // draws again once known
  }
  const known = rematch && rematch.id === next ? rematch : null;
  const pending = known && known.mine.some((i) => !known.accepted.includes(i));
  const asker = known && known.asker !== null && !mine.includes(known.asker) ? seatName(game.seats, known.asker) : null;
  said.textContent = asker && pending ? _("{name} asks for a rematch", { name: asker }) : "";
  said.hidden = !said.textContent;
  button.textContent = !next ? _("Rematch") : pending ? _("Accept the rematch") : _("Go to the rematch");
  button.dataset.rematch = next || "";
  panel.dataset.state = !next ? "none" : pending ? "asked" : "accepted";
  button.onclick = () => (!next ? askRematch(mine[0]) : pending ? acceptRematch(known) : goToGame(next));
}

let learning = null;
/** Read the rematch `id`: who asked (its `created` keeps the signed ask) and which of this browser's seats there
 * have accepted. */
async function learnRematch(id, created = null) {
  if (learning === id) return;
  learning = id;
  try {
    const [next, first] = await Promise.all([api.game(id), created ? { entries: [created] } : api.log(id, "?from=0&limit=1")]);
    const entry = (first.entries || [])[0] || {};
    const ask = ((entry.rematch || {}).envelope || {});
    const seats = next.seats || [];
    rematch = { id, asker: typeof ask.seat === "number" ? ask.seat : null,
      mine: seats.map((s, i) => (s && s.key && findKey(s.key) ? i : -1)).filter((i) => i >= 0),
      accepted: next.accepted || [], status: next.status };
    if (game) renderRematch();
  } catch {
    // the button still goes to the rematch; its page accepts it
  } finally {
    learning = null;
  }
}

function goToGame(id) {
  window.location.assign(`${WEB}games/${encodeURIComponent(id)}`);
}

/** Accept the rematch for each seat of this browser that has not (one click), then go to it. */
async function acceptRematch(known) {
  clearErrors();
  const button = document.getElementById("rematch");
  button.disabled = true;
  try {
    for (const seat of known.mine.filter((i) => !known.accepted.includes(i))) {
      for (let attempt = 0; ; attempt += 1) {
        const next = await api.game(known.id);
        const entry = findKey(next.seats[seat].key);
        const envelope = { v: 1, ctx: "referee/accept", game: known.id, seat, seq: next.seq, prev: next.head,
          entropy: entropy(), at: nowIso() };
        try {
          await api.accept(known.id, { envelope, sig: await signEnvelope(entry, envelope) });
          break;
        } catch (err) {
          if (!(err instanceof ApiError) || err.status !== 409 || err.code === "game/expired" || attempt > 0) throw err;
        }
      }
    }
    goToGame(known.id);
  } catch (err) {
    button.disabled = false;
    showError(err, _("The acceptance was refused"), { reveal: true });
  }
}

async function askRematch(seat) {
  clearErrors();
  const button = document.getElementById("rematch");
  button.disabled = true;
  try {
    const envelope = { v: 1, ctx: "referee/rematch", game: gameId, seat, at: nowIso() };
    const made = await api.rematch(gameId, await submit(envelope));
    goToGame(made.game || made.id);
  } catch (err) {
    button.disabled = false;
    showError(err, _("The rematch was refused"), { reveal: true });
  }
}

/** What the board last drawn shows of the picker: ``{ picker, key }``, the key from the ruleset's module's
 * ``boardPickerKey`` (null when it has none: every choice redraws the board). */
let drawnPicker = null;

function renderBoard() {
  const board = document.getElementById("board");
  drawnPicker = null;
  if (!mod || !components || !game.state) {
    board.replaceChildren(el("p", { class: "muted" }, game.status === "waiting"
      ? _("The board appears once every player has accepted and the game has started.") : _("No board to show yet.")));
    return;
  }
  // the page's first drawing may finish after a paint (towerup.js: the players' boards); load() waits for it
  const later = boardDrawn ? null : afterPaint;
  boardDrawn = true;
  boardDrawing = mod.renderBoard(board, { components, view: game.state, seats: game.seats, picker, mySeats: mySeats(),
    later }) || null;
  drawnPicker = { picker, key: mod.boardPickerKey ? mod.boardPickerKey(picker) : null };
}

/** Whether the board drawn still shows what the picker offers and holds (a choice in the move panel only). */
function boardShowsPicker() {
  return Boolean(drawnPicker) && drawnPicker.picker === picker && drawnPicker.key !== null
    && mod.boardPickerKey(picker) === drawnPicker.key;
}

/** A move was submitted, or the move panel hid, with the focus in the panel, which leaves it on no element. */
let panelHadFocus = false;

function renderMovePanel() {
  const panel = document.getElementById("move-panel");
  const active = picker && game.status === "active";
  if (!active && !panel.hidden && panel.contains(document.activeElement)) panelHadFocus = true;
  panel.hidden = !active;
  if (!active) return;
  const heading = document.getElementById("move-h");
  heading.textContent = _("Your move ({name})", { name: seatName(game.seats, legal.seat) });
  document.getElementById("move-prompt").textContent = picker.prompt();
  document.getElementById("move-controls").replaceChildren(picker.controls());
  const move = picker.move();
  document.getElementById("move-summary").textContent = move ? mod.describeMove(move, components) : "";
  document.getElementById("submit-move").disabled = !move || busy;
  // Keyboard users keep their place from one turn to the next: the focus they left in the panel (on the
  // button that submitted their last move) comes back to the panel's heading, unless they moved it meanwhile,
  // so that the next move's controls are the next Tab, not a walk from the top of the page.
  if (panelHadFocus) {
    panelHadFocus = false;
    if (!document.activeElement || document.activeElement === document.body) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
  }
}

function renderVerdict() {
  const v = game.verdict;
  const node = document.getElementById("verdict");
  node.textContent = describeVerdict(v, game.seats);
  node.dataset.status = v ? v.status : "";
  node.dataset.rule = v && v.error && v.error.rule ? v.error.rule : "";
}

async function renderResult() {
  const section = document.getElementById("result-section");
  if (game.status !== "finished") {
    section.hidden = true;
    return;
  }
  try {
    const result = await api.result(gameId);
    const winners = ((result.result || result).seats || []).filter((r) => r.rank === 1).map((r) => seatName(game.seats, r.seat));
    if (winners.length) {
      document.getElementById("status-line").textContent = winners.length === 1 ? _("Game over: {name} won", { name: winners[0] })
        : _("Game over: {names} share first place", { names: listAnd(winners) });
    }
    document.getElementById("result").replaceChildren(mod.scoreTable(result.result || result, game.seats, components));
    markForfeits(document.getElementById("result"), result.result || result, game.seats);
    markDecisions(document.getElementById("result"), result.result || result, game.seats);
    section.hidden = false;
  } catch (err) {
    showError(err, _("Loading the result"));
  }
}

/** "Is this your seat?": on a device without any of the game's seat keys, while the game waits or runs (section 15). */
function renderBringKey() {
  const panel = document.getElementById("bring-key-panel");
  const keyed = game.seats.some((s) => s && s.key);
  panel.hidden = !keyed || mySeats().length > 0 || !["waiting", "active"].includes(game.status);
  const box = document.getElementById("bring-key");
  if (panel.hidden || box.childElementCount) return;
  box.append(bringKeyHere({ idPrefix: "bring-key", onKey: (entry) => {
    const said = document.getElementById("bring-key-said");
    if (!game.seats.some((s) => s && s.key === entry.public)) {
      said.textContent = _("The key “{name}” is here now, but it holds no seat of this game.", { name: entry.name });
      return;
    }
    safeLoad(true);
  } }), lostKeyButton({ gameId, onAsked: () => safeLoad(true),
    seatsOf: () => game.seats.map((s, seat) => ({ seat, name: (s && s.name) || _("Seat {n}", { n: seat + 1 }), key: s && s.key }))
      .filter((s) => s.key) }));
}

const seatKeys = seatKeysPanel({ box: document.getElementById("seat-keys"), gameId, reload: () => safeLoad(true) });

function renderSeatKeys() {
  seatKeys.render(game.raw, mySeats());
  document.getElementById("seat-keys-panel").hidden = document.getElementById("seat-keys").hidden;
}

function renderAll() {
  document.getElementById("status-line").textContent = statusText();
  renderBringKey();
  renderSeatKeys();
  renderTitle();
  renderDetails();
  renderSeats();
  renderAccept();
  renderRematch();
  renderBoard();
  renderMovePanel();
  renderVerdict();
  decisions.render(game, facts, mySeats());
  offers.render(game.raw, mySeats());
  root.dataset.seq = String(game.seq);
  root.dataset.status = game.status;
  root.dataset.toMove = game.toMove === null || game.toMove === undefined ? "" : String(game.toMove);
  root.dataset.myTurn = picker && game.status === "active" ? "true" : "false";
  document.title = root.dataset.myTurn === "true" ? `${_("Your turn")} · ${pageTitle}` : pageTitle;
  turnNotice(gameId, root.dataset.myTurn === "true", `${_("Your turn")} · ${pageTitle}`);
}

function onPickerChange() {
  // Keyboard users keep their place: after a choice, focus moves to the next thing to choose.
  const active = document.activeElement;
  const inPicker = active && (document.getElementById("board").contains(active)
    || document.getElementById("move-panel").contains(active));
  if (!boardShowsPicker()) renderBoard(); // a bid or a pass changes only the move panel
  renderMovePanel();
  if (inPicker && !document.getElementById("move-panel").contains(document.activeElement)) {
    const submit = document.getElementById("submit-move");
    const next = !submit.disabled ? submit
      : document.querySelector("#board [data-choice='1'], #move-controls button.choice");
    if (next) next.focus();
  }
}

/** ``ahead``: a GET …/legal-moves asked for together with the game (load()), used when it answers for the
 * position the page now shows. */
async function refreshLegal(ahead = null) {
  picker = null;
  legal = null;
  const mine = mySeats();
  if (game.status !== "active" || game.toMove === null || !mine.includes(game.toMove)) return;
  let raw = ahead ? await ahead : null;
  if (!raw || raw.seq !== game.seq) raw = await api.legalMoves(gameId);
  const data = normLegal(raw);
  const seat = data.seat ?? game.toMove;
  if (!mine.includes(seat)) return;
  legal = { seq: game.seq, seat, moves: data.moves };
  picker = mod.makePicker({ legal: data.moves, seat, components, view: game.state, onchange: onPickerChange });
}

/** ``notice``: the stream's notice that asked for this load, if one did. After another seat's move in a game
 * where this browser holds a seat, it is likely this seat's turn: the legal moves are asked for together with
 * the game, not after it (one round trip instead of two; refreshLegal() asks again if they do not fit). */
async function load(notice = null) {
  const mine = game ? mySeats() : [];
  const seat = notice && notice.entry ? notice.entry.seat : undefined;
  const ahead = game && game.status === "active" && mine.length && typeof seat === "number" && !mine.includes(seat)
    ? api.legalMoves(gameId).catch(() => null) : null;
  const first = firstReads;
  firstReads = null;
  const fresh = normGame(await (first ? first.game : api.game(gameId)));
  // an answer older than what the page shows (two loads crossed: a live update's and a submission's) is dropped
  if (game && shownSeq !== null && fresh.seq < shownSeq) return false;
  const changed = !game || fresh.seq !== shownSeq || fresh.status !== shownStatus;
  const rematchNews = Boolean(game) && fresh.raw.rematch !== game.raw.rematch;
  game = fresh;
  if (!components || !mod) {
    mod = rulesetModule(game.ruleset);
    if (!mod) throw new ApiError(0, { code: "web/unknown_ruleset", message: _("this page cannot draw the ruleset {ruleset}", { ruleset: game.ruleset }) });
    const hinted = first && first.ruleset && root.dataset.ruleset === game.ruleset ? await first.ruleset : null;
    const rs = hinted || await api.ruleset(game.ruleset);
    components = rs.components || rs;
  }
  renderClocks(document.getElementById("clock-panel"), document.getElementById("clocks"), game.raw, mySeats(), () => safeLoad(true));
  if (!changed) {
    if (rematchNews) renderRematch();
    return rematchNews;
  }
  if (game.status === "waiting") await loadAccepted();
  // the log (usually already here: the stream's notices carry their entries) and the legal moves at once
  const [entries] = await Promise.all([game.raw.decisions ? logEntries.update(game.seq) : null, refreshLegal(ahead)]);
  if (entries) facts = logFacts(entries, game.raw.decisions.voided || []);
  shownSeq = game.seq;
  shownStatus = game.status;
  renderAll();
  if (boardDrawing) await boardDrawing;
  await renderResult();
  // A rejected last entry by one of my seats is worth an error message (the server took it, the replay refused it).
  const v = game.verdict;
  if (v && v.status === "rejected" && v.error && mySeats().includes(v.seat) && v.seq === game.seq - 1) {
    showError({ code: v.error.code, rule: v.error.rule, message: v.error.message }, _("Your move #{seq} was rejected", { seq: v.seq }),
      { reveal: true });
  }
  return true;
}

async function submit(envelope) {
  const entry = findKey(game.seats[envelope.seat].key);
  if (!entry) throw new Error(_("this browser has no key for that seat"));
  const sig = await signEnvelope(entry, envelope);
  return { envelope, sig };
}

function acceptance(seat) {
  return { v: 1, ctx: "referee/accept", game: gameId, seat, seq: game.seq, prev: game.head, entropy: entropy(), at: nowIso() };
}

async function accept(seat) {
  clearErrors();
  busy = true;
  try {
    try {
      // Sign for the log's current position, not the one this page last drew.
      game = normGame(await api.game(gameId));
      await api.accept(gameId, await submit(acceptance(seat)));
    } catch (err) {
      // Another seat accepted first, so the log moved on: an acceptance means the same at any position,
      // so sign it again for the new position (once).
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
      game = normGame(await api.game(gameId));
      if (game.status !== "waiting") throw err;
      await api.accept(gameId, await submit(acceptance(seat)));
    }
  } catch (err) {
    showError(err, _("The acceptance was refused"), { reveal: true });
  } finally {
    busy = false;
    await safeLoad(true);
  }
}

async function submitMove(move) {
  clearErrors();
  busy = true;
  // (disabling the focused button drops the focus: remembered here, given back at the next turn)
  if (document.getElementById("move-panel").contains(document.activeElement)) panelHadFocus = true;
  document.getElementById("submit-move").disabled = true;
  const status = document.getElementById("move-prompt");
  status.textContent = _("Signing and submitting…");
  try {
    const seat = legal ? legal.seat : game.toMove;
    const envelope = { v: 1, ctx: "referee/move", game: gameId, seat, seq: game.seq, prev: game.head, move, at: nowIso() };
    const response = await api.move(gameId, await submit(envelope));
    const verdict = response && (response.verdict || (response.status === "rejected" ? response : null));
    if (verdict && verdict.status === "rejected" && verdict.error) {
      showError({ code: verdict.error.code, rule: verdict.error.rule, message: verdict.error.message }, _("Your move was rejected"),
        { reveal: true });
    }
  } catch (err) {
    showError(err, expiredContext(err) || (err.code === "submission/stale"
      ? _("The game moved on before your move arrived; the board now shows the new position")
      : _("Your move was refused")), { reveal: true });
  } finally {
    busy = false;
    await safeLoad(true);
  }
}

const decisions = decisionsPanel({ section: document.getElementById("decisions-panel"), gameId, sign: submit,
  reload: () => safeLoad(true) });
const offers = seatOffersPanel({ section: document.getElementById("seat-offers"), gameId, reload: () => safeLoad(true) });
const messages = messagesPanel({ section: document.getElementById("messages-panel"), gameId, getGame: () => game,
  mySeats, intervalMs: Number(root.dataset.messagesMs) || 5000 });

async function safeLoad(force = false) {
  if (force) shownSeq = null;
  try {
    await load();
    root.dataset.loaded = "true";
  } catch (err) {
    showError(err, _("Loading the game"));
  }
}

let messagesTimer = null;
/** Look for new messages shortly after the board shows a change, not with it: when moves come into many open
 * games at once, their tabs' reloads go first (one look for several changes in a row). */
function refreshMessagesSoon() {
  clearTimeout(messagesTimer);
  messagesTimer = setTimeout(() => {
    messagesTimer = null;
    messages.refresh();
  }, 500);
}

// Called by live.js on each new log entry (Server-Sent Events), or every pollMs when the stream is down.
async function refresh({ notice = null } = {}) {
  if (busy) return false;
  try {
    const changed = await load(notice);
    if (changed) refreshMessagesSoon(); // a move, an offer…: a good moment to look for new messages too
    return changed;
  } catch (err) {
    // A failed update is shown once; the next one tries again.
    if (!document.querySelector(`.error[data-code="${err.code}"]`)) showError(err, _("Updating the game"));
    return false;
  }
}

document.getElementById("submit-move").addEventListener("click", () => {
  const move = picker && picker.move();
  if (move) submitMove(move);
});
document.getElementById("reset-move").addEventListener("click", () => picker && picker.reset());
document.getElementById("manual-submit").addEventListener("click", () => {
  let move;
  try {
    move = JSON.parse(document.getElementById("manual-json").value);
  } catch (err) {
    showError({ code: "form/invalid_json", message: _("not JSON: {problem}", { problem: err.message }) }, _("Your move"));
    return;
  }
  submitMove(move);
});

let live = null;
let rematchWatch = null;
// A tournament's game names its tournament in its `created` entry: link back to the tournament's page.
firstLog.then((page) => {
  const created = (page.entries || [])[0];
  if (!created || typeof created.tournament !== "string") return;
  document.getElementById("tournament-link").replaceChildren(" · ", el("a", { id: "tournament-back",
    href: `${WEB}tournaments/${encodeURIComponent(created.tournament)}` }, _("Tournament {id}", { id: created.tournament })));
}).catch(() => {}); // only a convenience: the game page works without it

safeLoad().then(() => {
  if (game) messages.start();
  if (game && mySeats().length && game.status !== "finished") notifyButton(document.querySelector(".game-links"));
  // a running game of one of this browser's keys is on the browser's stream anyway (live-hub.js)
  const covered = Boolean(game) && (game.status === "waiting" || game.status === "active")
    && game.seats.some((s) => s && followedKeys().includes(s.key));
  live = followGame(gameId, { root, refresh, pollMs, seqOf: () => Number(root.dataset.seq), covered,
    onEntry: (position, entry) => logEntries.offer(position, entry) });
  if (game && game.status === "finished" && mySeats().length) {
    // another seat's rematch: its `created` comes on the browser's stream (a new game of this browser's keys)
    rematchWatch = subscribe({ onNotice: (notice) => {
      const entry = notice && notice.entry;
      const of = entry && entry.type === "created" && entry.rematch_of;
      if (!of || of.game !== gameId || rematch) return;
      game.raw.rematch = notice.game;
      learnRematch(notice.game, entry);
    } });
  }
});
window.addEventListener("beforeunload", () => {
  if (live) live.stop();
  if (rematchWatch) rematchWatch.stop();
  messages.stop();
});
