// Tower Up: the city (districts, parks, lakes, roads, sites, buildings as stacks of floors with the
// roofs at their levels), the market, the box, objectives and chips, and every player's supply, roofs,
// locomotive tracks with stars and cone, as SVG; the move picker (site → colour → roof, or market card
// → wildcard colours → discards); the replay chart of the locomotive tracks.

import { lineChart, seatColour, seatInk, tiebreakChain, winnersLine } from "./score.js";
import { choosable, clip, s, svgRoot, title } from "./svg.js";
import { el } from "../shared/ui.js";
import { zoomable } from "./zoom.js";
import { _, ngettext } from "../shared/i18n.js";

export const FLOOR = {
  black: { fill: "#262626", text: "#ffffff", letter: "K", name: _("black") },
  grey: { fill: "#9a9a9a", text: "#000000", letter: "G", name: _("grey") },
  white: { fill: "#ffffff", text: "#000000", letter: "W", name: _("white") },
  brown: { fill: "#8b5a2b", text: "#ffffff", letter: "B", name: _("brown") },
  wild: { fill: "url(#tu-wild)", text: "#000000", letter: "?", name: _("wildcard") },
};
const DISTRICT_FILL = { grey: "#d5d5d5", green: "#cfe8cf", blue: "#d3e2f5", red: "#f3d3d0", yellow: "#f5ebc0",
  orange: "#f7dcc0", purple: "#e3d5f0", brown: "#e6d6c5" };

function seatName(seats, i) {
  return (seats && seats[i] && seats[i].name) || _("Seat {n}", { n: i + 1 });
}

function colourName(c) {
  return (FLOOR[c] && FLOOR[c].name) || c;
}

