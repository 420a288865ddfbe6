"""Bots in tournaments (issue 25, item 3): a player declared ``"bot": true`` in ``POST /tournaments`` is
written into ``created`` (only when true), shown on ``GET /tournaments/{id}``, seated as a bot in the
tournament's games, and its rated games go to the bot list, never to the humans'; ``referee bot`` joins
the waiting tournaments its key is a player of."""

from __future__ import annotations

import json

from svc_helpers import PlayedGame, accept_all
from test_ratings_service import answers
from tournament_helpers import Players, join, tournament_state, withdraw

from referee.cli.bots import Bot


def bot_tournament(players: Players, bot: int, **extra) -> dict:
    body = {"ruleset": "fivetowers", "format": {"kind": "series", "rounds": 1}, "withdrawal": "adjudicate",
            "players": [{"name": f"player {i}", "key": key} for i, key in enumerate(players.public)], **extra}
    body["players"][bot]["bot"] = True
    return body


def test_a_bot_player_is_in_created_seated_as_a_bot_and_rated_in_the_bot_list(http, store):
    players = Players(2)
    body = bot_tournament(players, 1)
    body["players"][0]["bot"] = False  # false is the default: not written
    status, created = http.post("/tournaments", body)
    assert status == 201, created
    tid = created["tournament"]
    entries, _tip = store.read_tournament(tid)
    assert entries[0]["players"] == [{"name": "player 0", "key": players.public[0]},
                                     {"name": "player 1", "key": players.public[1], "bot": True}]
    assert [p.get("bot") for p in tournament_state(http, tid)["players"]] == [None, True]

    for key in players.keys:
        assert join(http, tid, key)[0] == 202
    table = tournament_state(http, tid)["rounds"][0]["tables"][0]
    status, game = http.get(f"/games/{table['game']}")
    assert status == 200 and {s["key"]: s.get("bot") for s in game["seats"]} == {
        players.public[0]: None, players.public[1]: True}
    accept_all(http, PlayedGame(table["game"], "fivetowers", [players.key_of[k] for k in table["players"]]))
    assert withdraw(http, tid, players.keys[1])[0] == 202  # the bot forfeits: the human wins
    assert tournament_state(http, tid)["status"] == "finished"

    humans, _changes = answers(http, [table["game"]])
    assert not {row["key"] for row in humans["ratings"]} & set(players.public)  # nobody rated among humans
    status, bots = http.get("/ratings/fivetowers?bots=1")
    assert status == 200, bots
    rows = {row["key"]: row for row in bots["ratings"]}
    assert set(players.public) <= set(rows)
    assert rows[players.public[1]].get("bot") is True and "bot" not in rows[players.public[0]]
    assert rows[players.public[0]]["mu"] > rows[players.public[1]]["mu"]  # the human won the bot game


def test_bot_must_be_true_or_false(http):
    players = Players(2)
    body = bot_tournament(players, 0)
    body["players"][0]["bot"] = "yes"
    status, error = http.post("/tournaments", body)
    assert status == 400, error
    assert any(p["path"] == "$.players[0].bot" for p in error["error"]["details"]["problems"]), error


def test_referee_bot_joins_its_waiting_tournaments_then_accepts_their_games(http, server):
    players = Players(2)
    status, created = http.post("/tournaments", bot_tournament(players, 1))
    assert status == 201, created
    tid = created["tournament"]
    said: list[str] = []
    robo = Bot(server, players.keys[1], "random", 0.0, say=said.append)
    assert robo.join_tournaments() is True
    assert [p["joined"] for p in tournament_state(http, tid)["players"]] == [False, True]
    assert robo.join_tournaments() is False  # joined: nothing more to do
    assert said == [f"tournament {tid}: joins"]

    assert join(http, tid, players.keys[0])[0] == 202  # everybody in: round 1 is paired, its game created
    game_id = tournament_state(http, tid)["rounds"][0]["tables"][0]["game"]
    assert robo.tick() is True  # the bot accepts its seat
    status, game = http.get(f"/games/{game_id}")
    assert status == 200
    assert [s["accepted"] for s in game["seats"] if s["key"] == players.public[1]] == [True]
    assert [s["accepted"] for s in game["seats"] if s["key"] == players.public[0]] == [False]


def test_referee_tournament_create_bot_player(server, store):
    from svc_helpers import run_cli

    ann, robo = Players(2).public
    code, out = run_cli("tournament", "create", "fivetowers", "--player", f"ann={ann}", "--player", f"robo={robo}",
                        "--bot-player", "robo", "--format", "series", "--server", server)
    assert code == 0, out
    entries, _tip = store.read_tournament(json.loads(out)["tournament"])
    assert entries[0]["players"] == [{"name": "ann", "key": ann}, {"name": "robo", "key": robo, "bot": True}]
    code, out = run_cli("tournament", "create", "fivetowers", "--player", f"ann={ann}", "--player", f"robo={robo}",
                        "--bot-player", "nobody", "--server", server)
    assert code != 0 and "--bot-player" in out
