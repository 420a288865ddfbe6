"""Pairing invariants: table sizes, round robin, Swiss, series — and determinism."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.tournaments import pairing as pr
from referee.tournaments import swiss
from referee.tournaments import tables as seating
from referee.tournaments.blossom import swiss_matching
from referee.tournaments.pairing import (
    ROUND_ROBIN,
    SERIES,
    SWISS,
    Pairing,
    meetings,
    pair_key,
    pair_round,
    round_robin_schedule,
    table_sizes,
)
from referee.tournaments.seed import lot_order, tournament_seed

from . import former_pairing

SEED = tournament_seed(bytes(32), [bytes([i]) * 32 for i in range(3)])
ALLOWED = st.sampled_from([[2], [3], [3, 2], [4], [4, 3], [4, 3, 2], [5, 4, 3, 2], [5, 3], [4, 2]])


def players(n: int) -> list[str]:
    return [f"k{i:03d}" for i in range(n)]


def fewest_byes(n: int, allowed: list[int]) -> int:
    """Brute force: the fewest players left without a table."""
    for byes in range(n + 1):
        m = n - byes
        if any(sum(c) == m for t in range(m // min(allowed) + 1)
               for c in itertools.combinations_with_replacement(allowed, t)):
            return byes
    return n


# -- table sizes ---------------------------------------------------------------------------------
def test_table_sizes_examples_from_the_issue_and_docs():
    assert table_sizes(10, [4, 3, 2]) == ([4, 3, 3], 0)
    assert table_sizes(10, [4, 3]) == ([4, 3, 3], 0)
    assert table_sizes(9, [3]) == ([3, 3, 3], 0)
    assert table_sizes(11, [2]) == ([2] * 5, 1)
    assert table_sizes(8, [5, 4, 3]) == ([4, 4], 0)  # most even of the two-table splits
    assert table_sizes(14, [5, 4, 3, 2]) == ([5, 5, 4], 0)
    assert table_sizes(1, [2]) == ([], 1)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 40), allowed=ALLOWED)
def test_table_sizes_seat_everyone_they_can_at_allowed_tables(n, allowed):
    sizes, byes = table_sizes(n, allowed)
    assert sum(sizes) + byes == n
    assert all(s in allowed for s in sizes)
    assert sizes == sorted(sizes, reverse=True)
    assert byes == fewest_byes(n, allowed)


# -- every format: one seat or one bye per active player per round -------------------------------
@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from([ROUND_ROBIN, SWISS]), n=st.integers(2, 14), allowed=ALLOWED,
       rounds=st.integers(1, 4), withdrawn=st.integers(0, 2))
def test_every_active_player_sits_once_or_has_a_bye(kind, n, allowed, rounds, withdrawn):
    keys = players(n)
    history: list[Pairing] = []
    gone = keys[:withdrawn] if withdrawn < n - 1 else []
    ranking = lot_order(SEED, keys)
    for r in range(1, rounds + 1):
        active = [k for k in keys if k not in gone] if r > 1 else keys
        pairing = pair_round(kind, round_no=r, players=keys, active=active, allowed=allowed, rounds=rounds,
                             history=history, ranking=ranking, seed=SEED)
        seated = [k for t in pairing.tables for k in t]
        assert sorted(seated + pairing.byes) == sorted(active)
        assert all(len(t) in allowed for t in pairing.tables)
        again = pair_round(kind, round_no=r, players=keys, active=active, allowed=allowed, rounds=rounds,
                           history=history, ranking=ranking, seed=SEED)
        assert again == pairing  # same log + seed → same pairing
        history.append(pairing)
        ranking = ranking[1:] + ranking[:1]


def test_a_different_seed_gives_a_different_draw():
    keys = players(12)
    a = pair_round(SWISS, round_no=1, players=keys, active=keys, allowed=[4], rounds=3, history=[],
                   ranking=lot_order(SEED, keys), seed=SEED)
    other = tournament_seed(bytes(32), [bytes([9]) * 32])
    b = pair_round(SWISS, round_no=1, players=keys, active=keys, allowed=[4], rounds=3, history=[],
                   ranking=lot_order(other, keys), seed=other)
    assert a != b


# -- round robin ---------------------------------------------------------------------------------
def pair_counts(keys, schedule):
    met = meetings(schedule)
    return [met[pair_key(a, b)] for a, b in itertools.combinations(keys, 2)]


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 16))
def test_two_player_round_robin_meets_everyone_exactly_once(n):
    keys = players(n)
    rounds = n - 1 if n % 2 == 0 else n
    schedule = round_robin_schedule(keys, [2], rounds, SEED)
    assert set(pair_counts(keys, schedule)) == {1}
    byes = Counter(k for rnd in schedule for k in rnd.byes)
    assert all(v == 1 for v in byes.values()) and len(byes) == (n if n % 2 else 0)


def test_round_robin_nine_players_at_tables_of_three_every_pair_meets_once():
    keys = players(9)
    schedule = [pair_round(ROUND_ROBIN, round_no=r, players=keys, active=keys, allowed=[3], rounds=4, history=[],
                           ranking=keys, seed=SEED) for r in range(1, 5)]
    assert all(len(rnd.tables) == 3 and not rnd.byes for rnd in schedule)
    assert set(pair_counts(keys, schedule)) == {1}


def test_round_robin_sixteen_players_at_tables_of_four_meet_once_in_five_rounds():
    keys = players(16)
    assert set(pair_counts(keys, round_robin_schedule(keys, [4], 5, SEED))) == {1}


def test_round_robin_larger_tables_cover_every_pair_when_rounds_allow():
    # 20 players at tables of 4, 8 rounds (each plays 24 seats against 19 others): everyone meets
    # everyone, nobody more than twice
    keys = players(20)
    counts = pair_counts(keys, round_robin_schedule(keys, [4], 8, SEED))
    assert min(counts) == 1 and max(counts) == 2


def test_round_robin_drops_withdrawn_players_and_a_table_too_small_becomes_byes():
    keys = players(6)
    full = pair_round(ROUND_ROBIN, round_no=2, players=keys, active=keys, allowed=[3], rounds=5, history=[],
                      ranking=keys, seed=SEED)
    gone = full.tables[0][:2]
    left = [k for k in keys if k not in gone]
    reduced = pair_round(ROUND_ROBIN, round_no=2, players=keys, active=left, allowed=[3], rounds=5, history=[],
                         ranking=keys, seed=SEED)
    assert reduced.tables == [full.tables[1]]
    assert reduced.byes == [k for k in full.tables[0] if k not in gone]


# -- Swiss ---------------------------------------------------------------------------------------
def swiss_rounds(n, allowed, rounds):
    keys = players(n)
    history: list[Pairing] = []
    ranking = lot_order(SEED, keys)
    for r in range(1, rounds + 1):
        history.append(pair_round(SWISS, round_no=r, players=keys, active=keys, allowed=allowed, rounds=rounds,
                                  history=history, ranking=ranking, seed=SEED))
    return keys, history


def test_swiss_ten_players_tables_of_four_three_three_fewest_repeats():
    _, history = swiss_rounds(10, [4, 3], 4)
    for rnd in history:
        assert sorted(len(t) for t in rnd.tables) == [3, 3, 4]
    # Round 2 cannot avoid every repeat: a table of 4 draws on 3 tables of round 1, so two of its players
    # met already. The pairing keeps it to that one repeated pair.
    round_1 = meetings(history[:1])
    repeats = sum(1 for t in history[1].tables for a, b in itertools.combinations(t, 2) if round_1[pair_key(a, b)])
    assert repeats == 1


def test_swiss_two_player_tables_never_repeat_while_avoidable():
    _, history = swiss_rounds(8, [2], 5)
    met = meetings(history)
    assert max(met.values()) == 1


def test_swiss_byes_go_to_the_lowest_ranked_player_without_one():
    keys = players(7)
    ranking = list(keys)  # k000 leads, k006 last
    history: list[Pairing] = []
    byes = []
    for r in range(1, 8):
        pairing = pair_round(SWISS, round_no=r, players=keys, active=keys, allowed=[2], rounds=7, history=history,
                             ranking=ranking, seed=SEED)
        history.append(pairing)
        byes += pairing.byes
    assert byes == list(reversed(keys))  # the lowest without a bye each round: never twice while avoidable
    # round 8: everyone had one; the lowest ranked gets the second
    eighth = pair_round(SWISS, round_no=8, players=keys, active=keys, allowed=[2], rounds=8, history=history,
                        ranking=ranking, seed=SEED)
    assert eighth.byes == ["k006"]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 13), allowed=st.sampled_from([[2], [4], [5, 3]]), seed_byte=st.integers(0, 255))
def test_swiss_byes_never_twice_while_someone_has_none(n, allowed, seed_byte):
    seed = tournament_seed(bytes([seed_byte]) * 32, [])
    keys = players(n)
    history: list[Pairing] = []
    ranking = lot_order(seed, keys)
    had: Counter[str] = Counter()
    for r in range(1, 6):
        pairing = pair_round(SWISS, round_no=r, players=keys, active=keys, allowed=allowed, rounds=5,
                             history=history, ranking=ranking, seed=seed)
        for key in pairing.byes:
            if had[key]:
                assert all(had[k] for k in keys if k not in pairing.byes), "a second bye while someone had none"
        had.update(pairing.byes)
        history.append(pairing)
        ranking = lot_order(tournament_seed(bytes([r]) * 32, []), keys)


def test_swiss_pairs_a_thousand_players_at_tables_of_four():
    """A thousand players, nobody meeting a round-1 opponent again. How fast: ``tests/bench/bench_tournaments.py``
    (its default is this size), by hand: no timed assertion in the suite (one failed on a slow moment, 2.2 s)."""
    keys = players(1000)
    pairing = pair_round(SWISS, round_no=2, players=keys, active=keys, allowed=[4],
                         rounds=5, history=[Pairing([keys[i:i + 4] for i in range(0, 1000, 4)], [])],
                         ranking=keys, seed=SEED)
    assert sum(len(t) for t in pairing.tables) == 1000
    assert max(meetings([pairing]).values()) == 1
    repeated = meetings([Pairing([keys[i:i + 4] for i in range(0, 1000, 4)], []), pairing])
    assert max(repeated.values()) == 1  # nobody meets a round-1 opponent again


# -- the faster paths give what the former code gave ------------------------------------------------
def _size_key(sizes):
    return (len(sizes), sum(s * s for s in sizes), sum(s**3 for s in sizes), sizes)


def _best_by_definition(n, allowed):
    """best(m) as the module docstring defines it, on sorted tuples (the former code, O(n²))."""
    best = [()] + [None] * n
    for m in range(1, n + 1):
        candidates = [tuple(sorted((*best[m - s], s), reverse=True)) for s in allowed
                      if s <= m and best[m - s] is not None]
        best[m] = min(candidates, key=_size_key) if candidates else None
    return tuple(best)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 400), allowed=st.lists(st.integers(2, 16), min_size=1, max_size=4, unique=True))
def test_best_partitions_on_counts_equal_the_definition(n, allowed):
    allowed = tuple(sorted(allowed))
    assert tuple(None if c is None else seating.sizes_of(c, allowed) for c in seating.best_partitions(n, allowed)) \
        == _best_by_definition(n, allowed)


def _networkx_two(ranked, met):
    """2-player Swiss as it was: networkx on the whole window graph."""
    n, top = len(ranked), max(met.values(), default=0)
    big = n**3 + 1

    def matching(window):
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        for i in range(n):
            for j in range(i + 1, min(n, i + 1 + window)):
                graph.add_edge(i, j, weight=big * (1 + top - met[pair_key(ranked[i], ranked[j])]) - (j - i) ** 2)
        return nx.max_weight_matching(graph, maxcardinality=True)

    pairs = matching(pr.SWISS_WINDOW)
    if 2 * len(pairs) < n and pr.SWISS_WINDOW < n:
        pairs = matching(n)
    return [[ranked[i], ranked[j]] for i, j in sorted((sorted(p) for p in pairs), key=lambda p: p[0])]


def _swiss_history(rng, n, rounds):
    """Rounds of 2-player tables, each paired on a ranking by wins so far (ties in a random order), the
    lower key winning; returns the meetings and the ranking after them."""
    keys = players(n)
    wins: Counter[str] = Counter()
    history = []
    for _ in range(rounds):
        order = sorted(keys, key=lambda k: (-wins[k], rng.random()))
        tables = [order[i:i + 2] for i in range(0, n, 2)]
        history.append(Pairing(tables, []))
        wins.update(min(t) for t in tables)
    return meetings(history), sorted(keys, key=lambda k: (-wins[k], rng.random()))


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 70), rounds=st.integers(0, 6), shuffled=st.booleans(), seed=st.integers(0, 2**32))
def test_two_player_swiss_pairs_exactly_as_networkx_on_the_whole_graph(half, rounds, shuffled, seed):
    """Random Swiss histories, rankings by score (or shuffled: many neighbours met before): the pairing
    is networkx's on the whole window graph — the former pairing — to the player."""
    rng = random.Random(seed)
    met, ranked = _swiss_history(rng, 2 * half, rounds)
    if shuffled:
        rng.shuffle(ranked)
    assert swiss.swiss_two(ranked, met) == _networkx_two(ranked, met)


