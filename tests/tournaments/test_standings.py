"""Points by rank (shared ranks, byes), exact numbers, and every tie-break decisive in one test."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.protocol.signing import sign
from referee.tournaments import tiebreaks as tb
from referee.tournaments.log import WITHDRAW_CTX, replay_tournament
from referee.tournaments.points import DEFAULT_POINTS, from_json, ranks_problem, seat_points, to_json
from referee.tournaments.seed import lot_order, tournament_seed
from referee.tournaments.standings import GameResult, compute_standings

from . import former_standings
from .helpers import Builder

SEED = tournament_seed(bytes(32), [bytes([7]) * 32])
KEYS = [f"key{i}" for i in range(8)]
PLAYERS = [{"key": k, "name": k.upper()} for k in KEYS]
POINTS = {str(n): DEFAULT_POINTS[n] for n in (2, 3, 4, 5)}


def standings(results, chain, byes=(), seed=SEED, bye_points=6):
    return compute_standings(PLAYERS, results, byes=list(byes), points=POINTS, bye_points=bye_points,
                             chain=chain, seed=seed)


def order(rows):
    return [r["key"] for r in rows]


def game(players, ranks, scores=None, rnd=1):
    return GameResult(f"g{players}{ranks}", rnd, tuple(players), tuple(ranks), tuple(scores) if scores else None)


def lot_pair():
    """(later, earlier): two players where the lot alone would put ``earlier`` first."""
    lot = lot_order(SEED, KEYS)
    return lot[1], lot[0]


# -- points --------------------------------------------------------------------------------------
def test_default_points_per_table_size():
    assert DEFAULT_POINTS == {2: [12, 0], 3: [12, 6, 0], 4: [12, 8, 4, 0], 5: [12, 9, 6, 3, 0]}


@pytest.mark.parametrize(("ranks", "table", "expected"), [
    ([1, 1, 3, 4], [12, 8, 4, 0], [10, 10, 4, 0]),
    ([1, 2, 2], [12, 6, 0], [12, 3, 3]),
    ([1, 1, 1], [12, 6, 0], [6, 6, 6]),
    ([1, 1], [12, 0], [6, 6]),
    ([1, 2, 2, 2, 5], [12, 9, 6, 3, 0], [12, 6, 6, 6, 0]),
    ([2, 1, 2, 2], [5, 3, 2, 0], [Fraction(5, 3), 5, Fraction(5, 3), Fraction(5, 3)]),
])
def test_a_shared_rank_gives_the_mean_of_the_places_it_shares(ranks, table, expected):
    assert seat_points(ranks, table) == [Fraction(x) for x in expected]


@pytest.mark.parametrize(("ranks", "ok"), [([1, 1, 3], True), ([1, 2, 2], True), ([2, 1], True),
                                           ([1, 3, 3], False), ([1, 1, 2], False), ([0, 1], False),
                                           ([1], False), ([1, True], False)])
def test_ranks_must_be_competition_ranks(ranks, ok):
    assert (ranks_problem(ranks, 2 if len(ranks) == 2 else 3) is None) is ok


@given(st.fractions(max_denominator=60))
def test_exact_numbers_round_trip_through_json(value):
    assert from_json(to_json(value)) == value
    assert isinstance(to_json(value), int) == (value.denominator == 1)


def test_byes_score_the_bye_points_and_shared_ranks_show_as_exact_fractions():
    rows = standings([game(["key0", "key1", "key2"], [1, 1, 3])], [tb.LOT], byes=["key3"])
    by_key = {r["key"]: r for r in rows}
    assert by_key["key0"]["points"] == 9 and by_key["key1"]["points"] == 9  # (12 + 6) / 2
    assert by_key["key3"]["points"] == 6
    custom = compute_standings(PLAYERS, [game(["key0", "key1", "key2"], [1, 1, 3])], byes=[],
                               points={"3": [5, 2, 0]}, bye_points=0, chain=[tb.LOT], seed=SEED)
    assert {r["key"]: r["points"] for r in custom}["key0"] == "7/2"


# -- every tie-break decisive --------------------------------------------------------------------
def test_lot_alone_orders_players_tied_on_everything_and_is_null_before_the_reveal():
    rows = standings([], [tb.LOT])
    assert order(rows) == lot_order(SEED, KEYS)
    assert [r["tie_breaks"]["lot"] for r in rows] == list(range(1, 9))
    assert [r["rank"] for r in rows] == list(range(1, 9))
    hidden = standings([], [tb.LOT], seed=None)
    assert order(hidden) == KEYS and all(r["tie_breaks"]["lot"] is None for r in hidden)


def test_game_score_decides():
    a, b = lot_pair()
    c, d = [k for k in KEYS if k not in (a, b)][:2]
    results = [game([a, c], [1, 2], [50, 10]), game([b, d], [1, 2], [30, 20])]
    assert order(standings(results, [tb.LOT]))[:2] == [b, a]
    rows = standings(results, [tb.GAME_SCORE, tb.LOT])
    assert order(rows)[:2] == [a, b]
    assert rows[0]["tie_breaks"] == {"game_score": 50, "lot": 2}


def test_opponents_points_decides():
    a, b = lot_pair()
    c, d, e = [k for k in KEYS if k not in (a, b)][:3]
    results = [game([a, c], [1, 2]), game([b, d], [1, 2]), game([c, e], [1, 2])]  # c ends with 12, d with 0
    assert order(standings(results, [tb.LOT]))[:2] == [b, a]
    rows = standings(results, [tb.OPPONENTS_POINTS, tb.LOT])
    assert order(rows).index(a) < order(rows).index(b)
    values = {r["key"]: r["tie_breaks"]["opponents_points"] for r in rows}
    assert values[a] == 12 and values[b] == 0


def test_wins_decide():
    a, b = lot_pair()
    x, y = [k for k in KEYS if k not in (a, b)][:2]
    results = [game([a, b, x], [1, 2, 3]), game([a, b, y], [3, 2, 1])]  # a: 12 + 0, b: 6 + 6
    rows = standings(results, [tb.WINS, tb.LOT])
    by_key = {r["key"]: r for r in rows}
    assert by_key[a]["points"] == by_key[b]["points"] == 12
    assert (by_key[a]["tie_breaks"]["wins"], by_key[b]["tie_breaks"]["wins"]) == (1, 0)
    assert by_key[a]["rank"] < by_key[b]["rank"]
    assert order(standings(results, [tb.LOT])).index(b) < order(standings(results, [tb.LOT])).index(a)


def test_head_to_head_decides_and_counts_only_the_tied_group():
    a, b = lot_pair()
    c, d = [k for k in KEYS if k not in (a, b)][:2]
    results = [game([a, b], [1, 2]), game([b, c], [1, 2]), game([a, d], [2, 1])]  # a: 12, b: 12, d: 12
    rows = standings(results, [tb.HEAD_TO_HEAD, tb.LOT])
    top = {r["key"]: r["tie_breaks"]["head_to_head"] for r in rows[:3]}
    # a, b and d are tied on 12: a beat b (1), d beat a (1), b lost to a (0); c is not in the group
    assert top == {a: 1, b: 0, d: 1}
    assert order(rows).index(a) < order(rows).index(b)
    assert order(standings(results, [tb.LOT])).index(b) < order(standings(results, [tb.LOT])).index(a)


def test_head_to_head_counts_half_for_a_shared_rank():
    a, b = lot_pair()
    rows = standings([game([a, b, "key7" if "key7" not in (a, b) else "key6"], [1, 1, 3])], [tb.HEAD_TO_HEAD, tb.LOT])
    assert {r["key"]: r["tie_breaks"]["head_to_head"] for r in rows[:2]} == {a: "1/2", b: "1/2"}


def test_average_rank_decides_lower_first_and_is_null_without_games():
    a, b = lot_pair()
    x, y, z = [k for k in KEYS if k not in (a, b)][:3]
    results = [game([a, x, y], [1, 2, 3]), game([b, x, z], [2, 1, 3]), game([b, y, z], [2, 1, 3])]
    rows = standings(results, [tb.AVERAGE_RANK, tb.LOT])
    values = {r["key"]: r["tie_breaks"]["average_rank"] for r in rows}
    assert values[a] == 1 and values[b] == 2
    assert order(rows).index(a) < order(rows).index(b)
    idle = [k for k in KEYS if k not in (a, b, x, y, z)]
    assert all(values[k] is None for k in idle)
    assert order(rows)[-len(idle):] == [k for k in lot_order(SEED, KEYS) if k in idle]


def test_every_value_of_the_chain_is_shown_in_every_row():
    rows = standings([game(["key0", "key1", "key2", "key3"], [1, 2, 2, 4], [9, 5, 5, 1])], list(tb.DEFAULT_CHAIN))
    assert all(list(r["tie_breaks"]) == list(tb.DEFAULT_CHAIN) for r in rows)
    top = rows[0]
    assert top["key"] == "key0" and top["points"] == 12
    assert top["tie_breaks"]["opponents_points"] == 12  # 6 + 6 + 0
    assert rows[1]["tie_breaks"]["average_rank"] == 2


def test_chain_rules():
    assert tb.resolve_chain(None) == tb.DEFAULT_CHAIN
    assert tb.resolve_chain(["wins"]) == ["wins", "lot"]
    assert tb.chain_problem(["lot", "wins"]) == "lot must be the last tie-break"
    assert "unknown" in tb.chain_problem(["elo", "lot"])
    assert "twice" in tb.chain_problem(["wins", "wins", "lot"])


# -- the fold's incremental standings equal the full recompute ---------------------------------------
def _competition_ranks(scores):
    return [1 + sum(1 for other in scores if other > s) for s in scores]


def former(state, public=True):
    """The standings as the former code computed them (every result, every bye)."""
    created = state.created
    byes = [k for rnd in state.rounds for k in (*rnd.byes, *rnd.extra_byes)]
    return former_standings.compute_standings(
        created["players"], state.results(), byes=byes, points=created["points"], bye_points=created["bye_points"],
        chain=created["tie_breaks"], seed=state.seed if (state.revealed or not public) else None)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_the_incremental_standings_equal_the_full_recompute_on_random_tournaments(data):
    """Random tournaments (format, table sizes, results with shared ranks and missing scores, byes,
    withdrawals, ``bye`` entries): after every result the standings the fold keeps result by result are
    the full recompute's, with and without the lot, and the former code's after every round; so is a
    fresh replay of the log (the verifier's)."""
    kind = data.draw(st.sampled_from(["swiss", "round_robin", "series"]), label="kind")
    n = data.draw(st.integers(3, 5 if kind == "series" else 9), label="players")
    sizes = data.draw(st.sampled_from([[2], [3], [4], [3, 2], [4, 3]]), label="table_sizes")
    chain = data.draw(st.permutations(list(tb.DEFAULT_CHAIN[:-1])), label="chain")[:data.draw(st.integers(0, 5))]
    fmt = {"kind": kind, "rounds": data.draw(st.integers(1, 4), label="rounds")}
    if kind != "series":
        fmt["table_sizes"] = sizes
    b = Builder(n, fmt=fmt, tie_breaks=[*chain, tb.LOT], bye_points=data.draw(st.integers(0, 12)))
    b.join_all()
    checked = 0
    while (due := b.replayer.due()) is not None and due["type"] == "paired":
        assert b.pair().status == "ok"
        rnd = b.replayer.rounds[-1]
        for table in rnd.tables:
            if data.draw(st.integers(0, 9), label="withdraw") == 0:
                leaving = table["players"][0]
                if leaving not in b.replayer.withdrawn:
                    env = b.envelope(WITHDRAW_CTX, key=leaving)
                    sig = sign(b.key_of(leaving), env)
                    assert b.append("withdrawn", key=leaving, submission={"envelope": env, "sig": sig}).status == "ok"
            scores = data.draw(st.lists(st.integers(0, 3), min_size=len(table["players"]),
                                        max_size=len(table["players"])), label="scores")
            shown = scores if data.draw(st.booleans(), label="with scores") else None
            assert b.finish_game(table["game"], _competition_ranks(scores), shown).status == "ok"
            rows = b.replayer.standings(public=False)
            assert rows == b.replayer.recomputed_standings(public=False) == former(b.replayer, public=False)
            ranking = b.replayer._tally.rows(b.replayer.created["tie_breaks"], b.replayer.seed, keys_only=True)
            assert ranking == [row["key"] for row in rows]  # what the next pairing ranks by
            checked += 1
        seated = {k for t in rnd.tables for k in t["players"]} | set(rnd.byes)
        idle = [k for k in b.public if k not in seated]
        if idle and data.draw(st.booleans(), label="bye entry"):
            assert b.append("bye", round=rnd.number, key=idle[0], reason="late pairing").status == "ok"
        assert b.append("round_closed", round=rnd.number, reason="complete").status == "ok"
        assert b.replayer.standings() == b.replayer.recomputed_standings() == former(b.replayer)
    assert b.append("finished").status == "ok"
    assert b.append("revealed", server_seed=b.server_seed.hex(), reason="finished").status == "ok"
    final = b.replayer.standings()
    assert final == b.replayer.recomputed_standings() == former(b.replayer) and final[0]["tie_breaks"]["lot"]
    assert replay_tournament(b.log).standings() == final
    assert checked == sum(len(r.tables) for r in b.replayer.rounds)
