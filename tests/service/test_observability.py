"""Metrics and JSON logs (issue 23, items 2 and 3; CONTRACT section 13): ``GET /metrics`` scraped and parsed
by prometheus_client's own parser after moves (counters move by the right amounts), answered to the
addresses of ``REFEREE_METRICS_ALLOW`` only (404 to others, the body of any unknown route), one view over
several processes (prometheus_client's multi-process mode: ``referee serve``'s gunicorn workers and replay
workers), and the JSON lines of every kind of process ``referee serve`` runs."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from freezegun import freeze_time
from ports import free_port
from prometheus_client.parser import text_string_to_metric_families
from svc_helpers import REPO, Http, accept_all, create_game, move_envelope, play_random, signed, wait_until

from referee.timecontrol import parse_ms
from workers import deliveries
from workers.deadlines import DeadlineScheduler

OTHER = {"REMOTE_ADDR": "203.0.113.5"}


def scrape(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, by name and labels (parsed by prometheus_client's parser)."""
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: dict, name: str, **labels: str) -> float:
    """The sum of ``name`` over every sample whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in samples.items() if n == name and wanted <= set(found))


def metrics_of(client) -> dict:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    return scrape(response.get_data(as_text=True))


def test_counters_move_by_the_moves_made(app, http, run_worker):
    client = app.test_client()
    before = metrics_of(client)
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    played = play_random(http, game, random.Random(3), max_moves=3)
    # one stale move (seq already taken) and one illegal one
    _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
    seat = legal["to_move"]
    stale = move_envelope(game.game_id, seat, legal["seq"] - 1, legal["head"], legal["moves"][0])
    stale_status, _ = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], stale))
    illegal = move_envelope(game.game_id, seat, legal["seq"], legal["head"], {"no": "such move"})
    illegal_status, _ = http.post(f"/games/{game.game_id}/moves", signed(game.keys[seat], illegal))
    run_worker()  # the projections: the replay lag is measured in this process's replay loop here
    after = metrics_of(client)

    def moved(name: str, **labels: str) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    assert moved("referee_submissions_total", kind="moves", outcome="accepted") == played == 3
    assert moved("referee_submissions_total", kind="accept", outcome="accepted") == 2
    refused = moved("referee_submissions_total", kind="moves") - played
    assert refused == 2 and {stale_status, illegal_status} <= {400, 409, 422}
    assert moved("referee_submit_seconds_count", kind="moves") == played + 2
    assert moved("referee_http_requests_total", endpoint="submissions.Moves", method="POST", status="202") == 3
    assert moved("referee_http_requests_total", endpoint="games.Games", method="POST", status="201") == 1
    assert moved("referee_replay_lag_seconds_count") >= 2 + 1 + played  # created, accepts, started, moves
    assert value(after, "referee_ready_games") == 0  # drained by the worker
    assert value(after, "referee_games", status="active") == 1
    assert sum(value(after, "referee_games", status=s) for s in ("waiting", "finished", "new", "archived")) == 0
    assert value(after, "referee_redis_used_memory_bytes", redis="log") > 0
    assert ("referee_redis_maxmemory_bytes", frozenset({("redis", "log")})) in after
    archived = "referee_archived_games_total"
    assert value(after, archived) == value(before, archived)  # nothing archived here
    assert ("referee_timeouts_total", frozenset()) in after


def test_games_are_counted_by_status_as_they_are_created_finished_and_archived(app, http, run_worker):
    """``referee_games{status}``: the games in Redis by their projection's status (``new``: not projected yet),
    kept by the replay workers' projection writes, and the archived ones, read at scrape time."""
    from test_archive import _resigned

    from referee.games_service.archiving import archive_game
    from referee.store.messages import messages_of

    client = app.test_client()
    store = app.extensions["referee.store"]

    def games() -> dict[str, float]:
        samples = metrics_of(client)
        assert total(samples, "referee_games") == sum(
            value(samples, "referee_games", status=s) for s in
            ("new", "waiting", "active", "finished", "aborted", "expired", "archived"))
        return {s: value(samples, "referee_games", status=s) for s in
                ("new", "waiting", "active", "finished", "aborted", "expired", "archived")}

    zero = dict.fromkeys(("new", "waiting", "active", "finished", "aborted", "expired", "archived"), 0.0)
    assert games() == zero
    waiting = create_game(http, "towerup", 2)
    assert games() == {**zero, "new": 1}  # no projection yet
    active = create_game(http, "fivetowers", 2)
    accept_all(http, active)
    done = [_resigned(http) for _ in range(2)]
    run_worker()
    assert games() == {**zero, "waiting": 1, "active": 1, "finished": 2}
    play_random(http, active, random.Random(2))  # to its end
    run_worker()
    assert games() == {**zero, "waiting": 1, "finished": 3}
    archived = archive_game(store, messages_of(store), store.archive, done[0].game_id, app.extensions["referee.key"],
                            older_than=0)
    assert archived.action == "archived"
    assert games() == {**zero, "waiting": 1, "finished": 2, "archived": 1}
    assert http.get(f"/games/{waiting.game_id}")[0] == 200


