"""The browser verifier (issue 38, ``/play/verify``): the referee's own verifier on Pyodide in Chromium.

Real bundles of finished games from a real referee (the module's ``web_server``: random legal moves through the API to
the end), verified in one page (Pyodide loads once) and by ``referee verify --json`` on the same bytes: the same
report, check by check and position by position, for an honest game of each ruleset and for tampered copies (a move
changed, an entry removed, a move signed by another seat, the revealed seed changed, the result forged; and a
forged agreement, a recorded game's deck altered, a bundle of another ruleset version, a running game's interim
bundle and junk). The static export of
``referee verify-page`` served by ``python -m http.server`` verifies with no request to the referee. Zero console
errors and zero CSP violations; the page's CSP adds ``'wasm-unsafe-eval'`` and no other page's does.

Skipped, with the reason, while the Pyodide files are not installed (``python referee/web/vendor.py``; ``.ci/run``
installs them)."""

from __future__ import annotations

import copy
import html
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote

import pytest
import requests
from click.testing import CliRunner
from ports import free_port
from screens import shoot
from signed_requests import start, submit
from test_csp import WATCH_CSP, violations

from referee.cli import main
from referee.games import ruleset
from referee.protocol.logchain import seal
from referee.protocol.signing import MOVE_CTX, generate_key, public_key_b64, sign
from referee.verify.bundle import build_bundle, sign_bundle
from referee.web import vendor

pytestmark = [pytest.mark.web,
              pytest.mark.skipif(not vendor.installed(), reason="the browser verifier's Pyodide files are not "
                                 "installed: run python referee/web/vendor.py (.ci/run does)")]

REPO = Path(__file__).resolve().parents[2]
LOAD_MS = 180_000  # Pyodide's first load on a busy two-core machine
PHONE = {"width": 360, "height": 740}


def finish(base: str, ruleset: str, players: int, seed: str) -> tuple[str, list]:
    rng = random.Random(seed)
    game, keys = start(base, ruleset, [{"name": n} for n in ["Ann", "Bea", "Cem", "Dia", "Eve"][:players]])
    for _ in range(3000):
        legal = requests.get(f"{base}/games/{game}/legal-moves", timeout=10).json()
        if legal["to_move"] is None:
            break
        seat = legal["to_move"]
        # at the position legal-moves folded its moves from (no other read of the game per move)
        response = submit(base, game, keys[seat], seat, MOVE_CTX, at=legal, move=rng.choice(legal["moves"]))
        assert response.status_code < 300, response.text
    deadline = time.monotonic() + 20
    while requests.get(f"{base}/games/{game}", timeout=10).json()["status"] != "finished":
        assert time.monotonic() < deadline, "the game did not finish"
        time.sleep(0.1)
    return game, keys


@pytest.fixture(scope="module")
def games(web_server):
    """{ruleset: (bundle, seat keys)}: a finished game of each ruleset, exported by the referee."""
    out = {}
    for name, players in (("fivetowers", 2), ("towerup", 2)):
        game, keys = finish(web_server, name, players, f"verify-page-{name}")
        bundle = requests.get(f"{web_server}/games/{game}/export", timeout=10).json()
        assert bundle["interim"] is False
        out[name] = (bundle, keys)
    return out


def reseal(entries: list[dict], start: int = 0) -> list[dict]:
    """The hash chain recomputed from ``start`` (a forger who rewrites history)."""
    out = [dict(e) for e in entries]
    prev = out[start - 1]["hash"] if start else "0" * 64
    for i in range(start, len(out)):
        out[i]["seq"] = i
        out[i] = seal({k: v for k, v in out[i].items() if k != "hash"}, prev)
        prev = out[i]["hash"]
    return out


FORGER = generate_key()  # the dishonest referee re-signs the bundle it changed


def resigned(bundle: dict, entries: list[dict]) -> dict:
    out = {k: v for k, v in bundle.items() if k not in ("referee_sig", "referee_key")}
    out["log"] = entries
    return sign_bundle(out, FORGER)


def moves(bundle: dict) -> list[int]:
    return [i for i, e in enumerate(bundle["log"]) if e["type"] == "move"]


