"""Archiving finished games out of Redis (CONTRACT section 13, issue 23 item 1), against the real Redis: every
read of a finished game answers the same bytes before and after (game, log, replay, result, export, messages,
the lobby); a submission to an archived game is refused as to a finished one; a crash between the file and the
deletion loses nothing and the next run converges; ``--dry-run`` changes nothing."""

from __future__ import annotations

import json
import random

import pytest
from svc_helpers import accept_all, create_game, move_envelope, play_random, run_cli, signed
from test_messages import say

from referee.clock import now
from referee.games_service.archiving import archive_game, document_of
from referee.protocol.signing import MUTE_CTX
from referee.store import GameExists
from referee.store.archive import DirectoryArchive
from referee.store.messages import messages_of
from referee.verify import verify_bundle

READS = ("", "/log", "/log?start=2&limit=3", "/replay", "/replay?at=3", "/result", "/export", "/messages")


def _finished(http, run_worker, ruleset: str, players: int, seed: int):
    game = create_game(http, ruleset, players)
    accept_all(http, game)
    assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "good luck"))[0] == 201
    assert http.post(f"/games/{game.game_id}/messages", say(game, 1, "to seat 0 only", to=[0]))[0] == 201
    play_random(http, game, random.Random(seed))
    run_worker()
    return game


def _reads(app, game_id: str) -> dict[str, bytes]:
    client = app.test_client()
    out = {}
    for path in READS:
        response = client.get(f"/games/{game_id}{path}")
        assert response.status_code == 200, (path, response.data[:300])
        out[path] = response.data
    lobby = json.loads(client.get("/games").data)
    out["lobby"] = json.dumps([g for g in lobby["games"] if g["game"] == game_id] if isinstance(lobby, dict)
                              else [g for g in lobby if g["game"] == game_id]).encode()
    return out


def _same_reads(after: dict[str, bytes], before: dict[str, bytes]) -> None:
    for path, data in before.items():
        if after[path] != data:
            at = next(i for i, (a, b) in enumerate(zip(after[path], data, strict=False)) if a != b)
            raise AssertionError(f"{path or '/'} differs at {at}: {after[path][at - 120:at + 80]!r} "
                                 f"was {data[at - 120:at + 80]!r}")


def _game_keys(store, game_id: str) -> list[bytes]:
    return list(store.redis.scan_iter(match=f"game:{{{game_id}}}:*")) + list(
        store.work.scan_iter(match=f"game:{{{game_id}}}:*"))


def _archive(app):
    store = app.extensions["referee.store"]
    return store, messages_of(store), store.archive, app.extensions["referee.key"]


@pytest.mark.parametrize(("ruleset", "players"), [("fivetowers", 3), ("towerup", 2)])
def test_every_read_answers_the_same_bytes_before_and_after_archiving(app, http, run_worker, ruleset, players):
    game = _finished(http, run_worker, ruleset, players, seed=7)
    before = _reads(app, game.game_id)
    store, messages, archive, key = _archive(app)
    assert isinstance(archive, DirectoryArchive)

    kept = archive_game(store, messages, archive, game.game_id, key)  # the default: a week after the reveal
    assert kept.action == "kept" and "less than" in kept.reason and not archive.has(game.game_id)

    outcome = archive_game(store, messages, archive, game.game_id, key, older_than=0)
    assert outcome.action == "archived", outcome
    assert _game_keys(store, game.game_id) == []
    assert archive.file_of(game.game_id).is_file()
    assert store.archived_games() == [game.game_id]
    _same_reads(_reads(app, game.game_id), before)
    bundle = json.loads(before["/export"])
    assert verify_bundle(bundle).ok
    assert archive.get(game.game_id)["bundle"] == bundle  # the file carries the export as answered

    # a submission to the archived game: refused as for a finished game, and nothing written
    state = json.loads(before[""])
    envelope = move_envelope(game.game_id, 0, state["seq"], state["head"], {"type": "pass"})
    status, body = http.post(f"/games/{game.game_id}/moves", signed(game.keys[0], envelope))
    assert status == 409 and body["error"]["code"] == "game/not_active", body
    # messages and mutes are still taken by a finished game, but an archived one takes nothing more
    status, body = http.post(f"/games/{game.game_id}/messages", say(game, 0, "after the archive"))
    assert status == 409 and body["error"]["code"] == "game/archived", body
    mute = {"v": 1, "ctx": MUTE_CTX, "game": game.game_id, "seat": 0, "mute": [1], "at": now()}
    status, body = http.post(f"/games/{game.game_id}/messages/mute", signed(game.keys[0], mute))
    assert status == 409 and body["error"]["code"] == "game/archived", body
    assert _game_keys(store, game.game_id) == []

    run_worker()  # the replay workers (and their reconciler) leave an archived game alone
    assert _game_keys(store, game.game_id) == []
    with pytest.raises(GameExists):  # its id is taken for good (a signed creation sent again, say)
        store.create(game.game_id, json.loads(before["/log"])["entries"][0], None)
    assert _game_keys(store, game.game_id) == []

    again = archive_game(store, messages, archive, game.game_id, key, older_than=0)  # idempotent
    assert again.action == "cleaned"
    _same_reads(_reads(app, game.game_id), before)


