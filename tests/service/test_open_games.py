"""Open games (CONTRACT section 14, issue 36 items 1 and 3): the status sets know ``cancelled``, a key that leaves a
seat leaves the players' index, and ``GET /games?open=true`` lists the waiting games with a seat open to anyone,
kept by the replay workers' projection writes. On the suite's real Redis, with real signatures."""

from __future__ import annotations

from seat_helpers import cancel, create_open_game, leave, take
from test_observability import metrics_of, value

from referee.games_service.players import rebuild_player_index
from referee.signing import generate_key, public_key_b64
from referee.store import keys


def test_a_cancelled_game_is_counted_as_cancelled_not_waiting(app, http, store, run_worker):
    client = app.test_client()
    game = create_open_game(http, "fivetowers", ["key", "open"])
    run_worker()
    assert value(metrics_of(client), "referee_games", status="waiting") == 1
    assert cancel(http, game.game_id, game.creator)[0] == 202
    run_worker()
    samples = metrics_of(client)
    assert value(samples, "referee_games", status="cancelled") == 1
    assert value(samples, "referee_games", status="waiting") == 0
    assert store.games_by_status()["cancelled"] == 1


def test_every_status_of_the_fold_has_its_status_set():
    from referee.replay import verdicts

    statuses = {value for name, value in vars(verdicts).items() if name.isupper() and isinstance(value, str)
                and name in ("WAITING", "ACTIVE", "FINISHED", "ABORTED", "EXPIRED", "CANCELLED")}
    assert len(statuses) == 6 and statuses == set(keys.GAME_STATUSES)


def test_a_key_that_leaves_its_seat_leaves_the_players_index_and_a_rebuild_lists_the_holders(http, store):
    game = create_open_game(http, "fivetowers", ["key", "open", "open"])
    stays, goes = generate_key(), generate_key()
    assert take(http, game, 1, stays, "Stay")[0] == 202
    assert take(http, game, 2, goes, "Go")[0] == 202
    assert [g for g, _ms in store.player_games(public_key_b64(goes))] == [game.game_id]
    assert leave(http, game.game_id, 2, goes)[0] == 202
    assert store.player_games(public_key_b64(goes)) == []  # the row itself is gone, not only filtered
    assert [g for g, _ms in store.player_games(public_key_b64(stays))] == [game.game_id]
    store.unindex_player_games([(public_key_b64(stays), game.game_id)])  # a lost index row …
    rebuild_player_index(store, [game.game_id])  # … is listed again from the log's holders, the one who left not
    assert [g for g, _ms in store.player_games(public_key_b64(stays))] == [game.game_id]
    assert store.player_games(public_key_b64(goes)) == []


def test_the_holder_of_an_open_seat_posts_and_reads_messages(http):
    from referee.clock import now
    from referee.signing import MESSAGE_CTX, sign

    game = create_open_game(http, "fivetowers", ["key", "open"])
    assert http.get(f"/games/{game.game_id}/messages")[0] == 200  # a seat without a key in created: no 500
    joiner = generate_key()
    assert take(http, game, 1, joiner, "Jo")[0] == 202
    envelope = {"v": 1, "ctx": MESSAGE_CTX, "game": game.game_id, "seat": 1, "text": "hello", "to": None,
                "at": now()}
    status, answer = http.post(f"/games/{game.game_id}/messages", {"envelope": envelope, "sig": sign(joiner, envelope)})
    assert status == 201, answer
    assert [m["text"] for m in http.get(f"/games/{game.game_id}/messages")[1]["messages"]] == ["hello"]
    stranger = {**envelope, "text": "not mine"}
    status, answer = http.post(f"/games/{game.game_id}/messages", {"envelope": stranger,
                                                                    "sig": sign(generate_key(), stranger)})
    assert status == 401, answer
    from referee.verify import verify_bundle

    bundle = http.get(f"/games/{game.game_id}/export")[1]
    assert [m.get("submission", {}).get("envelope", {}).get("text") for m in bundle["messages"]] == ["hello"]
    def messages_check(bundle):
        return next(check for check in verify_bundle(bundle).checks if check.name == "messages")

    assert messages_check(bundle).status == "passed"  # the message is checked against the key that held seat 1
    forged = {**bundle, "messages": [{**bundle["messages"][0]}]}
    forged["messages"][0]["log_seq"] = 1  # when nobody held seat 1: its signature is nobody's there
    from referee.logchain import entry_hash

    forged["messages"][0]["hash"] = entry_hash(forged["messages"][0]["prev"],
                                               {k: v for k, v in forged["messages"][0].items() if k != "hash"})
    assert messages_check(forged).status == "failed"