def _paired_history(rng, n, rounds, rule=1):
    """Rounds paired by the referee itself (``_swiss_two`` by ``rule``: repeat meetings avoided, as in a real
    Swiss) on a ranking by wins so far, ties in a fixed random order (a tie-break), the lower key
    winning; returns the meetings and the ranking after them."""
    keys = players(n)
    order = {k: rng.random() for k in keys}
    wins: Counter[str] = Counter()
    history = []
    for _ in range(rounds):
        ranked = sorted(keys, key=lambda k: (-wins[k], order[k]))
        tables = swiss.swiss_two(ranked, meetings(history), rule)
        history.append(Pairing(tables, []))
        wins.update(min(t) for t in tables)
    return meetings(history), sorted(keys, key=lambda k: (-wins[k], order[k]))


@settings(max_examples=10, deadline=None)
@given(half=st.integers(20, 60), rounds=st.integers(5, 12), seed=st.integers(0, 2**32))
def test_late_swiss_rounds_pair_exactly_as_networkx_and_the_former_code(half, rounds, seed):
    """Late rounds of Swiss sections paired by the referee (from round 5 or 6 on, neighbours in the
    standings have met and are kept apart: the rounds where the former certificate proved nothing and
    networkx ran on the whole graph): the same pairing as networkx on the whole window graph and as the
    former code, to the player."""
    met, ranked = _paired_history(random.Random(seed), 2 * half, rounds)
    expected = _networkx_two(ranked, met)
    assert swiss.swiss_two(ranked, met) == expected
    assert former_pairing._swiss_two(ranked, met) == expected


