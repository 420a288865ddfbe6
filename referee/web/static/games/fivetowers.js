// 5 Towers: the board (display, towers, demolition piles, bidding, deck) as SVG, the move picker
// (bid/pass; cards in placement order and the optional demolition), and the replay chart.

import { choosable, clip, s, svgRoot, title } from "./svg.js";
import { lineChart, tiebreakChain, winnersLine } from "./score.js";
import { el } from "../shared/ui.js";
import { zoomable } from "./zoom.js";
import { _, ngettext, pgettext } from "../shared/i18n.js";

// The towers' names: the rulebook names the sand tower ("Sandturm"); the other four are the project's own
// (fixtures/fivetowers/suits.json), translated in the catalogs (docs/languages.md).
const SUIT_NAMES = { sand: _("Sand tower"), ice: _("Ice tower"), moss: _("Moss tower"), lava: _("Lava tower"), stone: _("Stone tower") };
const SUIT_SHORT = { sand: _("Sand"), ice: _("Ice"), moss: _("Moss"), lava: _("Lava"), stone: _("Stone") };
const PHASES = { bid: _("bidding"), bidding: _("bidding"), build: _("building"), building: _("building") };

const FILL = { yellow: "#fbe7a1", blue: "#cfe0fb", green: "#cde9d3", red: "#f6cfcd", grey: "#e0e0e0" };
const STRIPE = { yellow: "#c99a06", blue: "#2f6fd6", green: "#2e7d45", red: "#c0392b", grey: "#5f5f5f" };

function suitsOf(components) {
  return components.suits || [];
}

function suitInfo(components, id) {
  const found = suitsOf(components).find((x) => x.id === id) || { id, name: id, colour: "grey" };
  return SUIT_NAMES[id] ? { ...found, name: SUIT_NAMES[id] } : found;
}

/** A tower's name on a big card: the short one ("Mousse") when the full one would not fit the card. */
function cardSuitName(components, suit) {
  const name = suitInfo(components, suit).name;
  return name.length > 11 ? SUIT_SHORT[suit] || name : name;
}

function parseCard(id) {
  const m = /^([a-z]+)-(\d+)(?:-(\d+))?$/.exec(id);
  return m ? { suit: m[1], value: Number(m[2]), copy: m[3] ? Number(m[3]) : 1 } : { suit: "?", value: NaN, copy: 1 };
}

function abbrev(suitId) {
  return suitId.slice(0, 2).replace(/^./, (c) => c.toUpperCase());
}

export function cardLabel(components, id) {
  const c = parseCard(id);
  const info = suitInfo(components, c.suit);
  return `${info.name} ${c.value}${c.value === 0 ? ` (${_("spire")})` : ""}${c.copy > 1 ? ` (${_("second copy")})` : ""}`;
}

function seatName(seats, i) {
  return (seats && seats[i] && seats[i].name) || _("Seat {n}", { n: i + 1 });
}

function drawCard(components, id, x, y, w, h, { big = false, order = null } = {}) {
  const c = parseCard(id);
  const info = suitInfo(components, c.suit);
  const g = s("g", { class: "card", dataset: { card: id }, transform: `translate(${x},${y})` },
    title(cardLabel(components, id)),
    s("rect", { width: w, height: h, rx: big ? 8 : 3, fill: FILL[info.colour] || "#eee",
      stroke: STRIPE[info.colour] || "#555", "stroke-width": big ? 3 : 1.5 }),
    s("rect", { width: big ? 10 : 6, height: h, fill: STRIPE[info.colour] || "#555", rx: big ? 4 : 2 }));
  if (big) {
    g.append(
      s("text", { x: w / 2 + 4, y: 22, "text-anchor": "middle", class: "card-suit", text: cardSuitName(components, c.suit) }),
      s("text", { x: w / 2 + 4, y: h / 2 + 16, "text-anchor": "middle", class: "card-value-big", text: String(c.value) }),
      s("text", { x: w / 2 + 4, y: h - 10, "text-anchor": "middle", class: "card-note",
        text: c.value === 0 ? `▲ ${_("spire")}` : c.value === 8 ? _("any on 8") : c.value === 9 ? _("9 on any") : "" }));
  } else {
    g.append(
      s("text", { x: 10, y: h - 6, class: "card-suit-small", text: abbrev(c.suit) }),
      s("text", { x: w - 6, y: h - 5, "text-anchor": "end", class: "card-value", text: c.value === 0 ? "▲0" : String(c.value) }));
  }
  if (order !== null) {
    // between the tower's name and the value, where it covers neither
    g.append(s("circle", { cx: w - 14, cy: 38, r: 11, class: "order-badge" }),
      s("text", { x: w - 14, y: 43, "text-anchor": "middle", class: "order-badge-text", text: String(order) }));
  }
  return g;
}

