"""One request per move (issue 13 item 3): with ``?legal=1`` a move's 2xx carries what the client needs for
its next decision — the new ``seq``/``head``, the seat to move and its legal moves — so a player or a bot
never needs a second request."""

from __future__ import annotations

from svc_helpers import accept_all, create_game, move_envelope, signed


def test_the_answer_carries_the_next_position_and_its_legal_moves(http):
    game = create_game(http, "fivetowers", 3)
    accept_all(http, game)
    _s, legal = http.get(f"/games/{game.game_id}/legal-moves")
    for _ in range(8):
        seat = legal["to_move"]
        envelope = move_envelope(game.game_id, seat, legal["seq"], legal["head"], legal["moves"][-1])
        status, answer = http.post(f"/games/{game.game_id}/moves?legal=1", signed(game.keys[seat], envelope))
        assert status == 202, answer
        _s, after = http.get(f"/games/{game.game_id}/legal-moves")
        assert (answer["seq"], answer["head"], answer["to_move"]) == (after["seq"], after["head"], after["to_move"])
        assert answer["legal_moves"] == after["moves"]
        legal = {"to_move": answer["to_move"], "seq": answer["seq"], "head": answer["head"],
                 "moves": answer["legal_moves"]}  # the next move is made from the answer alone
    status, answer = http.post(f"/games/{game.game_id}/moves", signed(game.keys[legal["to_move"]], move_envelope(
        game.game_id, legal["to_move"], legal["seq"], legal["head"], legal["moves"][0])))
    assert status == 202 and "legal_moves" not in answer  # only when asked
