// /play/verify (issue 38): a bundle re-checked in this browser by the referee's own verifier on Pyodide, in a
// Web Worker (verify-worker.js). The report is the one `referee verify --json` prints; the lines are the CLI's
// (`at log position N: …`). The bundle is read here and sent nowhere: a URL given is only fetched (GET).

import { _ } from "../shared/i18n.js";
import { chartHeading, rulesetModule, seatName } from "../games/model.js";

const root = document.getElementById("verify");
const form = document.getElementById("verify-form");
const fileInput = document.getElementById("verify-file");
const urlInput = document.getElementById("verify-url");
const keyInput = document.getElementById("verify-key");
const status = document.getElementById("verify-status");
const bar = document.getElementById("verify-progress");
const result = document.getElementById("verify-result");
const errors = document.getElementById("errors");

const STAGES = { load: "loading Python and the engine", signatures: "checking signatures", replay: "replaying the moves" };
const MARKS = { passed: "[pass]", failed: "[FAIL]", skipped: "[skip]" };

let worker = null;
let engine = null; // {versions, files, ms, pyodide} once the worker is ready
let nextId = 1;
const waiting = new Map();
let readyWaiters = [];

function text(node, value) {
  node.textContent = value;
  return node;
}

function make(tag, className, content) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (content !== undefined) node.textContent = content;
  return node;
}

function stageText(stage) {
  if (stage === "load") return _("loading Python and the engine");
  if (stage === "signatures") return _("checking signatures");
  if (stage === "replay") return _("replaying the moves");
  return STAGES[stage] || stage;
}

function onProgress({ stage, done, total }) {
  bar.hidden = false;
  bar.max = Math.max(total, 1);
  bar.value = done;
  text(status, _("{stage}: {done} of {total}", { stage: stageText(stage), done, total }));
}

function startWorker() {
  if (worker) return;
  worker = new Worker(root.dataset.worker, { type: "module" });
  worker.onmessage = (event) => {
    const msg = event.data;
    if (msg.type === "progress") onProgress(msg);
    else if (msg.type === "ready") {
      engine = msg;
      window.refereeEngine = msg; // what the worker loaded: versions, files, timings (read by the benchmark)
      root.dataset.loaded = "yes";
      text(status, _("Ready: Python and the engine loaded in {ms} ms.", { ms: msg.ms }));
      bar.hidden = true;
      readyWaiters.forEach((resolve) => resolve());
      readyWaiters = [];
    } else if (msg.type === "report" || msg.type === "error") {
      const pending = waiting.get(msg.id);
      if (msg.id === null || !pending) {
        fail(msg.message);
        return;
      }
      waiting.delete(msg.id);
      if (msg.type === "report") pending.resolve(msg);
      else pending.reject(new Error(msg.message));
    }
  };
  worker.onerror = (event) => fail(event.message || "worker error");
  const base = document.baseURI;
  worker.postMessage({ type: "init", vendor: new URL(root.dataset.vendor, base).href,
                       engine: new URL(root.dataset.engine, base).href });
}

function fail(message) {
  root.dataset.state = "error";
  text(errors, _("The verifier failed: {message}", { message }));
}

/** Verify the bundle bytes: resolves to {report, exit_code, ms}. Exposed for the tests as window.refereeVerify. */
async function verifyBytes(bytes, refereeKey) {
  startWorker();
  const id = nextId++;
  const answer = new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  worker.postMessage({ type: "verify", id, data: buffer, refereeKey: refereeKey || null }, [buffer]);
  return answer;
}

function whenReady() {
  startWorker();
  if (engine) return Promise.resolve();
  return new Promise((resolve) => readyWaiters.push(resolve));
}

function heading(report, source) {
  const rules = report.ruleset || {};
  if (!report.game) return _("Bundle {source}", { source });
  return _("Bundle {source}: {ruleset} game {game}, pinned version {version}, {entries} log entries, {kind}", {
    source, ruleset: rules.name, game: report.game, version: rules.pinned_version, entries: report.entries,
    kind: report.interim ? _("interim (running)") : _("final"),
  }) + (report.organiser ? ` — ${_("created by organiser {key}", { key: report.organiser })}` : "");
}

function where(check) {
  if (check.status !== "failed" || check.position === null || check.position === undefined) return "";
  const stream = check.details && check.details.stream === "messages" ? "message" : "log";
  return `at ${stream} position ${check.position}: `;
}

const VERDICTS = {
  verified: "VERIFIED: every check passed.",
  failed: "FAILED",
  incomplete: "INCOMPLETE: interim bundle of a running game; every check that can run passed, the seed and result are checked once the game ends.",
  version_mismatch: "VERSION MISMATCH: the installed engine is not the pinned version",
};