def tampers(games) -> dict[str, dict]:
    bundle, keys = games["fivetowers"]
    out = {}
    # a move changed, the chain recomputed: the seat's signature fails there
    entries = copy.deepcopy(bundle["log"])
    p = moves(bundle)[3]
    envelope = entries[p]["submission"]["envelope"]
    envelope["move"] = {**envelope["move"], "forged": True}
    out["move changed"] = resigned(bundle, reseal(entries, p))
    # an entry removed, the chain recomputed
    entries = copy.deepcopy(bundle["log"])
    del entries[moves(bundle)[5]]
    out["entry removed"] = resigned(bundle, reseal(entries, moves(bundle)[5]))
    # a move re-signed by the other seat
    entries = copy.deepcopy(bundle["log"])
    p = moves(bundle)[4]
    seat = entries[p]["seat"]
    entries[p]["submission"]["sig"] = sign(keys[1 - seat], entries[p]["submission"]["envelope"])
    out["signature of another seat"] = resigned(bundle, reseal(entries, p))
    # the revealed seed changed (another deck order than the one committed to)
    entries = copy.deepcopy(bundle["log"])
    last = next(i for i in range(len(entries) - 1, -1, -1) if entries[i]["type"] == "revealed")
    entries[last]["server_seed"] = "ab" * 32
    out["seed changed"] = resigned(bundle, reseal(entries, last))
    # the claimed result changed (a field of the bundle, not of the log: no position)
    out["result forged"] = sign_bundle({**bundle, "result": {**bundle["result"], "forged": True}}, FORGER)
    return out


def cli(path: Path) -> tuple[str, int]:
    """``referee verify --json PATH``: the ``referee`` group's own ``main`` (what ``python -m referee.cli`` and the
    ``referee`` script call, click's standalone mode and its ``sys.exit`` with the report's exit code included), run
    by click's ``CliRunner`` in this process rather than in a new Python (whose start, not the verifying, was most of
    its CPU). Its stdout and exit code; anything but the command's own exit is an error here, not an exit code."""
    done = CliRunner().invoke(main, ["verify", "--json", str(path)], catch_exceptions=False)
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    return done.stdout, done.exit_code


def cli_report(bundle: dict, tmp_path: Path) -> tuple[dict, int]:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    out, code = cli(path)
    return json.loads(out), code


