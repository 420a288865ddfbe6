"""Whole games through the HTTP API with real signatures, real Redis and RQ workers: create, accept,
random legal moves to the end; the workers' projections and ``/result`` equal the engine's own."""

from __future__ import annotations

import random

import pytest
from svc_helpers import accept_all, create_game, play_random, revealed_seed, with_no_forfeits

from referee.games import ruleset
from referee.games_service import fold, projection_of
from referee.protocol.logchain import first_broken_link
from referee.protocol.signing import verify

GAMES = [("fivetowers", 2), ("fivetowers", 3), ("fivetowers", 5), ("towerup", 2), ("towerup", 3), ("towerup", 4)]


def check_finished_game(http, store, game, entries):
    # the log: intact chain, every seat signature valid, the seed revealed and matching the commitment
    assert first_broken_link(entries) is None
    kinds = [e["type"] for e in entries]
    assert kinds[0] == "created" and kinds[-1] in ("move", "revealed")
    for e in entries:
        if e["type"] in ("accepted", "move"):
            sub = e["submission"]
            assert verify(entries[0]["seats"][e["seat"]]["key"], sub["envelope"], sub["sig"])
    # /result equals the engine's own result on the same moves
    status, result = http.get(f"/games/{game.game_id}/result")
    assert status == 200, result
    engine_game = game.engine_replay(revealed_seed(entries))
    assert engine_game.is_over()
    assert result["result"] == with_no_forfeits(engine_game.result())
    # the worker's projection is complete and equals a fresh fold
    stored = store.read_projection(game.game_id, with_verdicts=True)
    assert stored["seq"] == len(entries) and stored["status"] == "finished"
    fresh = fold(store, game.game_id)
    expected = projection_of(fresh)
    for name in ("seq", "head", "status", "to_move", "view", "result", "last_verdict", "version_mismatch"):
        assert stored[name] == expected[name], name
    assert stored["verdicts"] == [v.to_dict() for v in fresh.verdicts]
    assert all(v["status"] in ("ok", "applied") for v in stored["verdicts"])
    status, state = http.get(f"/games/{game.game_id}")
    assert status == 200 and state["projection"] == "worker" and state["status"] == "finished"
    assert state["state"] == engine_game.view()


@pytest.mark.parametrize(("ruleset_name", "players"), GAMES)
def test_seeded_game_to_the_end(http, store, run_worker, ruleset_name, players):
    rng = random.Random(f"{ruleset_name}-{players}")
    game = create_game(http, ruleset_name, players)
    status, state = http.get(f"/games/{game.game_id}")
    assert status == 200
    assert state["status"] == "waiting" and state["mode"] == "seeded" and len(state["commitment"]) == 64
    accept_all(http, game, rng)
    _status, state = http.get(f"/games/{game.game_id}")
    assert state["status"] == "active" and all(seat["accepted"] for seat in state["seats"])

    def work_sometimes(n: int) -> None:
        if n % 25 == 24:
            run_worker()

    play_random(http, game, rng, every=work_sometimes)
    run_worker()
    entries = store.read_log(game.game_id)
    assert [e["type"] for e in entries[:players + 2]] == ["created"] + ["accepted"] * players + ["started"]
    assert entries[-1]["type"] == "revealed" and entries[-1]["reason"] == "finished"
    check_finished_game(http, store, game, entries)


def recorded_deck(ruleset_name: str, players: int, rng: random.Random) -> list[str]:
    """A shuffled deck of every card in play, as a recorded (physical) game would list it."""
    components = ruleset(ruleset_name).components()
    if ruleset_name == "fivetowers":
        deck = [card["id"] for card in components["cards"] if card["min_players"] <= players]
    else:
        deck = [card["id"] for card in components["cards"]["cards"]]
    rng.shuffle(deck)
    return deck


@pytest.mark.parametrize("ruleset_name", ["fivetowers", "towerup"])
def test_recorded_game_starts_at_once_and_plays_to_the_end(http, store, run_worker, ruleset_name):
    rng = random.Random(ruleset_name)
    deck = recorded_deck(ruleset_name, 3, rng)
    game = create_game(http, ruleset_name, 3, deck=deck)
    _status, state = http.get(f"/games/{game.game_id}")
    assert state["mode"] == "recorded" and state["commitment"] is None and state["status"] == "active"
    play_random(http, game, rng)
    run_worker()
    entries = store.read_log(game.game_id)
    assert [e["type"] for e in entries[:2]] == ["created", "started"]
    assert entries[0]["deck"] == deck and "commitment" not in entries[0]
    assert all(e["type"] != "revealed" for e in entries)
    check_finished_game(http, store, game, entries)