/** Provisional points of one seat's towers and demolitions, by FT-E2–E4 (the chart's y values). */
export function provisional(seatView) {
  let points = 0;
  let best = 0;
  for (const cards of Object.values(seatView.towers || {})) {
    const spire = cards.some((id) => parseCard(id).value === 0);
    points += cards.length * (spire ? 2 : 1);
    best = Math.max(best, cards.length);
  }
  const n = (seatView.demolished || []).length;
  return points + best - (n * (n + 1)) / 2;
}

/** The board's drawing width: on a wide screen one 900-unit table scaled to fit; on a narrow one (a phone)
 * a one-column layout exactly as wide as the screen, drawn at 1 unit = 1 CSS px, so that no text is smaller
 * than 12 px without zooming (the zoom buttons still enlarge it). */
function layoutWidth(container) {
  const avail = Math.floor((container.clientWidth || 0) - 10);
  return avail > 0 && avail < 700 ? Math.max(300, avail) : null;
}

let lastRender = null; // the last board drawn, redrawn when a phone turns (narrow ↔ wide, or a new width)
let resizeHooked = false;

export function renderBoard(container, args) {
  lastRender = { container, args, width: layoutWidth(container) };
  if (!resizeHooked) {
    resizeHooked = true;
    window.addEventListener("resize", () => {
      // only while the container still shows this board: a page may have drawn another there since (the verify
      // page draws a 5 Towers game, then a Tower Up one, in one container)
      if (!lastRender || !lastRender.container.isConnected || lastRender.container.firstChild !== lastRender.node) return;
      const width = layoutWidth(lastRender.container);
      if (width !== lastRender.width) renderBoard(lastRender.container, lastRender.args);
    });
  }
  const narrow = lastRender.width;
  const svg = narrow ? drawNarrow(narrow, args) : drawWide(args);
  // Zoomable like the Tower Up city.
  const zoom = zoomable("fivetowers-board", svg, "board");
  container.replaceChildren(zoom.node);
  lastRender.node = zoom.node;
  zoom.restore();
}

function headLines(view) {
  return [`${pgettext("game round", "Round {n}", { n: view.round })} · ${view.phase === "over" ? _("game over") : _("phase: {phase}", { phase: PHASES[view.phase] || view.phase })}`,
    `${_("Deck {n} cards", { n: view.deck_count })} · ${_("discard {n}", { n: view.discard.length })}`,
    `${_("Deck ran out {n} of 2 times", { n: view.exhaustions })}${view.reshuffled ? ` (${_("reshuffled")})` : ""}`];
}

/** The display's cards, each choosable when the picker offers it. */
function displayCard(components, picker, id, i, x, y, chosen, nextCards) {
  const order = chosen.indexOf(id);
  const card = drawCard(components, id, x, y, 90, 130, { big: true, order: order >= 0 ? order + 1 : null });
  if (nextCards.has(id)) {
    card.insertBefore(s("rect", { x: -5, y: -5, width: 100, height: 140, rx: 11, class: "pick-ring" }), card.firstChild.nextSibling);
    choosable(card, _("Take {card} as card {n}", { card: cardLabel(components, id), n: chosen.length + 1 }), () => picker.chooseCard(id));
  } else if (order >= 0) {
    card.classList.add("chosen");
    card.setAttribute("aria-label", _("{card}, chosen as card {n}", { card: cardLabel(components, id), n: order + 1 }));
  } else if (nextCards.size) {
    card.classList.add("unavailable"); // cannot be built now: not offered
  }
  return card;
}

