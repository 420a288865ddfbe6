"""Rule 2 of the 2-seat Swiss pairing (``referee/tournaments/lexmatch.py``, issue 28 item 3): of the least-cost
perfect matchings of the window graph, the first in the standings' order — checked against every perfect
matching of small graphs, against networkx's optimum on Swiss histories, and in whole tournaments."""

from __future__ import annotations

import copy
import hashlib
import random
from collections import Counter

import networkx as nx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.protocol.signing import generate_key, public_key_b64
from referee.tournaments import pairing as pr
from referee.tournaments import swiss
from referee.tournaments.lexmatch import lex_matching, matching_cost
from referee.tournaments.pairing import met_by_place
from referee.tournaments.spec import SpecError, resolve_tournament

from .helpers import Builder, by_key_order
from .test_pairing import _paired_history


def _every_matching(n: int, window: int):
    """Every perfect matching of places 0 … n − 1 with pairs at most ``window`` apart, as ``mate`` lists, in the
    rule's order (the first unpaired place takes each possible opponent, lowest first)."""
    mate = [-1] * n

    def walk(i: int):
        while i < n and mate[i] != -1:
            i += 1
        if i == n:
            yield list(mate)
            return
        for j in range(i + 1, min(n, i + window + 1)):
            if mate[j] == -1:
                mate[i], mate[j] = j, i
                yield from walk(i + 1)
                mate[i] = mate[j] = -1

    yield from walk(0)


def _random_meetings(rng: random.Random, n: int, density: float) -> dict[int, dict[int, int]]:
    met_of: dict[int, dict[int, int]] = {}
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < density:
                times = rng.choice((1, 1, 1, 2))
                met_of.setdefault(i, {})[j] = times
                met_of.setdefault(j, {})[i] = times
    return met_of


@settings(max_examples=300, deadline=None)
@given(half=st.integers(1, 6), window=st.integers(1, 11), density=st.sampled_from([0.0, 0.15, 0.35, 0.7]),
       slack=st.sampled_from([0, 1, 5, 40, 10**6]), seed=st.integers(0, 2**32))
def test_the_programme_finds_the_first_least_cost_matching_of_every_small_graph(half, window, density, slack,
                                                                                 seed):
    """Every perfect matching enumerated: the programme returns the least-cost one that comes first in the
    standings' order, whatever the bound it is given (the optimum itself, or far above)."""
    n = 2 * half
    met_of = _random_meetings(random.Random(seed), n, density)
    big = n**3 + 1
    every = list(_every_matching(n, window))
    least = min(matching_cost(m, met_of, big) for m in every)
    first = next(m for m in every if matching_cost(m, met_of, big) == least)
    assert lex_matching(n, met_of, big, window, least + slack) == first


def test_a_bound_below_the_optimum_is_refused():
    met_of = {0: {1: 1}, 1: {0: 1}}  # the only neighbours met: the least cost is 0–2, 1–3 (8)
    assert lex_matching(4, met_of, 65, 3, 8) == [2, 3, 0, 1]
    with pytest.raises(ValueError, match="costs at most 7"):
        lex_matching(4, met_of, 65, 3, 7)
    with pytest.raises(ValueError, match="odd"):
        lex_matching(3, {}, 28, 3, 100)


def test_of_a_tie_the_first_player_meets_the_best_ranked_opponent():
    """Neighbours 2–3 met: mending upwards (0–2, 1–3) or downwards (2–4, 3–5) costs the same; rule 2 mends
    where the better-ranked players keep their neighbours."""
    met_of = {2: {3: 1}, 3: {2: 1}}
    assert lex_matching(6, met_of, 6**3 + 1, 40, 100) == [1, 0, 4, 5, 2, 3]


def _networkx_optimum(ranked, met):
    """networkx's least-cost perfect matching of the window graph (rule 1's, when it is the only one)."""
    n, top = len(ranked), max(met.values(), default=0)
    big = n**3 + 1
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    met_of = met_by_place(ranked, met)
    for i in range(n):
        for j in range(i + 1, min(n, i + 1 + pr.SWISS_WINDOW)):
            graph.add_edge(i, j, weight=big * (1 + top - met_of.get(i, {}).get(j, 0)) - (j - i) ** 2)
    mate = [-1] * n
    for i, j in nx.max_weight_matching(graph, maxcardinality=True):
        mate[i], mate[j] = j, i
    return mate, met_of, big


@settings(max_examples=12, deadline=None)
@given(half=st.integers(10, 60), rounds=st.integers(1, 12), seed=st.integers(0, 2**32))
def test_rule_two_is_least_cost_and_first_where_networkx_is_least_cost(half, rounds, seed):
    """Swiss sections paired by rule 2 round after round: each pairing costs what networkx's optimum costs,
    comes no later in the standings' order, and no repeat meeting is made while avoidable."""
    met, ranked = _paired_history(random.Random(seed), 2 * half, rounds, rule=2)
    tables = swiss.swiss_two(ranked, met, 2)
    place = {k: i for i, k in enumerate(ranked)}
    mate = [-1] * len(ranked)
    for a, b in tables:
        mate[place[a]], mate[place[b]] = place[b], place[a]
    assert sorted(mate) == list(range(len(ranked)))
    theirs, met_of, big = _networkx_optimum(ranked, met)
    assert matching_cost(mate, met_of, big) == matching_cost(theirs, met_of, big)
    assert mate <= theirs


