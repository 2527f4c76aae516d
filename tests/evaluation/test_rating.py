"""Rating oracles from shared/papers/ranking_league.md §3–4 (numbers recomputed there)."""

import numpy as np
import pytest

from arena.evaluation import rating as R
from arena.evaluation.store import MatchRecord


def rec(seats, returns, info=None, i=0):
    return MatchRecord(
        id=f"m{i}",
        pairing="|".join(seats),
        seed=0,
        game_index=i,
        game="g",
        seats=list(seats),
        returns=list(returns),
        plan_seq=i,
        info=info or {},
    )


def test_elo_oracles():
    assert R.elo_update(1500, 1500, 1.0, 32) == (1516.0, 1484.0)
    assert R.elo_expected(1600, 1400) == pytest.approx(0.7597, abs=1e-4)
    for s, want in ((1.0, 1607.69), (0.0, 1575.69), (0.5, 1591.69)):
        assert R.elo_update(1600, 1400, s, 32)[0] == pytest.approx(want, abs=0.01)
    # from records, in order: one win of a over b
    assert R.elo([rec(["a", "b"], [1, -1])]) == {"a": 1516.0, "b": 1484.0}


def test_openskill_1v1_ffa_and_teams():
    r = R.openskill([rec(["w", "l"], [1, -1])])
    assert r["w"] == pytest.approx((27.6354, 8.0659), abs=1e-4)
    assert r["l"] == pytest.approx((22.3646, 8.0659), abs=1e-4)
    assert r["w"][0] - 3 * r["w"][1] == pytest.approx(3.4377, abs=1e-4)
    ffa = R.openskill([rec(["a", "b", "c", "d"], [3, 2, 1, 0])])
    assert [round(ffa[x][0], 3) for x in "abcd"] == [27.795, 26.553, 24.689, 20.962]
    # 3-v-2 team game reported through GameResult.info (Werewolf style): team 0 wins
    teams = R.openskill(
        [rec(["v1", "v2", "v3", "w1", "w2"], [0, 0, 0, 0, 0], {"teams": [[0, 1, 2], [3, 4]], "winner": 0})]
    )
    assert teams["v1"][0] == pytest.approx(25.7736, abs=1e-4)
    assert teams["w2"][0] == pytest.approx(24.2264, abs=1e-4)
    # without a winner key the team with the larger summed return ranks first
    t2 = R.openskill([rec(["v1", "v2", "v3", "w1", "w2"], [1, 1, 1, -1, -1], {"teams": [[0, 1, 2], [3, 4]]})])
    assert t2["v1"][0] == pytest.approx(25.7736, abs=1e-4)


def test_closed_form_plackett_luce_1v1_is_openskills_rate_bit_for_bit():
    """The tournament's 1v1 OpenSkill update (no rate() call) against openskill itself on random
    win/draw/loss sequences among a few players: every mu and sigma identical, not just close."""
    import random

    import openskill.models as om

    model = om.PlackettLuce()
    assert R._fast_plackett_luce(model)
    assert not R._fast_plackett_luce(om.PlackettLuce(limit_sigma=True))
    assert not R._fast_plackett_luce(om.BradleyTerryFull())
    rng = random.Random(0)
    for _ in range(40):
        names = [f"p{i}" for i in range(rng.randint(2, 5))]
        slow = {n: model.rating(name=n) for n in names}
        fast = {n: model.rating(name=n) for n in names}
        for _ in range(rng.randint(1, 120)):
            a, b = rng.sample(names, 2)
            ra, rb = rng.choice([(1, -1), (-1, 1), (0, 0), (2.5, -2.5)])
            new = model.rate([[slow[a]], [slow[b]]], ranks=[int(ra < rb), int(rb < ra)])
            slow[a], slow[b] = new[0][0], new[1][0]
            R.plackett_luce_1v1(model, fast[a], fast[b], ra < rb, rb < ra)
            for n in (a, b):
                assert (fast[n].mu, fast[n].sigma) == (slow[n].mu, slow[n].sigma)
    # and through RatingState (fast path) against the batch function (rate() path)
    recs = [rec(["x", "y"] if i % 2 else ["y", "x"], rng.choice([(1, -1), (-1, 1), (0, 0)]), i=i) for i in range(300)]
    assert R.RatingState(["x", "y"]).add_all(recs).openskill_ratings() == R.openskill(recs, names=["x", "y"])


def test_bradley_terry_recovers_strengths_and_ci_covers():
    rng = np.random.default_rng(0)
    true = np.arange(8) * 100.0
    names = [f"a{i}" for i in range(8)]
    outs = []
    for _ in range(20000):
        i, j = rng.choice(8, 2, replace=False)
        p = 1 / (1 + 10 ** ((true[j] - true[i]) / 400))
        outs.append((names[i], names[j], 1.0 if rng.random() < p else 0.0))
    fit = R.bradley_terry(outs, names, bootstrap=200, seed=1)
    centred = true - true.mean()
    assert np.all(np.abs((fit.rating - 1000) - centred) <= 15)
    half = (fit.hi - fit.lo) / 2
    assert np.all((half > 5) & (half < 20))
    assert np.mean((fit.lo - 1000 <= centred) & (centred <= fit.hi - 1000)) >= 0.75


