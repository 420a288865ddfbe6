// The browser verifier's worker (/play/verify, issue 38): the referee's own Python verifier on Pyodide.
// Messages in: {type: "init", vendor, engine} once, then {type: "verify", id, data (ArrayBuffer), refereeKey}.
// Messages out: {type: "progress", stage, done, total}, {type: "ready", versions, files, ms},
// {type: "report", id, report, exit_code, replay, ms}
// (replay: the public view of the game after each verified log position, pyodide_boot.replay_views), {type: "error", id, message}.
// Nothing is fetched but the page's own files: Pyodide and Ed25519 from `vendor`, the engine files from `engine`
// (each checked against the sha256 of engine/manifest.json). The bundle never leaves the worker.

let boot = null; // the Python module pyodide_boot, once loaded
let ready = null;

const ENGINE_ROOT = "/home/pyodide/referee-engine";

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A Python bytes object as a Uint8Array (Pyodide passes it as a proxy with toJs, or converted already). */
function bytesOf(value) {
  if (value instanceof Uint8Array) return value;
  return value.toJs();
}

async function load(vendorUrl, engineUrl) {
  const started = performance.now();
  const post = (stage, done, total) => self.postMessage({ type: "progress", stage, done, total });
  post("load", 0, 3);
  const [pyodideModule, ed, sha2] = await Promise.all([
    import(new URL("pyodide/pyodide.mjs", vendorUrl).href),
    import(new URL("noble-ed25519/index.js", vendorUrl).href),
    import(new URL("noble-hashes/sha2.js", vendorUrl).href),
  ]);
  ed.hashes.sha512 = sha2.sha512;
  const pyodide = await pyodideModule.loadPyodide({ indexURL: new URL("pyodide/", vendorUrl).href });
  const pythonMs = Math.round(performance.now() - started);
  post("load", 1, 3);
  const manifest = await (await fetch(new URL("manifest.json", engineUrl).href)).json();
  const files = await Promise.all(manifest.files.map(async (file) => {
    const response = await fetch(new URL(file.path, engineUrl).href);
    if (!response.ok) throw new Error(`engine file ${file.path}: HTTP ${response.status}`);
    const body = await response.arrayBuffer();
    const digest = hex(await crypto.subtle.digest("SHA-256", body));
    if (digest !== file.sha256) throw new Error(`engine file ${file.path}: sha256 ${digest}, not ${file.sha256}`);
    return [file.path, new Uint8Array(body)];
  }));
  const filesMs = Math.round(performance.now() - started) - pythonMs;
  post("load", 2, 3);
  for (const [path, body] of files) {
    const parts = path.split("/");
    let dir = ENGINE_ROOT;
    for (const part of parts.slice(0, -1)) {
      dir += `/${part}`;
      pyodide.FS.mkdirTree(dir);
    }
    pyodide.FS.writeFile(`${ENGINE_ROOT}/${path}`, body);
  }
  pyodide.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(ENGINE_ROOT)}); sys.dont_write_bytecode = True`);
  boot = pyodide.pyimport("pyodide_boot");
  // RFC 8032 verification (zip215: false), as OpenSSL's behind the command line's `cryptography`
  boot.install_ed25519((key, sig, message) => {
    try {
      return ed.verify(bytesOf(sig), bytesOf(message), bytesOf(key), { zip215: false });
    } catch (err) {
      return false;
    }
  });
  const versions = boot.engine_versions().toJs({ dict_converter: Object.fromEntries });
  post("load", 3, 3);
  const ms = Math.round(performance.now() - started);
  // how long each part took: Pyodide itself, fetching and checking the engine files, importing the engine
  const parts = { python: pythonMs, files: filesMs, engine: ms - pythonMs - filesMs };
  return { versions, files: files.length, ms, parts, pyodide: pyodide.version };
}

self.onmessage = async (event) => {
  const message = event.data;
  if (message.type === "init") {
    ready = load(message.vendor, message.engine);
    try {
      self.postMessage({ type: "ready", ...(await ready) });
    } catch (err) {
      self.postMessage({ type: "error", id: null, message: String(err && err.message ? err.message : err) });
    }
    return;
  }
  if (message.type === "verify") {
    try {
      await ready;
      const started = performance.now();
      const progress = (stage, done, total) => self.postMessage({ type: "progress", stage, done, total });
      const out = JSON.parse(boot.verify_bytes(new Uint8Array(message.data), message.refereeKey || null, progress));
      self.postMessage({ type: "report", id: message.id, report: out.report, exit_code: out.exit_code,
                         replay: out.replay, ms: Math.round(performance.now() - started) });
    } catch (err) {
      self.postMessage({ type: "error", id: message.id, message: String(err && err.message ? err.message : err) });
    }
  }
};
