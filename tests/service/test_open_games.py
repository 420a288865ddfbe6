"""Open games (CONTRACT section 14, issue 36 items 1 and 3): the status sets know ``cancelled``, a key that leaves a
seat leaves the players' index, and ``GET /games?open=true`` lists the waiting games with a seat open to anyone,
kept by the replay workers' projection writes. On the suite's real Redis, with real signatures."""

from __future__ import annotations

from seat_helpers import cancel, create_open_game, leave, take
from test_observability import metrics_of, value

from referee.games_service.players import rebuild_player_index
from referee.protocol.signing import CREATE_CTX, generate_key, public_key_b64, sign
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
    from referee.protocol.signing import MESSAGE_CTX

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
    from referee.protocol.logchain import entry_hash

    forged["messages"][0]["hash"] = entry_hash(forged["messages"][0]["prev"],
                                               {k: v for k, v in forged["messages"][0].items() if k != "hash"})
    assert messages_check(forged).status == "failed"


# -- GET /games?open=true ------------------------------------------------------------------------------------------
def open_ids(http, query: str = "") -> list[str]:
    status, page = http.get(f"/games?open=true{query}")
    assert status == 200, page
    return [game["game"] for game in page["games"]]


def test_open_games_are_listed_oldest_first_until_their_last_open_seat_is_taken(http, store, run_worker):
    hour = {"kind": "per_move", "per_move": 3600}
    first = create_open_game(http, "fivetowers", ["key", "open"], options={"time_control": hour})
    create_open_game(http, "fivetowers", ["key", "invite"])  # invitation only: never listed
    second = create_open_game(http, "towerup", ["open", "key", "open"])
    assert open_ids(http) == [first.game_id, second.game_id]  # listed at creation, before any worker ran
    run_worker()
    status, page = http.get("/games?open=true")
    assert status == 200 and page["offset"] == 0 and page["next"] is None and page["total"] == 2
    row = page["games"][0]
    assert row["ruleset"]["name"] == "fivetowers" and row["options"] == {"time_control": hour}
    assert row["time_control"]["kind"] == "per_move" and row["status"] == "waiting"
    assert (row["seats_taken"], row["seats_open"]) == (1, 1) and row["created_at"] and "accept_by" in row
    assert row["creator"] == {"key": public_key_b64(first.creator), "name": None}  # the creator holds no seat here
    assert [seat.get("open") for seat in row["seats"]] == [None, "anyone"]
    assert http.get("/games?open=true&limit=1")[1]["next"] == 1
    assert open_ids(http, "&offset=1&limit=1") == [second.game_id]
    assert http.get("/games?open=nope")[0] == 400

    assert take(http, second, 0, generate_key(), "Ann")[0] == 202
    run_worker()
    assert open_ids(http) == [first.game_id, second.game_id]  # one seat open to anyone is still free
    joiner = generate_key()
    assert take(http, second, 2, joiner, "Bea")[0] == 202
    run_worker()
    assert open_ids(http) == [first.game_id] and store.count_open_games() == 1  # the index itself, not a filter
    assert leave(http, second.game_id, 2, joiner)[0] == 202
    run_worker()
    assert open_ids(http) == [first.game_id, second.game_id]  # open again, at its creation time
    assert cancel(http, first.game_id, first.creator)[0] == 202
    run_worker()
    assert open_ids(http) == [second.game_id] and store.count_open_games(public_key_b64(first.creator)) == 0


def test_a_game_the_index_still_lists_is_shown_only_while_its_fold_is_open(http, store):
    game = create_open_game(http, "fivetowers", ["key", "open"])
    assert take(http, game, 1, generate_key(), "Bea")[0] == 202  # no worker has projected it yet
    assert store.count_open_games() == 1 and open_ids(http) == []
    assert http.get("/games?open=true")[1]["next"] is None


def test_the_open_games_are_rebuilt_with_the_projections(http, store, run_worker):
    from workers.projector import Projector

    game = create_open_game(http, "fivetowers", ["key", "open"])
    run_worker()
    store.work.delete(keys.OPEN_GAMES, keys.creator_open_games_key(public_key_b64(game.creator)))  # lost
    assert open_ids(http) == []
    Projector(store, entry_delay=0).rebuild(game.game_id)  # what `referee rebuild` and the reconciler do
    assert open_ids(http) == [game.game_id] and store.count_open_games(public_key_b64(game.creator)) == 1


