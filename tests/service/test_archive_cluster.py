"""Archiving on a real 3-master Redis Cluster (``REDIS_URL=redis+cluster://…``, the session's ``cluster_server``):
a finished game's keys (one hash tag: one master) are ``WATCH``ed and deleted in one ``MULTI`` on that master's
connection, its rows in the indexes (other slots) just after; every read answers the same bytes before and after,
the lobby and its players' games list it at the same place, and nothing of it is left on any master."""

from __future__ import annotations

import json
import random

from cluster_server import cluster_url  # noqa: F401 - a fixture
from redis.cluster import RedisCluster
from svc_helpers import Http, accept_all, create_game, play_random, run_cli
from test_archive import READS, _resigned, _same_reads
from test_cluster_end_to_end import cluster_app, cluster_worker  # noqa: F401 - fixtures

from referee.games_service.archiving import archive_game
from referee.protocol.signing import public_key_b64
from referee.store import keys
from referee.store.messages import messages_of
from referee.verify import verify_bundle


def _reads(app, game_id: str, homes: list[str]) -> dict[str, bytes]:
    client = app.test_client()
    out = {}
    for path in [*(f"/games/{game_id}{p}" for p in READS), "/games?limit=100", "/games?offset=1&limit=1", *homes]:
        response = client.get(path)
        assert response.status_code == 200, (path, response.data[:300])
        out[path] = response.data
    return out


def test_a_finished_game_archived_out_of_the_cluster_reads_the_same(cluster_app, cluster_worker,  # noqa: F811
                                                                     cluster_url, redis_url, monkeypatch):  # noqa: F811
    http, store = Http(cluster_app.test_client()), cluster_app.extensions["referee.store"]
    assert isinstance(store.redis, RedisCluster) and store.archive is not None
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    play_random(http, game, random.Random(4))
    other = _resigned(http)
    running = create_game(http, "towerup", 2)
    cluster_worker()
    homes = [f"/players/{public_key_b64(k)}/games" for k in game.keys]
    before = _reads(cluster_app, game.game_id, homes)
    by_status = store.games_by_status()
    assert by_status["finished"] >= 2 and by_status["archived"] == 0

    outcome = archive_game(store, messages_of(store), store.archive, game.game_id,
                           cluster_app.extensions["referee.key"], older_than=0)
    assert outcome.action == "archived", outcome
    _same_reads(_reads(cluster_app, game.game_id, homes), before)
    assert verify_bundle(json.loads(before[f"/games/{game.game_id}/export"])).ok
    # nothing of the game on any master: its keys, its rows in the lobby's, the players' and the status indexes
    def left(game_id: str) -> list[bytes]:
        return [key for node in store.redis.get_primaries()
                for key in store.redis.get_redis_connection(node).scan_iter(match=f"*{game_id}*")]

    # (the outbox's marks of its events go at the end of a pass: ``archive_games``, below)
    assert [key for key in left(game.game_id) if not key.startswith(b"{outbox}:seen:")] == []
    assert game.game_id not in store.live_games()
    assert all(store.redis.zscore(keys.player_games_key(public_key_b64(k)), game.game_id) is None for k in game.keys)
    assert all(not store.redis.sismember(keys.STATUS_SET.format(status=s), game.game_id) for s in keys.GAME_STATUSES)
    assert store.games_by_status()["archived"] == 1
    assert store.games_by_status()["finished"] == by_status["finished"] - 1

    # the command, on the cluster URL: the other finished game goes, the running one stays
    monkeypatch.setenv("REFEREE_VAR", cluster_app.config["REFEREE_VAR"])
    monkeypatch.delenv("REFEREE_ARCHIVE_DIR", raising=False)
    monkeypatch.delenv("REFEREE_KEY_FILE", raising=False)
    code, output = run_cli("archive", "--older-than", "0", "--url", cluster_url, "--work-url", redis_url,
                           other.game_id, running.game_id, game.game_id)
    assert code == 0 and f"archived {other.game_id}" in output and "archived 1 game(s)" in output, output
    assert store.archived_games() == [game.game_id, other.game_id]
    assert left(game.game_id) == [] and left(other.game_id) == []
    assert http.get(f"/games/{running.game_id}")[0] == 200 and running.game_id in store.live_games()
    _same_reads(_reads(cluster_app, game.game_id, homes), before)
