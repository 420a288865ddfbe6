// Pieces shared by the score tables of both rulesets: the tie-break chain and the chart.

import { clip, s, title as tooltip } from "./svg.js";
import { el } from "../shared/ui.js";
import { _, listAnd } from "../shared/i18n.js";

function nameOf(seats, i) {
  return (seats && seats[i] && seats[i].name) || _("Seat {n}", { n: i + 1 });
}

/** The tie-break chain: every link the engine compared, with the values, in order. */
export function tiebreakChain(result, seats, noneText) {
  const chain = result.tiebreak || [];
  const box = el("div", { class: "tiebreak" });
  box.append(el("h3", {}, _("Tie-break chain")));
  if (!chain.length) {
    box.append(el("p", {}, noneText));
    return box;
  }
  box.append(el("ol", {}, chain.map((link) => {
    const who = (link.seats || []).map((i) => nameOf(seats, i)).join(", ");
    const values = (link.values || []).map((v) => `${nameOf(seats, v.seat)} ${v.value}`).join(", ");
    const order = (link.order || []).map((group) => group.map((i) => nameOf(seats, i)).join(" = ")).join(" > ");
    const tied = link.total !== undefined ? _("tied at {n} points", { n: link.total })
      : link.rank !== undefined ? _("tied for rank {n}", { n: link.rank }) : _("tied");
    return el("li", { dataset: { rule: link.rule || "" } },
      el("strong", {}, link.rule ? `[${link.rule}] ` : ""),
      _("{who} {tied}; compared {criterion}", { who, tied, criterion: link.criterion || "?" }),
      values ? `: ${values}` : "",
      order ? ` → ${order}` : "",
      link.outcome ? ` (${link.outcome})` : link.decided ? ` (${_("decided")})` : ` (${_("not decided")})`);
  })));
  return box;
}

export function winnersLine(result, seats) {
  const winners = (result.winners || []).map((i) => nameOf(seats, i));
  return el("p", { class: "winners" }, winners.length > 1 ? _("Shared victory: {names}", { names: listAnd(winners) })
    : _("Winner: {name}", { name: winners.join("") }));
}

const SEAT_COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"];
const DASHES = ["", "6 3", "2 3", "8 3 2 3", "1 2"];

export function seatColour(i) {
  return SEAT_COLOURS[i % SEAT_COLOURS.length];
}

/** The colour of a text drawn on a seat's colour (a roof's number): white or black, whichever contrasts more
 * (at least 4.5:1 on each of SEAT_COLOURS: white on red and blue, black on green, purple and orange). */
const SEAT_INKS = ["#ffffff", "#ffffff", "#000000", "#000000", "#000000"];

export function seatInk(i) {
  return SEAT_INKS[i % SEAT_INKS.length];
}

/** A seat's colour for text on white (the chart's line labels): each of SEAT_COLOURS darkened to the same hue
 * until it passes WCAG 2.1 AA for small text with a margin (red 6.9:1, blue 6.4, green 5.4, purple 5.9,
 * orange 5.6 on #fff; the line colours themselves reach 2.5:1 for orange and 3.4:1 for green). */
const SEAT_TEXTS = ["#b01f20", "#1a6399", "#1e7b1e", "#7d4fa8", "#a65000"];

export function seatText(i) {
  return SEAT_TEXTS[i % SEAT_TEXTS.length];
}

/**
 * A line chart: one line per series ({label, seat, points: [{x, y}]}); x is the log position.
 * Lines differ by colour and dash pattern, and each carries its label at its end (beside a stroke of the line,
 * in the seat's text colour: seatText).
 */
export function lineChart({ title, series, seats, xLabel = _("log entry"), yLabel = "" }) {
  const width = 860;
  const height = 320;
  const pad = { left: 50, right: 170, top: 20, bottom: 40 };
  const all = series.flatMap((x) => x.points);
  const xMax = Math.max(1, ...all.map((p) => p.x));
  const xMin = Math.min(0, ...all.map((p) => p.x));
  const yMax = Math.max(1, ...all.map((p) => p.y));
  const yMin = Math.min(0, ...all.map((p) => p.y));
  const X = (x) => pad.left + ((x - xMin) / (xMax - xMin || 1)) * (width - pad.left - pad.right);
  const Y = (y) => height - pad.bottom - ((y - yMin) / (yMax - yMin || 1)) * (height - pad.top - pad.bottom);
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", class: "chart",
    "aria-label": `${title}. ${series.map((x) => _("{name} {label}: ends at {value}", { name: x.name || nameOf(seats, x.seat), label: x.label,
      value: x.points.length ? x.points[x.points.length - 1].y : 0 })).join("; ")}` });
  svg.append(s("title", { text: title }));
  // Axes and grid.
  const ticks = 5;
  for (let i = 0; i <= ticks; i += 1) {
    const v = Math.round(yMin + ((yMax - yMin) * i) / ticks);
    svg.append(s("line", { x1: pad.left, x2: width - pad.right, y1: Y(v), y2: Y(v), class: "grid" }),
      s("text", { x: pad.left - 6, y: Y(v) + 4, "text-anchor": "end", class: "axis", text: String(v) }));
  }
  svg.append(s("line", { x1: pad.left, x2: width - pad.right, y1: Y(yMin), y2: Y(yMin), class: "axis-line" }),
    s("text", { x: (width - pad.right + pad.left) / 2, y: height - 8, "text-anchor": "middle", class: "axis", text: xLabel }),
    s("text", { x: pad.left, y: Y(yMin) + 16, "text-anchor": "middle", class: "axis", text: String(xMin) }),
    // the last position ends at the plot's edge (anchored "end"): the end labels' strokes start just right of it,
    // and with many lines their column runs below the axis, where a centred number was drawn over
    s("text", { x: width - pad.right, y: Y(yMin) + 16, "text-anchor": "end", class: "axis", text: String(xMax) }));
  if (yLabel) svg.append(s("text", { x: 14, y: height / 2, class: "axis", transform: `rotate(-90 14 ${height / 2})`, "text-anchor": "middle", text: yLabel }));
  const ends = [];
  series.forEach((line, k) => {
    if (!line.points.length) return;
    const colour = line.colour || seatColour(line.seat);
    const dash = line.dash ?? DASHES[k % DASHES.length];
    const d = line.points.map((p, i) => `${i ? "L" : "M"}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join(" ");
    svg.append(s("path", { d, fill: "none", stroke: colour, "stroke-width": 2.5, "stroke-dasharray": dash || null,
      class: "series", dataset: { seat: String(line.seat), label: line.label || "" } }));
    const last = line.points[line.points.length - 1];
    const name = line.name || nameOf(seats, line.seat);
    ends.push({ y: Y(last.y), text: `${clip(name, 14)} ${line.label || ""}: ${last.y}`, full: name, colour, dash,
      ink: line.ink || seatText(line.seat) });
  });
  // End labels, spread so that they do not overlap: a short stroke of the line (its colour and dash) and the
  // label in the seat's text colour beside it (the line colours are too light for text on white).
  ends.sort((a, b) => a.y - b.y);
  let lastY = -Infinity;
  for (const e of ends) {
    const y = Math.max(e.y, lastY + 14);
    lastY = y;
    const x = width - pad.right + 4;
    svg.append(s("line", { x1: x, x2: x + 18, y1: y, y2: y, stroke: e.colour, "stroke-width": 2.5,
      "stroke-dasharray": e.dash || null, class: "series-key", "aria-hidden": "true" }),
    s("text", { x: x + 22, y: y + 4, style: `fill: ${e.ink}`, class: "series-label", text: e.text }, tooltip(e.full)));
  }
  return svg;
}
