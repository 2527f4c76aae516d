"""What a judged advantage keeps of the true one: least-squares margin strengths, the
rank and margin maps, batch scaling, and the fidelity measure on cases with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ArenaError
from arena.evaluation.judge_ranking import (
    Ranking,
    advantage_fidelity,
    group_zscore,
    margin_strengths,
    rank_group,
    ranking_advantages,
    scaled_advantages,
)


@pytest.mark.parametrize("kind", ["single_elimination", "swiss", "round_robin", "anchor", "adaptive"])
def test_noiseless_margins_give_back_the_qualities(kind):
    q = np.array([0.3, -1.2, 0.05, 2.0, 0.7, -0.4, 0.0, 1.1])
    r = rank_group(8, lambda i, j: q[i] - q[j], kind, seed=1)
    assert len(r.margins) == r.comparisons
    assert all(m == pytest.approx(q[i] - q[j]) for i, j, m in r.margins)
    s = margin_strengths(8, r.margins)
    if kind != "swiss":  # swiss's 3 rounds of 4 pairs can leave the graph in parts
        assert s == pytest.approx(q - q.mean())
        assert ranking_advantages(r, 8, "margin") == pytest.approx(group_zscore(q), abs=1e-5)


def test_least_squares_averages_the_noise_of_repeated_comparisons():
    # 0 beats 1 by 1.0, 1.2, 0.8 in three comparisons and 1 beats 2 by 0.5: s0 - s1 = 1.0, s1 - s2 = 0.5
    s = margin_strengths(3, [(0, 1, 1.0), (0, 1, 1.2), (1, 0, -0.8), (1, 2, 0.5)])
    assert s[0] - s[1] == pytest.approx(1.0) and s[1] - s[2] == pytest.approx(0.5) and s.sum() == pytest.approx(0)


def test_a_rank_keeps_sqrt3_over_n_plus_1_of_a_one_hot_group():
    """One good rollout among N equal ones: the true advantage is one-hot; the rank map spaces the
    N−1 equal ones evenly, so even a noiseless judge's rank advantage correlates sqrt(3/(N+1)) with
    it, while the margin map is exact."""
    for n in (4, 8, 16):
        q = np.zeros((20, n))
        q[:, 2] = 1.0
        for kind in ("single_elimination", "round_robin"):
            assert advantage_fidelity(q, 0.0, kind, "rank")["fidelity"] == pytest.approx(np.sqrt(3 / (n + 1)))
            assert advantage_fidelity(q, 0.0, kind, "margin")["fidelity"] == pytest.approx(1.0)


def test_fidelity_falls_with_noise_and_rises_with_comparisons():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((200, 8)) * 0.03
    se = [
        advantage_fidelity(q, noise, "single_elimination", "margin", seed=1)["fidelity"] for noise in (0.0, 0.03, 0.1)
    ]
    assert se[0] == pytest.approx(1.0) and se[0] > se[1] > se[2]
    rr = advantage_fidelity(q, 0.03, "round_robin", "margin", seed=1)["fidelity"]
    assert rr > se[1]  # 28 comparisons average more noise than 14
    # pointwise with a per-score drift of 0.1: the drift does not cancel and the signal nearly vanishes
    pw = advantage_fidelity(q, 0.03, "pointwise", seed=1, drift=0.1)["fidelity"]
    assert pw < se[1] - 0.2
    flat = advantage_fidelity(np.zeros((5, 4)), 0.1, "single_elimination", "margin")
    assert flat["flat"] == 1.0 and np.isnan(flat["fidelity"])


def test_batch_scaling_keeps_a_quiet_group_quiet():
    loud, quiet = np.array([1.0, -1.0, 3.0, -3.0]), np.array([0.01, -0.01, 0.0, 0.0])
    g = scaled_advantages([loud, quiet], "group")
    b = scaled_advantages([loud, quiet], "batch")
    assert np.std(g[1], ddof=1) == pytest.approx(1.0, abs=1e-3)  # per group: noise blown up
    assert np.abs(b[1]).max() < 0.01 and np.abs(b[0]).max() > 1.0
    with pytest.raises(ArenaError, match="scaling"):
        scaled_advantages([loud], "global")


def test_undecided_groups_and_bad_maps():
    r = Ranking([0, 1, 2], 2, 0, [(0, 1, 0.0), (1, 2, 0.0)])
    assert np.all(ranking_advantages(r, 3, "margin") == 0) and np.all(ranking_advantages(r, 3, "rank") == 0)
    with pytest.raises(ArenaError, match="advantage map"):
        ranking_advantages(r, 3, "elo")
    with pytest.raises(ArenaError, match="at least 2"):
        margin_strengths(1, [])


def test_repeats_ask_every_pairing_again_and_average_the_noise():
    calls = []

    def compare(batch):
        calls.append(len(batch))
        return [0.1 * (i - j) for _, i, j in batch]

    from arena.evaluation.judge_ranking import rank_groups

    (r,) = rank_groups([4], compare, "round_robin", repeats=3)
    assert calls == [18] and r.comparisons == 18 and len(r.margins) == 18
    assert margin_strengths(4, r.margins) == pytest.approx(0.1 * (np.arange(4) - 1.5))
    assert r.order == [3, 2, 1, 0]
    rng = np.random.default_rng(1)
    q = rng.standard_normal((200, 8)) * 0.03
    once, thrice = (advantage_fidelity(q, 0.05, "round_robin", "margin", seed=2, repeats=k)["fidelity"] for k in (1, 3))
    assert thrice > once + 0.1
    with pytest.raises(ArenaError, match="repeats"):
        rank_groups([4], compare, "round_robin", repeats=0)
