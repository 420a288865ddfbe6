"""axe-core on every page (issue 24 item 4), in Chromium against a real referee: the lobby, new game, my keys,
my games, tournaments, a tournament, the game page and the replay of both games (mid-game), and the confirmation
page (a finished game's page and replay, with its score: ``test_keyboard_play.py``, on the game it plays) — no
serious or critical violation (WCAG 2.1 A and AA rules and axe's best practices). axe-core is the npm package's
``axe.min.js``, vendored in ``tests/web/vendor/`` (never fetched at test time; ``axe_helpers.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from axe_helpers import run_axe, tally_line
from svc_helpers import Http
from tournament_helpers import Players, join_all

from referee.signing import b64url_encode, generate_key, private_key_b64, public_key_b64, sign

pytestmark = pytest.mark.web

STEP_MS = 20_000


def _submit(base: str, game: str, key, seat: int, ctx: str, **fields) -> requests.Response:
    state = requests.get(f"{base}/games/{game}", timeout=10).json()
    envelope = {"v": 1, "ctx": ctx, "game": game, "seat": seat, "seq": state["seq"], "prev": state["head"], **fields}
    path = "accept" if ctx == "referee/accept" else "moves?wait=5"
    return requests.post(f"{base}/games/{game}/{path}", json={"envelope": envelope, "sig": sign(key, envelope)},
                         timeout=15)


def _play(base: str, ruleset: str, turns: int):
    """A game of Ann and Bea, accepted and ``turns`` moves in (builds preferred, so towers stand)."""
    keys = [generate_key(), generate_key()]
    created = requests.post(f"{base}/games", timeout=10, json={
        "ruleset": ruleset, "seats": [{"name": "Ann", "key": public_key_b64(keys[0])},
                                      {"name": "Bea", "key": public_key_b64(keys[1])}]})
    assert created.status_code == 201, created.text
    game = created.json()["game"]
    for seat, key in enumerate(keys):
        assert _submit(base, game, key, seat, "referee/accept", entropy=b64url_encode(bytes([seat]) * 32)).ok
    for _ in range(turns):
        legal = requests.get(f"{base}/games/{game}/legal-moves", timeout=10).json()
        if legal["to_move"] is None:
            break
        builds = [m for m in legal["moves"] if m["type"] == "build"]
        by_type = {m["type"]: m for m in reversed(legal["moves"])}
        move = (max(builds, key=lambda m: len(m.get("cards", []))) if builds else None) or by_type.get(
            "place_start") or by_type.get("take") or by_type.get("bid") or legal["moves"][0]
        response = _submit(base, game, keys[legal["to_move"]], legal["to_move"], "referee/move", move=move)
        assert response.status_code < 300, response.text
    to_move = requests.get(f"{base}/games/{game}", timeout=10).json()["to_move"]
    return game, keys, to_move


def test_axe_finds_no_serious_or_critical_violation_on_any_page(browser, web_server, console_errors, artifacts):
    base = web_server
    fivetowers, towerup = _play(base, "fivetowers", 9), _play(base, "towerup", 12)
    http = Http(requests.Session(), base)
    players = Players(3)
    status, created = http.post("/tournaments", players.body(format={"kind": "round_robin", "table_sizes": [2]}))
    assert status == 201, created
    join_all(http, created["tournament"], players)

    def key_of(game):
        _id, keys, to_move = game
        return keys[to_move if to_move is not None else 0]

    pages = [
        ("lobby", "/play/", "#games-body tr[data-game]", key_of(fivetowers)),
        ("new game", "/play/new", "#seats li", None),
        ("my keys", "/play/keys", "#keys-body tr[data-public]", key_of(fivetowers)),
        ("my games", "/play/me", "#all-my-games[aria-busy=false]", key_of(fivetowers)),
        ("tournaments", "/play/tournaments", "#t-ruleset-choices input", None),
        ("tournament", f"/play/tournaments/{created['tournament']}", ".round[data-round='1']", None),
        ("5 Towers game", f"/play/games/{fivetowers[0]}", "#game[data-my-turn=true]", key_of(fivetowers)),
        ("5 Towers replay", f"/play/games/{fivetowers[0]}/replay", "#replay[data-ready=true]", None),
        ("Tower Up game", f"/play/games/{towerup[0]}", "#game[data-my-turn=true]", key_of(towerup)),
        ("Tower Up replay", f"/play/games/{towerup[0]}/replay", "#replay[data-ready=true]", None),
        ("confirm", "/play/confirm/c_aaaaaaaaaaaaaaaa", "#confirm-form, form, main", None),
    ]
    counts: dict[str, dict[str, int]] = {}
    bad: dict[str, list] = {}
    for name, path, ready, key in pages:
        # every page at desktop size; the boards' pages at phone size too (their layout changes there)
        sizes = [("desktop", {"width": 1280, "height": 900})]
        if path.startswith("/play/games/") and not path.endswith("/replay"):
            sizes.append(("phone", {"width": 360, "height": 740}))
        for size, viewport in sizes:
            context = browser.new_context(viewport=viewport, bypass_csp=True)
            page = console_errors.watch(context.new_page())
            if key is not None:
                stored = [{"name": "Me", "public": public_key_b64(key), "private": private_key_b64(key),
                           "created": "2026-01-01T00:00:00Z"}]
                context.add_init_script(
                    f"localStorage.setItem('referee.keys.v1', {json.dumps(json.dumps(stored))});")
            page.goto(f"{base}{path}")
            page.wait_for_selector(ready, timeout=STEP_MS, state="attached")
            if "replay" in name:
                page.locator("#last").click()
                page.wait_for_timeout(300)
            page.wait_for_timeout(300)  # (not "networkidle": the pages hold an event stream open)
            tally, serious = run_axe(page)
            context.close()
            counts[f"{name} ({size})"] = tally
            if serious:
                bad[f"{name} ({size})"] = serious
    print("axe-core violations per page (nodes, by impact):")
    for page_name, tally in counts.items():
        print(tally_line(page_name, tally))
    (artifacts / "axe-violations.json").write_text(
        json.dumps({"counts": counts, "serious_or_critical": bad}, indent=1))
    assert bad == {}, bad
    console_errors.assert_none()
