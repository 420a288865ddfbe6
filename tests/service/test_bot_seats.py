"""Bot seats (issue 25, item 3): ``"bot": true`` beside a seat's key is written into the signed ``created``
entry as given, shown per seat where true (and only there), and the bundle of such a game verifies."""

from __future__ import annotations

import json
import random

from svc_helpers import PlayedGame, accept_all, create_game, play_random

from referee.protocol.signing import generate_key, public_key_b64, sign
from referee.verify import verify_bundle


def test_a_bot_seat_is_in_created_shown_where_true_and_the_bundle_verifies(http, store):
    keys, organiser = [generate_key(), generate_key()], generate_key()
    spec = {"ruleset": "towerup", "seats": [{"name": "ann", "key": public_key_b64(keys[0]), "bot": False},
                                           {"name": "robo", "key": public_key_b64(keys[1]), "bot": True}]}
    body = {**spec, "organiser": {"key": public_key_b64(organiser),
                                  "sig": sign(organiser, {"v": 1, "ctx": "referee/create", **spec})}}
    status, created = http.post("/games", body)
    assert status == 201, created
    game = PlayedGame(created["game"], "towerup", keys)
    entries = store.read_log(game.game_id)
    assert entries[0]["seats"] == spec["seats"]  # verbatim, so the organiser's signature covers it
    status, state = http.get(f"/games/{game.game_id}")
    assert [s.get("bot") for s in state["seats"]] == [None, True]  # shown only where true
    status, listed = http.get(f"/players/{public_key_b64(keys[1])}/games")
    assert status == 200 and [s.get("bot") for s in listed["games"][0]["seats"]] == [None, True]
    accept_all(http, game)
    play_random(http, game, random.Random(3))
    status, bundle = http.get(f"/games/{game.game_id}/export")
    assert status == 200 and bundle["log"][0]["seats"][1]["bot"] is True
    report = verify_bundle(bundle)
    assert report.ok, report


def test_a_game_without_bots_answers_as_before(http):
    game = create_game(http, "towerup", 2)
    status, state = http.get(f"/games/{game.game_id}")
    assert status == 200 and all(set(seat) == {"seat", "name", "key", "accepted"} for seat in state["seats"])
    status, bundle = http.get(f"/games/{game.game_id}/export")
    assert all(set(seat) == {"name", "key"} for seat in bundle["log"][0]["seats"])


def test_referee_create_bot_seat(server, store):
    from svc_helpers import run_cli

    ann, robo = (public_key_b64(generate_key()) for _ in range(2))
    code, out = run_cli("create", "towerup", "--seat", f"ann={ann}", "--seat", f"robo={robo}", "--bot-seat", "robo",
                        "--server", server)
    assert code == 0, out
    game = json.loads(out)["game"]
    assert store.read_log(game)[0]["seats"] == [{"name": "ann", "key": ann}, {"name": "robo", "key": robo, "bot": True}]
    code, out = run_cli("create", "towerup", "--seat", f"ann={ann}", "--bot-seat", "nobody", "--server", server)
    assert code != 0 and "--bot-seat" in out