@pytest.fixture(scope="module")
def verify_page(browser, web_server):
    """One page of /play/verify with Pyodide loaded, for every bundle of the module."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.add_init_script(WATCH_CSP)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"uncaught {exc}"))
    response = page.goto(f"{web_server}/play/verify")
    assert "'wasm-unsafe-eval'" in response.headers["content-security-policy"]
    page.wait_for_selector("#verify[data-loaded=yes]", state="attached", timeout=LOAD_MS)
    page.errors = errors
    yield page
    context.close()


def in_page(page, bundle: dict) -> dict:
    return page.evaluate("(text) => window.refereeVerify(text)", json.dumps(bundle))


@pytest.mark.parametrize("ruleset", ["fivetowers", "towerup"])
def test_a_finished_game_verifies_in_the_page_as_by_the_cli(verify_page, games, tmp_path, ruleset):
    bundle, _ = games[ruleset]
    answer = in_page(verify_page, bundle)
    report, code = cli_report(bundle, tmp_path)
    assert code == 0 and answer["exit_code"] == 0
    assert answer["report"] == report
    assert json.loads(verify_page.text_content("#verify-json")) == report  # the JSON shown, every null kept
    # the page shows it check by check, and that the engine it ran is the pinned version
    rows = verify_page.locator("#verify-checks tr")
    assert rows.count() == len(report["checks"])
    assert verify_page.locator("#verify[data-state=verified]").count() == 1
    assert "VERIFIED" in verify_page.inner_text("#verify-verdict")
    pinned = bundle["ruleset"]["version"]
    assert f"{ruleset} {pinned}: the version the game was played with" in verify_page.inner_text("#verify-engine")
    assert verify_page.locator("#verify-log tr").count() == len(bundle["log"])  # the verified log, entry by entry
    check_board_replay(verify_page, bundle, ruleset)
    assert violations(verify_page) == [] and verify_page.errors == []


def check_board_replay(page, bundle: dict, ruleset: str) -> None:
    """The board of the verified game, drawn by the game's own module from the views the worker's fold made: at
    the end first, then stepped (slider, previous, next, the arrow keys, Home and End) through the positions."""
    last = len(bundle["log"]) - 1
    replay = page.locator("#verify-replay")
    assert replay.is_visible() and replay.get_attribute("data-total") == str(last + 1)

    def at() -> tuple[int, str]:
        return int(replay.get_attribute("data-at")), page.inner_html("#verify-board")

    position, end = at()
    assert position == last and page.locator("#verify-replay svg[data-ruleset]").first.get_attribute(
        "data-ruleset") == ruleset
    assert page.is_disabled("#verify-next") and f"Log position {last} of {last}" in page.inner_text("#verify-replay")
    first = moves(bundle)[0]  # the first move: the board after it is not the board before it
    page.fill("#verify-step", str(first))
    position, after = at()
    assert position == first and after != end and page.locator("#verify-board svg[data-ruleset]").count() > 0
    assert f"#{first} " in page.inner_text("#verify-entry")
    page.click("#verify-prev")
    position, before = at()
    assert position == first - 1 and before != after
    page.click("#verify-next")
    assert at() == (first, after)
    page.fill("#verify-step", str(last))
    assert at() == (last, end)
    # the keys, as on the replay page: Home and End go to the ends, the arrows step
    page.locator("#verify-heading").click()  # the focus out of the slider, which steps by itself
    page.keyboard.press("Home")
    assert at()[0] == 0
    page.keyboard.press("ArrowRight")
    assert at()[0] == 1
    page.keyboard.press("ArrowLeft")
    assert at()[0] == 0
    page.keyboard.press("End")
    assert at() == (last, end)
    # the score over the verified game, drawn as on the replay page: a line a seat (every game here has two or more)
    assert page.locator("#verify-chart svg path.series").count() >= 2
    assert page.inner_text("#verify-chart-h") == {"fivetowers": "Tower points over the game",
                                                  "towerup": "Locomotive tracks over the game"}[ruleset]


@pytest.mark.parametrize("tamper", ["move changed", "entry removed", "signature of another seat", "seed changed",
                                    "result forged"])
def test_a_tampered_bundle_fails_in_the_page_where_the_cli_says(verify_page, games, tmp_path, tamper):
    bundle = tampers(games)[tamper]
    answer = in_page(verify_page, bundle)
    report, code = cli_report(bundle, tmp_path)
    assert code == 1 and answer["exit_code"] == 1
    assert answer["report"]["first_failure"] == report["first_failure"] and report["first_failure"] is not None
    assert answer["report"] == report
    first = report["first_failure"]
    row = verify_page.locator(f"#verify-checks tr[data-check='{first['check']}']")
    assert row.get_attribute("data-status") == "failed"
    if first["position"] is not None:
        assert row.get_attribute("data-position") == str(first["position"])
        assert f"at log position {first['position']}: " in row.inner_text()
    if first["position"] is not None:  # the board replay stops before the first failing position
        assert verify_page.get_attribute("#verify-replay", "data-total") == str(first["position"])
    else:
        assert verify_page.get_attribute("#verify-replay", "data-total") == str(len(bundle["log"]))
    at = f" at log position {first['position']}" if first["position"] is not None else " (the bundle as a whole)"
    verdict = f"FAILED: first failure: {first['check']}{at}: {first['reason']}"
    assert verify_page.inner_text("#verify-verdict") == verdict
    assert violations(verify_page) == [] and verify_page.errors == []


def gamelogs():
    """``tests/verification/gamelogs.py``: the verification tests' own factory of signed game logs."""
    folder = str(REPO / "tests" / "verification")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    import gamelogs as module

    return module


def test_a_bundle_of_another_version_is_said_so_as_by_exit_4(verify_page, tmp_path):
    bundle = build_bundle(gamelogs().make_game_log("fivetowers", 2, seed=2, version="0" * 16).entries, FORGER)
    answer = in_page(verify_page, bundle)
    report, code = cli_report(bundle, tmp_path)
    assert code == 4 and answer["exit_code"] == 4 and answer["report"] == report
    assert verify_page.locator("#verify[data-state=version_mismatch]").count() == 1
    assert "VERSION MISMATCH" in verify_page.inner_text("#verify-verdict")
    installed = ruleset("fivetowers").version
    assert (f"hash to fivetowers {installed}, but the game was played with 0000000000000000: another version"
            in verify_page.inner_text("#verify-engine"))


