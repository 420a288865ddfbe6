"""Cached folds keep only their last verdicts (issue 13: the memory of a cached game, and the copy each
accept makes of it, must not grow with the log). A trimmed fold must agree with a full one on everything
the service and the workers read; the stored projection keeps every verdict."""

from __future__ import annotations

import base64
import os
import random

import pytest
import redis as redis_lib
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games import ruleset
from referee.games_service import GameService, fold, projection_of
from referee.games_service.folds import KEEP_VERDICTS
from referee.protocol.signing import ACCEPT_CTX, MOVE_CTX, generate_key, public_key_b64, sign
from referee.replay import FINISHED, LogReplayer
from referee.store import RedisStore, keys
from workers.projector import Projector


def submit(key, game_id: str, seat: int, replayer: LogReplayer, ctx: str = MOVE_CTX, **extra) -> dict:
    envelope = {"v": 1, "ctx": ctx, "game": game_id, "seat": seat, "seq": replayer.seq, "prev": replayer.head,
                **extra}
    return {"envelope": envelope, "sig": sign(key, envelope)}


def play(service: GameService, game_id: str, seat_keys, rng: random.Random, moves: int, *,
         projector: Projector | None = None) -> None:
    for n in range(moves):
        replayer = service.fold(game_id)
        if replayer.status != "active":
            return
        seat = replayer.to_move()
        move = rng.choice(replayer.game.legal_moves())
        status, _receipt = service.submit_move(game_id, submit(seat_keys[seat], game_id, seat, replayer, move=move))
        assert status == 202
        if projector is not None and n % 7 == 0:
            projector.catch_up(game_id)


@pytest.fixture
def redis_store(redis_url):
    store = RedisStore(redis_lib.Redis.from_url(redis_url))
    yield store
    store.close()


def recorded_game(service: GameService, rng: random.Random) -> tuple[str, list]:
    rules = ruleset("fivetowers")
    deck = [card["id"] for card in rules.components()["cards"] if card["min_players"] <= 2]
    rng.shuffle(deck)
    seat_keys = [generate_key() for _ in range(2)]
    created = service.create_game({"ruleset": "fivetowers", "deck": deck,
                                   "seats": [{"name": f"p{i}", "key": public_key_b64(k)}
                                             for i, k in enumerate(seat_keys)]})
    return created["game"], seat_keys


def test_cached_folds_are_trimmed_and_the_projection_keeps_every_verdict(redis_store):
    service = GameService(redis_store)
    projector = Projector(redis_store)
    rng = random.Random(3)
    game_id, seat_keys = recorded_game(service, rng)
    play(service, game_id, seat_keys, rng, 6 * KEEP_VERDICTS, projector=projector)
    projector.catch_up(game_id)
    tip = redis_store.tip(game_id)
    assert tip.seq > 4 * KEEP_VERDICTS
    cached = service.cache.peek(game_id)
    assert cached.seq == tip.seq and cached.head == tip.head
    assert len(cached.verdicts) <= 2 * KEEP_VERDICTS and cached.dropped > 0  # was: every verdict of the log
    worker_fold = projector._cache[game_id]
    assert len(worker_fold.verdicts) <= 2 * KEEP_VERDICTS and worker_fold.dropped > 0
    full = fold(redis_store, game_id)
    stored = redis_store.read_projection(game_id, with_verdicts=True)
    assert stored["verdicts"] == [v.to_dict() for v in full.verdicts]  # every verdict, in order
    for name in ("seq", "head", "status", "to_move", "view", "last_verdict"):
        assert stored[name] == projection_of(full)[name] == projection_of(cached)[name], name

    # the work Redis lost the projection: the trimmed fold cannot write from 0, so the worker folds afresh
    k = keys.game_keys(game_id)
    redis_store.work.delete(k.projection, k.verdicts)
    projector.catch_up(game_id)
    assert redis_store.read_projection(game_id, with_verdicts=True)["verdicts"] == [v.to_dict() for v in full.verdicts]


def test_a_trimmed_seeded_game_reveals_its_seed_once(redis_store):
    service = GameService(redis_store)
    rng = random.Random(4)
    seat_keys = [generate_key() for _ in range(2)]
    game_id = service.create_game({"ruleset": "fivetowers", "seats": [
        {"name": f"p{i}", "key": public_key_b64(k)} for i, k in enumerate(seat_keys)]})["game"]
    for seat, key in enumerate(seat_keys):
        entropy = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
        service.accept(game_id, submit(key, game_id, seat, service.fold(game_id), ACCEPT_CTX, entropy=entropy))
    play(service, game_id, seat_keys, rng, 5000)
    cached = service.cache.peek(game_id)
    assert cached.status == FINISHED and cached.dropped > 0 and cached.revealed  # trimmed, yet it knows
    Projector(redis_store).catch_up(game_id)  # the worker looks for what the referee owes: nothing more
    service.fold(game_id)
    entries = redis_store.read_log(game_id)
    assert [e["type"] for e in entries].count("revealed") == 1


@pytest.fixture(scope="module")
def long_log():
    """A real log (5 Towers, recorded) of a few hundred entries, played through the in-memory store."""
    from referee.store import MemoryStore

    store = MemoryStore()
    service = GameService(store)
    rng = random.Random(5)
    game_id, seat_keys = recorded_game(service, rng)
    play(service, game_id, seat_keys, rng, 400)
    return store.read_log(game_id)


@settings(max_examples=40, deadline=None)
@given(keep=st.integers(min_value=1, max_value=40), every=st.integers(min_value=1, max_value=50))
def test_a_trimmed_fold_agrees_with_a_full_one(long_log, keep, every):
    full, trimmed = LogReplayer(), LogReplayer()
    for n, entry in enumerate(long_log):
        assert trimmed.feed(entry) == full.feed(entry)
        if n % every == 0:
            trimmed.trim(keep)
        assert len(trimmed.verdicts) <= 2 * keep + every  # bounded, whatever the length of the log
        assert (trimmed.seq, trimmed.head, trimmed.status, trimmed.to_move(), trimmed.revealed, trimmed.verdicts[-1]) \
            == (full.seq, full.head, full.status, full.to_move(), full.revealed, full.verdicts[-1])
    assert trimmed.verdicts_since(trimmed.dropped) == full.verdicts[trimmed.dropped:]
    assert trimmed.result() == full.result() and trimmed.game.view() == full.game.view()
    if trimmed.dropped:
        with pytest.raises(ValueError, match="trimmed"):
            trimmed.verdicts_since(trimmed.dropped - 1)
