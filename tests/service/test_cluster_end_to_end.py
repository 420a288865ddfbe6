"""The service on a real 3-master Redis Cluster (``REDIS_URL=redis+cluster://…``, ``cluster_server``): whole
games through the HTTP API with the logs and projections on the cluster and RQ's queue on the session's
plain Redis (``REFEREE_WORK_REDIS_URL``); a real ``referee worker`` subprocess answering ``?wait``; the
export verifies offline and over HTTP; event streams over one game and over several (several slots)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
import uuid

import pytest
import redis as redis_lib
from cluster_server import cluster_url  # noqa: F401 - a fixture
from logging_state import kept
from redis.cluster import RedisCluster
from rq.serializers import JSONSerializer
from rq.worker import SimpleWorker
from svc_helpers import (
    REPO,
    Http,
    accept_all,
    create_game,
    move_envelope,
    play_random,
    signed,
    stop_process,
    wait_until,
)

from referee.app import create_app
from referee.games_service import fold, projection_of
from referee.protocol.logchain import first_broken_link
from referee.store import keys
from referee.verify import verify_bundle
from workers import jobs


@pytest.fixture
def cluster_app(tmp_path, cluster_url, redis_url):  # noqa: F811 - the imported fixture
    """An app whose logs are on the cluster and whose RQ queue is on the plain Redis."""
    app = create_app({"REDIS_URL": cluster_url, "REFEREE_WORK_REDIS_URL": redis_url, "TESTING": True,
                      "REFEREE_VAR": str(tmp_path / "var"), "REFEREE_QUEUE": f"cl-{uuid.uuid4().hex[:8]}"})
    yield app
    app.extensions["referee.store"].close()


@pytest.fixture
def cluster_worker(cluster_app, cluster_url, redis_url):  # noqa: F811
    """``run()``: an in-process burst worker (ready list, then RQ) on the plain Redis whose replays read and
    write the cluster."""
    jobs._PROJECTORS.clear()
    jobs.configure(cluster_url, redis_url)

    def run() -> bool:
        with kept():  # (RQ's worker sets its loggers' levels)
            return jobs.work_burst([cluster_app.extensions["referee.queue"]])

    yield run
    for projector in jobs._PROJECTORS.values():
        projector.store.close()
    jobs._PROJECTORS.clear()
    jobs._URLS.clear()


def test_a_whole_game_on_the_cluster_projected_exported_and_verified(cluster_app, cluster_worker, redis_url):
    http, store = Http(cluster_app.test_client()), cluster_app.extensions["referee.store"]
    assert isinstance(store.redis, RedisCluster) and store.work is store.redis
    # RQ's queue is on the plain Redis, not on the cluster
    queue = cluster_app.extensions["referee.queue"]
    assert not isinstance(queue.connection, RedisCluster)
    rng = random.Random("cluster")
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game, rng)
    play_random(http, game, rng, every=lambda n: cluster_worker() if n % 25 == 24 else None)
    cluster_worker()
    entries = store.read_log(game.game_id)
    assert first_broken_link(entries) is None and entries[-1]["type"] == "revealed"
    # the worker's projection, on the cluster, equals a fresh fold of the log
    stored = store.read_projection(game.game_id, with_verdicts=True)
    expected = projection_of(fold(store, game.game_id))
    assert stored["seq"] == len(entries) and stored["status"] == "finished"
    for name in ("seq", "head", "status", "to_move", "view", "result"):
        assert stored[name] == expected[name], name
    # every key of the game is on one slot of the cluster; nothing of it on the queue's Redis
    slots = {store.redis.keyslot(key) for key in keys.game_keys(game.game_id)}
    assert len(slots) == 1
    plain = redis_lib.Redis.from_url(redis_url)
    assert not plain.exists(*keys.game_keys(game.game_id))
    plain.close()
    # export, then verify offline and over HTTP
    status, bundle = http.get(f"/games/{game.game_id}/export")
    assert status == 200 and bundle["interim"] is False and bundle["log"] == entries
    assert bundle["result"] == http.get(f"/games/{game.game_id}/result")[1]["result"]
    assert verify_bundle(bundle).ok
    status, report = http.post("/verify", bundle)
    assert status == 200 and report["ok"] is True and report["signed_by_this_referee"] is True


def test_games_spread_over_the_masters(cluster_app):
    http, store = Http(cluster_app.test_client()), cluster_app.extensions["referee.store"]
    games = [create_game(http, "towerup", 2).game_id for _ in range(12)]
    nodes = {store.redis.get_node_from_key(keys.game_keys(game).log).name for game in games}
    assert len(nodes) >= 2  # 12 random ids on one master of three: 1 in 177,147
    assert sorted(store.list_games()) == sorted(games) and sorted(store.scan_games()) == sorted(games)
    assert store.log_lengths(games) == dict.fromkeys(games, 1)
    assert {game for game, *_ in store.lagging_games()} == set(games)  # nobody ran a worker
    status, health = http.get("/health")
    assert status == 200 and health["ok"] is True


def test_a_real_worker_process_answers_wait_on_the_cluster(cluster_app, cluster_url, redis_url,  # noqa: F811
                                                           spawn_cluster_worker):
    http, store = Http(cluster_app.test_client()), cluster_app.extensions["referee.store"]
    spawn_cluster_worker([sys.executable, "-m", "referee.cli", "worker", "--url", cluster_url,
                          "--work-url", redis_url, "--queue", cluster_app.config["REFEREE_QUEUE"]])
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    rng = random.Random(5)
    for expected_seq in range(4, 10):
        _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat = legal["to_move"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], rng.choice(legal["moves"]))
        status, receipt = http.post(f"/games/{game.game_id}/moves?wait=20", signed(game.keys[seat], envelope))
        assert status == 200, receipt
        assert receipt["verdict"]["status"] == "applied" and receipt["verdict"]["seq"] == expected_seq
    wait_until(lambda: (store.read_projection(game.game_id) or {}).get("seq") == store.tip(game.game_id).seq)


@pytest.fixture
def spawn_cluster_worker(tmp_path):
    processes = []

    def spawn(command: list[str]) -> None:
        out = open(tmp_path / "worker.log", "wb")  # closed at the end of the test
        environment = {**os.environ, "PYTHONPATH": REPO, "REFEREE_RECONCILE_EVERY": "0.5"}
        processes.append((subprocess.Popen(command, env=environment, cwd=REPO, stdout=out,
                                           stderr=subprocess.STDOUT), out))

    yield spawn
    for process, out in processes:
        stop_process(process)
        out.close()


def test_following_one_log_blocks_and_several_logs_on_several_slots_are_noticed(cluster_app):
    http, store = Http(cluster_app.test_client()), cluster_app.extensions["referee.store"]
    one, two = create_game(http, "towerup", 2), create_game(http, "towerup", 2)
    assert store.follow_log(one.game_id, 0, timeout=0.2) == []
    # one game: a blocking XREAD that wakes when the accept is appended
    found: list = []
    waiter = threading.Thread(target=lambda: found.extend(store.follow_log(one.game_id, 0, timeout=10)))
    started = time.monotonic()
    waiter.start()
    time.sleep(0.2)
    accept_all(http, one)
    waiter.join(15)
    assert found and found[0][0] == 1 and time.monotonic() - started < 5
    # several games (their logs on different slots): both are read, whatever slot they are on
    accept_all(http, two)
    afters = {one.game_id: 0, two.game_id: 0}
    seen = store.follow_logs(afters, timeout=2)
    assert {game for game, _position, _raw in seen} == {one.game_id, two.game_id}
    assert store.follow_logs({game: store.tip(game).seq - 1 for game in afters}, timeout=0.3) == []


def test_a_cluster_url_without_a_plain_queue_redis_is_refused_at_start(tmp_path, cluster_url):  # noqa: F811
    with pytest.raises(ValueError, match="REFEREE_WORK_REDIS_URL must name a plain"):
        create_app({"REDIS_URL": cluster_url, "REFEREE_VAR": str(tmp_path / "var"), "TESTING": True})


def test_contacts_outbox_and_webhooks_on_the_cluster(monkeypatch, cluster_url, redis_url,  # noqa: F811
                                                     cluster_worker, cluster_app):
    """A contact registered, a game's events routed from the ``{outbox}`` stream on the cluster to a real
    webhook by the notify queue on the plain Redis, the delivery log kept, the contact deleted (its keys
    are on several slots)."""
    from notify_servers import smtp_sink, webhook_receiver
    from standardwebhooks import Webhook

    from referee.clock import now
    from referee.protocol.signing import generate_key, public_key_b64, sign
    from workers import deliveries

    def signed_contact(key, ctx="referee/contact", **fields):
        envelope = {"v": 1, "ctx": ctx, "key": public_key_b64(key), **fields, "at": now()}
        return {"envelope": envelope, "sig": sign(key, envelope)}

    with smtp_sink() as sink, webhook_receiver() as receiver:
        for name, value in {"REDIS_URL": cluster_url, "REFEREE_WORK_REDIS_URL": redis_url,
                            "REFEREE_SMTP_URL": f"smtp://127.0.0.1:{sink.port}",
                            "REFEREE_PUBLIC_URL": "https://referee.example"}.items():
            monkeypatch.setenv(name, value)
        deliveries.reset_context()
        try:
            client, store = cluster_app.test_client(), cluster_app.extensions["referee.store"]
            contacts = cluster_app.extensions["referee.contacts"]
            players = [generate_key(), generate_key()]
            answer = client.post("/contacts", json=signed_contact(players[0], webhook=receiver.url,
                                                                  events=["started", "turn"]))
            assert answer.status_code == 201, answer.json
            secret, contact = answer.json["secret"], answer.json["id"]
            game = create_game(Http(client), "fivetowers", 2, keys=players)
            accept_all(Http(client), game)
            cluster_worker()
            router = deliveries.OutboxRouter(store.redis, contacts, name="cluster-router")
            connection = redis_lib.Redis.from_url(redis_url)
            queue = deliveries.notify_queue(connection, cluster_app.config["REFEREE_QUEUE"])
            for _ in range(3):
                router.run_once(block_ms=0)
                with kept():
                    SimpleWorker([queue], connection=connection, serializer=JSONSerializer).work(
                        burst=True, logging_level="ERROR")
            connection.close()
            events = [Webhook(secret).verify(r["body"], r["headers"]) for r in receiver.received]
            assert f"{game.game_id}:3:started" in {event["id"] for event in events}
            assert store.redis.llen(keys.CONTACT_DELIVERIES.format(contact=contact)) >= 1
            removed = client.delete(f"/contacts/{contact}", json=signed_contact(
                players[0], ctx="referee/contact-delete", contact=contact))
            assert removed.status_code == 200, removed.json
            assert not store.redis.exists(keys.CONTACT.format(contact=contact),
                                          keys.CONTACT_DELIVERIES.format(contact=contact))
        finally:
            deliveries.reset_context()


def test_a_worker_on_a_cluster_without_a_plain_queue_redis_says_so(cluster_url):  # noqa: F811
    from click.testing import CliRunner

    from referee.cli import main as cli

    result = CliRunner().invoke(cli, ["worker", "--url", cluster_url, "--burst"])
    assert result.exit_code == 2 and "give RQ's queue a plain Redis" in result.output


def test_a_swiss_tournament_on_the_cluster_certifies(cluster_app, cluster_worker):
    """A tournament's log (its own hash tag) and its games (theirs) on their own slots: joins, pairing,
    games played, results, the next round, the certificate verified with the games' bundles."""
    from tournament_helpers import Players, join_all, play_round, tournament_state

    from referee.tournaments.certificate import verify_certificate

    http, store = Http(cluster_app.test_client()), cluster_app.extensions["referee.store"]
    players = Players(4)
    status, created = http.post("/tournaments", players.body(format={"kind": "swiss", "rounds": 2,
                                                                     "table_sizes": [2]}))
    assert status == 201, created
    tid = created["tournament"]
    join_all(http, tid, players)
    rng = random.Random(3)
    games = play_round(http, tid, players, rng)
    cluster_worker()
    assert len(tournament_state(http, tid)["rounds"]) == 2
    games += play_round(http, tid, players, rng)
    cluster_worker()
    state = tournament_state(http, tid)
    assert state["status"] == "finished" and state["revealed"]
    assert store.redis.keyslot(keys.tournament_keys(tid).log) != store.redis.keyslot(keys.game_keys(games[0]).log)
    status, certificate = http.get(f"/tournaments/{tid}/export")
    assert status == 200, certificate
    bundles = {game: http.get(f"/games/{game}/export")[1] for game in games}
    assert verify_certificate(certificate, bundles, referee_key=certificate["referee_key"]).ok
    # the ratings' fold (its own hash tag, compare-and-set by a script on the cluster), advanced per result
    # by the workers, is the one rebuilt from the logs
    status, ratings = http.get("/ratings/fivetowers")
    assert status == 200 and ratings["tournaments"] == [tid]
    assert [r["games"] for r in ratings["ratings"]] == [2] * 4
    assert store.work.hget(keys.RATINGS.format(ruleset="fivetowers"), "state") is not None
    service = cluster_app.extensions["referee.tournaments"]
    service.rebuild_ratings(["fivetowers"])
    assert http.get("/ratings/fivetowers") == (status, ratings)