def test_a_running_game_is_incomplete_as_by_exit_3(verify_page, web_server, tmp_path):
    game, _ = start(web_server, "towerup", [{"name": "Ann"}, {"name": "Bea"}])
    bundle = requests.get(f"{web_server}/games/{game}/export", timeout=10).json()
    assert bundle["interim"] is True
    answer = in_page(verify_page, bundle)
    report, code = cli_report(bundle, tmp_path)
    assert code == 3 and answer["exit_code"] == 3 and answer["report"] == report
    assert "INCOMPLETE" in verify_page.inner_text("#verify-verdict")


def test_a_recorded_games_altered_deck_fails_where_the_cli_says(verify_page, tmp_path):
    deck = [c["id"] for c in ruleset("fivetowers").components()["cards"] if c["min_players"] <= 2]
    random.Random(5).shuffle(deck)
    entries = gamelogs().make_game_log("fivetowers", 2, seed=5, deck=deck).entries
    entries[0]["deck"] = [deck[1], deck[0], *deck[2:]]  # two cards swapped, the chain recomputed, re-signed
    bundle = build_bundle(reseal(entries), FORGER)
    answer = in_page(verify_page, bundle)
    report, code = cli_report(bundle, tmp_path)
    assert code == 1 and answer["exit_code"] == 1 and answer["report"] == report
    assert report["first_failure"]["check"] == "seat_signatures"


def test_a_forged_agreement_fails_where_the_cli_says(verify_page, web_server, tmp_path):
    """A recorded game (its deck public) of three: seat 0 offers a draw, seat 1 accepts, seat 2 never answers; the
    referee logs an ``agreed`` anyway and signs the bundle."""
    keys = [generate_key() for _ in range(3)]
    deck = [c["id"] for c in ruleset("fivetowers").components()["cards"] if c["min_players"] <= 3]
    created = requests.post(f"{web_server}/games", timeout=10, json={
        "ruleset": "fivetowers", "deck": deck,
        "seats": [{"name": n, "key": public_key_b64(k)} for n, k in zip(["Ann", "Bea", "Cem"], keys, strict=True)]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]

    def post(seat: int, path: str, **fields) -> dict:
        state = requests.get(f"{web_server}/games/{game}", timeout=10).json()
        envelope = {"v": 1, "game": game, "seat": seat, "seq": state["seq"], "prev": state["head"], **fields}
        answer = requests.post(f"{web_server}/games/{game}/{path}", timeout=10,
                               json={"envelope": envelope, "sig": sign(keys[seat], envelope)})
        assert answer.status_code == 202, answer.text
        return answer.json()

    position = post(0, "offers", ctx="referee/offer", offer="draw")["position"]
    post(1, f"offers/{position}/answer", ctx="referee/answer", offer=position, accept=True)
    log = requests.get(f"{web_server}/games/{game}/export", timeout=10).json()["log"]
    assert log[-1]["type"] == "answered"
    forged = seal({"v": 1, "type": "agreed", "seq": len(log), "at": log[-1]["at"], "offer": position},
                  log[-1]["hash"])
    bundle = build_bundle([*log, forged], FORGER)
    answer = in_page(verify_page, bundle)
    report, code = cli_report(bundle, tmp_path)
    assert code == 1 and answer["exit_code"] == 1 and answer["report"] == report
    assert report["first_failure"]["check"] == "replay" and report["first_failure"]["position"] == len(log)
    assert "agreement/not_agreed" in verify_page.inner_text("#verify-verdict")


def test_junk_is_reported_as_the_cli_reports_it(verify_page, tmp_path):
    answer = verify_page.evaluate("(t) => window.refereeVerify(t)", '{"format": 1.5, "format": 2}')
    path = tmp_path / "junk.json"
    path.write_text('{"format": 1.5, "format": 2}')
    out, code = cli(path)
    assert code == 1 and answer["exit_code"] == 1
    assert answer["report"] == json.loads(out)
    assert verify_page.locator("#verify-replay").is_hidden() and answer["replay"] is None  # no log: no board


def test_a_game_is_verified_from_its_export_url_linked_by_its_replay(verify_page, web_server, games):
    bundle, _ = games["towerup"]
    replay = requests.get(f"{web_server}/play/games/{bundle['game']}/replay", timeout=10).text
    href = re.search(r'id="replay-verify-link" href="([^"]+)"', replay).group(1)
    assert unquote(html.unescape(href)) == f"/play/verify?url=/games/{bundle['game']}/export"
    verify_page.fill("#verify-url", f"{web_server}/games/{bundle['game']}/export")
    verify_page.click("#verify-run")
    verify_page.wait_for_selector("#verify[data-state=verified]", state="attached", timeout=60_000)
    assert bundle["game"] in verify_page.inner_text("#verify-heading")
    assert violations(verify_page) == [] and verify_page.errors == []


def test_a_file_chosen_on_a_phone_is_verified_with_progress(verify_page, games, tmp_path, artifacts):
    bundle, _ = games["towerup"]
    verify_page.set_viewport_size(PHONE)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(bundle))
    verify_page.set_input_files("#verify-file", str(path))
    verify_page.wait_for_selector("#verify[data-state=verified]", state="attached", timeout=60_000)
    assert "game.json" in verify_page.inner_text("#verify-heading")
    assert "Checked in" in verify_page.inner_text("#verify-status")
    assert verify_page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shoot(verify_page, artifacts / "verify-page-phone-verified.png", full_page=True)
    verify_page.set_viewport_size({"width": 1200, "height": 900})
    # the board drawn is still this bundle's after the page's width changed (5 Towers' board module redrew the
    # last 5 Towers board of the container, an earlier bundle's, over this Tower Up one)
    verify_page.wait_for_timeout(300)
    drawn = verify_page.evaluate(
        "() => [...document.querySelectorAll('#verify-board svg.board-svg')].map(s => s.dataset.ruleset || '')")
    assert drawn and set(drawn) == {"towerup"}, drawn
    shoot(verify_page, artifacts / "verify-page-desktop-verified.png", full_page=True)
    in_page(verify_page, tampers(games)["signature of another seat"])
    shoot(verify_page, artifacts / "verify-page-desktop-failed.png", full_page=True)
    verify_page.set_viewport_size(PHONE)
    assert verify_page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shoot(verify_page, artifacts / "verify-page-phone-failed.png", full_page=True)
    verify_page.set_viewport_size({"width": 1200, "height": 900})
    assert violations(verify_page) == [] and verify_page.errors == []