function biddingGroup(view, seats, bx, y0) {
  const bidding = s("g", { class: "bidding", role: "group", "aria-label": _("Bidding") },
    s("text", { x: bx, y: y0, class: "section-label", text: _("Bidding") }),
    s("text", { x: bx, y: y0 + 24, text: _("Start player: {name}", { name: clip(seatName(seats, view.start_player)) }) }),
    s("text", { x: bx, y: y0 + 46, text: view.high_bid === null || view.high_bid === undefined ? _("No bid yet")
      : _("High bid: {n} by {name}", { n: view.high_bid, name: clip(seatName(seats, view.high_bidder), 16) }) }),
    s("text", { x: bx, y: y0 + 68, text: _("Highest possible bid: {n}", { n: view.max_bid }) }));
  const lines = (view.bidding || []).length + ((view.awaiting || []).length ? 1 : 0);
  (view.bidding || []).forEach((b, i) => bidding.append(s("text", { x: bx, y: y0 + 90 + i * 18, class: "small",
    text: `${clip(seatName(seats, b.seat))}: ${b.type === "pass" ? _("pass") : _("bid {n}", { n: b.amount })}` })));
  if ((view.awaiting || []).length) {
    bidding.append(s("text", { x: bx, y: y0 + 90 + (view.bidding || []).length * 18, class: "small muted",
      text: _("Still to bid: {names}", { names: view.awaiting.map((i) => clip(seatName(seats, i), 12)).join(", ") }) }));
  }
  return { node: bidding, height: 76 + lines * 18 };
}

/** One player's towers, with the demolition targets the picker offers; ``baseY`` is the ground line. */
function towersOf(g, { components, picker, lastMove }, sv, seat, x0, baseY, colW, cardH) {
  suitsOf(components).forEach((suit, k) => {
    const x = x0 + k * colW;
    const cards = (sv.towers || {})[suit.id] || [];
    g.append(s("text", { x: x + colW / 2 - 6, y: baseY + 14, "text-anchor": "middle", class: "small muted",
      text: SUIT_SHORT[suit.id] || suit.name.replace(/ tower$/i, "") }));
    g.append(s("line", { x1: x, y1: baseY, x2: x + colW - 12, y2: baseY, class: "ground" }));
    const tower = s("g", { class: "tower", role: "img", dataset: { suit: suit.id },
      "aria-label": cards.length ? _("{tower}: {values} (bottom to top)", { tower: suitInfo(components, suit.id).name, values: cards.map((id) => parseCard(id).value).join(", ") })
        : _("{tower}: not started", { tower: suitInfo(components, suit.id).name }) });
    const built = lastMove && lastMove.type === "build" && lastMove.seat === seat ? new Set(lastMove.cards) : new Set();
    cards.forEach((id, i) => {
      const card = drawCard(components, id, x, baseY - (i + 1) * (cardH + 2), colW - 12, cardH);
      if (built.has(id)) card.classList.add("last-move");
      tower.append(card);
    });
    if (picker && picker.kind === "fivetowers" && picker.seat === seat && picker.demolishOptions().includes(suit.id)) {
      const topId = cards[cards.length - 1];
      const ring = s("rect", { x: x - 3, y: baseY - cards.length * (cardH + 2) - 3, width: colW - 6, height: cardH + 6,
        rx: 4, class: `demolish-target${picker.demolish() === suit.id ? " selected" : ""}` });
      const hit = s("g", {}, ring);
      choosable(hit, _("Demolish the top card of your {tower} ({card})", { tower: suitInfo(components, suit.id).name, card: cardLabel(components, topId) }),
        () => picker.chooseDemolish(suit.id), { pressed: picker.demolish() === suit.id });
      tower.append(hit);
    }
    g.append(tower);
  });
}

