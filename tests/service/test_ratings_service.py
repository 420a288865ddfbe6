"""Ratings as a stored fold (issue 26, item 4) against the real Redis, the real RQ burst worker and the
real ``referee rebuild``: with organiser keys configured only organiser-signed tournaments count — a
tournament created unsigned before the keys were set included, even after ``rebuild --all``; without keys
the answer says the ratings are unvetted; and the fold the web process and the workers advance, one
result at a time, is exactly the one ``referee rebuild --ratings`` computes from the logs.

Games end quickly: a player withdraws from a 2-player table (``withdrawal: adjudicate``: the seat is
forfeited and the game ends at once), or one game is played to its end and its end seen by the worker."""

from __future__ import annotations

import json
import random

from click.testing import CliRunner
from svc_helpers import Http, play_random
from tournament_helpers import Players, join, start_game, tournament_state, withdraw

from referee.cli import main as cli
from referee.protocol.signing import generate_key, public_key_b64, sign
from referee.store.keys import RATINGS, RATINGS_CHANGES


def open_tournament(http: Http, players: Players, seats: list[int], organiser=None) -> str:
    """A one-game tournament (a series of one round) of ``players``' keys at ``seats``, every player joined:
    its game is created, waiting for the acceptances."""
    body = {"ruleset": "fivetowers", "format": {"kind": "series", "rounds": 1}, "withdrawal": "adjudicate",
            "players": [{"name": f"player {i}", "key": players.public[i]} for i in seats]}
    if organiser is not None:
        body["organiser"] = {"key": public_key_b64(organiser),
                             "sig": sign(organiser, {"v": 1, "ctx": "referee/tournament", **body})}
    status, created = http.post("/tournaments", body)
    assert status == 201, created
    tid = created["tournament"]
    for i in seats:
        assert join(http, tid, players.keys[i])[0] == 202
    return tid


def decide(http: Http, tid: str, players: Players, loser: int) -> str:
    """The tournament's game accepted by both, then lost by ``players.keys[loser]``'s withdrawal."""
    table = tournament_state(http, tid)["rounds"][0]["tables"][0]
    start_game(http, table, players, random.Random(tid))
    status, receipt = withdraw(http, tid, players.keys[loser])
    assert status == 202, receipt
    state = tournament_state(http, tid)
    assert state["status"] == "finished", state
    return table["game"]


def answers(http: Http, games: list[str]) -> tuple[dict, dict]:
    status, answer = http.get("/ratings/fivetowers")
    assert status == 200, answer
    changes = {}
    for game in games:
        status, one = http.get(f"/ratings/fivetowers?game={game}")
        assert status == 200, one
        changes[game] = one["change"]
    return answer, changes


def stored_fold(store) -> dict | None:
    state = store.work.hget(RATINGS.format(ruleset="fivetowers"), "state")
    return json.loads(state) if state is not None else None


def generation(store) -> int:
    return int(store.work.hget(RATINGS.format(ruleset="fivetowers"), "gen") or 0)


def test_with_organiser_keys_an_unsigned_tournament_from_before_counts_not_even_after_a_rebuild(
        make_app, redis_url, run_worker):
    open_app = make_app()  # no organiser keys yet: anyone may create a tournament
    http = Http(open_app.test_client())
    early = Players(2)
    unsigned = open_tournament(http, early, [0, 1])
    decide(http, unsigned, early, loser=1)
    status, answer = http.get("/ratings/fivetowers")
    assert status == 200 and answer["vetted"] is False and answer["tournaments"] == [unsigned]
    assert {r["key"] for r in answer["ratings"]} == set(early.public)

    organiser = generate_key()
    keys = public_key_b64(organiser)
    vetted_app = make_app(REFEREE_ORGANISER_KEYS=keys)  # the keys are set now
    vetted = Http(vetted_app.test_client())
    later = Players(2)
    status, error = vetted.post("/tournaments", {"ruleset": "fivetowers", "format": {"kind": "series", "rounds": 1},
                                                 "players": [{"name": f"p{i}", "key": k}
                                                             for i, k in enumerate(later.public)]})
    assert status == 401 and error["error"]["code"] == "organiser/required"
    signed_tid = open_tournament(vetted, later, [0, 1], organiser=organiser)
    decide(vetted, signed_tid, later, loser=0)
    status, answer = vetted.get("/ratings/fivetowers")
    assert status == 200, answer
    assert answer["vetted"] is True and "organiser" in answer["basis"]
    assert answer["tournaments"] == [signed_tid]
    assert {r["key"] for r in answer["ratings"]} == set(later.public)
    unrated = tournament_state(http, unsigned)["rounds"][0]["tables"][0]["game"]
    status, error = vetted.get(f"/ratings/fivetowers?game={unrated}")
    assert status == 404 and error["error"]["code"] == "ratings/no_such_game"

    # `referee rebuild --all` under the same keys: the unsigned tournament still does not count
    result = CliRunner().invoke(cli, ["rebuild", "--all", "--url", redis_url], env={"REFEREE_ORGANISER_KEYS": keys})
    assert result.exit_code == 0, result.output
    assert "ratings of fivetowers: 1 games of 1 tournament(s), 2 players, vetted (1 organiser key)" in result.output
    store = vetted_app.extensions["referee.store"]
    assert stored_fold(store)["basis"] == [keys] and list(stored_fold(store)["rated"]) == [signed_tid]
    assert vetted.get("/ratings/fivetowers")[1] == answer
    # a rebuild without the keys writes an unvetted fold; the vetted referee does not serve it, it rebuilds
    result = CliRunner().invoke(cli, ["rebuild", "--ratings", "--url", redis_url], env={"REFEREE_ORGANISER_KEYS": ""})
    assert result.exit_code == 0 and "2 tournament(s), 4 players, unvetted" in result.output, result.output
    assert vetted.get("/ratings/fivetowers")[1] == answer
    run_worker(vetted_app.extensions["referee.queue"])  # nothing left for the workers: the answer stands
    assert vetted.get("/ratings/fivetowers")[1] == answer


