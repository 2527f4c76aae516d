"""What one game says about a pair: margin and win/draw/loss scores, who is compared with whom."""

from arena.evaluation.ratings.outcomes import pair_score, pairwise_outcomes
from support.records import record as rec


def test_margin_score_ranks_by_payoff():
    assert pair_score(2, -2, None) == 1.0 and pair_score(1, -1, 4.0) == 0.75
    assert pair_score(-2, 2, 4.0) == 0.0 and pair_score(0, 0, 4.0) == 0.5


def test_pairwise_outcomes_skip_teammates_and_self_play():
    r = rec(["a", "b", "c", "a"], [1, 1, -1, -1], {"teams": [[0, 1], [2, 3]]})
    assert sorted(pairwise_outcomes([r])) == [("a", "c", 1.0), ("b", "a", 1.0), ("b", "c", 1.0)]