function pileGroup(components, seats, sv, seat, x, y, perRow) {
  const pile = sv.demolished || [];
  const n = pile.length;
  const g = s("g", {}, s("text", { x, y, class: "small", text: ngettext("Demolition pile: {n} card", "Demolition pile: {n} cards", n) }),
    s("text", { x, y: y + 18, class: "small muted", text: n ? _("costs {points} points (FT-E4)", { points: (n * (n + 1)) / 2 }) : "" }));
  const pileG = s("g", { role: "img", "aria-label": _("{name}'s demolition pile: {cards}", { name: seatName(seats, seat),
    cards: pile.map((id) => cardLabel(components, id)).join(", ") || _("empty") }) });
  pile.forEach((id, i) => pileG.append(drawCard(components, id, x + (i % perRow) * 56, y + 26 + Math.floor(i / perRow) * 24, 52, 20)));
  g.append(pileG);
  return g;
}

function drawWide(args) {
  const { components, view, seats, picker, mySeats = [] } = args;
  const suits = suitsOf(components);
  const colW = 84;
  const cardH = 20;
  const rows = view.seats.map((sv) => Math.max(4, ...Object.values(sv.towers || {}).map((t) => t.length)));
  const rowHeights = rows.map((n) => n * (cardH + 2) + 78);
  const top = 250;
  const height = top + rowHeights.reduce((a, b) => a + b, 0) + 10;
  const width = Math.max(60 + suits.length * colW + 260, 900);
  const svg = svgRoot(width, height, _("5 Towers board"));
  svg.dataset.ruleset = "fivetowers";
  svg.dataset.layout = "wide";
  const head = headLines(view);
  svg.append(s("text", { x: 10, y: 24, class: "board-head", text: `${head[0]} · ${head[1]} · ${head[2]}` }));

  const display = s("g", { class: "display", role: "group", "aria-label": _("Display") });
  display.append(s("text", { x: 10, y: 52, class: "section-label", text: _("Display") }));
  const chosen = picker && picker.kind === "fivetowers" ? picker.chosenCards() : [];
  const nextCards = picker && picker.kind === "fivetowers" ? new Set(picker.nextCards()) : new Set();
  view.display.forEach((id, i) => display.append(displayCard(components, picker, id, i, 10 + i * 100, 62, chosen, nextCards)));
  if (!view.display.length) display.append(s("text", { x: 10, y: 130, class: "muted", text: `(${_("empty")})` }));
  svg.append(display);
  svg.append(biddingGroup(view, seats, 530, 52).node);

  let y = top;
  view.seats.forEach((sv, seat) => {
    const h = rowHeights[seat];
    const toMove = view.to_move === seat;
    const g = s("g", { class: `seat-row${toMove ? " to-move" : ""}`, role: "group", dataset: { seat: String(seat) },
      "aria-label": _("{name}'s towers", { name: seatName(seats, seat) }) });
    g.append(s("rect", { x: 4, y: y - 4, width: width - 8, height: h - 6, rx: 6, class: "seat-bg" }),
      s("text", { x: 12, y: y + 16, class: "seat-name", text:
        `${clip(seatName(seats, seat))}${mySeats.includes(seat) ? ` ${_("(you)")}` : ""}${toMove ? ` — ${_("to move")}` : ""} · ` +
        _("provisional {n} points", { n: provisional(sv) }) }, title(seatName(seats, seat))));
    towersOf(g, args, sv, seat, 12, y + h - 26, colW, cardH);
    g.append(pileGroup(components, seats, sv, seat, 12 + suits.length * colW + 10, y + 40, 5));
    svg.append(g);
    y += h;
  });
  return svg;
}

