import { exportText, generateKey, importKey, listKeys, removeKey } from "./keys.js";
import { clearErrors, download, el, showError } from "./ui.js";

function render() {
  const body = document.getElementById("keys-body");
  const keys = listKeys();
  if (!keys.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 3 }, "No key yet: generate or import one.")));
    return;
  }
  body.replaceChildren(...keys.map((k) => el("tr", { dataset: { public: k.public } },
    el("td", { class: "key-name" }, k.name),
    el("td", {}, el("input", { class: "mono public-key", readonly: true, value: k.public, size: 46,
      "aria-label": `Public key of ${k.name}`, onfocus: (e) => e.target.select() })),
    el("td", {},
      el("button", { type: "button", onclick: () => download(`referee-${k.name.replace(/[^A-Za-z0-9_-]+/g, "_")}.key`, exportText(k)) },
        "Export to file"), " ",
      el("button", { type: "button", onclick: () => {
        if (confirm(`Forget the key "${k.name}"? Without an exported copy its seats cannot move any more.`)) {
          removeKey(k.public);
          render();
        }
      } }, "Forget")))));
}

document.getElementById("gen-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const name = document.getElementById("gen-name").value.trim();
  try {
    await generateKey(name || "player");
    document.getElementById("gen-name").value = "";
    render();
  } catch (err) {
    showError(err, "Could not generate a key");
  }
});

document.getElementById("imp-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  clearErrors();
  const name = document.getElementById("imp-name").value.trim();
  const file = document.getElementById("imp-file").files[0];
  try {
    const text = file ? await file.text() : document.getElementById("imp-text").value;
    if (!text.trim()) throw new Error("choose a key file or paste a private key");
    await importKey(name, text);
    event.target.reset();
    render();
  } catch (err) {
    showError(err, "Could not import the key");
  }
});

render();
