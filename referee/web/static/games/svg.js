// SVG building helpers.

const NS = "http://www.w3.org/2000/svg";

export function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.setAttribute("class", value);
    // Through the CSSOM, not setAttribute("style"): a Content-Security-Policy without 'unsafe-inline'
    // refuses style attributes but not element.style.
    else if (key === "style") node.style.cssText = value;
    else if (key === "dataset") for (const [k, v] of Object.entries(value)) node.dataset[k] = v;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function svgRoot(width, height, label) {
  return s("svg", { xmlns: NS, viewBox: `0 0 ${width} ${height}`, width: "100%", role: "group",
    "aria-label": label, class: "board-svg", preserveAspectRatio: "xMidYMin meet" });
}

/** A name as SVG text shows it: SVG text has no CSS ellipsis, so a long name is cut to ``max`` characters
 * and "…"; give the element a title() with the full name, shown on hover. */
export function clip(name, max = 24) {
  const chars = [...String(name)];
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : String(name);
}

export function title(text) {
  return s("title", { text });
}

/** Make an SVG element act as a button: focusable, labelled, Enter/Space/click call fn. */
export function choosable(node, label, fn, { pressed = false, disabled = false } = {}) {
  node.setAttribute("role", "button");
  node.setAttribute("aria-label", label);
  // the label says what the drawing's texts inside say: a screen reader reads it once, not both
  for (const part of node.children) part.setAttribute("aria-hidden", "true");
  node.classList.add("choosable");
  if (pressed) node.setAttribute("aria-pressed", "true");
  if (disabled) {
    node.setAttribute("aria-disabled", "true");
    return node;
  }
  node.setAttribute("tabindex", "0");
  node.dataset.choice = "1";
  node.addEventListener("click", (event) => {
    event.preventDefault();
    fn();
  });
  node.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      fn();
    }
  });
  return node;
}
