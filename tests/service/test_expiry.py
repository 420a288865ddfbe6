"""A game never accepted by every seat expires (issue 17 item 2): the referee logs ``expired`` at the
acceptance deadline (``created.accept_by``, from ``REFEREE_ACCEPT_WITHIN``), reveals the seed, and the game
leaves the lobby; a late acceptance is refused, and the verifier re-checks the expiry."""

from __future__ import annotations

from freezegun import freeze_time
from svc_helpers import Http, create_game, signed

from referee.protocol.signing import ACCEPT_CTX, b64url_encode
from referee.verify import verify_bundle
from referee.verify.bundle import build_bundle
from workers.deadlines import DeadlineScheduler


def _accept(http, game, seat):
    _s, state = http.get(f"/games/{game.game_id}")
    envelope = {"v": 1, "ctx": ACCEPT_CTX, "game": game.game_id, "seat": seat, "seq": state["seq"],
                "prev": state["head"], "entropy": b64url_encode(bytes([seat + 1]) * 32)}
    return http.post(f"/games/{game.game_id}/accept", signed(game.keys[seat], envelope))


def test_a_game_not_accepted_in_time_expires_and_leaves_the_lobby(make_app):
    app = make_app(REFEREE_ACCEPT_WITHIN=3600)
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    with freeze_time("2026-11-21T10:00:00Z"):
        game = create_game(http, "fivetowers", 2)
        other = create_game(http, "fivetowers", 2)
        assert _accept(http, game, 0)[0] == 202
    assert store.read_log(game.game_id)[0]["accept_by"] == "2026-11-21T11:00:00.000Z"
    with freeze_time("2026-11-21T10:59:59Z"):
        assert DeadlineScheduler(store).run_once() == []
    with freeze_time("2026-11-21T11:00:00.200Z"):
        done = DeadlineScheduler(store).run_once()
        assert sorted(d["appended"] for d in done) == [["expired", "revealed"], ["expired", "revealed"]]
        status, body = _accept(http, game, 1)
    assert status == 409 and body["error"]["code"] in ("game/not_waiting", "submission/stale")
    assert [e["type"] for e in store.read_log(game.game_id)] == ["created", "accepted", "expired", "revealed"]
    _s, lobby = http.get("/games")
    assert game.game_id not in [g["game"] for g in lobby["games"]] and other.game_id not in str(lobby)
    _s, state = http.get(f"/games/{game.game_id}")
    assert state["status"] == "expired"
    report = verify_bundle(build_bundle(store.read_log(game.game_id), app.extensions["referee.key"]))
    assert report.ok, [c.to_dict() for c in report.checks if not c.ok]


def test_a_late_acceptance_is_refused_even_before_the_expiry_is_logged(make_app):
    app = make_app(REFEREE_ACCEPT_WITHIN=60)
    http, store = Http(app.test_client()), app.extensions["referee.store"]
    with freeze_time("2026-11-21T10:00:00Z"):
        game = create_game(http, "fivetowers", 2)
    with freeze_time("2026-11-21T10:01:00.001Z"):
        status, body = _accept(http, game, 0)
    assert status == 409 and body["error"]["code"] == "game/expired"
    assert [e["type"] for e in store.read_log(game.game_id)] == ["created"]