def test_without_organiser_keys_the_answer_says_the_ratings_are_unvetted(http):
    status, answer = http.get("/ratings/towerup")
    assert status == 200, answer
    assert answer == {"ruleset": "towerup", "ratings": [], "vetted": False, "basis": answer["basis"],
                      "tournaments": []}
    assert answer["basis"].startswith("Unvetted") and "anyone can create a tournament" in answer["basis"]
    assert http.get("/ratings/chess")[0] == 404


def test_the_ratings_the_workers_advance_are_exactly_the_rebuilt_ones(app, http, store, run_worker, redis_url):
    players = Players(3)
    # three tournaments over overlapping keys, all open at once; their games end in another order than
    # the tournaments were created in (the rating order is the order the results were written)
    t_ab = open_tournament(http, players, [0, 1])
    t_bc = open_tournament(http, players, [1, 2])
    t_ca = open_tournament(http, players, [2, 0])
    # the first advance found no fold and built it from the logs: nothing rated yet, no game has a result
    assert stored_fold(store)["rated"] == {} and generation(store) == 1
    games = [decide(http, t_bc, players, loser=1)]
    after_one = stored_fold(store)
    assert after_one["rated"] == {t_bc: 1} and after_one["seen"][t_bc] == tournament_state(http, t_bc)["seq"]
    # the next one is played to its end; the replay worker sees it finished and advances its tournament
    table = tournament_state(http, t_ca)["rounds"][0]["tables"][0]
    game = start_game(http, table, players, random.Random(7))
    play_random(http, game, random.Random(7))
    run_worker()
    assert tournament_state(http, t_ca)["status"] == "finished"
    games.append(table["game"])
    games.append(decide(http, t_ab, players, loser=0))
    incremental = stored_fold(store)
    assert incremental["rated"] == {t_bc: 1, t_ca: 1, t_ab: 1}
    assert generation(store) == 4  # then one save per result
    answer, changes = answers(http, games)
    assert answer["vetted"] is False and answer["tournaments"] == [t_bc, t_ca, t_ab]
    assert sorted(r["games"] for r in answer["ratings"]) == [2, 2, 2]

    result = CliRunner().invoke(cli, ["rebuild", "--ratings", "--url", redis_url])
    assert result.exit_code == 0, result.output
    assert "ratings of fivetowers: 3 games of 3 tournament(s), 3 players, unvetted" in result.output
    assert "ratings of towerup: 0 games of 0 tournament(s), 0 players, unvetted" in result.output
    rebuilt = stored_fold(store)
    assert generation(store) == 5
    for name in ("basis", "last", "rated", "players"):  # the same floats, bit for bit
        assert rebuilt[name] == incremental[name], name
    assert answers(http, games) == (answer, changes)

    # a work Redis that lost the projection: the next read rebuilds it from the logs, the same again
    store.work.delete(RATINGS.format(ruleset="fivetowers"), RATINGS_CHANGES.format(ruleset="fivetowers"))
    assert answers(http, games) == (answer, changes)
    assert stored_fold(store)["players"] == incremental["players"]