function drawNarrow(width, args) {
  const { components, view, seats, picker, mySeats = [] } = args;
  const suits = suitsOf(components);
  const colW = Math.floor((width - 12) / Math.max(1, suits.length));
  const cardH = 22;
  const parts = [];
  let y = 0;
  headLines(view).forEach((line, i) => parts.push(s("text", { x: 8, y: 20 + i * 20, class: i ? "small" : "board-head", text: line })));
  y = 20 + 2 * 20 + 18;

  const display = s("g", { class: "display", role: "group", "aria-label": _("Display") });
  display.append(s("text", { x: 8, y, class: "section-label", text: _("Display") }));
  const perRow = Math.max(1, Math.floor((width - 8) / 100));
  const chosen = picker && picker.kind === "fivetowers" ? picker.chosenCards() : [];
  const nextCards = picker && picker.kind === "fivetowers" ? new Set(picker.nextCards()) : new Set();
  view.display.forEach((id, i) => display.append(displayCard(components, picker, id, i, 10 + (i % perRow) * 100,
    y + 14 + Math.floor(i / perRow) * 142, chosen, nextCards)));
  if (!view.display.length) display.append(s("text", { x: 8, y: y + 30, class: "muted", text: `(${_("empty")})` }));
  parts.push(display);
  y += view.display.length ? 14 + Math.ceil(view.display.length / perRow) * 142 + 16 : 50;

  const bidding = biddingGroup(view, seats, 8, y);
  parts.push(bidding.node);
  y += bidding.height + 14;

  view.seats.forEach((sv, seat) => {
    const n = Math.max(4, ...Object.values(sv.towers || {}).map((t) => t.length));
    const pileRows = Math.ceil((sv.demolished || []).length / Math.max(1, Math.floor((width - 24) / 56)));
    const towersH = n * (cardH + 2) + 30;
    const h = 50 + towersH + 46 + pileRows * 24 + 10;
    const toMove = view.to_move === seat;
    const g = s("g", { class: `seat-row${toMove ? " to-move" : ""}`, role: "group", dataset: { seat: String(seat) },
      "aria-label": _("{name}'s towers", { name: seatName(seats, seat) }) });
    g.append(s("rect", { x: 2, y, width: width - 4, height: h - 6, rx: 6, class: "seat-bg" }),
      s("text", { x: 10, y: y + 20, class: "seat-name", text:
        `${clip(seatName(seats, seat), 20)}${mySeats.includes(seat) ? ` ${_("(you)")}` : ""}${toMove ? ` — ${_("to move")}` : ""}` },
      title(seatName(seats, seat))),
      s("text", { x: 10, y: y + 40, class: "small", text: _("provisional {n} points", { n: provisional(sv) }) }));
    towersOf(g, args, sv, seat, 10, y + 50 + towersH - 24, colW, cardH);
    g.append(pileGroup(components, seats, sv, seat, 10, y + 50 + towersH + 14, Math.max(1, Math.floor((width - 24) / 56))));
    parts.push(g);
    y += h;
  });
  const svg = svgRoot(width, y + 4, _("5 Towers board"));
  svg.dataset.ruleset = "fivetowers";
  svg.dataset.layout = "narrow";
  svg.append(...parts);
  return svg;
}

export function describeMove(move, components) {
  if (!move || typeof move !== "object") return String(move);
  if (move.type === "pass") return _("passes");
  if (move.type === "bid") return _("bids {n}", { n: move.amount });
  if (move.type === "build") {
    const cards = (move.cards || []).map((id) => cardLabel(components, id)).join(", ") || _("nothing");
    return move.demolish ? _("demolishes the top of the {tower}, then builds {cards}", { tower: suitInfo(components, move.demolish).name, cards })
      : _("builds {cards}", { cards });
  }
  return JSON.stringify(move);
}

/** What of the picker the board shows (the display's choosable and chosen cards, the demolition targets): a choice
 * that changes none of it — a bid, a pass — leaves the board as drawn (game-page.js, onPickerChange). */