def _networkx_band(n, window, met_of, big, top):
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    for i in range(n):
        for j in range(i + 1, min(n, i + 1 + window)):
            graph.add_edge(i, j, weight=big * (1 + top - met_of.get(i, {}).get(j, 0)) - (j - i) ** 2)
    return {tuple(sorted(p)) for p in nx.max_weight_matching(graph, maxcardinality=True)}


def test_swiss_matching_takes_networkx_steps_on_random_band_graphs():
    """``swiss_matching`` against networkx on 150 random graphs of its kind: 1–60 vertices, windows from 1
    to the whole graph, meetings from none to most pairs (once or twice), and weights where meeting
    counts little (``big`` 5 or 50: blossoms and dual adjustments of every kind, non-perfect matchings)
    or everything (n³ + 1); both with the dead trees kept and with every stage grown from nothing."""
    rng = random.Random(5)
    for _ in range(150):
        n = rng.randint(1, 60)
        window = rng.choice([1, 2, 3, 5, 40, n])
        share = rng.choice([0, 0.05, 0.2, 0.5, 0.9])
        met_of: dict[int, dict[int, int]] = {}
        for i in range(n):
            for j in range(i + 1, min(n, i + 1 + window)):
                if rng.random() < share:
                    met_of.setdefault(i, {})[j] = met_of.setdefault(j, {})[i] = rng.choice([1, 1, 2])
        top = max((t for row in met_of.values() for t in row.values()), default=0)
        big = rng.choice([n**3 + 1, 5, 50])
        expected = _networkx_band(n, window, met_of, big, top)
        assert swiss_matching(n, window, met_of, big, top) == expected
        assert swiss_matching(n, window, met_of, big, top, keep_dead_trees=False) == expected