def test_a_key_creates_at_most_its_limit_of_open_games(make_app, run_worker):
    from svc_helpers import Http

    app = make_app(REFEREE_MAX_OPEN_GAMES=2)
    http = Http(app.test_client())
    creator = generate_key()
    games = [create_open_game(http, "fivetowers", ["key", "open"], creator=creator) for _ in range(2)]
    create_open_game(http, "fivetowers", ["key", "invite"], creator=creator)  # not open to anyone: not counted
    _status, error = create_open_game(http, "fivetowers", ["key", "open"], creator=creator, expect=409)
    assert error["error"]["code"] == "creator/too_many_open"
    assert error["error"]["details"] == {"limit": 2, "open": 2}
    body = {"ruleset": "fivetowers", "seats": [{"name": "Ann", "key": public_key_b64(creator)}, {"open": True}]}
    body["creator"] = {"key": public_key_b64(creator), "sig": sign(creator, {"v": 1, "ctx": CREATE_CTX, **body})}
    for lang, words in (("de", "offene Partien"), ("fr", "parties ouvertes")):
        response = app.test_client().post("/games", json=body, headers={"Accept-Language": lang})
        assert response.status_code == 409 and words in response.get_json()["error"]["message"], response.get_json()
    _status, error = create_open_game(http, "fivetowers", ["key", "open"], creator=creator, expect=400,
                                     options={"start_floors": "sideways"})
    assert error["error"]["code"] in ("game/bad_options", "request/invalid")  # a 400 answers before the 409
    assert create_open_game(http, "fivetowers", ["key", "open"], expect=201)  # another key is not limited
    assert take(http, games[0], 1, generate_key(), "Bea")[0] == 202
    run_worker(app.extensions["referee.queue"])
    assert create_open_game(http, "fivetowers", ["key", "open"], creator=creator, expect=201)  # one is full now


# -- events (issue 36, item 7) -------------------------------------------------------------------------------------
def test_seats_taken_left_and_a_cancel_are_events_for_the_holders_and_the_creator(http, store, run_worker):
    from referee.notify.contacts import EVENTS, event_keys

    assert {"seated", "left", "cancelled", "rematch"} <= set(EVENTS)  # a contact may ask for them
    creator = generate_key()
    game = create_open_game(http, "fivetowers", ["open", "open", "open"], creator=creator)
    ann, bea, cy = generate_key(), generate_key(), generate_key()
    assert take(http, game, 0, ann, "Ann")[0] == 202
    assert take(http, game, 1, bea, "Bea")[0] == 202
    assert leave(http, game.game_id, 1, bea)[0] == 202
    assert take(http, game, 1, bea, "Bea")[0] == 202
    assert take(http, game, 2, cy, "Cy")[0] == 202  # the last seat: the creator is told the game is full
    run_worker()
    events = [e for e in store.read_outbox() if e["game"] == game.game_id]
    kinds = [(e["type"], e.get("seat"), e.get("full")) for e in events if e["type"] in ("seated", "left")]
    assert kinds == [("seated", 0, False), ("seated", 1, False), ("left", 1, None), ("seated", 1, False),
                     ("seated", 2, True)]
    key = public_key_b64
    full = next(e for e in events if e.get("full"))
    assert full["full"] and full["name"] == "Cy" and full["joiner"] == key(cy) and full["open_seats"] == 0
    assert set(event_keys(full)) == {key(ann), key(bea), key(creator)}  # not the joiner's own
    assert set(event_keys(events[0])) == {key(creator)}  # the first seat: only the creator hears
    assert len({e["id"] for e in events}) == len(events)
    other = create_open_game(http, "fivetowers", ["key", "open"], creator=creator)
    assert take(http, other, 1, ann, "Ann")[0] == 202
    assert cancel(http, other.game_id, creator)[0] == 202
    run_worker()
    cancelled = [e for e in store.read_outbox() if e["game"] == other.game_id and e["type"] == "cancelled"]
    assert len(cancelled) == 1 and set(event_keys(cancelled[0])) == {key(other.keys[0]), key(ann)}


def test_a_rematch_is_an_event_for_the_seats_that_did_not_ask(http, store, run_worker):
    from test_archive import _resigned
    from test_rematch import ask

    from referee.notify.contacts import event_keys

    game = _resigned(http)
    rematch = http.post(f"/games/{game.game_id}/rematch", ask(game, 1))[1]
    run_worker()
    events = [e for e in store.read_outbox() if e["type"] == "rematch"]
    assert len(events) == 1 and events[0]["game"] == rematch["game"] and events[0]["rematch_of"]["game"] == game.game_id
    assert events[0]["link"] == f"/play/games/{rematch['game']}" and events[0]["seat"] == 1
    assert event_keys(events[0]) == [public_key_b64(game.keys[0])]


def test_an_open_game_past_its_accept_by_leaves_the_list_and_its_expiry_takes_it_off(make_app, run_worker):
    import time

    from svc_helpers import Http

    from referee.clock import now_ms
    from workers.deadlines import DeadlineScheduler

    app = make_app(REFEREE_ACCEPT_WITHIN=1)
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    game = create_open_game(http, "fivetowers", ["key", "open"])
    assert open_ids(http) == [game.game_id]
    time.sleep(1.2)
    assert open_ids(http) == [] and store.count_open_games() == 1  # past accept_by: not shown, still indexed
    DeadlineScheduler(store, threads=1).run_once(now=now_ms())  # the referee logs `expired`
    assert [e["type"] for e in store.read_log(game.game_id)][-2:] == ["expired", "revealed"]
    run_worker(app.extensions["referee.queue"])
    assert store.count_open_games() == 0