def test_a_crash_between_the_file_and_the_deletion_loses_nothing_and_the_next_run_converges(app, http, run_worker):
    game = _finished(http, run_worker, "towerup", 2, seed=3)
    store, messages, archive, key = _archive(app)
    before = _reads(app, game.game_id)
    # the run that died after writing the file: the document is there, every key still in Redis
    document, _ = document_of(store, messages, game.game_id, key)
    archive.put(game.game_id, {**document, "archived_at": 1})
    assert _game_keys(store, game.game_id) and _reads(app, game.game_id) == before
    # the game changed meanwhile (a message after the game): the next run writes the file again from Redis
    assert http.post(f"/games/{game.game_id}/messages", say(game, 1, "well played"))[0] == 201
    before = _reads(app, game.game_id)
    outcome = archive_game(store, messages, archive, game.game_id, key, older_than=0)
    assert outcome.action == "archived", outcome
    assert _game_keys(store, game.game_id) == []
    _same_reads(_reads(app, game.game_id), before)
    assert [m["hash"] for m in archive.get(game.game_id)["messages"]][-1] == json.loads(
        before["/messages"])["messages"][-1]["hash"]


def test_a_game_that_changes_while_it_is_archived_is_not_deleted(app, http, run_worker):
    game = _finished(http, run_worker, "towerup", 2, seed=5)
    store, messages, archive, key = _archive(app)
    written = []

    def interleaved(game_id, document):  # a message lands between the file's write and the deletion
        DirectoryArchive.put(archive, game_id, document)
        if not written:
            assert http.post(f"/games/{game.game_id}/messages", say(game, 0, "one more thing"))[0] == 201
        written.append(game_id)

    archive.put = interleaved
    try:
        outcome = archive_game(store, messages, archive, game.game_id, key, older_than=0)
    finally:
        del archive.put
    assert outcome.action == "retry"
    assert _game_keys(store, game.game_id)  # nothing deleted: the message is in Redis
    outcome = archive_game(store, messages, archive, game.game_id, key, older_than=0)
    assert outcome.action == "archived"
    assert [m["submission"]["envelope"]["text"] for m in archive.get(game.game_id)["messages"]][-1] == "one more thing"


def test_the_command_dry_run_changes_nothing_then_archives(app, http, run_worker, redis_url, monkeypatch):
    game = _finished(http, run_worker, "towerup", 2, seed=11)
    running = create_game(http, "towerup", 2)
    store, _messages, archive, _key = _archive(app)
    before = _reads(app, game.game_id)
    keys_before = sorted(_game_keys(store, game.game_id))
    monkeypatch.setenv("REFEREE_VAR", app.config["REFEREE_VAR"])
    monkeypatch.delenv("REFEREE_ARCHIVE_DIR", raising=False)
    monkeypatch.delenv("REFEREE_KEY_FILE", raising=False)

    from prometheus_client import REGISTRY

    counted = REGISTRY.get_sample_value("referee_archived_games_total") or 0.0
    code, output = run_cli("archive", "--dry-run", "--older-than", "0", "--url", redis_url)
    assert code == 0, output
    assert (REGISTRY.get_sample_value("referee_archived_games_total") or 0.0) == counted  # a dry run counts nothing
    assert f"would archive {game.game_id}" in output and running.game_id not in output
    assert sorted(_game_keys(store, game.game_id)) == keys_before and list(archive.list()) == []

    code, output = run_cli("archive", "--older-than", "0", "--url", redis_url)
    assert code == 0, output
    assert f"archived {game.game_id}" in output and "archived 1 game(s)" in output
    assert list(archive.list()) == [game.game_id] and _game_keys(store, game.game_id) == []
    _same_reads(_reads(app, game.game_id), before)
    assert http.get(f"/games/{running.game_id}")[0] == 200
    assert REGISTRY.get_sample_value("referee_archived_games_total") == counted + 1  # section 13's series

    # the archive's list of its games lost: the lobby no longer lists the game; `rebuild --archive-index` writes
    # the list again from the documents and the lobby answers as before
    listed = http.get("/games")
    archive.index_file.unlink()
    assert game.game_id not in [g for g, _ in archive.games()] and http.get("/games") != listed
    code, output = run_cli("rebuild", "--archive-index", "--url", redis_url)
    assert code == 0 and "archive index: 1 game(s) listed" in output, output
    assert http.get("/games") == listed and game.game_id in [g for g, _ in archive.games()]