def test_serve_with_a_cluster_and_no_queue_redis_stops_before_starting_anything(tmp_path, monkeypatch,
                                                                                cluster_url):  # noqa: F811
    from click.testing import CliRunner

    from referee.cli import main as cli

    monkeypatch.setenv("REDIS_URL", cluster_url)
    monkeypatch.delenv("REFEREE_WORK_REDIS_URL", raising=False)
    monkeypatch.setenv("REFEREE_VAR", str(tmp_path / "var"))
    result = CliRunner().invoke(cli, ["serve", "--port", "0"])
    assert result.exit_code == 2 and "set REFEREE_WORK_REDIS_URL to a plain Redis" in result.output
    assert not (tmp_path / "var").exists()


def test_durability_is_the_least_durable_masters(cluster_app):
    store = cluster_app.extensions["referee.store"]
    assert store.durability() == {"appendonly": "yes", "appendfsync": "always"}  # the suite: AOF, always
    last = sorted(store.redis.get_primaries(), key=lambda node: node.name)[-1]
    store.redis.config_set("appendfsync", "everysec", target_nodes=last)
    try:
        assert store.durability() == {"appendonly": "yes", "appendfsync": "everysec"}
        status, health = Http(cluster_app.test_client()).get("/health")
        assert status == 200 and health["durability"]["appendfsync"] == "everysec"
    finally:
        store.redis.config_set("appendfsync", "always", target_nodes=last)


