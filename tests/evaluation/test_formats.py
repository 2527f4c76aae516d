"""Tournament formats on a noiseless simulator (the stronger agent always wins), driven by the
same code as real tournaments."""

from collections import Counter

import pytest

from arena.errors import ArenaError
from arena.evaluation.formats import FormatConfig, bracket_order, drive, make_format
from arena.evaluation.ratings.agreement import kendall_tau
from arena.evaluation.schedule import Planner
from arena.evaluation.store import MatchRecord


def noiseless(strength):
    planner, log = Planner("t", 0), []

    def play(rnd, pairings):
        out = []
        for games in planner.plan(rnd, pairings):
            recs = []
            for g in games:
                a, b = g.seats
                ret = [1.0, -1.0] if strength[a] > strength[b] else [-1.0, 1.0]
                recs.append(MatchRecord(g.id, g.pairing, 0, g.deal, "sim", [a, b], ret, g.plan_seq, g.round))
            log.extend(recs)
            out.append(recs)
        return out

    return play, log


def run(kind, n, **kw):
    names = [f"p{i}" for i in range(n)]
    strength = {a: i for i, a in enumerate(names)}  # p{n-1} is the best
    play, log = noiseless(strength)
    ranking = drive(make_format(FormatConfig(kind=kind, **kw), names, 2, seed=0), play)
    return names, ranking, log


def test_bracket_order_oracle():
    assert bracket_order(8) == [0, 7, 3, 4, 1, 6, 2, 5]
    assert bracket_order(1) == [0]


def test_round_robin_counts_and_seat_swaps():
    names, ranking, log = run("round_robin", 4, games=3)
    assert len(log) == 6 * 6
    seatings = Counter(tuple(r.seats) for r in log)
    assert set(seatings.values()) == {3} and len(seatings) == 12  # 3 games per ordered pairing
    # game 2j and 2j+1 of a pair share deal j with seats swapped
    pair = [r for r in log if r.pairing == "p0|p1"]
    assert [(r.seats, r.game_index) for r in pair[:2]] == [(["p0", "p1"], 0), (["p1", "p0"], 0)]
    assert len({r.id for r in log}) == len(log)


@pytest.mark.parametrize("n", [5, 6, 8])
def test_seeded_single_elimination_best_first_with_byes(n):
    names, ranking, log = run("elimination", n, games=2)
    assert ranking[0] == f"p{n - 1}" and sorted(ranking) == sorted(names)
    seeding = [r for r in log if r.round == 0]
    bracket = [r for r in log if r.round > 0]
    assert len(seeding) == 2 * (n - 1)  # reference plays everyone once (2 games)
    assert len(bracket) == 2 * (n - 1)  # n − 1 bracket matches; byes cost nothing
    # everyone beats the reference p0, so seeds tie and follow pool order: p1, p2, ... , p0
    first_round = {a for r in bracket if r.round == 1 for a in r.seats}
    if n == 6:  # explicit bye slots: the two top seeds skip round one (note §1 caveat)
        assert first_round == {"p3", "p4", "p5", "p0"}
    final = [r for r in bracket if r.round == max(x.round for x in bracket)]
    assert {ranking[0], ranking[1]} == set(final[0].seats)  # champion, then the final's loser


def test_swiss_no_rematch_odd_pool_best_first():
    names, ranking, log = run("swiss", 7, games=2, rounds=3)
    per_round = Counter(r.round for r in log)
    assert per_round == {0: 6, 1: 6, 2: 6}  # 3 matches of 2 games, one bye per round
    pairs = [frozenset(r.seats) for r in log if r.game_index == 0 and r.seats[0] < r.seats[1]]
    assert len(pairs) == len(set(pairs))  # nobody met twice
    assert ranking[0] == "p6"


def test_adaptive_stops_when_separated_and_respects_budget():
    names, ranking, log = run("adaptive", 8, batch_games=2, budget=400, confidence=0.9)
    assert ranking == sorted(names, key=lambda a: -int(a[1:]))
    assert len(log) < 400  # stopped on confidence, not budget
    names, ranking, log = run("adaptive", 8, batch_games=2, budget=40, confidence=0.999)
    assert len(log) <= 40


