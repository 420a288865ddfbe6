"""The tournament pages (issue 12): a tournament created in the new-tournament form with keys generated in the
browser, every player joining with the page's signed "Join" button, round 1's tables and byes and the
standings shown; a tournament whose first round was played shows its standings with every tie-break value,
the crosstable and a player's path on a phone (390×844) without growing wider than the screen, and a player
withdraws from the page. Every page runs under the CSP with no violation and no console error. Screenshots
go to ``test-artifacts/`` (``tournament-*.png``)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import requests
from test_csp import WATCH_CSP, violations

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from browser_keys import storage_state
from screens import shoot
from svc_helpers import Http, play_random, wait_until
from tournament_helpers import Players, join_all, start_game, tournament_state

pytestmark = pytest.mark.web

STEP_MS = 20_000
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
CHAIN = ["opponents_points", "head_to_head", "wins", "game_score", "average_rank", "lot"]


def watched(browser, console_errors, **context_args):
    context = browser.new_context(**context_args)
    context.add_init_script(WATCH_CSP)
    return context, console_errors.watch(context.new_page())


def test_a_tournament_is_created_and_joined_in_the_browser(browser, web_server, console_errors, artifacts):
    context, page = watched(browser, console_errors, viewport={"width": 1280, "height": 900})
    page.goto(f"{web_server}/play/tournaments")
    assert page.get_by_role("link", name="Tournaments").get_attribute("aria-current") == "page"
    page.check("input[name=t-ruleset][value=fivetowers]")
    page.click("#t-remove-player")
    rows = page.locator("#t-players li")
    assert rows.count() == 3
    for i, name in enumerate(["Ann", "Bea", "Cy"]):
        row = rows.nth(i)
        row.locator(".seat-name").fill(name)
        row.locator(".seat-generate").click()
        page.wait_for_function("i => document.querySelectorAll('#t-players .seat-key')[i].value.length === 43", arg=i)
    page.select_option("#t-format", "round_robin")
    before = requests.get(f"{web_server}/tournaments", timeout=10).json()["tournaments"]
    # refused in the page (nothing sent), then by the referee (a table of 9 at 5 Towers), each shown
    page.fill("#t-table-sizes", "two")
    page.click("#t-create")
    error = page.locator("#errors .error[data-code='form/invalid']")
    error.wait_for()
    assert "table sizes are whole numbers" in error.inner_text()
    error.locator(".dismiss").click()
    page.fill("#t-table-sizes", "9")
    console_errors.expect("status of 400")
    page.click("#t-create")
    refused = page.locator("#errors .error[data-code='request/invalid']")
    refused.wait_for(timeout=STEP_MS)
    assert "table_sizes" in refused.inner_text()
    assert requests.get(f"{web_server}/tournaments", timeout=10).json()["tournaments"] == before
    refused.locator(".dismiss").click()

    page.fill("#t-table-sizes", "2")
    page.fill("#t-deadline-days", "2")
    page.check("input[name=tc-kind][value=per_move]")
    page.fill("#tc-per-move-days", "1")
    page.click("#t-create")
    page.wait_for_url("**/play/tournaments/t_*", timeout=STEP_MS)
    tid = page.url.rsplit("/", 1)[-1]

    joins = page.locator("#t-join button.join")
    joins.first.wait_for(timeout=STEP_MS)
    assert joins.all_text_contents() == ["Join as Ann", "Join as Bea", "Join as Cy"]
    assert page.locator("#t-rounds").inner_text() == "No round paired yet."
    for left in (2, 1, 0):  # each click signs a referee/join envelope in the page and posts it
        joins.first.click()
        page.wait_for_function("n => !document.querySelector('#tournament[aria-busy=true]') && "
                               "document.querySelectorAll('#t-join button.join').length === n", arg=left,
                               timeout=STEP_MS)
    page.wait_for_selector("#tournament[data-status=active]", timeout=STEP_MS)

    state = requests.get(f"{web_server}/tournaments/{tid}", timeout=10).json()
    assert state["status"] == "active" and all(p["joined"] for p in state["players"])
    assert state["format"] == {"kind": "round_robin", "rounds": 3, "table_sizes": [2]}
    assert state["round_deadline"] == 2 * 86400
    assert state["options"]["time_control"]["kind"] == "per_move"
    assert state["options"]["time_control"]["per_move"] == 86400
    log = requests.get(f"{web_server}/tournaments/{tid}/log", timeout=10).json()["entries"]
    assert [e["type"] for e in log] == ["created", "joined", "joined", "joined", "paired"]
    assert all(len(e["submission"]["envelope"]["entropy"]) == 43 for e in log if e["type"] == "joined")

    # round 1: one table of two (its game linked) and a bye, named
    first = state["rounds"][0]
    table = first["tables"][0]
    names = {p["key"]: p["name"] for p in state["players"]}
    row = page.locator(f".round[data-round='1'] tr[data-game='{table['game']}']")
    assert row.locator("a").get_attribute("href") == f"/play/games/{table['game']}"
    assert row.locator("td.players").inner_text() == ", ".join(names[k] for k in table["players"])
    assert row.locator("td.result").inner_text() == "playing"
    assert page.locator(".round[data-round='1'] .byes").inner_text() == f"Bye (6 points): {names[first['byes'][0]]}"
    assert "deadline" in page.locator(".round[data-round='1'] h3").inner_text()

    # the standings: every player, points and each tie-break of the chain as a column
    headers = page.locator("table.standings thead th").all_text_contents()
    assert headers == ["Rank", "Player", "Points", "Opponents' points", "Head to head", "Wins", "Game score",
                       "Average rank", "Lot"]
    standing_rows = page.locator("table.standings tbody tr")
    assert standing_rows.count() == 3
    assert [standing_rows.nth(i).get_attribute("data-key") for i in range(3)] == [r["key"] for r in state["standings"]]
    assert page.locator("#t-downloads a").first.get_attribute("href") == f"/tournaments/{tid}/standings.csv"
    assert page.locator("#t-certificate").count() == 0  # not revealed yet
    assert page.locator(".tie-break-chain li").evaluate_all("l => l.map(e => e.dataset.tieBreak)") == CHAIN
    summary = page.locator("#t-summary dl").inner_text()
    assert "time per move 1 d" in summary
    assert "round robin, 3 rounds, tables of 2" in summary and "2 d" in summary and state["commitment"] in summary
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    shoot(page, artifacts / "tournament-joined-desktop.png", full_page=True)

    # the list shows it, newest first
    page.goto(f"{web_server}/play/tournaments")
    listed = page.locator(f"tr[data-tournament='{tid}']")
    listed.wait_for(timeout=STEP_MS)
    assert listed.get_attribute("data-status") == "active"
    assert "round robin, 3 rounds" in listed.inner_text() and "1 of 3" in listed.inner_text()
    shoot(page, artifacts / "tournament-list-desktop.png")
    assert violations(page) == []
    context.close()
    console_errors.assert_none()


def test_standings_crosstable_and_path_on_a_phone(browser, web_server, console_errors, artifacts):
    http = Http(requests.Session(), web_server)
    players = Players(3)
    status, created = http.post("/tournaments", players.body(format={"kind": "round_robin", "table_sizes": [2]}))
    assert status == 201, created
    tid = created["tournament"]
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][0]["tables"][0]
    game = start_game(http, table, players, random.Random(1))
    play_random(http, game, random.Random(2))
    state = wait_until(lambda: (s := tournament_state(http, tid))["rounds"][0]["closed"] and len(s["rounds"]) == 2
                       and s, timeout=30)
    result = state["rounds"][0]["tables"][0]["result"]
    names = {p["key"]: p["name"] for p in state["players"]}

    me = players.keys[0]
    context, page = watched(browser, console_errors, **PHONE,
                            storage_state=storage_state(web_server, [("player 0", me)]))
    page.goto(f"{web_server}/play/tournaments/{tid}")
    page.wait_for_selector(".round[data-round='2']", timeout=STEP_MS)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390

    # round 1's result, and the standings as cards with every value labelled
    row = page.locator(f".round[data-round='1'] tr[data-game='{table['game']}'] td.result")
    assert "1st" in row.inner_text() and "adjudicated" not in row.inner_text()
    cards = page.locator("table.standings tbody tr")
    assert cards.count() == 3
    first = state["standings"][0]
    labels = cards.first.evaluate(
        "e => [...e.querySelectorAll('td')].map(td => getComputedStyle(td, '::before').content)")
    assert labels == ['"Rank: "', '"Player: "', '"Points: "', '"Opponents\' points: "', '"Head to head: "',
                      '"Wins: "', '"Game score: "', '"Average rank: "', '"Lot: "']
    values = cards.first.locator("td").all_text_contents()
    assert values[0] == "1" and values[1] == first["name"] and values[2] == str(first["points"])
    assert values[3:] == ["—" if first["tie_breaks"][t] is None else str(first["tie_breaks"][t]) for t in CHAIN]

    # the crosstable: the two players of round 1 met, with the result from each side
    a, b = table["players"]
    mark = "+" if result["ranks"][0] < result["ranks"][1] else "−" if result["ranks"][0] > result["ranks"][1] else "="
    cell = page.locator(f"table.crosstable tr[data-key='{a}'] td[data-opponent='{b}']")
    assert cell.inner_text() == f"r1{mark}"
    assert cell.locator("a").get_attribute("href") == f"/play/games/{table['game']}"

    # a player's path: the winner's games round by round, with rank and points
    winner = a if result["ranks"][0] <= result["ranks"][1] else b
    page.locator(f"table.standings tr[data-key='{winner}'] button.player-link").click()
    path = page.locator("#t-path")
    path.wait_for(state="visible")
    assert page.locator("#t-path-title").inner_text() == f"{names[winner]}'s path"
    step = path.locator("tr[data-round='1']")
    assert step.locator("a").get_attribute("href") == f"/play/games/{table['game']}"
    cells = step.locator("td").all_text_contents()
    seat = table["players"].index(winner)
    assert cells[3] == f"{'1st' if result['ranks'][seat] == 1 else '2nd'} of 2"
    expected_points = {(1, 2): "12", (2, 1): "0", (1, 1): "6"}[(result["ranks"][seat], result["ranks"][1 - seat])]
    assert cells[4] == expected_points
    assert page.url.endswith(f"#player={winner}")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    shoot(page, artifacts / "tournament-phone.png", full_page=True)
    for part in ("t-standings", "t-path", "t-rounds", "t-crosstable"):  # readable pieces of the long page
        shoot(page.locator(f"#{part}"), artifacts / f"tournament-phone-{part[2:]}.png")

    # withdraw from the page (player 0's key is in this browser)
    page.on("dialog", lambda dialog: dialog.accept())
    page.locator(f"#t-join button.withdraw[data-key='{players.public[0]}']").click()
    page.wait_for_selector(f"#t-player-list li[data-key='{players.public[0]}'] .badge-forfeited", timeout=STEP_MS)
    assert tournament_state(http, tid)["players"][0]["withdrawn"] is True

    page.goto(f"{web_server}/play/tournaments")
    page.locator(f"tr[data-tournament='{tid}']").wait_for(timeout=STEP_MS)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    shoot(page, artifacts / "tournament-list-phone.png", full_page=True)
    assert violations(page) == []
    context.close()
    console_errors.assert_none()


def test_a_finished_tournament_links_its_certificate_and_rates_its_players(browser, web_server, console_errors):
    http = Http(requests.Session(), web_server)
    players = Players(2)
    status, created = http.post("/tournaments", players.body(format={"kind": "round_robin", "table_sizes": [2]}))
    assert status == 201, created
    tid = created["tournament"]
    join_all(http, tid, players)
    table = tournament_state(http, tid)["rounds"][0]["tables"][0]
    play_random(http, start_game(http, table, players, random.Random(3)), random.Random(4))
    state = wait_until(lambda: (s := tournament_state(http, tid))["revealed"] and s, timeout=30)
    assert state["status"] == "finished"

    context, page = watched(browser, console_errors, viewport={"width": 1280, "height": 900})
    page.goto(f"{web_server}/play/tournaments/{tid}")
    link = page.locator("#t-certificate")
    link.wait_for(timeout=STEP_MS)
    assert page.locator("#t-status").inner_text() == "finished"
    certificate = requests.get(f"{web_server}{link.get_attribute('href')}", timeout=10).json()
    assert certificate["format"] == "referee-tournament/1" and certificate["games"][0]["id"] == table["game"]

    # the game's page links back to its tournament
    page.goto(f"{web_server}/play/games/{table['game']}")
    back = page.locator("#tournament-back")
    back.wait_for(timeout=STEP_MS)
    assert back.get_attribute("href") == f"/play/tournaments/{tid}"

    # the leaderboard of 5 Towers on the tournaments page: both players, ordered by ordinal
    ratings = requests.get(f"{web_server}/ratings/fivetowers", timeout=10).json()["ratings"]
    page.goto(f"{web_server}/play/tournaments")
    page.select_option("#ratings-ruleset", "fivetowers")
    rows = page.locator("table.ratings[data-ruleset=fivetowers] tbody tr")
    rows.first.wait_for(timeout=STEP_MS)
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.key)") == [r["key"] for r in ratings]
    mine = {players.public[0], players.public[1]}
    assert mine <= {r["key"] for r in ratings}
    assert rows.first.locator("td").nth(2).inner_text() == f"{ratings[0]['ordinal']:.2f}"
    assert violations(page) == []
    context.close()
    console_errors.assert_none()


def test_the_ratings_say_they_are_unvetted_without_organiser_keys(browser, web_server, console_errors):
    """No organiser keys on this referee: every tournament counts, and the leaderboard says so (issue 26)."""
    answer = requests.get(f"{web_server}/ratings/fivetowers", timeout=10).json()
    assert answer["vetted"] is False and "anyone can create a tournament" in answer["basis"]
    context, page = watched(browser, console_errors, viewport={"width": 1280, "height": 900})
    page.goto(f"{web_server}/play/tournaments")
    page.select_option("#ratings-ruleset", "fivetowers")
    basis = page.locator("#ratings-basis[data-vetted=false]")
    basis.wait_for(timeout=STEP_MS)
    text = basis.inner_text()
    assert text.startswith("Unvetted ratings.") and answer["basis"] in text, text
    assert f"Tournaments rated: {len(answer['tournaments'])}." in text
    assert violations(page) == []
    context.close()
    console_errors.assert_none()