def test_event_streams_over_http_on_the_cluster(cluster_app):
    """``GET /games/{id}/events`` (one game: a blocking read) and the lobby's ``GET /games/events?games=…``
    (several games: read each second) on real sockets, with the logs on the cluster."""
    import requests
    from live_server import serving
    from sse_helpers import SSEClient

    with serving(cluster_app) as server:
        http = Http(requests.Session(), server)
        one, two = create_game(http, "fivetowers", 2), create_game(http, "fivetowers", 2)
        game_stream = SSEClient(server, f"/games/{one.game_id}/events")
        lobby = SSEClient(server, f"/games/events?games={one.game_id},{two.game_id}")
        try:
            assert game_stream.status == 200 and lobby.status == 200
            assert game_stream.next_block().id == "0" and lobby.next_block().retry
            accept_all(http, one)
            events = [game_stream.next_event() for _ in range(3)]
            assert [e.id for e in events] == ["1", "2", "3"]
            assert [e.entry()["type"] for e in events] == ["accepted", "accepted", "started"]
            accept_all(http, two)
            notices = [lobby.next_event().entry() for _ in range(6)]
            assert sorted((n["game"], n["position"]) for n in notices) == sorted(
                (game, position) for game in (one.game_id, two.game_id) for position in (1, 2, 3))
        finally:
            game_stream.close()
            lobby.close()