export function boardPickerKey(picker) {
  if (!picker || picker.kind !== "fivetowers") return "";
  return JSON.stringify([picker.seat, picker.chosenCards(), picker.nextCards(), picker.demolishOptions(),
    picker.demolish() ?? null]);
}

/** Picker for a 5 Towers decision: a bid or pass, or a build (cards in order plus a demolition). */
export function makePicker({ legal, seat, components, onchange }) {
  let chosen = null; // bid or pass move
  let cards = [];
  let demolish; // undefined: not chosen yet; null: none; suit id
  const builds = legal.filter((m) => m.type === "build");
  const prefixOk = (m) => cards.every((c, i) => m.cards[i] === c);
  const demOk = (m) => demolish === undefined || (m.demolish ?? null) === demolish;
  const picker = {
    kind: "fivetowers",
    seat,
    chosenCards: () => cards.slice(),
    demolish: () => demolish,
    nextCards() {
      return [...new Set(builds.filter((m) => demOk(m) && prefixOk(m) && m.cards.length > cards.length).map((m) => m.cards[cards.length]))];
    },
    demolishOptions() {
      return [...new Set(builds.filter(prefixOk).map((m) => m.demolish ?? null))].filter((d) => d !== null);
    },
    chooseCard(id) {
      cards.push(id);
      const dems = [...new Set(builds.filter(prefixOk).map((m) => m.demolish ?? null))];
      if (demolish === undefined && dems.length === 1) demolish = dems[0];
      onchange();
    },
    chooseDemolish(suit) {
      demolish = demolish === suit ? undefined : suit;
      if (demolish !== undefined && !builds.some((m) => demOk(m) && prefixOk(m))) cards = [];
      onchange();
    },
    /** Every choice the page offers now, as {name, value}: what the buttons and the board show. */
    options() {
      if (chosen) return [];
      const out = legal.filter((m) => m.type === "bid" || m.type === "pass").map((m) => ({ name: "bid", value: m }));
      for (const id of picker.nextCards()) out.push({ name: "card", value: id });
      const dems = [...new Set(builds.filter(prefixOk).map((m) => m.demolish ?? null))];
      if (dems.length > 1 || (dems.length === 1 && dems[0] !== null)) {
        for (const d of dems) if (d !== demolish) out.push({ name: "demolish", value: d });
      }
      return out;
    },
    choose(name, value) {
      if (name === "bid") {
        chosen = value;
        onchange();
      } else if (name === "card") picker.chooseCard(value);
      else if (name === "demolish") {
        demolish = value;
        if (!builds.some((m) => demOk(m) && prefixOk(m))) cards = [];
        onchange();
      }
    },
    reset() {
      chosen = null;
      cards = [];
      demolish = undefined;
      onchange();
    },
    move() {
      if (chosen) return chosen;
      if (!builds.length) return null;
      const full = builds.filter((m) => demOk(m) && m.cards.length === cards.length && prefixOk(m));
      const dems = [...new Set(full.map((m) => m.demolish ?? null))];
      if (dems.length !== 1) return null;
      return full.find((m) => (m.demolish ?? null) === dems[0]);
    },
    prompt() {
      if (chosen) return _("Sign and submit your choice.");
      if (!builds.length) return _("Bid how many display cards you want, or pass.");
      const total = builds[0].cards.length;
      if (cards.length < total) return _("Choose card {n} of {total} from the display, in the order to build them.", { n: cards.length + 1, total });
      if (picker.move()) return _("Sign and submit your build.");
      return _("Choose whether to demolish first.");
    },
    controls() {
      const box = el("div", { class: "picker" });
      const bids = legal.filter((m) => m.type === "bid" || m.type === "pass");
      if (bids.length) {
        box.append(el("div", { class: "choices", role: "group", "aria-label": _("Bid or pass") },
          bids.map((m) => el("button", { type: "button", class: "choice", "aria-pressed": chosen === m ? "true" : "false",
            dataset: { move: m.type, amount: m.amount ?? "" }, onclick: () => { chosen = m; onchange(); } },
          m.type === "pass" ? _("Pass") : _("Bid {n}", { n: m.amount })))));
      }
      if (builds.length) {
        const next = new Set(picker.nextCards());
        box.append(el("p", {}, `${_("Cards in building order:")} `,
          cards.length ? cards.map((id, i) => `${i + 1}. ${cardLabel(components, id)}`).join("  ") : _("none yet")));
        box.append(el("div", { class: "choices", role: "group", "aria-label": _("Take a display card") },
          [...next].map((id) => el("button", { type: "button", class: "choice", dataset: { card: id },
            onclick: () => picker.chooseCard(id) }, _("Take {card}", { card: cardLabel(components, id) })))));
        const dems = [...new Set(builds.filter(prefixOk).map((m) => m.demolish ?? null))];
        if (dems.length > 1 || (dems.length === 1 && dems[0] !== null)) {
          box.append(el("div", { class: "choices", role: "radiogroup", "aria-label": _("Demolition (FT-R3)") },
            dems.map((d) => el("button", { type: "button", class: "choice", role: "radio", dataset: { demolish: d ?? "none" },
              "aria-checked": demolish === d ? "true" : "false",
              onclick: () => { demolish = d; if (!builds.some((m) => demOk(m) && prefixOk(m))) cards = []; onchange(); } },
            d === null ? _("No demolition") : _("Demolish the top of your {tower}", { tower: suitInfo(components, d).name })))));
        }
      }
      return box;
    },
  };
  return picker;
}