def test_late_rounds_have_several_best_pairings_and_networkx_s_is_the_rule():
    """Why the pairing must take networkx's steps: 8 players, the 3rd and 4th met before. Mending it
    upwards (2–4, 1–3) or downwards (3–5, 4–6) costs the same (4 + 4), so the maximum-weight matching
    is not unique — no certificate of "the only optimum" exists — and the one networkx returns is the
    rule."""
    keys = players(8)
    met = Counter({pair_key(keys[2], keys[3]): 1})
    up = [[keys[0], keys[1]], [keys[2], keys[4]], [keys[3], keys[5]], [keys[6], keys[7]]]
    down = [[keys[0], keys[2]], [keys[1], keys[3]], [keys[4], keys[5]], [keys[6], keys[7]]]

    def cost(tables):
        return sum((keys.index(b) - keys.index(a)) ** 2 + 1000 * met[pair_key(a, b)] for a, b in tables)

    assert cost(up) == cost(down) == 10
    assert swiss.swiss_two(keys, met) == _networkx_two(keys, met) == former_pairing._swiss_two(keys, met)
    assert swiss.swiss_two(keys, met) in (up, down)


def _perfect_matchings(nodes):
    if not nodes:
        yield []
        return
    first, rest = nodes[0], nodes[1:]
    for k, other in enumerate(rest):
        for tail in _perfect_matchings(rest[:k] + rest[k + 1:]):
            yield [(first, other), *tail]