function verdictText(report) {
  let line = {
    verified: _("VERIFIED: every check passed."),
    failed: _("FAILED"),
    incomplete: _("INCOMPLETE: an interim bundle of a running game; every check that can run passed, the seed and result are checked once the game ends."),
    version_mismatch: _("VERSION MISMATCH: the engine this page ran is not the version the game was played with"),
  }[report.status] || VERDICTS[report.status] || report.status;
  const first = report.first_failure;
  if (report.status === "failed" && first) {
    // the command's words: "first failure: seat_signatures at log position 17: …"
    const check = report.checks.find((c) => c.name === first.check) || { status: "failed", ...first };
    const at = first.position !== null ? ` ${where(check).slice(0, -2)}` : ` (${_("the bundle as a whole")})`;
    line += `: ${_("first failure")}: ${first.check}${at}: ${first.reason}`;
  } else if (report.status === "version_mismatch" && first) {
    line += `; ${first.reason}.`;
  }
  return line;
}

function statusLabel(check) {
  if (check.status === "passed") return _("passed");
  if (check.status === "failed") return _("failed");
  return _("skipped");
}

/** The bundle's log, one row per entry: what was verified, with the entries the replay rejected marked. */
function showLog(bytes, report) {
  const body = document.getElementById("verify-log");
  body.replaceChildren();
  let bundle = null;
  try {
    bundle = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    return;
  }
  const log = bundle && Array.isArray(bundle.log) ? bundle.log : [];
  const replay = report.checks.find((c) => c.name === "replay");
  const rejected = new Set(((replay && replay.details && replay.details.rejected_entries) || []).map((r) => r.position));
  log.slice(0, 5000).forEach((entry, position) => {
    if (!entry || typeof entry !== "object") return;
    const row = make("tr", rejected.has(position) ? "verdict-rejected" : "");
    row.dataset.position = String(position);
    const submission = entry.submission && entry.submission.envelope;
    const content = submission && submission.move !== undefined ? submission.move
      : entry.type === "revealed" ? { server_seed: entry.server_seed, reason: entry.reason }
        : entry.type === "created" ? { ruleset: entry.ruleset, mode: entry.mode } : null;
    row.append(make("td", "mono", String(position)), make("td", "mono", String(entry.type)),
      make("td", "", entry.seat === undefined || entry.seat === null ? "" : String(entry.seat)),
      make("td", "mono check-reason", content === null ? "" : JSON.stringify(content)
        + (rejected.has(position) ? ` — ${_("rejected")}` : "")));
    body.append(row);
  });
}

// -- the board replay of the verified log: the views the worker's fold made (pyodide_boot.replay_views), drawn by
// the game's own board modules (fivetowers.js, towerup.js), as on the replay page; nothing is asked of any server
let replay = null; // {ruleset, components, seats, steps: [{position, type, seat, status, move, view}]}
let shown = 0;
const replayBox = document.getElementById("verify-replay");
const stepInput = document.getElementById("verify-step");

function showPosition(n) {
  const steps = replay.steps;
  n = Math.max(0, Math.min(steps.length - 1, n));
  shown = n;
  const step = steps[n];
  const mod = rulesetModule(replay.ruleset);
  stepInput.value = String(n);
  stepInput.setAttribute("aria-valuetext", _("Log position {n} of {total}", { n, total: steps.length - 1 }));
  text(document.getElementById("verify-step-label"), _("Log position {n} of {total}", { n, total: steps.length - 1 }));
  document.getElementById("verify-prev").disabled = n <= 0;
  document.getElementById("verify-next").disabled = n >= steps.length - 1;
  const what = step.type === "move" && mod ? `${seatName(replay.seats, step.seat)} ${mod.describeMove(step.move, replay.components)}`
    : String(step.type);
  text(document.getElementById("verify-entry"), `#${step.position} ${what}${step.status === "rejected" ? ` — ${_("rejected")}` : ""}`);
  replayBox.dataset.at = String(n);
  const board = document.getElementById("verify-board");
  if (step.view && mod) {
    const lastMove = step.type === "move" && step.status === "applied" && step.move ? { ...step.move, seat: step.seat } : null;
    mod.renderBoard(board, { components: replay.components, view: step.view, seats: replay.seats, picker: null, lastMove });
    board.querySelectorAll("svg.board-svg").forEach((svg) => { svg.dataset.ruleset = replay.ruleset; });
  } else {
    board.replaceChildren(make("p", "muted", _("No board yet: the game starts once every seat has accepted.")));
  }
}

function showReplay(data) {
  replay = data && Array.isArray(data.steps) && data.steps.length ? data : null;
  replayBox.hidden = !replay;
  if (!replay) return;
  replayBox.dataset.total = String(replay.steps.length);
  stepInput.max = String(replay.steps.length - 1);
  showPosition(replay.steps.length - 1); // the verified game as it ended
  // the score over the verified game, as the replay page draws it (from the same views: no server asked)
  const mod = rulesetModule(replay.ruleset);
  const chart = mod && mod.chart ? mod.chart(replay.steps.map((s) => ({ seq: s.position, state: s.view })), replay.seats) : null;
  text(document.getElementById("verify-chart-h"), chart ? chartHeading(replay.ruleset) : "");
  document.getElementById("verify-chart").replaceChildren(...(chart ? [chart] : []));
}