def test_gauntlet_only_candidates_vs_pool():
    names, ranking, log = run("gauntlet", 5, games=1, candidates=["p4", "p0"])
    assert {frozenset(r.seats) for r in log} == {frozenset((c, p)) for c in ("p4", "p0") for p in ("p1", "p2", "p3")}


def test_bad_format_inputs_are_clear_errors():
    names = ["a", "b", "c"]
    with pytest.raises(ArenaError, match="unknown format.kind 'knockout'"):
        make_format(FormatConfig(kind="knockout"), names, 2, 0)
    with pytest.raises(ArenaError, match="2-player games"):
        make_format(FormatConfig(kind="swiss"), names, 3, 0)
    with pytest.raises(ArenaError, match="not agent labels"):
        make_format(FormatConfig(kind="gauntlet", candidates=["zz"]), names, 2, 0)
    with pytest.raises(ArenaError, match="format.reference 'zz'"):
        next(make_format(FormatConfig(kind="elimination", reference="zz"), names, 2, 0))


def test_adaptive_beats_round_robin_on_simulated_bt_agents():
    """A small version of `arena bench rating`: adaptive reaches τ ≥ 0.9 with fewer games."""
    from arena.tools.bench.rating import trial

    strengths = {f"a{i:02d}": 100.0 * i for i in range(12)}
    rr = [trial("round_robin", 2, strengths, s) for s in range(3)]
    ad = [trial("adaptive", 120, strengths, s) for s in range(3)]
    assert rr[0][0] == 264 and all(g <= 120 for g, _ in ad)
    assert sorted(t for _, t in ad)[1] >= 0.85
    assert kendall_tau(list(strengths), list(strengths)) == 1.0


def _rematch_free_pairing_exists(names, met):
    """Oracle by exhaustive search (bitmask memo): can the pool (plus a bye for an odd pool) be
    split into pairs that have not met?"""
    from functools import lru_cache

    nodes = list(names) + ([None] if len(names) % 2 else [])
    ok = [[i != j and (None in (a, b) or b not in met[a]) for j, b in enumerate(nodes)] for i, a in enumerate(nodes)]

    @lru_cache(maxsize=None)
    def solve(free):
        if not free:
            return True
        i = (free & -free).bit_length() - 1
        rest = free & ~(1 << i)
        return any(rest >> j & 1 and ok[i][j] and solve(rest & ~(1 << j)) for j in range(len(nodes)))

    return solve((1 << len(nodes)) - 1)


def test_swiss_property_no_avoidable_rematch_over_random_tournaments():
    """2,000 random Swiss tournaments (4–12 agents, up to N−1 rounds, random results
    with draws): every round pairs each agent once (one bye in odd pools), and has no rematch
    whenever a rematch-free pairing exists (the old greedy pairing made avoidable rematches)."""
    import math
    from types import SimpleNamespace

    import numpy as np

    rng = np.random.default_rng(18)
    checked = forced = 0
    for t in range(2000):
        n = int(rng.integers(4, 13))
        names = [f"p{i}" for i in range(n)]
        rounds = int(rng.integers(math.ceil(math.log2(n)), n))
        fmt = make_format(FormatConfig(kind="swiss", games=1, rounds=rounds), names, 2, seed=t)
        met = {a: set() for a in names}
        try:
            pairings = next(fmt)
            while True:
                pairs = [p.group for p in pairings]
                seated = [a for p in pairs for a in p]
                assert len(seated) == len(set(seated)) == n - n % 2, (t, pairs)
                exists = _rematch_free_pairing_exists(names, met)
                forced += not exists
                if exists:
                    checked += 1
                    assert not any(b in met[a] for a, b in pairs), (t, pairs, met)
                for a, b in pairs:
                    met[a].add(b)
                    met[b].add(a)
                results = []
                for a, b in pairs:
                    r = rng.random()
                    ret = [1.0, -1.0] if r < 0.45 else [-1.0, 1.0] if r < 0.9 else [0.0, 0.0]
                    results.append([SimpleNamespace(seats=[a, b], returns=ret)])
                pairings = fmt.send(results)
        except StopIteration as stop:
            assert sorted(stop.value) == sorted(names)
    assert checked > 10000 and forced > 0