export function scoreTable(result, seats, components) {
  const suits = suitsOf(components);
  const table = el("table", { class: "score" },
    el("caption", {}, _("Score breakdown (FT-E2 towers, FT-E3 main tower, FT-E4 demolitions)")),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, _("Rank")), el("th", { scope: "col" }, _("Player")),
      suits.map((x) => el("th", { scope: "col" }, suitInfo(components, x.id).name)),
      el("th", { scope: "col" }, _("Tower points")), el("th", { scope: "col" }, _("Main tower")),
      el("th", { scope: "col" }, _("Demolitions")), el("th", { scope: "col" }, _("Total")))));
  const body = el("tbody");
  const rows = [...result.seats].sort((a, b) => a.rank - b.rank || a.seat - b.seat);
  for (const r of rows) {
    const towers = Object.fromEntries((r.towers || []).map((t) => [t.suit, t]));
    body.append(el("tr", { dataset: { seat: String(r.seat) } },
      el("td", {}, String(r.rank)), el("th", { scope: "row" }, seatName(seats, r.seat)),
      suits.map((x) => {
        const t = towers[x.id];
        return el("td", {}, t ? `${t.points} (${ngettext("{n} card", "{n} cards", t.size)}${t.spire ? `, ${_("spire ×2")}` : ""})` : "—");
      }),
      el("td", {}, String(r.tower_points)),
      el("td", {}, r.main_tower ? `+${r.main_tower.bonus} (${suitInfo(components, r.main_tower.suit).name})` : "—"),
      el("td", {}, `−${r.demolition_penalty} (${ngettext("{n} card", "{n} cards", (r.demolished || []).length)})`),
      el("td", { class: "total" }, String(r.total))));
  }
  table.append(body);
  return el("div", {}, table, winnersLine(result, seats),
    tiebreakChain(result, seats, _("No tie: 5 Towers has no tie-break; tied players share the rank (FT-E5).")));
}

export function chart(steps, seats) {
  const series = [];
  for (const step of steps) {
    if (!step.state || !step.state.seats) continue;
    step.state.seats.forEach((sv, i) => {
      (series[i] ||= { seat: i, label: _("points"), points: [] }).points.push({ x: step.seq, y: provisional(sv) });
    });
  }
  return lineChart({ title: _("Tower points after each log entry (FT-E2–E4, provisional until the end)"), series, seats, yLabel: _("points") });
}
