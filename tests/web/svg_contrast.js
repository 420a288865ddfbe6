// The contrast of SVG text, which axe-core does not measure (test_board_contrast.py puts this into a page).
//
// For each <text> (and each <tspan>) of an SVG: its fill colour as getComputedStyle gives it, and the colour
// actually behind it, found by painting the SVG at a few points of the text (its centre, and 20 % and 80 % along
// its line) the way the browser paints it: every shape before and after it in drawing order whose fill
// (isPointInFill) or stroke (isPointInStroke) covers the point, with fill-opacity, stroke-opacity and the
// opacity of each group (composited as a group, as SVG does), gradients taken at the point and patterns at each
// of their colours, over the background of the HTML boxes the SVG sits in (the page's background when none has
// one). The worst point counts. WCAG 2.1's contrast ratio (1.4.3): at least 4.5:1, or 3:1 for large text
// (24 CSS px, or 18.66 px bold, as drawn on the screen).
(() => {
  const canvas = document.createElement("canvas").getContext("2d");

  /** Any CSS colour as [r, g, b, a] (0–255, a 0–1); null for "none" and for what is not a colour. */
  function parse(value) {
    if (!value || value === "none" || value === "transparent") return value === "transparent" ? [0, 0, 0, 0] : null;
    canvas.fillStyle = "#010203"; // a sentinel: the canvas keeps it when the value is no colour
    canvas.fillStyle = value;
    const got = canvas.fillStyle;
    if (got === "#010203") return null;
    if (got.startsWith("#")) return [1, 3, 5].map((i) => parseInt(got.slice(i, i + 2), 16)).concat([1]);
    const m = /rgba?\(([^)]+)\)/.exec(got);
    if (!m) return null;
    const parts = m[1].split(",").map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  }

  function channel(c) {
    const v = c / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }

  function luminance([r, g, b]) {
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  }

  /** WCAG 2.1 contrast ratio of two opaque colours (any CSS colour strings or [r, g, b]). */
  function ratio(a, b) {
    const la = luminance(typeof a === "string" ? parse(a) : a);
    const lb = luminance(typeof b === "string" ? parse(b) : b);
    return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
  }

  const hex = (c) => `#${c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, "0")).join("")}`;

  // premultiplied [R, G, B, A]: src over dst
  const over = (src, dst) => src.map((v, i) => v + dst[i] * (1 - src[3]));
  const layer = ([r, g, b, a], alpha) => {
    const k = a * alpha;
    return [r * k, g * k, b * k, k];
  };
  const scale = (c, k) => c.map((v) => v * k);

  const SHAPES = new Set(["rect", "circle", "ellipse", "path", "polygon", "polyline", "line"]);
  const CONTAINERS = new Set(["g", "a", "svg", "switch"]);

  function refTarget(paint) {
    const m = /url\(["']?#([^"')]+)["']?\)/.exec(paint || "");
    return m ? document.getElementById(m[1]) : null;
  }

  /** The colours of a pattern (every colour it paints with). */
  function patternColours(pattern) {
    const out = [];
    for (const part of pattern.querySelectorAll("*")) {
      if (!SHAPES.has(part.localName)) continue;
      const cs = getComputedStyle(part);
      for (const p of part.localName === "line" ? [cs.stroke] : [cs.fill, cs.stroke]) { // (a line has no area)
        const c = parse(p);
        if (c && c[3] > 0) out.push(c);
      }
    }
    return out.length ? out : [[0, 0, 0, 0]];
  }

  /** A linear gradient's colour at a user-space point of a shape (its stops interpolated; pad spread). */
  function gradientAt(grad, shape, pt) {
    const stops = [...grad.querySelectorAll("stop")].map((st) => {
      const cs = getComputedStyle(st);
      const c = parse(cs.stopColor) || [0, 0, 0, 1];
      return { at: parseFloat(st.getAttribute("offset")) || 0, c: [c[0], c[1], c[2], c[3] * parseFloat(cs.stopOpacity)] };
    });
    if (!stops.length) return [0, 0, 0, 0];
    if (grad.localName !== "linearGradient") return stops[Math.floor(stops.length / 2)].c;
    const num = (name, dflt) => {
      const v = grad.getAttribute(name);
      if (v === null) return dflt;
      return v.endsWith("%") ? parseFloat(v) / 100 : parseFloat(v);
    };
    const [x1, y1, x2, y2] = [num("x1", 0), num("y1", 0), num("x2", 1), num("y2", 0)];
    let px = pt.x;
    let py = pt.y;
    if (grad.getAttribute("gradientUnits") !== "userSpaceOnUse") {
      const box = shape.getBBox();
      px = (pt.x - box.x) / (box.width || 1);
      py = (pt.y - box.y) / (box.height || 1);
    }
    const dx = x2 - x1;
    const dy = y2 - y1;
    const t = Math.max(0, Math.min(1, ((px - x1) * dx + (py - y1) * dy) / (dx * dx + dy * dy || 1)));
    const lo = [...stops].reverse().find((st) => st.at <= t) || stops[0];
    const hi = stops.find((st) => st.at >= t) || stops[stops.length - 1];
    const f = hi.at === lo.at ? 0 : (t - lo.at) / (hi.at - lo.at);
    return lo.c.map((v, i) => v + (hi.c[i] - v) * f);
  }

  /** The colour a paint (fill or stroke value) gives at point pt of shape; pick: which colour of a pattern. */
  function paintAt(paint, shape, pt, pick) {
    if (!paint || paint === "none") return null;
    const ref = refTarget(paint);
    if (ref) {
      if (ref.localName === "pattern") {
        const colours = patternColours(ref);
        return colours[pick % colours.length];
      }
      if (/Gradient$/.test(ref.localName)) return gradientAt(ref, shape, pt);
      return null;
    }
    return parse(paint);
  }

  // Kept for one check() (the page may change between two): the boxes, and the computed styles as plain
  // objects (reading a live CSSStyleDeclaration again for every point was most of the time).
  let boxes = new Map();
  let reaches = new Map();
  let styles = new Map();

  function style(element) {
    let got = styles.get(element);
    if (!got) {
      const cs = getComputedStyle(element);
      got = { display: cs.display, visibility: cs.visibility, fill: cs.fill, fillOpacity: cs.fillOpacity,
        stroke: cs.stroke, strokeWidth: cs.strokeWidth, strokeOpacity: cs.strokeOpacity, opacity: cs.opacity };
      styles.set(element, got);
    }
    return got;
  }

  /** A shape's box in client coordinates, widened by its stroke: where its paint can be. */
  function boxOf(shape, cs) {
    let box = boxes.get(shape);
    if (!box) {
      const r = shape.getBoundingClientRect();
      const m = shape.getScreenCTM();
      const widen = (parseFloat(cs.strokeWidth) || 0) * (m ? Math.hypot(m.a, m.b) : 1) / 2 + 1;
      box = { left: r.left - widen, right: r.right + widen, top: r.top - widen, bottom: r.bottom + widen };
      boxes.set(shape, box);
    }
    return box;
  }

  const inside = (box, x, y) => box !== null && x >= box.left && x <= box.right && y >= box.top && y <= box.bottom;

  /** Whether a shape's painted area can contain the client point (its box, widened by its stroke). */
  function near(shape, cs, x, y) {
    return inside(boxOf(shape, cs), x, y);
  }

  /** The union of the boxes of the shapes in a container (null: none): outside it, render() of the container
   * paints nothing but the text it holds, so it need not be walked. */
  function reachOf(node) {
    if (reaches.has(node)) return reaches.get(node);
    let box = null;
    for (const child of node.children) {
      let b = null;
      if (SHAPES.has(child.localName)) b = boxOf(child, style(child));
      else if (CONTAINERS.has(child.localName)) b = reachOf(child);
      if (b) box = box ? { left: Math.min(box.left, b.left), right: Math.max(box.right, b.right),
        top: Math.min(box.top, b.top), bottom: Math.max(box.bottom, b.bottom) } : b;
    }
    reaches.set(node, box);
    return box;
  }

  /** What a shape paints at the client point: premultiplied RGBA (its fill, then its stroke over it). */
  function shapeAt(shape, cs, x, y, pick) {
    if (cs.visibility !== "visible" || !near(shape, cs, x, y)) return null;
    const m = shape.getScreenCTM();
    if (!m) return null;
    const pt = new DOMPoint(x, y).matrixTransform(m.inverse());
    let acc = null;
    if (cs.fill !== "none" && shape.isPointInFill(pt)) {
      const c = paintAt(cs.fill, shape, pt, pick);
      if (c) acc = layer(c, parseFloat(cs.fillOpacity));
    }
    if (cs.stroke !== "none" && parseFloat(cs.strokeWidth) > 0 && shape.isPointInStroke(pt)) {
      const c = paintAt(cs.stroke, shape, pt, pick);
      if (c) acc = over(layer(c, parseFloat(cs.strokeOpacity)), acc || [0, 0, 0, 0]);
    }
    return acc;
  }

  /** Paint node's children at the client point twice in one walk, premultiplied RGBA: [with ``target`` painted
   * solid, without it] (every other shape paints the same in both, so each is measured once). */
  function render(node, x, y, target, pick) {
    let withIt = [0, 0, 0, 0];
    let without = [0, 0, 0, 0];
    for (const child of node.children) {
      const cs = style(child);
      if (cs.display === "none") continue;
      let paint = [null, null];
      if (child === target) {
        paint = [layer(parse(cs.fill) || [0, 0, 0, 1], parseFloat(cs.fillOpacity)), null];
      } else if (SHAPES.has(child.localName)) {
        const p = shapeAt(child, cs, x, y, pick);
        paint = [p, p];
      } else if (CONTAINERS.has(child.localName) || (child.localName === "text" && child.contains(target))) {
        if (child.contains(target) || inside(reachOf(child), x, y)) paint = render(child, x, y, target, pick);
      } // other text, defs, title, gradients, patterns...: paint nothing at the point
      const opacity = parseFloat(cs.opacity);
      if (paint[0] && paint[0][3] > 0) withIt = over(scale(paint[0], opacity), withIt);
      if (paint[1] && paint[1][3] > 0) without = over(scale(paint[1], opacity), without);
    }
    return [withIt, without];
  }

  /** The opaque colour of the HTML boxes behind an element (their background colours, over white). */
  function htmlBackground(element) {
    const chain = [];
    for (let e = element.parentElement; e; e = e.parentElement) chain.push(e);
    let acc = [255, 255, 255, 1];
    for (const e of chain.reverse()) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) {
        const a = c[3];
        acc = [c[0] * a + acc[0] * (1 - a), c[1] * a + acc[1] * (1 - a), c[2] * a + acc[2] * (1 - a), 1];
      }
    }
    return acc;
  }

  const flatten = (premult, base) => [0, 1, 2].map((i) => premult[i] + base[i] * (1 - premult[3]));

  function describe(target, svg) {
    const parts = [];
    for (let e = target.parentElement; e && e !== svg; e = e.parentElement) {
      const data = Object.entries(e.dataset || {}).map(([k, v]) => `${k}=${v}`).join(",");
      const cls = e.getAttribute("class");
      if (cls || data) parts.unshift(`${e.localName}${cls ? `.${cls.trim().split(/\s+/).join(".")}` : ""}${data ? `[${data}]` : ""}`);
    }
    const cls = target.getAttribute("class");
    const name = svg.getAttribute("aria-label") || svg.getAttribute("class") || "svg";
    return `${name} › ${parts.concat(`${target.localName}${cls ? `.${cls.trim().split(/\s+/).join(".")}` : ""}`).join(" › ")}`;
  }

  /** The texts an SVG draws: every <text> with text of its own and every <tspan>. */
  function texts(svg) {
    const out = [];
    for (const t of svg.querySelectorAll("text, tspan")) {
      if (t.closest("defs, pattern, clipPath, mask, marker, symbol")) continue;
      const own = [...t.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
      if (t.localName === "tspan" || own) out.push(t);
    }
    return out;
  }

  /** Every text of every SVG matching ``selector``: [{where, svg, text, fg, bg, ratio, size, bold, large, needed}]
   * (``svg``: the index of the text's SVG among those the selector matches). */
  function check(selector) {
    const out = [];
    boxes = new Map();
    reaches = new Map();
    styles = new Map();
    const patterns = Math.max(1, ...[...document.querySelectorAll("pattern")].map((p) => patternColours(p).length));
    for (const [index, svg] of [...document.querySelectorAll(selector)].entries()) {
      const base = htmlBackground(svg);
      for (const t of texts(svg)) {
        if (!t.checkVisibility({ visibilityProperty: true })) continue;
        const r = t.getBoundingClientRect();
        if (r.width < 0.5 || r.height < 0.5) continue;
        const cs = getComputedStyle(t);
        const m = t.getScreenCTM();
        const size = parseFloat(cs.fontSize) * (m ? Math.hypot(m.a, m.b) : 1);
        const bold = Number(cs.fontWeight) >= 700;
        const large = size >= 24 || (bold && size >= 18.66);
        const y = r.top + r.height / 2;
        let worst = null;
        for (const x of [r.left + r.width / 2, r.left + r.width * 0.2, r.left + r.width * 0.8]) {
          for (let pick = 0; pick < patterns; pick += 1) {
            const [withIt, without] = render(svg, x, y, t, pick);
            const fg = flatten(withIt, base);
            const bg = flatten(without, base);
            const value = ratio(fg, bg);
            if (!worst || value < worst.ratio) worst = { ratio: value, fg: hex(fg), bg: hex(bg) };
          }
        }
        out.push({ where: describe(t, svg), svg: index, text: t.textContent.trim().slice(0, 40), ...worst,
          ratio: Math.round(worst.ratio * 100) / 100, size: Math.round(size * 10) / 10, bold, large,
          needed: large ? 3 : 4.5 });
      }
    }
    return out;
  }

  window.svgContrast = { parse, ratio, luminance, check };
})();
