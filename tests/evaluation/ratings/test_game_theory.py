"""α-Rank ("α-Rank: Multi-Agent Evaluation by Evolution", arXiv 1903.01373) and Nash averaging
("Re-evaluating Evaluation", arXiv 1806.02643) on games whose answers are known, α-Rank against
OpenSpiel's."""

import numpy as np
import pytest

from arena.evaluation.ratings.bradley_terry import bradley_terry
from arena.evaluation.ratings.game_theory import alpha_rank, nash_averaging
from arena.evaluation.ratings.outcomes import pairwise_outcomes
from support.records import record as rec

RPS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0.0]])


def test_alpha_rank_and_nash_averaging_rps_uniform():
    assert alpha_rank(RPS) == pytest.approx([1 / 3] * 3, abs=1e-6)
    p, scores = nash_averaging(RPS)
    assert p == pytest.approx([1 / 3] * 3, abs=1e-6)
    assert scores == pytest.approx([0, 0, 0], abs=1e-6)
    # a dominance chain: a beats b beats c, a beats c
    chain = np.array([[0, 1, 1], [-1, 0, 1], [-1, -1, 0.0]])
    assert alpha_rank(chain) == pytest.approx([1, 0, 0], abs=1e-6)
    assert nash_averaging(chain)[0] == pytest.approx([1, 0, 0], abs=1e-6)


def test_nash_averaging_unchanged_by_duplicate():
    dup = np.array([[0, -1, 1, 1], [1, 0, -1, -1], [-1, 1, 0, 0], [-1, 1, 0, 0.0]])
    p, scores = nash_averaging(dup)
    assert p == pytest.approx([1 / 3, 1 / 3, 1 / 6, 1 / 6], abs=1e-5)
    assert scores == pytest.approx([0, 0, 0, 0], abs=1e-6)
    biased = np.array([[0, -0.5, 1], [0.5, 0, -1], [-1, 1, 0]])
    assert nash_averaging(biased)[0] == pytest.approx([0.4, 0.4, 0.2], abs=1e-5)
    # contrast: a transitive rating moves when a strategy is copied (R +91.7, P −91.7, as "Re-evaluating Evaluation" shows)
    recs = []
    for a, b, s in (("R", "S", 1), ("S", "P", 1), ("P", "R", 1), ("R", "S2", 1), ("S2", "P", 1)):
        recs += [rec([a, b], [s, -s])] * 10
    bt = bradley_terry(pairwise_outcomes(recs), ["R", "P", "S", "S2"], bootstrap=0, ridge=1e-6)
    assert bt.rating[0] - bt.rating[1] > 100


def test_alpha_rank_matches_openspiel():
    alpharank = pytest.importorskip("open_spiel.python.egt.alpharank", reason="needs networkx")
    rng = np.random.default_rng(3)
    for k in (3, 5):
        M = rng.normal(size=(k, k))
        M = M - M.T  # zero-sum, symmetric game
        for alpha in (0.5, 5.0, 100.0):
            ours = alpha_rank(M, alpha=alpha, m=50)
            with np.errstate(over="ignore"):
                theirs = alpharank.compute([M], m=50, alpha=alpha)[2]
            assert ours == pytest.approx(theirs, abs=1e-6)


def test_nash_averaging_exact_for_an_agent_that_beats_all_without_scipy_optimize():
    import subprocess
    import sys

    # two agents (what SLSQP left at its start, (0.9995, 0.0005)) and a chain: the winner alone
    p, scores = nash_averaging(np.array([[0.0, 0.01], [-0.011, 0.0]]))
    assert list(p) == [1.0, 0.0] and scores[0] == 0.0 and scores[1] == pytest.approx(-0.0105)
    chain = np.array([[0, 0.2, 0.3], [-0.1, 0, 0.5], [-0.3, -0.2, 0]])
    assert list(nash_averaging(chain)[0]) == [1.0, 0.0, 0.0]
    p, scores = nash_averaging(np.zeros((3, 3)))  # all level: the uniform, the most entropy
    assert list(p) == [1 / 3] * 3 and list(scores) == [0.0] * 3
    code = (
        "import sys, numpy as np; from arena.evaluation.ratings.game_theory import nash_averaging as n; "
        "n(np.array([[0, 1.0], [-1.0, 0]])); n(np.zeros((2, 2))); print('scipy.optimize' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