def test_the_certificate_says_only_for_the_one_cheapest_matching_and_proves_a_realistic_round():
    """Brute force over every perfect matching of up to 10 players with random meetings: whenever
    ``_only_optimum`` says "only", the matching is the one cheapest; and it does say so, for small
    random cases and for a 400-player round ranked by score (where no region needs solving)."""
    rng = random.Random(11)
    said: Counter[str] = Counter()
    for _ in range(300):
        n = rng.choice([2, 4, 6, 8, 10])
        big = n**3 + 1
        met_of: dict[int, dict[int, int]] = {}
        for a, b in itertools.combinations(range(n), 2):
            if rng.random() < 0.3:
                met_of.setdefault(a, {})[b] = met_of.setdefault(b, {})[a] = 1

        def cost(a, b, met_of=met_of, big=big):
            return (b - a) ** 2 + big * met_of.get(a, {}).get(b, 0)

        priced = sorted((sum(cost(a, b) for a, b in m), m) for m in _perfect_matchings(list(range(n))))
        for total, matching in priced[:3]:
            mate = [0] * n
            for a, b in matching:
                mate[a], mate[b] = b, a
            verdict = swiss.only_optimum(mate, met_of, big, pr.SWISS_WINDOW)
            said[verdict] += 1
            if verdict == "only":
                assert total == priced[0][0] and (len(priced) == 1 or priced[1][0] > total)
    assert said["only"] > 50 and said["tie"] > 0 and said["better"] > 0
    met, ranked = _swiss_history(random.Random(0), 400, 3)  # a round where no neighbours met before
    proved = swiss.certified_matching(len(ranked), pr.met_by_place(ranked, met), 400**3 + 1, lambda lo, hi: set())
    assert proved is not None and all(b == a + 1 for a, b in proved)  # 1–2, 3–4, …: nobody met a neighbour
    assert [[ranked[a], ranked[b]] for a, b in sorted(proved)] == _networkx_two(ranked, met)


# -- series --------------------------------------------------------------------------------------
def test_series_seats_everyone_at_one_table_and_rotates_the_first_seat():
    keys = players(4)
    tables = [pair_round(SERIES, round_no=r, players=keys, active=keys, allowed=[4, 3, 2], rounds=4, history=[],
                         ranking=keys, seed=SEED).tables for r in range(1, 5)]
    assert all(len(t) == 1 and sorted(t[0]) == keys for t in tables)
    assert sorted(t[0][0] for t in tables) == keys  # each player opens one game
    assert tables[1][0] == tables[0][0][1:] + tables[0][0][:1]


def test_series_goes_on_without_a_withdrawn_player_and_stops_below_the_minimum():
    keys = players(3)
    p = pair_round(SERIES, round_no=1, players=keys, active=keys[1:], allowed=[3, 2], rounds=3, history=[],
                   ranking=keys, seed=SEED)
    assert p.tables and sorted(p.tables[0]) == keys[1:]
    alone = pair_round(SERIES, round_no=1, players=keys, active=keys[:1], allowed=[3, 2], rounds=3, history=[],
                       ranking=keys, seed=SEED)
    assert alone == Pairing([], keys[:1])


def _seatings(items, sizes):
    """Brute force: every way to seat ``items`` at tables of ``sizes`` (any order of the sizes)."""
    if not sizes:
        yield []
        return
    for size in set(sizes):
        left = list(sizes)
        left.remove(size)
        for rest in itertools.combinations(items[1:], size - 1):
            table = [items[0], *rest]
            for more in _seatings([x for x in items if x not in table], left):
                yield [table, *more]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(5, 9), allowed=st.sampled_from([[3], [4, 3], [3, 2], [4], [5, 4]]), data=st.data())
def test_swiss_larger_tables_seat_with_the_fewest_repeat_meetings_possible(n, allowed, data):
    keys = players(n)
    sizes, _ = table_sizes(n, allowed)
    history = []
    for _ in range(data.draw(st.integers(1, 3), label="earlier rounds")):
        order = data.draw(st.permutations(keys), label="seating")
        tables, i = [], 0
        for size in sizes:
            tables.append(list(order[i:i + size]))
            i += size
        history.append(Pairing(tables, list(order[i:])))
    ranking = data.draw(st.permutations(keys), label="standings")
    met = meetings(history)

    def repeats(tables):
        return sum(met[pair_key(a, b)] for t in tables for a, b in itertools.combinations(t, 2))

    pairing = pair_round(SWISS, round_no=len(history) + 1, players=keys, active=keys, allowed=allowed, rounds=9,
                         history=history, ranking=ranking, seed=SEED)
    seated = [k for k in ranking if k not in pairing.byes]
    assert repeats(pairing.tables) == min(repeats(s) for s in _seatings(seated, sizes))