_DIES_AFTER_THE_FILE = """
import os, signal, sys
from referee.games_service.archiving import archive_game
from referee.protocol.signing import read_or_create_key_file
from referee.store import RedisStore
from referee.store.archive import DirectoryArchive
from referee.store.messages import messages_of

url, folder, key_file, game_id = sys.argv[1:]
put = DirectoryArchive.put

def put_then_die(self, game, document):
    put(self, game, document)
    os.kill(os.getpid(), signal.SIGKILL)  # the file is on disk; the keys not deleted yet

DirectoryArchive.put = put_then_die
archive = DirectoryArchive(folder)
store = RedisStore.from_url(url).use_archive(archive)
archive_game(store, messages_of(store), archive, game_id, read_or_create_key_file(key_file), older_than=0)
"""


def test_a_process_killed_between_the_file_and_the_deletion_loses_nothing(app, http, run_worker, redis_url,
                                                                         monkeypatch):
    import subprocess
    import sys

    from svc_helpers import REPO

    game = _finished(http, run_worker, "fivetowers", 3, seed=13)
    store, _messages, archive, _key = _archive(app)
    before, keys_before = _reads(app, game.game_id), sorted(_game_keys(store, game.game_id))
    died = subprocess.run([sys.executable, "-c", _DIES_AFTER_THE_FILE, redis_url, str(archive.path),
                           app.config["REFEREE_KEY_FILE"], game.game_id], check=False, cwd=REPO, capture_output=True,
                          timeout=60)
    assert died.returncode == -9, died.stderr.decode()
    assert archive.has(game.game_id) and sorted(_game_keys(store, game.game_id)) == keys_before
    _same_reads(_reads(app, game.game_id), before)

    monkeypatch.setenv("REFEREE_VAR", app.config["REFEREE_VAR"])
    monkeypatch.delenv("REFEREE_ARCHIVE_DIR", raising=False)
    monkeypatch.delenv("REFEREE_KEY_FILE", raising=False)
    code, output = run_cli("archive", "--older-than", "0", "--url", redis_url)
    assert code == 0 and f"archived {game.game_id}" in output, output
    assert _game_keys(store, game.game_id) == []
    _same_reads(_reads(app, game.game_id), before)


def test_the_replay_workers_archive_by_themselves(app, http, run_worker, spawn_worker):
    from svc_helpers import wait_until

    game = _finished(http, run_worker, "towerup", 2, seed=17)
    running = create_game(http, "towerup", 2)
    store, _messages, archive, _key = _archive(app)
    before = _reads(app, game.game_id)
    spawn_worker(env={"REFEREE_VAR": app.config["REFEREE_VAR"], "REFEREE_ARCHIVE_AFTER": "0",
                      "REFEREE_ARCHIVE_EVERY": "0.3", "REFEREE_KEY_FILE": "", "REFEREE_ARCHIVE_DIR": ""})
    # the archive lists the game (step 2) just before its keys are deleted (step 3): wait for both
    wait_until(lambda: store.archived_games() == [game.game_id] and _game_keys(store, game.game_id) == [],
               timeout=60, every=0.2)
    assert list(archive.list()) == [game.game_id]
    _same_reads(_reads(app, game.game_id), before)
    assert http.get(f"/games/{running.game_id}")[0] == 200 and _game_keys(store, running.game_id)