def test_timeouts_are_counted(app, http, store):
    client = app.test_client()
    hour = {"kind": "per_move", "per_move": 3600, "reminders": []}
    with freeze_time("2026-11-21T10:00:00Z"):
        games = [create_game(http, "fivetowers", 2, options={"time_control": hour}) for _ in range(2)]
        for game in games:
            accept_all(http, game)
    before = metrics_of(client)
    done = DeadlineScheduler(store, threads=1).run_once(now=parse_ms("2026-11-21T11:00:01.000Z"))
    assert [d["appended"][0] for d in done] == ["timeout", "timeout"]
    assert value(metrics_of(client), "referee_timeouts_total") - value(before, "referee_timeouts_total") == 2


def test_deliveries_are_counted_by_kind_and_outcome(app, run_worker):
    client = app.test_client()
    deliveries.reset_context()
    before = metrics_of(client)
    event = {"id": "ev-1", "game": "g-1", "type": "turn"}
    assert "skipped" in deliveries.deliver_webhook("no-such-contact", {"event": event})
    assert "skipped" in deliveries.deliver_mail("no-such-contact", {"event": event})

    @deliveries.counted("webhook")
    def failing(contact_id, payload):
        raise RuntimeError("the endpoint answered 500")

    with pytest.raises(RuntimeError):
        failing("c", {"event": event})
    after = metrics_of(client)
    for kind, outcome in (("webhook", "skipped"), ("mail", "skipped"), ("webhook", "failed")):
        assert value(after, "referee_deliveries_total", kind=kind, outcome=outcome) - value(
            before, "referee_deliveries_total", kind=kind, outcome=outcome) == 1, (kind, outcome)
    deliveries.reset_context()


def test_games_waiting_for_a_worker_are_counted_at_scrape_time(app, http):
    client = app.test_client()
    for _ in range(3):
        create_game(http, "fivetowers", 2)  # each creation queues its game for a replay worker; none runs
    assert value(metrics_of(client), "referee_ready_games") == 3


def test_metrics_answer_only_the_allowed_addresses(make_app):
    app = make_app(REFEREE_METRICS_ALLOW="10.1.0.0/16")
    client = app.test_client()
    unknown = client.get("/no/such/route")
    for environ in ({}, OTHER, {"REMOTE_ADDR": "10.2.0.1"}):  # loopback is not in this list
        response = client.get("/metrics", environ_base=environ)
        assert response.status_code == 404
        assert response.get_data() == unknown.get_data()
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "10.1.2.3"}).status_code == 200


def test_by_default_only_loopback_is_answered(app):
    client = app.test_client()
    assert client.get("/metrics").status_code == 200  # the test client's 127.0.0.1
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200
    assert client.get("/metrics", environ_base=OTHER).status_code == 404


def test_metrics_off_means_no_route(make_app):
    client = make_app(REFEREE_METRICS="0").test_client()
    assert client.get("/metrics").status_code == 404
    assert client.get("/health").headers["X-Request-Id"]


def test_every_answer_carries_a_request_id_made_here(app):
    client = app.test_client()
    first, second = client.get("/health"), client.get("/no/such/route")
    ids = {first.headers["X-Request-Id"], second.headers["X-Request-Id"]}
    assert len(ids) == 2 and all(len(i) == 32 for i in ids)
    # a client's own id is not taken (it could forge log lines or tie strangers' requests together)
    assert client.get("/health", headers={"X-Request-Id": "mine"}).headers["X-Request-Id"] != "mine"


def test_a_trusted_proxys_request_id_is_kept(make_app):
    client = make_app(REFEREE_TRUSTED_PROXIES="127.0.0.1").test_client()
    assert client.get("/health", headers={"X-Request-Id": "edge-42.a"}).headers["X-Request-Id"] == "edge-42.a"
    for bad in ("has space", "a" * 65, '{"level": "x"}'):
        made = client.get("/health", headers={"X-Request-Id": bad}).headers["X-Request-Id"]
        assert made != bad and len(made) == 32
    assert client.get("/health", headers={"X-Request-Id": "x"}, environ_base=OTHER).headers["X-Request-Id"] != "x"