stepInput.addEventListener("input", () => showPosition(Number(stepInput.value)));
document.getElementById("verify-prev").addEventListener("click", () => showPosition(shown - 1));
document.getElementById("verify-next").addEventListener("click", () => showPosition(shown + 1));
// the arrow keys step through the replay, Home and End go to its ends, as on the replay page (the slider, a field or a
// list steps by itself)
document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (!replay || replayBox.hidden || event.altKey || event.ctrlKey || event.metaKey
    || (target && (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || target.isContentEditable))) return;
  const keys = { ArrowLeft: shown - 1, ArrowRight: shown + 1, Home: 0, End: replay.steps.length - 1 };
  if (event.key in keys) {
    event.preventDefault();
    showPosition(keys[event.key]);
  }
});

function show(answer, source, bytes) {
  const report = answer.report;
  result.hidden = false;
  text(document.getElementById("verify-heading"), heading(report, source));
  const pinned = (report.ruleset || {}).name;
  const versions = (engine && engine.versions) || {};
  const engineLine = document.getElementById("verify-engine");
  if (pinned && versions[pinned]) {
    const same = versions[pinned] === (report.ruleset || {}).pinned_version;
    text(engineLine, same
      ? _("The engine files this page ran hash to {ruleset} {version}: the version the game was played with.", { ruleset: pinned, version: versions[pinned] })
      : _("The engine files this page ran hash to {ruleset} {version}, but the game was played with {pinned}: another version.", { ruleset: pinned, version: versions[pinned], pinned: (report.ruleset || {}).pinned_version }));
    engineLine.className = same ? "verdict-ok" : "verdict-rejected";
  } else {
    text(engineLine, "");
  }
  const body = document.getElementById("verify-checks");
  body.replaceChildren();
  for (const check of report.checks) {
    const row = make("tr", `check-${check.status}`);
    row.dataset.check = check.name;
    row.dataset.status = check.status;
    if (check.position !== null && check.position !== undefined) row.dataset.position = String(check.position);
    const name = make("th", "mono", check.name);
    name.scope = "row";
    const state = make("td", check.status === "failed" ? "verdict-rejected" : check.status === "passed" ? "verdict-ok" : "");
    state.append(make("span", "mono", MARKS[check.status] || ""), " ", statusLabel(check));
    row.append(name, state, make("td", "check-reason", where(check) + (check.reason || "")));
    body.append(row);
  }
  const verdict = document.getElementById("verify-verdict");
  text(verdict, verdictText(report));
  verdict.className = `verdict ${report.status === "verified" ? "verdict-ok" : "verdict-rejected"}`;
  text(document.getElementById("verify-json"), JSON.stringify(report, null, 2));
  if (bytes) showLog(bytes, report);
  showReplay(answer.replay);
  root.dataset.state = report.status;
  root.dataset.exit = String(answer.exit_code);
  bar.hidden = true;
  text(status, _("Checked in {ms} ms.", { ms: answer.ms }));
}

async function run(bytes, source) {
  errors.textContent = "";
  root.dataset.state = "running";
  result.hidden = true;
  try {
    await whenReady();
    const answer = await verifyBytes(bytes.slice(), keyInput.value.trim());
    show(answer, source, bytes);
  } catch (err) {
    fail(err.message || String(err));
  }
}

async function bytesOfUrl(url) {
  const response = await fetch(url, { credentials: "omit", headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(_("{url} answered HTTP {status}", { url, status: response.status }));
  return new Uint8Array(await response.arrayBuffer());
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  root.dataset.state = "running";
  try {
    if (fileInput.files && fileInput.files[0]) {
      const file = fileInput.files[0];
      await run(new Uint8Array(await file.arrayBuffer()), file.name);
    } else if (urlInput.value.trim()) {
      const url = urlInput.value.trim();
      await run(await bytesOfUrl(url), url);
    } else {
      text(errors, _("Choose a bundle file or give the URL of a game's export."));
    }
  } catch (err) {
    fail(err.message || String(err));
  }
});

fileInput.addEventListener("change", () => {
  if (fileInput.files && fileInput.files[0]) form.requestSubmit();
});

const drop = document.getElementById("verify-drop");
drop.addEventListener("dragover", (event) => {
  event.preventDefault();
  drop.classList.add("dragging");
});
drop.addEventListener("dragleave", () => drop.classList.remove("dragging"));
drop.addEventListener("drop", async (event) => {
  event.preventDefault();
  drop.classList.remove("dragging");
  const file = event.dataTransfer && event.dataTransfer.files[0];
  if (file) await run(new Uint8Array(await file.arrayBuffer()), file.name);
});

// ?url=… (a game page's "verify in the browser" link) fills the URL field
const given = new URLSearchParams(location.search).get("url");
if (given) urlInput.value = new URL(given, location.href).href;

if (root.dataset.ready === "yes") startWorker(); // Pyodide loads while the reader picks a file

// the tests verify several bundles in one page (one Pyodide load): bytes in, the report out
window.refereeVerify = async (textOrBytes, refereeKey) => {
  await whenReady();
  const bytes = typeof textOrBytes === "string" ? new TextEncoder().encode(textOrBytes) : textOrBytes;
  const answer = await verifyBytes(bytes.slice(), refereeKey);
  show(answer, "(test)", bytes);
  return answer;
};