def test_no_other_page_gets_the_wasm_exception(web_server):
    for path in ("/play/", "/play/keys", "/play/verify/engine/manifest.json", "/play/static/pages/verify-worker.js"):
        assert "wasm" not in requests.get(f"{web_server}{path}", timeout=10).headers["content-security-policy"]
    worker = requests.get(f"{web_server}/play/verify/worker.js", timeout=10)
    assert "'wasm-unsafe-eval'" in worker.headers["content-security-policy"]
    assert requests.get(f"{web_server}/play/verify/engine/referee/app.py", timeout=10).status_code == 404
    assert requests.get(f"{web_server}/play/verify/vendor/pyodide/../pins.json", timeout=10).status_code == 404


def test_the_static_export_verifies_without_the_referee(browser, games, tmp_path, web_server):
    out = tmp_path / "site"
    # ``referee verify-page --out``: the referee group's main, by CliRunner in this process (as ``cli``)
    done = CliRunner().invoke(main, ["verify-page", "--out", str(out)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=out,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                requests.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        context = browser.new_context()
        page = context.new_page()
        errors: list[str] = []
        asked: list[str] = []
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("request", lambda request: asked.append(request.url))
        page.goto(f"http://127.0.0.1:{port}/de.html")
        page.wait_for_selector("#verify[data-loaded=yes]", state="attached", timeout=LOAD_MS)
        bundle, _ = games["fivetowers"]
        answer = in_page(page, bundle)
        assert answer["exit_code"] == 0 and answer["report"]["status"] == "verified"
        assert "GEPRÜFT" in page.inner_text("#verify-verdict")  # German
        # the board replay too: its modules are in the export (verify_page.STATIC_FILES)
        assert page.locator("#verify-replay svg[data-ruleset=fivetowers]").count() > 0
        assert f"Protokollposition {len(bundle['log']) - 1} von" in page.inner_text("#verify-replay")
        assert errors == []
        assert all(url.startswith(f"http://127.0.0.1:{port}/") for url in asked), asked
        assert not any(url.startswith(web_server) for url in asked)
        context.close()
    finally:
        server.terminate()
        server.wait()


def test_the_report_has_no_serious_accessibility_violation(verify_page, games):
    """axe-core (``test_a11y.py``) on the page showing a failed report; last in the module, as axe is put into the
    page from outside."""
    from test_a11y import run_axe

    in_page(verify_page, tampers(games)["move changed"])
    tally, serious = run_axe(verify_page)
    print("verify page:", tally)
    assert serious == [], serious
