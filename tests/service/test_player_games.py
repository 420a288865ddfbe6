"""A player's games (``GET /players/{key}/games``, issue 24 item 1): the per-key index kept at creation, every
game of a key listed in pages, your turn first, then by deadline, then newest; ``referee rebuild`` rebuilds
the index from the logs exactly; a bad key or bad paging is a 400."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from svc_helpers import create_game

from referee.cli import main as cli
from referee.protocol.signing import generate_key, public_key_b64
from referee.store import keys as store_keys
from referee.timecontrol.times import parse_ms

GAMES = 150


def _deck() -> list[str]:
    from referee.games import ruleset

    return [c["id"] for c in ruleset("fivetowers").components()["cards"] if c["min_players"] <= 2]


def _all_pages(http, key: str, limit: int, **query) -> tuple[list[dict], list[dict]]:
    pages, offset = [], 0
    while offset is not None:
        extra = "".join(f"&{name}={value}" for name, value in query.items())
        status, page = http.get(f"/players/{key}/games?offset={offset}&limit={limit}{extra}")
        assert status == 200, page
        pages.append(page)
        offset = page["next"]
    return [game for page in pages for game in page["games"]], pages


def _in_order(games: list[dict]) -> bool:
    keyed = [(not g["your_turn"], g["deadline"] is None, parse_ms(g["deadline"]) if g["deadline"] else 0)
             for g in games]
    return keyed == sorted(keyed)


@pytest.fixture
def many(app, run_worker):
    """150 recorded 5 Towers games of Alice against Bob (created through the service: a few seconds), Alice in
    seat 0 (to move) in every third, each with its own per-move time; projected by a worker."""
    service = app.extensions["referee.service"]
    alice, bob = public_key_b64(generate_key()), public_key_b64(generate_key())
    deck, made = _deck(), []
    for i in range(GAMES):
        seats = [{"name": "Alice", "key": alice}, {"name": "Bob", "key": bob}]
        if i % 3:
            seats.reverse()
        per_move = 3600 * (1 + (i * 7) % 11)
        made.append(service.create_game({"ruleset": "fivetowers", "seats": seats, "deck": deck,
                                         "options": {"time_control": {"kind": "per_move", "per_move": per_move}}})
                    ["game"])
    run_worker()
    return alice, bob, made


def test_every_game_of_a_key_is_listed_in_pages_your_turn_first_then_by_deadline(http, many):
    alice, bob, made = many
    games, pages = _all_pages(http, alice, 40)
    assert [len(p["games"]) for p in pages] == [40, 40, 40, 30] and {p["total"] for p in pages} == {GAMES}
    assert sorted(g["game"] for g in games) == sorted(made)
    first = games[0]
    assert first["your_turn"] is True and first["my_seats"] == [first["to_move"]] == [0]
    assert first["status"] == "active" and first["ruleset"]["name"] == "fivetowers"
    assert [s["name"] for s in first["seats"]] == ["Alice", "Bob"] and first["pending_offer"] is None
    assert first["deadline"] and first["last_move_at"] and first["mode"] == "recorded"
    mine = [g for g in games if g["your_turn"]]
    assert len(mine) == GAMES // 3 and games[:len(mine)] == mine
    assert all(g["to_move"] in g["my_seats"] for g in mine)
    assert all(g["to_move"] not in g["my_seats"] for g in games[len(mine):])
    assert _in_order(games)
    # Bob sees the same games, the other way round
    theirs, _ = _all_pages(http, bob, 100)
    assert sorted(g["game"] for g in theirs) == sorted(made)
    assert sum(g["your_turn"] for g in theirs) == GAMES - len(mine) and _in_order(theirs)
    # filtered by status
    status, none = http.get(f"/players/{alice}/games?status=finished")
    assert status == 200 and none["games"] == [] and none["total"] == 0 and none["next"] is None
    active, _ = _all_pages(http, alice, 100, status="open")
    assert [g["game"] for g in active] == [g["game"] for g in games]


def test_rebuild_lists_every_game_again_exactly_as_kept(store, many, redis_url):
    alice, bob, _made = many
    kept = {key: store.player_games(key) for key in (alice, bob)}
    assert len(kept[alice]) == len(kept[bob]) == GAMES
    store.redis.delete(*(store_keys.player_games_key(key) for key in kept))
    assert store.player_games(alice) == []
    result = CliRunner().invoke(cli, ["rebuild", "--players", "--url", redis_url])
    assert result.exit_code == 0, result.output
    assert f"{2 * GAMES} row(s) of {GAMES} game(s)" in result.output
    assert {key: store.player_games(key) for key in kept} == kept


def test_a_game_created_over_http_is_listed_for_every_seat_and_by_rebuild_all(http, store, redis_url):
    keys = [generate_key() for _ in range(3)]
    game = create_game(http, "towerup", 3, keys=keys)  # seeded: waiting for every seat's acceptance
    for key in keys:
        status, page = http.get(f"/players/{public_key_b64(key)}/games")
        assert status == 200 and [g["game"] for g in page["games"]] == [game.game_id]
        row = page["games"][0]
        assert row["status"] == "waiting" and row["your_turn"] is True and row["awaiting_acceptance"] == row["my_seats"]
    before = store.player_games(public_key_b64(keys[1]))
    store.redis.delete(store_keys.player_games_key(public_key_b64(keys[1])))
    result = CliRunner().invoke(cli, ["rebuild", "--all", "--url", redis_url])
    assert result.exit_code == 0, result.output
    assert store.player_games(public_key_b64(keys[1])) == before
    status, page = http.get(f"/players/{public_key_b64(generate_key())}/games")
    assert status == 200 and page == {"key": page["key"], "games": [], "offset": 0, "total": 0, "next": None}


@pytest.mark.parametrize(("path", "code"), [
    ("/players/not-a-key/games", "player/bad_key"),
    ("/players/" + "A" * 44 + "/games", "player/bad_key"),
    ("/players/{alice}/games?limit=0", "request/invalid"),
    ("/players/{alice}/games?limit=101", "request/invalid"),
    ("/players/{alice}/games?offset=-1", "request/invalid"),
    ("/players/{alice}/games?offset=x", "request/invalid"),
    ("/players/{alice}/games?status=mine", "request/invalid"),
])
def test_a_bad_key_or_bad_paging_is_a_400(http, path, code):
    status, body = http.get(path.format(alice=public_key_b64(generate_key())))
    assert status == 400 and body["error"]["code"] == code, body


def test_a_players_tournaments_and_their_games_are_listed_and_rebuilt(http, store, redis_url):
    from tournament_helpers import Players, join_all

    players = Players(3)
    made = []
    for _ in range(2):
        status, created = http.post("/tournaments", players.body(format={"kind": "round_robin"}))
        assert status == 201, created
        made.append(created["tournament"])
    join_all(http, made[0], players)  # round 1 is paired: its game is the tournament's
    key = players.public[0]
    status, page = http.get(f"/players/{key}/tournaments")
    assert status == 200 and page["total"] == 2 and page["next"] is None
    assert [t["tournament"] for t in page["tournaments"]] == made[::-1]  # newest first
    assert page["tournaments"][1]["status"] == "active" and page["tournaments"][0]["status"] == "waiting"
    status, first = http.get(f"/players/{key}/tournaments?limit=1")
    assert status == 200 and len(first["tournaments"]) == 1 and first["next"] == 1
    games = [g for p in players.public for g in http.get(f"/players/{p}/games")[1]["games"]]
    assert games and {g["tournament"] for g in games} == {made[0]}
    kept = {p: store.player_tournaments(p) for p in players.public}
    store.redis.delete(*(store_keys.player_tournaments_key(p) for p in players.public))
    result = CliRunner().invoke(cli, ["rebuild", "--players", "--url", redis_url])
    assert result.exit_code == 0, result.output
    assert {p: store.player_tournaments(p) for p in players.public} == kept
    status, body = http.get("/players/nope/tournaments")
    assert status == 400 and body["error"]["code"] == "player/bad_key"
    assert http.get(f"/players/{key}/tournaments?limit=101")[0] == 400


def test_a_pending_offer_and_the_last_entrys_time_come_from_the_game(http, store, run_worker):
    import random

    from svc_helpers import accept_all, signed

    from referee.protocol.signing import OFFER_CTX

    game = create_game(http, "fivetowers", 2)
    accept_all(http, game, random.Random(0))
    state = http.get(f"/games/{game.game_id}")[1]
    envelope = {"v": 1, "ctx": OFFER_CTX, "game": game.game_id, "seat": 0, "seq": state["seq"], "prev": state["head"],
                "offer": "draw"}
    status, receipt = http.post(f"/games/{game.game_id}/offers", signed(game.keys[0], envelope))
    assert status == 202, receipt
    run_worker()
    last = store.read_log(game.game_id)[-1]
    for key in game.keys:
        status, page = http.get(f"/players/{public_key_b64(key)}/games")
        assert status == 200
        row = page["games"][0]
        assert row["pending_offer"] == {"offer": receipt["position"], "seat": 0, "kind": "draw", "accepted": []}
        assert row["last_move_at"] == last["at"] and row["seq"] == len(store.read_log(game.game_id))