function defs() {
  // Grey floors carry a hatch and every floor a letter, so colours never rely on hue alone.
  return s("defs", {},
    s("pattern", { id: "tu-hatch", width: 5, height: 5, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      s("rect", { width: 5, height: 5, fill: "#9a9a9a" }), s("line", { x1: 0, y1: 0, x2: 0, y2: 5, stroke: "#787878", "stroke-width": 2 })),
    s("linearGradient", { id: "tu-wild", x1: 0, y1: 0, x2: 1, y2: 0 },
      s("stop", { offset: "0", "stop-color": "#262626" }), s("stop", { offset: "0.33", "stop-color": "#9a9a9a" }),
      s("stop", { offset: "0.66", "stop-color": "#ffffff" }), s("stop", { offset: "1", "stop-color": "#8b5a2b" })));
}

function floorFill(c) {
  return c === "grey" ? "url(#tu-hatch)" : (FLOOR[c] || FLOOR.wild).fill;
}

/** A floor tile: colour, hatch for grey, and its letter. */
function floorTile(c, x, y, w, h, extra = {}) {
  const f = FLOOR[c] || FLOOR.wild;
  return s("g", { class: "floor", dataset: { color: c }, ...extra },
    s("rect", { x, y, width: w, height: h, fill: floorFill(c), stroke: "#333", "stroke-width": 0.8 }),
    h >= 8 ? s("text", { x: x + w / 2, y: y + h / 2 + Math.min(h, 12) * 0.35, "text-anchor": "middle", class: "floor-letter",
      style: `fill: ${f.text}; font-size: ${Math.min(h - 1, 12)}px`, text: f.letter }) : null);
}

function roofShape(owner, x, y, w, h, extraClass = "") {
  return s("g", { class: `roof ${extraClass}`, dataset: { owner: String(owner) } },
    s("path", { d: `M${x - 2},${y + h} L${x + w / 2},${y} L${x + w + 2},${y + h} Z`, fill: seatColour(owner), stroke: "#111", "stroke-width": 0.8 }),
    s("text", { x: x + w / 2, y: y + h - 1, "text-anchor": "middle", class: "roof-num", style: `fill: ${seatInk(owner)}`, text: String(owner + 1) }));
}

/**
 * An area around some sites that follows their shape: a disc around each site and a thick band along
 * each road between two of them, in one group so that overlaps do not darken (the group is translucent).
 */
function area(points, segments, pad, fill, cls, label) {
  const g = s("g", { class: cls }, title(label));
  for (const [x, y] of points) g.append(s("circle", { cx: x, cy: y, r: pad, fill }));
  for (const [[x1, y1], [x2, y2]] of segments) {
    g.append(s("line", { x1, y1, x2, y2, stroke: fill, "stroke-width": pad * 2, "stroke-linecap": "round" }));
  }
  return g;
}

/** Keep the part of polygon ``poly`` that is nearer to p than to q (Sutherland–Hodgman, one half-plane). */
function clipNearer(poly, p, q) {
  const mx = (p[0] + q[0]) / 2;
  const my = (p[1] + q[1]) / 2;
  const dx = q[0] - p[0];
  const dy = q[1] - p[1];
  const f = (pt) => (pt[0] - mx) * dx + (pt[1] - my) * dy;
  const out = [];
  poly.forEach((a, i) => {
    const b = poly[(i + 1) % poly.length];
    const fa = f(a);
    const fb = f(b);
    if (fa <= 0) out.push(a);
    if ((fa <= 0) !== (fb <= 0)) {
      const t = fa / (fa - fb);
      out.push([a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]);
    }
  });
  return out;
}

/**
 * Each site's Voronoi cell within the box: the points nearer to it than to any other site. The city's
 * districts are drawn as the union of their sites' cells, so each district is one region and the
 * district borders fall between neighbouring sites of different districts.
 */
function voronoi(points, box) {
  return points.map((p, i) => {
    let poly = [[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]];
    points.forEach((q, j) => {
      if (j !== i && poly.length) poly = clipNearer(poly, p, q);
    });
    return poly;
  });
}

/** The edges shared by cells of sites in different districts: the district borders. */
function districtBorders(points, cells, districtOf) {
  const edges = [];
  points.forEach((p, i) => {
    points.forEach((q, j) => {
      if (j <= i || districtOf[i] === districtOf[j]) return;
      const mx = (p[0] + q[0]) / 2;
      const my = (p[1] + q[1]) / 2;
      const len = Math.hypot(q[0] - p[0], q[1] - p[1]) || 1;
      const on = (pt) => Math.abs(((pt[0] - mx) * (q[0] - p[0]) + (pt[1] - my) * (q[1] - p[1])) / len) < 0.5;
      const cell = cells[i];
      cell.forEach((a, k) => {
        const b = cell[(k + 1) % cell.length];
        if (on(a) && on(b) && Math.hypot(b[0] - a[0], b[1] - a[1]) > 0.5) edges.push([a, b]);
      });
    });
  });
  return edges;
}

function movedSites(move) {
  if (move.type === "build") return [move.site, move.roof];
  if (move.type === "place_start") return (move.placements || []).map((p) => p.site);
  return [];
}

function sideOf(components, view) {
  const sides = components.board_sides || {};
  return sides[view.board_side] || Object.values(sides)[0];
}

function cardOf(components, id) {
  return ((components.cards && components.cards.cards) || []).find((c) => c.id === id) || { id, floors: [], locomotives: [] };
}

export function cardText(components, id) {
  const card = cardOf(components, id);
  const floors = card.floors.map(colourName).join(", ");
  const locos = (card.locomotives || []).map((l) => _("{colour} locomotive +{n}", { colour: colourName(l.color), n: l.steps })).join(", ");
  return `${_("card {id}", { id })}: ${floors}${locos ? `; ${locos}` : ""}`;
}

/** Lines of at most about `width` characters, broken between words (SVG text does not wrap). */
function wrapText(text, width) {
  const lines = [];
  let line = "";
  for (const word of String(text).split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

const SCALE = 1.35;
const SITE = 40;

/** What a park's or a lake's label must not cover: every site with its building, height and name (boxes
 * [x0, y0, x1, y1]) and every road (segments). */
function cityObstacles(side, P, buildings, roofH) {
  const byId = Object.fromEntries(side.sites.map((site) => [site.id, site]));
  const boxes = side.sites.map((site) => {
    const [x, y] = P(site);
    const b = buildings[site.id];
    const stack = b ? b.stack.reduce((h, item) => h + (typeof item === "string" ? 13 : roofH), 0) : 0;
    return [x - SITE / 2 - 2, Math.min(y - SITE / 2, y + SITE / 2 - 3 - stack) - 2, x + SITE / 2 + 14, y + SITE / 2 + 16];
  });
  const roads = (side.roads || []).filter(([a, b]) => byId[a] && byId[b]).map(([a, b]) => [P(byId[a]), P(byId[b])]);
  return { boxes, roads };
}

function distanceToSegment([px, py], [[x1, y1], [x2, y2]]) {
  const dx = x2 - x1;
  const dy = y2 - y1;
  const t = Math.max(0, Math.min(1, ((px - x1) * dx + (py - y1) * dy) / (dx * dx + dy * dy || 1)));
  return Math.hypot(px - x1 - t * dx, py - y1 - t * dy);
}

/**
 * Where an area's label goes (its middle, on the baseline): the free spot inside the area (within 30 units of
 * one of its sites or of a road between two of them, as area() draws it) nearest to the middle of its sites,
 * where the label covers no site, building, site name or road: text under a site square is hidden, and text on
 * a road lacks contrast. The middle of the sites when no spot is free.
 */
function areaLabelSpot(text, fontSize, pts, segments, obstacles) {
  const width = [...text].length * fontSize * 0.56;
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  const spots = [Math.min(...xs) - 30, Math.min(...ys) - 30, Math.max(...xs) + 30, Math.max(...ys) + 40];
  // Every label box tried lies within this region (the spots, widened by the label): only the boxes and roads
  // that meet it can decide the spot, so the same area with the same of them near it has the same spot — kept
  // from the last redraw, which is most of them (a move changes one building).
  const region = [spots[0] - width / 2 - 3, spots[1] - fontSize, spots[2] + width / 2 + 3, spots[3] + fontSize * 0.3];
  const boxes = obstacles.boxes.filter((box) => boxesMeet(box, region));
  const roads = obstacles.roads.filter((road) => boxesMeet(roadReach(road), region));
  const key = JSON.stringify([text, fontSize, pts, segments, boxes, roads]);
  if (!labelSpots.has(key)) {
    if (labelSpots.size > 200) labelSpots.clear();
    labelSpots.set(key, findLabelSpot(fontSize, width, spots, pts, segments, boxes, roads));
  }
  return labelSpots.get(key);
}

/** Label spots already found: see areaLabelSpot(). */
const labelSpots = new Map();

/** Whether two boxes ([x0, y0, x1, y1]) meet, edges included. */
function boxesMeet([a0, b0, a1, b1], [x0, y0, x1, y1]) {
  return a0 <= x1 && x0 <= a1 && b0 <= y1 && y0 <= b1;
}

/** A road's box widened by 6 units: a road can come within 6 units of a label, or cross it, only if this meets
 * the label's box. */
function roadReach([[ax, ay], [bx, by]]) {
  return [Math.min(ax, bx) - 6, Math.min(ay, by) - 6, Math.max(ax, bx) + 6, Math.max(ay, by) + 6];
}

/** areaLabelSpot()'s search, over the spots' range ``[x0, y0, x1, y1]`` in steps of 5. */
function findLabelSpot(fontSize, width, [sx0, sy0, sx1, sy1], pts, segments, boxes, roads) {
  const cx = pts.reduce((acc, p) => acc + p[0], 0) / pts.length;
  const cy = pts.reduce((acc, p) => acc + p[1], 0) / pts.length + 4;
  const inside = (p) => pts.some((q) => Math.hypot(p[0] - q[0], p[1] - q[1]) <= 30)
    || segments.some((seg) => distanceToSegment(p, seg) <= 30);
  // the roads whose reach misses the label's box are skipped unmeasured (the same answer; the measuring was most
  // of a page's redraw)
  const reach = roads.map(roadReach);
  const free = (x, y) => {
    const label = [x - width / 2 - 3, y - fontSize, x + width / 2 + 3, y + fontSize * 0.3];
    const [x0, y0, x1, y1] = label;
    if (boxes.some(([a0, b0, a1, b1]) => x0 < a1 && a0 < x1 && y0 < b1 && b0 < y1)) return false;
    const near = roads.filter((_, i) => boxesMeet(reach[i], label));
    if (!near.length) return true;
    const probes = [];
    for (let k = 0; k <= 8; k += 1) probes.push([x0 + ((x1 - x0) * k) / 8, y0], [x0 + ((x1 - x0) * k) / 8, y1]);
    return !near.some((seg) => probes.some((p) => distanceToSegment(p, seg) < 6)
      || distanceToSegment([x0, (y0 + y1) / 2], seg) < 6 || distanceToSegment([x1, (y0 + y1) / 2], seg) < 6
      || segmentCrossesBox(seg, label));
  };
  // nearest first; whether a spot is inside the area is asked only until the first free one (the same spot as
  // keeping the spots inside first: the sort is stable), not of every spot of the range
  const spots = [];
  for (let x = sx0; x <= sx1; x += 5) {
    for (let y = sy0; y <= sy1; y += 5) spots.push([x, y, Math.hypot(x - cx, y - cy)]);
  }
  spots.sort((a, b) => a[2] - b[2]);
  const spot = spots.find(([x, y]) => inside([x, y - fontSize / 3]) && free(x, y));
  return spot ? [spot[0], spot[1]] : [cx, cy];
}

function segmentCrossesBox([[x1, y1], [x2, y2]], [x0, y0, xa, ya]) {
  for (let k = 0; k <= 20; k += 1) {
    const x = x1 + ((x2 - x1) * k) / 20;
    const y = y1 + ((y2 - y1) * k) / 20;
    if (x >= x0 && x <= xa && y >= y0 && y <= ya) return true;
  }
  return false;
}

/** A player's board in its box: laid out and painted only near the screen (style.css, ``.tu-seat-box``). */
function seatBox(board) {
  return el("div", { class: "tu-seat-box" }, board);
}

/**
 * The board as three parts laid out by CSS (style.css, .tu-board): the city (full width on a phone, in a
 * zoomable frame), the market panel, and every player's board below them (one SVG each, stacked so that
 * it stays readable on a narrow screen).
 */
export function renderBoard(container, { components, view, seats, picker, mySeats = [], lastMove = null, later = null }) {
  // On a phone the market and the players' boards are laid out as wide as the screen, drawn at 1 unit =
  // 1 CSS px, and the city starts zoomed in to the same scale: no text under 12 px without zooming.
  const avail = Math.floor((container.clientWidth || 0) - 10);
  const narrow = avail > 0 && avail < 560 ? Math.max(300, avail) : null;
  const side = sideOf(components, view);
  const xs = side.sites.map((p) => p.x * SCALE);
  const ys = side.sites.map((p) => p.y * SCALE);
  const minX = Math.min(...xs) - 70;
  const minY = Math.min(...ys) - 120;
  const cityW = Math.max(...xs) - minX + 70;
  const cityH = Math.max(...ys) - minY + 60;
  const svg = svgRoot(cityW, cityH, _("Tower Up city"));
  svg.dataset.ruleset = "towerup";
  svg.classList.add("tu-city");
  if (narrow) svg.dataset.layout = "narrow";
  svg.append(defs()); // the hatch and the wildcard gradient, used by every part of the board
  const P = (site) => [site.x * SCALE - minX, site.y * SCALE - minY];
  const byId = Object.fromEntries(side.sites.map((site) => [site.id, site]));
  const pick = picker && picker.kind === "towerup" ? picker : null;
  const siteChoices = pick ? pick.candidates("site") : null;
  const roofChoices = pick ? pick.candidates("roof") : null;
  const chosenSite = pick ? pick.chosen("site") : undefined;

  // The city: districts, parks, lakes, roads.
  const city = s("g", { class: "city", role: "group", "aria-label": `City (${side.side} side${side.stand_in ? ", stand-in map" : ""})` });
  city.append(s("rect", { x: 0, y: 0, width: cityW, height: cityH, class: "city-bg", rx: 8 }));
  const labels = []; // drawn over the areas
  const within = (ids) => (side.roads || []).filter(([a, b]) => ids.has(a) && ids.has(b) && byId[a] && byId[b])
    .map(([a, b]) => [P(byId[a]), P(byId[b])]);
  const points = side.sites.map(P);
  const cells = voronoi(points, { x0: 8, y0: 8, x1: cityW - 8, y1: cityH - 8 });
  const districtOf = side.sites.map((x) => x.district);
  const districts = s("g", { class: "districts" });
  for (const d of side.districts || []) {
    const members = side.sites.map((x, i) => [x, i]).filter(([x]) => x.district === d.id);
    if (!members.length) continue;
    const fill = DISTRICT_FILL[d.color] || "#eee";
    const g = s("g", { class: "district", dataset: { district: d.id } }, title(`District ${d.name} (${d.color})`));
    for (const [, i] of members) {
      if (cells[i].length) g.append(s("path", { d: `M${cells[i].map((pt) => pt.map((v) => v.toFixed(1)).join(",")).join(" L")} Z`, fill, stroke: fill, "stroke-width": 1 }));
    }
    districts.append(g);
    const pts = members.map(([, i]) => points[i]);
    const cx = pts.reduce((a, p) => a + p[0], 0) / pts.length;
    const cy = Math.min(...pts.map((p) => p[1]));
    labels.push(s("text", { x: cx, y: cy - 56, "text-anchor": "middle", class: "district-label", text: `${d.name}${d.color === "grey" ? " (grey district)" : ""}` }));
  }
  city.append(districts);
  for (const [a, b] of districtBorders(points, cells, districtOf)) {
    city.append(s("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: "district-border" }));
  }
  const obstacles = cityObstacles(side, P, view.buildings || {}, narrow ? 14 : 8);
  const placeLater = []; // the parks' and lakes' labels of a first drawing (``later``)
  for (const [kind, list, fill] of [["park", side.parks || [], "#7cc47f"], ["lake", side.lakes || [], "#6fa8dc"]]) {
    for (const a of list) {
      const pts = a.sites.filter((id) => byId[id]).map((id) => P(byId[id]));
      if (!pts.length) continue;
      city.append(area(pts, within(new Set(a.sites)), 30, fill, `${kind}-area`,
        `${kind === "park" ? _("Park") : _("Lake")} ${a.name}: ${a.sites.join(", ")}`));
      const text = `${kind === "park" ? _("park") : _("lake")}: ${a.name}`;
      const label = s("text", { "text-anchor": "middle", class: `${kind}-label`, text });
      const spot = () => areaLabelSpot(text, narrow ? 12 : 11, pts, within(new Set(a.sites)), obstacles);
      const place = ([lx, ly]) => {
        label.setAttribute("x", lx);
        label.setAttribute("y", ly);
        label.removeAttribute("visibility");
      };
      if (later) {
        label.setAttribute("visibility", "hidden"); // placed after the first paint (the search is most of the city's CPU)
        placeLater.push({ spot, place });
      } else {
        place(spot());
      }
      city.append(label);
    }
  }
  for (const [a, b] of side.roads || []) {
    if (!byId[a] || !byId[b]) continue;
    const [x1, y1] = P(byId[a]);
    const [x2, y2] = P(byId[b]);
    city.append(s("line", { x1, y1, x2, y2, class: "road" }));
  }
  city.append(...labels); // over the roads: a road under a district's name must not hide it

  // Sites and buildings, drawn top to bottom so nearer buildings overlap farther ones.
  const sites = [...side.sites].sort((a, b) => a.y - b.y);
  for (const site of sites) {
    const [x, y] = P(site);
    const b = (view.buildings || {})[site.id];
    const g = s("g", { class: `site${b ? " built" : ""}`, dataset: { site: site.id } });
    g.append(s("rect", { x: x - SITE / 2, y: y - SITE / 2, width: SITE, height: SITE, rx: 3, class: "site-square" }));
    if (b) {
      // The stack: floors (bottom first) with the roofs at their levels.
      const floorH = 13;
      const roofH = narrow ? 14 : 8;
      let top = y + SITE / 2 - 3;
      const w = SITE - 6;
      const stackG = s("g", { class: "stack" });
      for (const item of b.stack) {
        if (typeof item === "string") {
          top -= floorH;
          stackG.append(floorTile(item, x - w / 2, top, w, floorH));
        } else {
          top -= roofH;
          stackG.append(roofShape(item.owner, x - w / 2, top, w, roofH));
        }
      }
      g.append(stackG);
      g.append(s("text", { x: x + SITE / 2 + 2, y: y + SITE / 2 - 2, class: "height-label", text: String(b.height) }));
      const roofs = b.roofs.map((r) => _("roof of {name} at level {n}", { name: seatName(seats, r.owner), n: r.level })).join(", ");
      g.setAttribute("aria-label", `${site.id}: ${_("{colour} building, height {n}", { colour: colourName(b.color), n: b.height })}${roofs ? `, ${roofs}` : ""}${b.top_roof !== null && b.top_roof !== undefined ? `, ${_("visible roof {name}", { name: seatName(seats, b.top_roof) })}` : ""}`);
    } else {
      g.setAttribute("aria-label", `${site.id}: ${_("empty site")}`);
    }
    g.append(s("text", { x, y: y + SITE / 2 + 13, "text-anchor": "middle", class: "site-label", text: site.id }));
    if (lastMove && movedSites(lastMove).includes(site.id)) {
      g.classList.add("last-move");
      g.setAttribute("aria-label", `${g.getAttribute("aria-label")} (${_("changed by the last move")})`);
    }
    g.append(title(g.getAttribute("aria-label")));
    if (siteChoices && siteChoices.includes(site.id)) {
      g.classList.add("candidate");
      choosable(g, `${pick.stepVerb("site")} ${site.id}${b ? ` (${_("{colour} building, height {n}", { colour: colourName(b.color), n: b.height })})` : ` (${_("empty")})`}`,
        () => pick.choose("site", site.id));
    } else if (roofChoices && roofChoices.includes(site.id)) {
      g.classList.add("candidate", "roof-candidate");
      choosable(g, site.id === chosenSite ? _("Put your roof on {site} (the new building)", { site: site.id })
        : _("Put your roof on {site} (raised building)", { site: site.id }),
        () => pick.choose("roof", site.id));
    } else if (chosenSite === site.id) {
      g.classList.add("chosen");
    } else {
      g.setAttribute("role", "img");
    }
    city.append(g);
  }
  svg.append(city);

  // The panel: market, box, deck, objectives.
  const px = 10;
  const panel = s("g", { class: "panel" });
  panel.append(s("text", { x: px, y: 22, class: "section-label", text: _("Market") }));
  const slotChoices = pick ? pick.candidates("slot") : null;
  const slotW = narrow ? Math.min(122, Math.floor((narrow - 12) / Math.max(1, (view.market || []).length))) : 122;
  (view.market || []).forEach((id, slot) => {
    const cx = px + slot * slotW;
    const g = s("g", { class: "market-card", dataset: { slot: String(slot), card: id || "" } });
    g.append(s("rect", { x: cx, y: 32, width: slotW - 10, height: 150, rx: 8, class: "card-bg" }));
    if (!id) {
      g.append(s("text", { x: cx + (slotW - 10) / 2, y: 110, "text-anchor": "middle", class: "muted", text: _("empty") }));
      g.setAttribute("aria-label", `${_("Market slot {n}", { n: slot + 1 })}: ${_("empty")}`);
    } else {
      const card = cardOf(components, id);
      g.append(s("text", { x: cx + 8, y: 48, class: "small", text: `${slot + 1} · ${id}` }));
      card.floors.forEach((c, i) => {
        g.append(floorTile(c, cx + (slotW - 10) / 2 - 20, 150 - i * 22, 40, 20));
      });
      (card.locomotives || []).forEach((l, i) => {
        g.append(s("text", { x: cx + 8, y: 66 + i * 14, class: "small", text: _("loco {letter} +{n}", { letter: FLOOR[l.color].letter, n: l.steps }) }));
      });
      g.setAttribute("aria-label", `${_("Market slot {n}", { n: slot + 1 })}: ${cardText(components, id)}`);
      g.append(title(`${_("Market slot {n}", { n: slot + 1 })}: ${cardText(components, id)}`));
    }
    if (slotChoices && slotChoices.includes(slot)) {
      g.classList.add("candidate");
      // the button is a layer over the card (its texts stay outside it: its name is not theirs)
      const hit = s("g", { class: "hit" }, s("rect", { x: cx, y: 32, width: slotW - 10, height: 150, rx: 8, fill: "transparent" }));
      choosable(hit, `${_("Take market slot {n}", { n: slot + 1 })}: ${cardText(components, id)}`, () => pick.choose("slot", slot));
      g.append(hit);
    } else if (pick && pick.chosen("slot") === slot) {
      g.classList.add("chosen");
    }
    panel.append(g);
  });
  let y = 210;
  panel.append(s("text", { x: px, y, class: "section-label", text: _("Box") }));
  Object.entries(view.box || {}).forEach(([c, n], i) => {
    const bx = narrow ? 74 : 90;
    panel.append(floorTile(c, px + i * bx, y + 10, 22, 18), s("text", { x: px + i * bx + 28, y: y + 24, text: `${n}` }));
  });
  y += 50;
  panel.append(s("text", { x: px, y, text: `${_("Deck: {n} cards", { n: view.deck_count })} · ${_("discard: {n}", { n: (view.discard || []).length })}${view.reshuffles ? ` · ${_("reshuffled {n}×", { n: view.reshuffles })}` : ""}` }));
  y += 30;
  panel.append(s("text", { x: px, y, class: "section-label", text: _("Objectives and chips left") }));
  for (const o of view.objectives || []) {
    y += 6;
    for (const line of wrapText(`#${o.number}: ${o.text}`, narrow ? Math.floor((narrow - 20) / 7) : 56)) {
      y += 16;
      panel.append(s("text", { x: px, y, class: "small", text: line }));
    }
    y += 16;
    panel.append(s("text", { x: px + 12, y, class: "small muted", text: _("chips left: {chips}", { chips: o.chips_left.length ? o.chips_left.join(", ") : _("none") }) }));
  }
  y += 30;
  const status = [];
  if (view.phase === "setup") {
    status.push(_("Setup: {name} places the start floors ({colours})", { name: seatName(seats, view.start_floors.placer),
      colours: view.start_floors.pending.map(colourName).join(", ") }));
  }
  if (view.extra_turn) status.push(_("Extra turn (TU-X1)"));
  if (view.end && view.end.trigger) status.push(_("End triggered by {name} ({rule})", { name: seatName(seats, view.end.trigger.seat), rule: view.end.trigger.rule }));
  if (view.end && view.end.last_turns_to_come && view.end.last_turns_to_come.length) {
    status.push(_("Last turns to come: {names}", { names: view.end.last_turns_to_come.map((i) => seatName(seats, i)).join(", ") }));
  }
  if (view.is_over) status.push(_("Game over"));
  status.forEach((line, i) => panel.append(s("text", { x: px, y: y + i * 18, class: "small status-text", text: line })));
  const panelW = narrow || Math.max(390, (view.market || []).length * 122 + 20);
  const panelSvg = svgRoot(panelW, y + status.length * 18 + 10, _("Market, box and objectives"));
  panelSvg.classList.add("tu-panel");
  if (narrow) panelSvg.dataset.layout = "narrow";
  panelSvg.append(panel);

  // Every player's board: supply, roofs, locomotive tracks with stars, cone, chips.
  const track = (components.personal_board && components.personal_board.track) || { values: [], stars: [] };
  const cone = (components.personal_board && components.personal_board.cone) || { max: 7, values: track.values };
  const colorChoices = pick ? pick.candidates("color") : null;
  const seatW = narrow || 510;
  const lx = narrow ? 54 : 60; // the lanes start after their labels
  const colW = Math.min(28, (seatW - 22 - lx - 10) / Math.max(track.values.length, cone.max + 1));
  const drawSeatBoard = (sv, seat) => {
    const sy = 4;
    const tracksY = sy + 176;
    const seatH = tracksY + 30 + 4 * 26 + 30 + 10;
    const board = svgRoot(seatW, seatH + 8, _("{name}'s board", { name: seatName(seats, seat) }));
    board.classList.add("tu-seat");
    if (narrow) board.dataset.layout = "narrow";
    const g = s("g", { class: `seat-board${view.to_move === seat ? " to-move" : ""}`, dataset: { seat: String(seat) },
      role: "group", "aria-label": _("{name}'s board", { name: seatName(seats, seat) }) });
    board.append(g);
    g.append(s("rect", { x: 4, y: sy, width: seatW - 8, height: seatH, rx: 8, class: "seat-bg" }),
      s("rect", { x: 4, y: sy, width: 10, height: seatH, fill: seatColour(seat), rx: 4 }),
      s("text", { x: 22, y: sy + 24, class: "seat-name", text:
        `${clip(seatName(seats, seat))}${mySeats.includes(seat) ? ` ${_("(you)")}` : ""}${view.to_move === seat ? ` — ${_("to move")}` : ""}` },
      title(seatName(seats, seat))));
    // Supply.
    g.append(s("text", { x: 22, y: sy + 48, class: "small", text: _("Supply ({n}/{max})", { n: sv.supply_total, max: components.supply_limit || 10 }) }));
    Object.entries(sv.supply).forEach(([c, n], i) => {
      const tile = floorTile(c, 22 + i * 70, sy + 56, 28, 24);
      const label = s("text", { x: 22 + i * 70 + 34, y: sy + 74, text: `×${n}` });
      const group = s("g", { class: "supply", dataset: { color: c } }, tile, label);
      group.setAttribute("aria-label", ngettext("{n} {colour} floor", "{n} {colour} floors", n, { colour: colourName(c) }));
      if (colorChoices && pick.seat === seat && colorChoices.includes(c)) {
        group.classList.add("candidate");
        choosable(group, _("Build a {colour} floor", { colour: colourName(c) }), () => pick.choose("color", c));
      }
      g.append(group);
    });
    g.append(s("text", { x: 22, y: sy + 104, class: "small", text: _("Roofs left: {left} · on the board: {board} · visible: {visible}",
      { left: sv.roofs_left, board: sv.roofs_on_board, visible: sv.visible_roofs }) }));
    const rl = s("g", { role: "img", "aria-label": ngettext("{n} roof left", "{n} roofs left", sv.roofs_left) });
    for (let i = 0; i < sv.roofs_left; i += 1) {
      rl.append(narrow ? roofShape(seat, 22 + i * 24, sy + 110, 18, 16) : roofShape(seat, 22 + i * 20, sy + 112, 14, 12));
    }
    g.append(rl);
    const chips = (sv.chips || []).map((c) => `#${c.objective}: ${c.value}`).join(", ");
    g.append(s("text", { x: 22, y: sy + 148, class: "small", text: _("Chips: {chips}", { chips: chips || _("none") }) }),
      s("text", { x: 22, y: sy + 168, class: "small muted", text: `${_("Stars reached: {n}", { n: sv.stars_reached })}${sv.last_turn_done ? ` · ${_("last turn done")}` : ""}` }));
    // Tracks, below.
    const tx = 22;
    track.values.forEach((v, col) => {
      const star = track.stars.includes(col);
      g.append(s("text", { x: tx + lx + col * colW + colW / 2, y: tracksY + 18, "text-anchor": "middle", class: `track-value${star ? " star" : ""}`,
        text: `${star && !narrow ? "★" : ""}${v}` }));
    });
    ["black", "grey", "white", "brown"].forEach((c, row) => {
      const ry = tracksY + 26 + row * 26;
      const pos = sv.locomotives[c];
      g.append(s("text", { x: tx, y: ry + 16, class: "small", text: `${FLOOR[c].letter} ${colourName(c)}` }));
      const lane = s("g", { role: "img", "aria-label": _("{colour} locomotive at column {n} ({points} points)",
        { colour: colourName(c), n: pos, points: track.values[Math.min(pos, track.values.length - 1)] }) });
      track.values.forEach((_value, col) => {
        const star = track.stars.includes(col);
        lane.append(s("rect", { x: tx + lx + col * colW, y: ry, width: colW - 2, height: 22, rx: 3, class: `track-cell${star ? " star" : ""}` }));
      });
      const mx = tx + lx + Math.min(pos, track.values.length - 1) * colW;
      lane.append(s("rect", { x: mx + 2, y: ry + 3, width: colW - 6, height: 16, rx: 4, fill: floorFill(c), stroke: "#000", "stroke-width": 1.5 }),
        s("text", { x: mx + colW / 2 - 1, y: ry + 15, "text-anchor": "middle", class: "floor-letter", style: `fill: ${FLOOR[c].text}`, text: FLOOR[c].letter }));
      g.append(lane);
    });
    // Cone.
    const cy = tracksY + 26 + 4 * 26 + 4;
    g.append(s("text", { x: tx, y: cy + 16, class: "small", text: _("cone") }));
    const conePos = sv.cone ? sv.cone.position : null;
    const coneLane = s("g", { role: "img", "aria-label": conePos === null ? _("cone not counted yet")
      : _("cone at {n} visible roofs ({points} points)", { n: conePos, points: cone.values[conePos] }) });
    // The cone's column is filled with the seat's colour and its number drawn in the seat's ink on it (a cone
    // drawn over the number hid it: 1:1).
    for (let col = 0; col <= cone.max; col += 1) {
      const here = col === conePos;
      coneLane.append(s("rect", { x: tx + lx + col * colW, y: cy, width: colW - 2, height: 22, rx: 3,
        class: here ? "track-cell cone-cell" : "track-cell", style: here ? `fill: ${seatColour(seat)}; stroke: #000` : null }),
      s("text", { x: tx + lx + col * colW + colW / 2 - 1, y: cy + 15, "text-anchor": "middle",
        class: here ? "tiny cone-num" : "tiny muted", style: here ? `fill: ${seatInk(seat)}; font-weight: 700` : null, text: `${col}` }));
    }
    g.append(coneLane);
    return board;
  };
  const zoom = zoomable("towerup-city", svg, "city", { minScale: narrow ? 1 : 0, width: avail,
    focus: svg.querySelector(".site.candidate, .site.last-move") });
  const seatsBox = el("div", { class: "tu-seats" });
  container.replaceChildren(el("div", { class: "tu-board" }, zoom.node, panelSvg, seatsBox));
  zoom.restore();
  // ``later`` (a page's first drawing): the city and the market are shown first, the parks' and lakes' labels and
  // the players' boards (below the city on a phone) after that paint — shorter tasks of a slow phone's CPU instead
  // of one long one (issue 49).
  if (later) return drawLater(later, seatsBox, placeLater, view.seats.map((sv, seat) => () => drawSeatBoard(sv, seat)));
  seatsBox.append(...view.seats.map(drawSeatBoard).map(seatBox));
  return null;
}

/** What a first drawing leaves for after its paint (renderBoard's ``later``): each label's spot and each player's
 * board made in a task of its own (none long enough to hold up a tap), then all shown at once. Stops when the
 * board was drawn anew meanwhile. */
async function drawLater(later, seatsBox, labels, boards) {
  const nextTask = () => new Promise((resolve) => { setTimeout(resolve, 0); });
  await later();
  const spots = [];
  for (const label of labels) {
    if (!seatsBox.isConnected) return;
    spots.push(label.spot());
    await nextTask();
  }
  const made = [];
  for (const board of boards) {
    if (!seatsBox.isConnected) return;
    made.push(seatBox(board()));
    await nextTask();
  }
  if (!seatsBox.isConnected) return;
  labels.forEach((label, i) => label.place(spots[i]));
  seatsBox.append(...made);
}

export function describeMove(move, components) {
  if (!move || typeof move !== "object") return String(move);
  switch (move.type) {
    case "pass":
      return _("passes (TU-G8)");
    case "decline_extra":
      return _("declines the extra turn (TU-X1)");
    case "place_start": {
      const where = move.placements.map((p) => _("{colour} on {site}", { colour: colourName(p.color), site: p.site })).join(", ");
      return move.placements.length > 1 ? _("places start floors {where}", { where }) : _("places start floor {where}", { where });
    }
    case "build": {
      const vars = { colour: colourName(move.color), site: move.site, roof: move.roof };
      return move.roof === move.site ? _("builds a {colour} floor on {site}, roof on {roof} (the new building)", vars)
        : _("builds a {colour} floor on {site}, roof on {roof}", vars);
    }
    case "take": {
      const parts = [_("takes market slot {n}", { n: move.slot + 1 })];
      if (move.choose && move.choose.length) parts.push(_("choosing {colours}", { colours: move.choose.map(colourName).join(", ") }));
      const discard = Object.entries(move.discard || {}).filter(([, n]) => n);
      if (discard.length) parts.push(_("discarding {floors}", { floors: discard.map(([c, n]) => `${n} ${colourName(c)}`).join(", ") }));
      return parts.join(", ");
    }
    default:
      return JSON.stringify(move);
  }
}

function pathOf(move) {
  switch (move.type) {
    case "build":
      return [["site", move.site], ["color", move.color], ["roof", move.roof]];
    case "place_start":
      return move.placements.flatMap((p) => [["site", p.site], ["color", p.color]]);
    case "take":
      return [["slot", move.slot], ...(move.choose || []).map((c) => ["choose", c]),
        ["discard", JSON.stringify(Object.entries(move.discard || {}).filter(([, n]) => n).sort())]];
    case "pass":
      return [["pass", "pass"]];
    case "decline_extra":
      return [["decline_extra", "decline_extra"]];
    default:
      return [["move", JSON.stringify(move)]];
  }
}

/**
 * The Tower Up picker. Each legal move is a path of choices (build: site, colour, roof; take: slot,
 * the colours for wildcards and scarce floors in card order, the discards); the picker offers only
 * the values that continue some legal move, and takes a choice by itself when only one is left.
 */
export function makePicker({ legal, seat, components, onchange }) {
  const paths = legal.map((m) => ({ move: m, path: pathOf(m) }));
  let chosen = [];
  const matching = () => paths.filter((p) => chosen.every((c, i) => p.path[i] && p.path[i][0] === c[0] && p.path[i][1] === c[1]));
  const nextOptions = () => {
    const depth = chosen.length;
    const seen = new Map();
    for (const p of matching()) {
      const step = p.path[depth];
      if (step) seen.set(`${step[0]}\u0000${step[1]}`, step);
    }
    return [...seen.values()];
  };
  const autoAdvance = () => {
    while (chosen.length > 0) {
      const options = nextOptions();
      if (options.length !== 1) break;
      chosen.push(options[0]);
    }
  };
  const picker = {
    kind: "towerup",
    seat,
    chosen(name) {
      const c = chosen.find((x) => x[0] === name);
      return c ? c[1] : undefined;
    },
    candidates(name) {
      const opts = nextOptions().filter((o) => o[0] === name).map((o) => o[1]);
      return opts.length ? opts : null;
    },
    stepVerb(name) {
      if (name === "site") return paths.some((p) => p.move.type === "place_start") ? _("Place a start floor on") : _("Build on");
      return _("Choose");
    },
    choose(name, value) {
      const ok = nextOptions().some((o) => o[0] === name && o[1] === value);
      if (!ok) return;
      chosen.push([name, value]);
      autoAdvance();
      onchange();
    },
    back() {
      chosen.pop();
      while (chosen.length && nextOptions().length === 1 && chosen.length > 1) chosen.pop();
      onchange();
    },
    /** Every choice the page offers now, as {name, value}: what the buttons and the board show. */
    options() {
      return nextOptions().map(([name, value]) => ({ name, value }));
    },
    reset() {
      chosen = [];
      onchange();
    },
    move() {
      const done = matching().filter((p) => p.path.length === chosen.length);
      return done.length === 1 ? done[0].move : null;
    },
    prompt() {
      if (picker.move()) return _("Sign and submit this move.");
      const next = nextOptions();
      const names = new Set(next.map((o) => o[0]));
      if (!chosen.length) {
        if (names.has("pass")) {
          return names.has("decline_extra") ? _("No move is possible: pass (TU-G8) or decline the extra turn (TU-X1).")
            : _("No move is possible: you must pass (TU-G8).");
        }
        if (names.has("decline_extra")) return _("Extra turn (TU-X1): build or take a market card, or decline the extra turn.");
        if (paths.some((p) => p.move.type === "place_start")) return _("Place a start floor: choose a highlighted site (TU-S3).");
        return _("Choose a highlighted site to build on, or a market card to take.");
      }
      if (names.has("color")) return _("Choose the colour of the new floor (it must differ from every adjacent building).");
      if (names.has("roof")) return _("Choose the building that gets your roof: the new one or a raised neighbour (TU-B3).");
      if (names.has("choose")) return _("Choose a colour for the next wildcard or missing floor (TU-T1, TU-T2).");
      if (names.has("discard")) return _("Choose which floors to return to get down to 10 (TU-T3).");
      return "";
    },
    controls() {
      const box = el("div", { class: "picker" });
      if (chosen.length) {
        box.append(el("p", { class: "chosen-steps" }, "Chosen: ", chosen.map((c) => `${c[0]} ${c[0] === "slot" ? Number(c[1]) + 1 : c[1]}`).join(" → ")));
      }
      const next = nextOptions();
      const group = el("div", { class: "choices", role: "group", "aria-label": "Choices" });
      for (const [name, value] of next) {
        let label;
        if (name === "site") label = `${picker.stepVerb("site")} ${value}`;
        else if (name === "slot") label = _("Take market card {n}", { n: Number(value) + 1 });
        else if (name === "color") label = `${colourName(value)} (${FLOOR[value].letter})`;
        else if (name === "roof") {
          label = value === picker.chosen("site") ? _("Roof on {site} (new building)", { site: value }) : _("Roof on {site}", { site: value });
        } else if (name === "choose") label = _("Take {colour} ({letter})", { colour: colourName(value), letter: FLOOR[value].letter });
        else if (name === "discard") {
          const items = JSON.parse(value);
          label = items.length ? _("Return {floors}", { floors: items.map(([c, n]) => `${n} ${colourName(c)}`).join(", ") }) : _("Return nothing");
        } else if (name === "pass") label = _("Pass");
        else if (name === "decline_extra") label = _("Decline the extra turn (TU-X1)");
        else label = String(value);
        const swatch = name === "color" || name === "choose" ? el("span", { class: `swatch swatch-${value}`, "aria-hidden": "true" }, FLOOR[value].letter) : null;
        group.append(el("button", { type: "button", class: "choice", dataset: { step: name, value: String(value) },
          onclick: () => picker.choose(name, value) }, swatch, " ", label));
      }
      // The first step is also offered on the board; here too, for keyboard users who prefer a list.
      if (next.length) box.append(group);
      if (chosen.length) box.append(el("button", { type: "button", class: "back", onclick: () => picker.back() }, "Back one step"));
      return box;
    },
  };
  return picker;
}

export function scoreTable(result, seats) {
  const colours = ["black", "grey", "white", "brown"];
  const table = el("table", { class: "score" },
    el("caption", {}, _("Score breakdown (TU-E4: locomotive and cone columns plus chips; TU-E5: tie-break by floors in supply)")),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, _("Rank")), el("th", { scope: "col" }, _("Player")),
      colours.map((c) => el("th", { scope: "col" }, `${FLOOR[c].letter} ${_("{colour} locomotive", { colour: colourName(c) })}`)),
      el("th", { scope: "col" }, _("Cone (visible roofs)")), el("th", { scope: "col" }, _("Chips")),
      el("th", { scope: "col" }, _("Total")), el("th", { scope: "col" }, _("Floors in supply (tie-break)")))));
  const body = el("tbody");
  for (const r of [...result.seats].sort((a, b) => a.rank - b.rank || a.seat - b.seat)) {
    const locos = Object.fromEntries((r.locomotives || []).map((l) => [l.color, l]));
    body.append(el("tr", { dataset: { seat: String(r.seat) } },
      el("td", {}, String(r.rank)), el("th", { scope: "row" }, seatName(seats, r.seat)),
      colours.map((c) => el("td", {}, locos[c] ? `${locos[c].points} (${_("column {n}", { n: locos[c].position })})` : "—")),
      el("td", {}, r.cone ? `${r.cone.points} (${ngettext("{n} roof", "{n} roofs", r.cone.visible_roofs)})` : "—"),
      el("td", {}, (r.chips || []).length ? `${r.chips.reduce((a, c) => a + c.value, 0)} (${r.chips.map((c) => `#${c.objective}: ${c.value}`).join(", ")})` : "0"),
      el("td", { class: "total" }, String(r.total)),
      el("td", {}, String(r.supply_floors))));
  }
  table.append(body);
  return el("div", {}, table, winnersLine(result, seats),
    tiebreakChain(result, seats, _("No tie on total points: the tie-break (TU-E5, most floors in own supply, then a shared victory) was not needed.")));
}

export function chart(steps, seats) {
  const colours = ["black", "grey", "white", "brown"];
  const series = [];
  const n = steps.find((x) => x.state && x.state.seats)?.state.seats.length || 0;
  for (let seat = 0; seat < n; seat += 1) {
    colours.forEach((c, k) => {
      series.push({
        seat, label: colourName(c), colour: seatColour(seat), dash: ["", "6 3", "2 3", "10 3 2 3"][k],
        points: steps.filter((x) => x.state && x.state.seats).map((x) => ({ x: x.seq, y: x.state.seats[seat].locomotives[c] })),
      });
    });
  }
  return lineChart({ title: _("Locomotive tracks: column of each locomotive after each log entry"), series, seats, yLabel: _("column") });
}
