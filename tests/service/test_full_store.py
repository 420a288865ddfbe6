"""A full log Redis refuses writes instead of losing entries (issue 17 item 2): the embedded servers run with
a memory limit and ``maxmemory-policy noeviction``; at the limit a submission gets 503 and the log is as it
was; once there is room again the same submission is accepted."""

from __future__ import annotations

import redis as redis_lib
from ports import free_port
from svc_helpers import Http, accept_all, create_game, move_envelope, signed

from referee.app import create_app
from referee.running.embedded_redis import EmbeddedRedis


def test_a_full_log_redis_answers_503_and_loses_nothing(tmp_path):
    server = EmbeddedRedis(port=free_port(), durable=True, maxmemory="4mb").start()
    try:
        app = create_app({"REDIS_URL": server.url, "REFEREE_VAR": str(tmp_path / "var"), "TESTING": True,
                          "REFEREE_DISPATCH": "none"})
        http, store = Http(app.test_client()), app.extensions["referee.store"]
        game = create_game(http, "fivetowers", 2)
        accept_all(http, game)
        before = store.read_log(game.game_id)
        client = redis_lib.Redis.from_url(server.url)
        assert client.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
        n = 0
        for size in (65536, 64):  # fill it up to the limit: big values, then small ones (a refused big write's
            for _ in range(100_000):  # own buffer would leave room behind it once freed)
                try:
                    client.set(f"filler:{n}", b"x" * size)
                    n += 1
                except redis_lib.ResponseError as exc:
                    assert "maxmemory" in str(exc)
                    break
            else:
                raise AssertionError("the limit was never reached")
        # Pin the full state: right at the limit, a freed client buffer can bring the used memory back under it
        # between the last refused SET and the move (seen on a fresh machine), and then the move has room.
        used = int(client.info("memory")["used_memory"])
        client.config_set("maxmemory", used // 2)
        _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat = legal["to_move"]
        submission = signed(game.keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"],
                                                           legal["moves"][0]))
        status, body = http.post(f"/games/{game.game_id}/moves", submission)
        assert status == 503 and body["error"]["code"] in ("log/unavailable", "store/unavailable"), body
        assert store.read_log(game.game_id) == before  # nothing evicted, nothing half-written
        client.delete(*[f"filler:{i}" for i in range(n)])
        client.config_set("maxmemory", "4mb")
        status, body = http.post(f"/games/{game.game_id}/moves", submission)
        assert status == 202, body
        assert store.read_log(game.game_id)[:len(before)] == before
        store.close()
        client.close()
    finally:
        server.stop()