def test_margin_score_ranks_by_payoff():
    assert R.pair_score(2, -2, None) == 1.0 and R.pair_score(1, -1, 4.0) == 0.75
    assert R.pair_score(-2, 2, 4.0) == 0.0 and R.pair_score(0, 0, 4.0) == 0.5


RPS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0.0]])


def test_alpha_rank_and_nash_averaging_rps_uniform():
    assert R.alpha_rank(RPS) == pytest.approx([1 / 3] * 3, abs=1e-6)
    p, scores = R.nash_averaging(RPS)
    assert p == pytest.approx([1 / 3] * 3, abs=1e-6)
    assert scores == pytest.approx([0, 0, 0], abs=1e-6)
    # a dominance chain: a beats b beats c, a beats c
    chain = np.array([[0, 1, 1], [-1, 0, 1], [-1, -1, 0.0]])
    assert R.alpha_rank(chain) == pytest.approx([1, 0, 0], abs=1e-6)
    assert R.nash_averaging(chain)[0] == pytest.approx([1, 0, 0], abs=1e-6)


def test_nash_averaging_unchanged_by_duplicate():
    dup = np.array([[0, -1, 1, 1], [1, 0, -1, -1], [-1, 1, 0, 0], [-1, 1, 0, 0.0]])
    p, scores = R.nash_averaging(dup)
    assert p == pytest.approx([1 / 3, 1 / 3, 1 / 6, 1 / 6], abs=1e-5)
    assert scores == pytest.approx([0, 0, 0, 0], abs=1e-6)
    biased = np.array([[0, -0.5, 1], [0.5, 0, -1], [-1, 1, 0]])
    assert R.nash_averaging(biased)[0] == pytest.approx([0.4, 0.4, 0.2], abs=1e-5)
    # contrast: a transitive rating moves when a strategy is copied (note §4: R +91.7, P −91.7)
    recs = []
    for a, b, s in (("R", "S", 1), ("S", "P", 1), ("P", "R", 1), ("R", "S2", 1), ("S2", "P", 1)):
        recs += [rec([a, b], [s, -s])] * 10
    bt = R.bradley_terry(R.pairwise_outcomes(recs), ["R", "P", "S", "S2"], bootstrap=0, ridge=1e-6)
    assert bt.rating[0] - bt.rating[1] > 100


def test_kendall_tau():
    assert R.kendall_tau(list("abcd"), list("abcd")) == 1.0
    assert R.kendall_tau(list("dcba"), list("abcd")) == -1.0
    assert R.kendall_tau(list("bacd"), list("abcd")) == pytest.approx(4 / 6)


def test_alpha_rank_matches_openspiel():
    alpharank = pytest.importorskip("open_spiel.python.egt.alpharank", reason="needs networkx")
    rng = np.random.default_rng(3)
    for k in (3, 5):
        M = rng.normal(size=(k, k))
        M = M - M.T  # zero-sum, symmetric game
        for alpha in (0.5, 5.0, 100.0):
            ours = R.alpha_rank(M, alpha=alpha, m=50)
            with np.errstate(over="ignore"):
                theirs = alpharank.compute([M], m=50, alpha=alpha)[2]
            assert ours == pytest.approx(theirs, abs=1e-6)


def test_pairwise_outcomes_skip_teammates_and_self_play():
    r = rec(["a", "b", "c", "a"], [1, 1, -1, -1], {"teams": [[0, 1], [2, 3]]})
    assert sorted(R.pairwise_outcomes([r])) == [("a", "c", 1.0), ("b", "a", 1.0), ("b", "c", 1.0)]


def test_nash_averaging_exact_for_an_agent_that_beats_all_without_scipy_optimize():
    import subprocess
    import sys

    # two agents (what SLSQP left at its start, (0.9995, 0.0005)) and a chain: the winner alone
    p, scores = R.nash_averaging(np.array([[0.0, 0.01], [-0.011, 0.0]]))
    assert list(p) == [1.0, 0.0] and scores[0] == 0.0 and scores[1] == pytest.approx(-0.0105)
    chain = np.array([[0, 0.2, 0.3], [-0.1, 0, 0.5], [-0.3, -0.2, 0]])
    assert list(R.nash_averaging(chain)[0]) == [1.0, 0.0, 0.0]
    p, scores = R.nash_averaging(np.zeros((3, 3)))  # all level: the uniform, the most entropy
    assert list(p) == [1 / 3] * 3 and list(scores) == [0.0] * 3
    code = (
        "import sys, numpy as np; from arena.evaluation.rating import nash_averaging as n; "
        "n(np.array([[0, 1.0], [-1.0, 0]])); n(np.zeros((2, 2))); print('scipy.optimize' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