def test_rule_one_is_unchanged_and_rule_two_differs_only_among_ties():
    """Where rule 1's pairing is the only optimum, both rules agree; where networkx chose another optimum,
    rule 2 takes the first (a section of 120 players, 9 rounds, paired by rule 1)."""
    met, ranked = _paired_history(random.Random(7), 120, 9)
    one, two = swiss.swiss_two(ranked, met, 1), swiss.swiss_two(ranked, met, 2)
    met_of, big = met_by_place(ranked, met), len(ranked) ** 3 + 1
    place = {k: i for i, k in enumerate(ranked)}

    def mate_of(tables):
        mate = [-1] * len(ranked)
        for a, b in tables:
            mate[place[a]], mate[place[b]] = place[b], place[a]
        return mate

    assert matching_cost(mate_of(one), met_of, big) == matching_cost(mate_of(two), met_of, big)
    assert mate_of(two) <= mate_of(one)
    assert swiss.swiss_two(ranked, Counter(), 1) == swiss.swiss_two(ranked, Counter(), 2)  # no one met: 1–2, 3–4, …


def _body(fmt):
    return {"ruleset": "fivetowers", "players": [{"name": f"P{i}", "key": k} for i, k in enumerate(_KEYS)],
            "format": fmt}


_KEYS = [public_key_b64(generate_key()) for _ in range(4)]


def test_created_names_the_rule_and_rule_one_is_written_as_before():
    """New Swiss tournaments at tables of 2 are paired by rule 2 (``format.pairing``); rule 1, asked for, is
    written as no field, as every tournament made before rule 2 was; other formats take no rule."""
    assert resolve_tournament(_body({"kind": "swiss", "table_sizes": [2]}))["format"]["pairing"] == 2
    assert resolve_tournament(_body({"kind": "swiss", "table_sizes": [2], "pairing": 2}))["format"]["pairing"] == 2
    assert "pairing" not in resolve_tournament(_body({"kind": "swiss", "table_sizes": [2], "pairing": 1}))["format"]
    assert "pairing" not in resolve_tournament(_body({"kind": "swiss", "table_sizes": [4]}))["format"]
    assert "pairing" not in resolve_tournament(_body({"kind": "round_robin", "table_sizes": [2]}))["format"]
    for fmt, problem in (({"kind": "swiss", "table_sizes": [2], "pairing": 3}, "pairing is one of [1, 2]"),
                         ({"kind": "swiss", "table_sizes": [2], "pairing": "2"}, "pairing is one of [1, 2]"),
                         ({"kind": "swiss", "table_sizes": [4], "pairing": 2}, "tables of 2"),
                         ({"kind": "round_robin", "table_sizes": [2], "pairing": 1}, "tables of 2")):
        with pytest.raises(SpecError) as caught:
            resolve_tournament(_body(fmt))
        assert any(p["path"] == "$.format.pairing" and problem in p["problem"] for p in caught.value.problems), fmt


def test_a_tournament_is_paired_and_checked_by_the_rule_its_created_names():
    """The same 12 players, 2-seat Swiss of 8 rounds, by rule 1 (``"pairing": 1``: as before) and by rule 2: every
    round paired by its own rule is accepted; in rule 2's tournament, the round where the rules differ (a
    repeat meeting mended upwards or downwards: round 4 with these keys, fixed so that there is one) is refused
    when paired by rule 1's choice."""
    keys = [Ed25519PrivateKey.from_private_bytes(hashlib.sha256(f"lex-0-{i}".encode()).digest()) for i in range(12)]
    one = Builder(12, keys=keys, fmt={"kind": "swiss", "rounds": 8, "table_sizes": [2], "pairing": 1})
    two = Builder(12, keys=keys, fmt={"kind": "swiss", "rounds": 8, "table_sizes": [2]})
    assert "pairing" not in one.created_payload["format"] and two.created_payload["format"]["pairing"] == 2
    one.join_all()
    two.join_all()
    refused = 0
    for _ in range(8):
        due = two.replayer.due()
        former = copy.deepcopy(two.replayer)
        del former.created["format"]["pairing"]
        by_rule_one = former.due()["pairing"]
        if by_rule_one.tables != due["pairing"].tables:
            tables = [{"game": f"g_r{due['round']}_t{i + 1}", "players": t} for i, t in enumerate(by_rule_one.tables)]
            verdict, _replica = two.attempt(two.entry("paired", round=due["round"], tables=tables,
                                                      byes=by_rule_one.byes))
            assert verdict.status != "ok"
            refused += 1
        for b in (one, two):
            b.play_round(by_key_order)
    assert refused, "no round where the two rules differ: the test shows nothing"
    for b in (one, two):
        b.play_out(by_key_order)  # what is left: the end and the seed
        assert b.replayer.status == "finished" and b.replayer.revealed