def test_an_archived_game_stays_in_its_players_games(app, http, run_worker):
    """``GET /players/{key}/games`` (a player's home) answers the same for a game before and after it is archived:
    its projection, first and last entries come from the archived document once its keys are gone."""
    from referee.protocol.signing import public_key_b64

    game = _finished(http, run_worker, "fivetowers", 2, seed=5)
    store, messages, archive, key = _archive(app)
    listings = {seat: f"/players/{public_key_b64(k)}/games" for seat, k in enumerate(game.keys)}
    before = {seat: http.get(path) for seat, path in listings.items()}
    assert all(status == 200 and [g["game"] for g in body["games"]] == [game.game_id]
               for status, body in before.values()), before
    assert archive_game(store, messages, archive, game.game_id, key, older_than=0).action == "archived"
    assert _game_keys(store, game.game_id) == []
    assert {seat: http.get(path) for seat, path in listings.items()} == before


def _resigned(http, keys=None):
    """A towerup game of 2 seats, accepted and resigned at once (finished, the seed revealed)."""
    from referee.protocol.signing import RESIGN_CTX

    game = create_game(http, "towerup", 2, keys=keys)
    accept_all(http, game)
    _status, state = http.get(f"/games/{game.game_id}")
    envelope = {"v": 1, "ctx": RESIGN_CTX, "game": game.game_id, "seat": 0, "seq": state["seq"], "prev": state["head"]}
    status, receipt = http.post(f"/games/{game.game_id}/resign", signed(game.keys[0], envelope))
    assert status == 202 and receipt["status"] == "finished", receipt
    return game


def test_the_lobby_and_a_players_games_page_the_same_and_nothing_of_an_archived_game_stays_in_redis(
        app, http, run_worker):
    """The lobby's and a player's rows of an archived game leave Redis (``referee:games``, ``player:{<key>}:games``)
    for the archive's index, and every page answers the same: archived games keep their place among live ones."""
    from referee.protocol.signing import generate_key, public_key_b64
    from referee.store import keys as store_keys

    alice = generate_key()
    games = [_resigned(http, [alice, generate_key()]) for _ in range(4)]
    running = create_game(http, "towerup", 2, keys=[alice, generate_key()])
    run_worker()
    store, messages, archive, key = _archive(app)
    home = f"/players/{public_key_b64(alice)}/games"
    pages = ["/games?limit=100", *(f"/games?offset={o}&limit=2" for o in range(0, 6, 2)), "/games?offset=1&limit=3",
             home, f"{home}?offset=1&limit=2", f"{home}?status=finished"]
    before = {path: http.get(path) for path in pages}
    assert [g["game"] for g in before["/games?limit=100"][1]["games"]][:5] == [
        running.game_id, *(g.game_id for g in reversed(games))]
    for game in games[1::2]:
        assert archive_game(store, messages, archive, game.game_id, key, older_than=0).action == "archived"
    assert {path: http.get(path) for path in pages} == before
    live = store.live_games()
    for game in games[1::2]:
        assert game.game_id not in live and _game_keys(store, game.game_id) == []
        for k in game.keys:
            assert store.redis.zscore(store_keys.player_games_key(public_key_b64(k)), game.game_id) is None
    assert [g.game_id for g in games[::2]] == [g for g in reversed(live) if g in {x.game_id for x in games}]
    assert store.archived_games() == [g.game_id for g in games[1::2]]
    assert store.count_games() == len(live) + 2

    # another process's archive on the same folder sees the same listing; a line torn by a crash is skipped, and the
    # next put ends it first; the index rebuilt from the documents lists the same
    other = DirectoryArchive(archive.path)
    assert other.games() == archive.games() and other.player_games(public_key_b64(alice)) == archive.player_games(
        public_key_b64(alice))
    with open(archive.index_file, "ab") as index:
        index.write(b'{"game":"g_torn","lis')
    assert other.games() == archive.games() and other.count() == 2
    last = games[2]
    assert archive_game(store, messages, archive, last.game_id, key, older_than=0).action == "archived"
    assert other.count() == 3 and last.game_id in [g for g, _ in other.games()]
    assert {path: http.get(path) for path in pages} == before
    listed = other.games()
    assert DirectoryArchive(archive.path).rebuild_index() == 3
    assert DirectoryArchive(archive.path).games() == listed
