"""A tournament whose games are archived (CONTRACT section 13, issue 23 item 1), against the real Redis: the
tournament's state, standings, log, certificate and the ratings answer the same bytes before and after its
games leave Redis; the certificate still verifies with the games' bundles (as ``referee verify-tournament``
checks it), and ``referee rebuild --ratings`` after archiving computes the same ratings.

Games end quickly: round one is played to its end with random legal moves; round two ends at once when a
player withdraws (``withdrawal: adjudicate``)."""

from __future__ import annotations

import json
import random

from click.testing import CliRunner
from svc_helpers import play_random
from test_archive import _archive, _game_keys, _reads, _same_reads
from tournament_helpers import Players, join_all, start_game, tournament_state, withdraw

from referee.cli.verification import verify_tournament_command
from referee.games_service.archiving import archive_games
from referee.store.keys import OUTBOX_SEEN
from referee.tournaments.certificate import verify_certificate


def _tournament_reads(app, tid: str, games: list[str]) -> dict[str, bytes]:
    client = app.test_client()
    out = {}
    paths = [f"/tournaments/{tid}", f"/tournaments/{tid}/standings.csv", f"/tournaments/{tid}/log?limit=1000",
             f"/tournaments/{tid}/export", "/tournaments", "/ratings/fivetowers",
             *(f"/ratings/fivetowers?game={g}" for g in games)]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, (path, response.data[:300])
        out[path] = response.data
    return out


def _outbox_marks(store, game_id: str) -> list[bytes]:
    return list(store.redis.scan_iter(match=OUTBOX_SEEN.format(event=f"{game_id}:*")))


def test_a_tournaments_standings_certificate_and_ratings_answer_the_same_after_its_games_are_archived(
        app, http, run_worker, tmp_path):
    players = Players(2)
    status, created = http.post("/tournaments", players.body(format={"kind": "series", "rounds": 2},
                                                             withdrawal="adjudicate"))
    assert status == 201, created
    tid = created["tournament"]
    join_all(http, tid, players)
    rng = random.Random(23)
    first = tournament_state(http, tid)["rounds"][-1]["tables"][0]
    play_random(http, start_game(http, first, players, rng), rng)  # round one: played to its end
    run_worker()
    second = tournament_state(http, tid)["rounds"][-1]["tables"][0]
    assert second["game"] != first["game"]
    start_game(http, second, players, rng)
    assert withdraw(http, tid, players.keys[1])[0] == 202  # round two: adjudicated at once
    run_worker()
    assert tournament_state(http, tid)["status"] == "finished"
    games = [first["game"], second["game"]]

    before = _tournament_reads(app, tid, games)
    game_reads = {g: _reads(app, g) for g in games}
    bundles = {g: json.loads(game_reads[g]["/export"]) for g in games}
    certificate = json.loads(before[f"/tournaments/{tid}/export"])
    assert verify_certificate(certificate, bundles, referee_key=certificate["referee_key"]).ok

    store, messages, archive, key = _archive(app)
    assert any(_outbox_marks(store, g) for g in games)  # the marks of their events (against sending one twice)
    outcomes = archive_games(store, messages, archive, key, older_than=0, games=games)
    assert [o.action for o in outcomes] == ["archived", "archived"], outcomes
    assert all(_game_keys(store, g) == [] for g in games) and sorted(archive.list()) == sorted(games)
    assert [m for g in games for m in _outbox_marks(store, g)] == []  # never folded again: the marks go with the keys

    _same_reads(_tournament_reads(app, tid, games), before)
    for g in games:
        _same_reads(_reads(app, g), game_reads[g])
    run_worker()  # the workers' passes over the tournament change nothing
    _same_reads(_tournament_reads(app, tid, games), before)

    # offline, as a user runs it, with the bundles served from the archive
    folder = tmp_path / "games"
    folder.mkdir()
    for g in games:
        status, bundle = http.get(f"/games/{g}/export")
        assert status == 200 and bundle == bundles[g]
        (folder / f"{g}.json").write_text(json.dumps(bundle))
    (tmp_path / "certificate.json").write_text(before[f"/tournaments/{tid}/export"].decode())
    result = CliRunner().invoke(verify_tournament_command, [str(tmp_path / "certificate.json"), "--games",
                                                            str(folder)])
    assert result.exit_code == 0, result.output

    # the ratings rebuilt from the logs after archiving: the same answers
    app.extensions["referee.tournaments"].rebuild_ratings(["fivetowers"])
    _same_reads(_tournament_reads(app, tid, games), before)
