"""What the browser verifier (``/play/verify``, issue 38) is given, checked without a browser: the engine files it
serves are exactly what the verifier imports and hash to the installed ruleset versions; the vendored Pyodide is
pinned by sha256; only the verifier's page may carry the WebAssembly CSP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask, Response

from referee.cli import main
from referee.games import names, ruleset
from referee.web import vendor
from referee.web.defences import CONTENT_SECURITY_POLICY, WASM_CONTENT_SECURITY_POLICY, security_headers
from referee.web.verify_page import engine_files, engine_manifest

REPO = Path(__file__).resolve().parents[2]

IMPORTS = """
import json, sys
import referee.verify, referee.verify.bundle
from referee.games import names, ruleset
for name in names():
    ruleset(name)
roots = ("referee", "schemas", "rfc8785", "marshmallow")
print(json.dumps(sorted(m.__file__ for n, m in list(sys.modules.items())
                        if n.split(".")[0] in roots and getattr(m, "__file__", None))))
"""


def test_the_engine_files_are_what_the_verifier_imports():
    done = subprocess.run([sys.executable, "-c", IMPORTS], cwd=REPO, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    imported = {Path(f).resolve() for f in json.loads(done.stdout)}
    served = {path.resolve() for path in engine_files().values()}
    assert imported <= served, sorted(map(str, imported - served))
    paths = set(engine_files())
    assert "referee/app.py" not in paths and not any(p.startswith(("referee/store/", "referee/api/")) for p in paths)
    assert {entry["path"] for entry in engine_manifest()["files"]} == paths


def test_the_engine_files_laid_out_as_served_hash_to_the_installed_versions(tmp_path):
    """What the worker writes into Pyodide's file system gives the installed versions (the page shows them)."""
    for rel, source in engine_files().items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    script = ("import json; from referee.games import names, ruleset; "
              "print(json.dumps({n: ruleset(n).version for n in names()}))")
    env = {k: v for k, v in os.environ.items() if k != "REFEREE_FIXTURES"}
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); {script}"],
                          cwd=tmp_path, capture_output=True, text=True, check=True, env=env)
    assert json.loads(done.stdout) == {name: ruleset(name).version for name in names()}


def test_a_tarball_of_another_sha256_is_refused_and_nothing_is_unpacked(tmp_path):
    with pytest.raises(ValueError, match="sha256"):
        vendor.install(tmp_path, fetch=lambda url: b"not the pinned tarball", log=lambda *_: None)
    assert list(tmp_path.iterdir()) == []
    assert not vendor.installed(tmp_path)


def test_installed_needs_the_pinned_versions(tmp_path):
    for package in vendor.PACKAGES:
        for name in package.files:
            (tmp_path / package.folder).mkdir(exist_ok=True)
            (tmp_path / package.folder / name).write_bytes(b"x")
    (tmp_path / "pins.json").write_text(json.dumps(vendor.pins()))
    assert vendor.installed(tmp_path)
    (tmp_path / "pins.json").write_text(json.dumps({**vendor.pins(), "pyodide": "0.0.1"}))
    assert not vendor.installed(tmp_path)


@pytest.mark.parametrize("set_by_view, expected", [
    (None, CONTENT_SECURITY_POLICY),
    (WASM_CONTENT_SECURITY_POLICY, WASM_CONTENT_SECURITY_POLICY),
    ("default-src *; script-src 'unsafe-eval'", CONTENT_SECURITY_POLICY),  # only the one exception is kept
])
def test_only_the_wasm_policy_survives_the_security_headers(set_by_view, expected):
    app = Flask("csp")

    @app.get("/")
    def page() -> Response:
        response = Response("x")
        if set_by_view:
            response.headers["Content-Security-Policy"] = set_by_view
        return response

    app.after_request(security_headers)
    assert app.test_client().get("/").headers["Content-Security-Policy"] == expected
    assert WASM_CONTENT_SECURITY_POLICY == CONTENT_SECURITY_POLICY.replace(
        "script-src 'self'", "script-src 'self' 'wasm-unsafe-eval'")


SHIM = """
import json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey as Real

calls = []

def check(key, sig, message):  # what the page's @noble/ed25519 does, here with the real library
    calls.append(1)
    try:
        Real.from_public_bytes(key).verify(sig, message)
        return True
    except Exception:
        return False

for name in [m for m in sys.modules if m.split(".")[0] == "cryptography"]:
    del sys.modules[name]
sys.path.insert(0, "referee/web")
import pyodide_boot

pyodide_boot.install_ed25519(check)
out = json.loads(pyodide_boot.verify_bytes(open(sys.argv[1], "rb").read(), None, None))
import referee.protocol.signing
assert referee.protocol.signing.Ed25519PublicKey.__module__ == "pyodide_boot"  # the stand-in, not cryptography's
out["checks_through_the_shim"] = len(calls)
out["versions"] = pyodide_boot.engine_versions()
print(json.dumps(out))
"""


@pytest.mark.parametrize("tamper", [None, "signature of another seat"])
def test_pyodide_boot_gives_the_cli_report_through_its_ed25519_seam(tmp_path, tamper):
    """The Python half of the page without a browser: ``pyodide_boot`` with its ``cryptography`` stand-in (checking
    through a function, as the page's Ed25519 does) reports what ``referee verify --json`` reports."""
    sys.path.insert(0, str(REPO / "tests" / "verification"))
    try:
        from gamelogs import finished_log
    finally:
        sys.path.pop(0)
    from referee.protocol.signing import generate_key, sign
    from referee.verify.bundle import build_bundle

    log = finished_log("towerup", 2)
    if tamper:
        p = next(i for i, e in enumerate(log.entries) if e["type"] == "move")
        seat = log.entries[p]["seat"]
        log.entries[p]["submission"]["sig"] = sign(log.keys[1 - seat], log.entries[p]["submission"]["envelope"])
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(build_bundle(log.entries, generate_key())))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    page = json.loads(subprocess.run([sys.executable, "-c", SHIM, str(path)], cwd=REPO, capture_output=True,
                                     text=True, check=True, env=env).stdout)
    # ``referee verify --json``: the group's own ``main`` in click's standalone mode (as ``python -m referee.cli``),
    # run in this process by click's CliRunner (no second Python to start); its stdout and its exit code
    cli = CliRunner().invoke(main, ["verify", "--json", str(path)], catch_exceptions=False)
    assert page["report"] == json.loads(cli.stdout) and page["exit_code"] == cli.exit_code == (1 if tamper else 0)
    assert page["checks_through_the_shim"] > len(log.entries) // 2  # every signature went through the seam
    assert page["versions"] == {name: ruleset(name).version for name in names()}
