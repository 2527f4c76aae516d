"""Elo against hand-computed oracles (K = 32)."""

import pytest

from arena.evaluation.ratings.elo import elo, elo_expected, elo_update
from support.records import record as rec


def test_elo_oracles():
    assert elo_update(1500, 1500, 1.0, 32) == (1516.0, 1484.0)
    assert elo_expected(1600, 1400) == pytest.approx(0.7597, abs=1e-4)
    for s, want in ((1.0, 1607.69), (0.0, 1575.69), (0.5, 1591.69)):
        assert elo_update(1600, 1400, s, 32)[0] == pytest.approx(want, abs=0.01)
    # from records, in order: one win of a over b
    assert elo([rec(["a", "b"], [1, -1])]) == {"a": 1516.0, "b": 1484.0}
