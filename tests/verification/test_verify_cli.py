"""``referee verify``: the human report, ``--json``, exit statuses and the progress output."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from gamelogs import make_game_log, reseal

from referee.cli.verification import ProgressReporter, verify_command
from referee.protocol.signing import public_key_b64
from referee.verify.bundle import build_bundle, sign_bundle


@pytest.fixture
def bundle_file(tmp_path, make_bundle):
    def write(bundle, name="bundle.json"):
        path = tmp_path / name
        path.write_text(json.dumps(bundle))
        return str(path)

    return write


def run(*args, input=None):
    return CliRunner().invoke(verify_command, list(args), input=input, catch_exceptions=False)


def test_verified_bundle_exits_0_with_one_line_per_check(bundle_file, make_bundle):
    bundle = make_bundle("fivetowers", 3)
    result = run(bundle_file(bundle))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Bundle {bundle_file(bundle)}: fivetowers game {bundle['game']}, pinned version")
    assert lines[0].endswith(", final, no organiser")
    assert [line.split()[1] for line in lines[1:11]] == ["format", "referee_signature", "hash_chain",
                                                        "organiser_signature", "seat_signatures", "seed_commitment",
                                                        "ruleset_version", "replay", "result", "messages"]
    assert all(line.startswith("  [pass] ") for i, line in enumerate(lines[1:11]) if i != 3)
    assert lines[4] == "  [skip] organiser_signature  no organiser: the game was created without an organiser key"
    assert lines[11] == "VERIFIED: every check passed."
    assert result.stderr == ""  # fast and not a terminal: no progress output


def test_json_output_is_the_report(bundle_file, make_bundle):
    result = run(bundle_file(make_bundle("towerup", 4)), "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["status"] == "verified" and report["first_failure"] is None
    assert report["checks"][0]["name"] == "format"
    assert all(c["ok"] is True and c["position"] is None for c in report["checks"] if c.get("applicable") is not False)
    assert [c for c in report["checks"] if c.get("applicable") is False] == [
        {"name": "organiser_signature", "status": "skipped", "ok": None, "position": None, "applicable": False,
         "reason": "no organiser: the game was created without an organiser key"}]
    assert report["organiser"] is None
    assert report["ruleset"]["name"] == "towerup" and report["entries"] == len(make_bundle("towerup", 4)["log"])


def test_tampered_bundle_exits_1_and_names_the_first_failure(bundle_file, referee_key):
    log = make_game_log("fivetowers", 3, seed=9)
    entries = log.entries
    entries[12]["submission"]["envelope"]["at"] = "2026-11-21T11:00:00Z"
    path = bundle_file(build_bundle(entries, referee_key))
    result = run(path)
    assert result.exit_code == 1
    assert ("  [FAIL] hash_chain           at log position 12: hash does not chain from the previous entry"
            in result.stdout)
    assert result.stdout.splitlines()[-1] == ("FAILED: first failure: hash_chain at log position 12: "
                                              "hash does not chain from the previous entry")
    machine = json.loads(run(path, "--json").stdout)
    assert machine["ok"] is False and machine["status"] == "failed"
    assert machine["first_failure"] == {"check": "hash_chain", "position": 12,
                                        "reason": "hash does not chain from the previous entry"}
    resealed = bundle_file(build_bundle(reseal(entries), referee_key), "resealed.json")
    assert "FAILED: first failure: seat_signatures at log position 12: move of seat" in run(resealed).stdout


def test_referee_key_option(bundle_file, make_bundle, referee_key):
    path = bundle_file(make_bundle())
    assert run(path, "--referee-key", public_key_b64(referee_key)).exit_code == 0
    other = "A" * 43
    result = run(path, "--referee-key", other)
    assert result.exit_code == 1
    assert f"first failure: referee_signature (the bundle as a whole): signed by {public_key_b64(referee_key)}, " \
           f"not by the expected referee key {other}" in result.stdout


def test_interim_bundle_exits_3(bundle_file, referee_key):
    result = run(bundle_file(build_bundle(make_game_log("towerup", 2, seed=2, moves=8).entries, referee_key)))
    assert result.exit_code == 3
    assert "  [skip] seed_commitment      skipped (interim)" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("INCOMPLETE: interim bundle of a running game")


def test_version_mismatch_exits_4(bundle_file, referee_key):
    bundle = build_bundle(make_game_log("fivetowers", 2, seed=2, version="0000000000000000").entries, referee_key)
    result = run(bundle_file(bundle))
    assert result.exit_code == 4
    assert result.stdout.splitlines()[-1].startswith(
        "VERSION MISMATCH: the installed engine is not the pinned version; the game is pinned to fivetowers "
        "0000000000000000 but fivetowers")


def test_junk_and_missing_files(tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text('{"format": "referee-bundle/1", "a": 1.5, "x": 2, "x": 3}')
    result = run(str(junk))
    assert result.exit_code == 1
    assert "[FAIL] format" in result.stdout and "floats are not allowed" in result.stdout
    assert "duplicate key 'x'" in result.stdout
    missing = run(str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "No such file or directory" in missing.stderr
    assert json.loads(run(str(junk), "--json").stdout)["first_failure"]["check"] == "format"


def test_reads_the_bundle_from_stdin(make_bundle):
    result = run("-", input=json.dumps(make_bundle()))
    assert result.exit_code == 0 and result.stdout.startswith("Bundle <stdin>: fivetowers game")


def test_progress_lines_when_forced(bundle_file, make_bundle):
    result = run(bundle_file(make_bundle("towerup", 4)), "--progress", "--progress-after", "0")
    assert result.exit_code == 0
    stages = [line.split()[1] for line in result.stderr.splitlines()]
    assert stages[0] == "signatures" and "replay" in stages
    assert result.stderr.splitlines()[-1].startswith("verify: replay ") and "(100%)" in result.stderr
    assert run(bundle_file(make_bundle()), "--no-progress", "--progress-after", "0").stderr == ""


def test_progress_waits_for_the_delay():
    lines = []

    class Stream:
        def write(self, text):
            lines.append(text)

        def flush(self):
            pass

        def isatty(self):
            return False

    reporter = ProgressReporter(True, after=0.2, stream=Stream())
    reporter("replay", 1, 10)
    assert lines == []  # fast so far: quiet
    time.sleep(0.25)
    reporter("replay", 5, 10)
    reporter("replay", 10, 10)
    assert "".join(lines) == "verify: replay 5/10 entries (50%)\nverify: replay 10/10 entries (100%)\n"


#: Run in the child: the bundle is made there too, so that the engine version it pins is the one the child
#: has installed even while engine files change under a running test session.
_CHILD = """
import sys
sys.path.insert(0, {here!r})
from gamelogs import make_game_log
from referee.verify.bundle import build_bundle
from referee.protocol.signing import generate_key
import json
with open({path!r}, "w") as out:
    json.dump(build_bundle(make_game_log("towerup", 4, seed=7).entries, generate_key()), out)
from referee.cli import main
main(["verify", {path!r}, "--progress-after", "0"])
"""


def test_progress_bar_on_a_terminal(tmp_path):
    """On a real terminal (a pty) the default is a click progress bar on stderr, once past the delay."""
    path = str(tmp_path / "bundle.json")
    child = _CHILD.format(here=str(Path(__file__).resolve().parent), path=path)
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "REDIS_URL": "redis://127.0.0.1:1/0"}  # offline: no Redis needed
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:  # read the terminal while the child writes, so that it never blocks on a full pty
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    stdout = proc.communicate(timeout=60)[0].decode()
    os.close(leader)
    terminal = b"".join(chunks).decode()
    assert proc.returncode == 0, stdout + terminal
    assert "verify: replay" in terminal and "[####" in terminal
    assert stdout.splitlines()[-1] == "VERIFIED: every check passed."


def test_forged_result_reported_with_its_path(bundle_file, make_bundle, referee_key):
    bundle = make_bundle("towerup", 4)
    bundle["result"]["seats"][1]["rank"] = 99
    result = run(bundle_file(sign_bundle(bundle, referee_key)))
    assert result.exit_code == 1
    assert "the claimed result differs from the recomputed one at $.seats[1].rank" in result.stdout