def test_metrics_are_not_in_the_openapi_document(app):
    assert "/metrics" not in app.test_client().get("/openapi.json").get_json()["paths"]


def _lines(path: Path) -> list[dict]:
    """Every line of a JSON log, parsed (a line that is not one JSON object fails the test)."""
    parsed = []
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            assert isinstance(record, dict), line
            parsed.append(record)
    return parsed


def test_serve_writes_json_lines_from_every_process_and_one_metrics_view(tmp_path):
    """``referee serve`` with ``REFEREE_LOG_FORMAT=json``, 2 gunicorn workers, a replay worker, the notify
    worker and the mail gateway: every line of its output is a JSON object; every kind of process wrote
    some; ``/metrics`` adds up what both web workers and the replay worker counted."""
    port, mail_port = free_port(), free_port()
    env = {key: value for key, value in os.environ.items()
           if key not in {"REDIS_URL", "REFEREE_WORK_REDIS_URL", "PROMETHEUS_MULTIPROC_DIR"}}
    env.update(PYTHONPATH=REPO, REFEREE_VAR=str(tmp_path / "var"), REFEREE_LOG_FORMAT="json")
    log_path = tmp_path / "serve.log"
    out = open(log_path, "w+")
    process = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--port", str(port), "--web-workers",
                                "2", "--mail-gateway", str(mail_port)], cwd=REPO, env=env, stdout=out,
                               stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: "referee serving on" in log_path.read_text(), timeout=60, every=0.2)
        http = Http(requests, base)
        game = create_game(http, "fivetowers", 2)
        accept_all(http, game)
        played = play_random(http, game, random.Random(5), max_moves=3, wait=5)  # 200: the worker's verdicts
        answer = requests.get(f"{base}/games/{game.game_id}", timeout=5)
        request_id = answer.headers["X-Request-Id"]

        def access() -> list[dict]:
            return [r for r in _lines(log_path) if r.get("logger") == "gunicorn.access"]

        def both_web_workers_answered() -> bool:  # new connections until each worker has answered some
            requests.get(f"{base}/health", timeout=5)
            return len({r["pid"] for r in access()}) >= 2

        wait_until(both_web_workers_answered, timeout=30, every=0)
        web_pids = {r["pid"] for r in access()}
        directory = Path(re.findall(r'metrics of every process in (\S+) ', log_path.read_text())[0])
        assert all((directory / f"counter_{pid}.db").exists() for pid in web_pids)

        def scraped() -> dict:
            return scrape(requests.get(f"{base}/metrics", timeout=5).text)

        def health_counted() -> bool:  # the scrape's sum over the processes = the requests both workers logged
            logged = sum(1 for r in access() if r["path"] == "/health")
            return total(scraped(), "referee_http_requests_total", endpoint="health.Health") == logged

        wait_until(health_counted, timeout=10)
        samples = scraped()
        assert total(samples, "referee_submissions_total", kind="moves", outcome="accepted") == played
        assert total(samples, "referee_submissions_total", kind="accept", outcome="accepted") == 2
        assert total(samples, "referee_replay_lag_seconds_count") >= 2 + played  # counted by the replay worker
        assert total(samples, "referee_games") == 1  # by status: the one game, counted once
        assert requests.get(f"{base}/metrics", headers={"X-Forwarded-For": "203.0.113.5"}, timeout=5).ok  # untrusted
        os.killpg(process.pid, signal.SIGINT)
        process.wait(30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        out.close()
    records = _lines(log_path)
    assert {"serve", "web", "worker", "notify", "mail-gateway"} <= {r["process"] for r in records}
    for record in records:
        assert {"time", "level", "process", "pid", "event", "logger"} <= set(record), record
    assert records[-1]["event"] == "referee stopped" and records[-1]["process"] == "serve"
    lines = [r for r in records if r["logger"] == "gunicorn.access"]
    assert all({"method", "path", "status", "duration_ms", "request_id"} <= set(r) for r in lines)
    mine = [r for r in lines if r["request_id"] == request_id]
    assert len(mine) == 1 and mine[0]["game_id"] == game.game_id and mine[0]["status"] == 200
    moves = [r for r in lines if r["path"] == f"/games/{game.game_id}/moves"]
    assert len(moves) == played and all(r["status"] == 200 and r["game_id"] == game.game_id for r in moves)


@pytest.mark.parametrize("setting", [{"REFEREE_LOG_FORMAT": "xml"}, {"REFEREE_METRICS_ALLOW": "127.0.0.1,localhost"}])
def test_bad_settings_stop_the_start_with_their_name(setting):
    from referee.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=next(iter(setting))):
        load_config(setting, environ={})
