"""Kendall τ between rankings."""

import pytest

from arena.evaluation.ratings.agreement import kendall_tau


def test_kendall_tau():
    assert kendall_tau(list("abcd"), list("abcd")) == 1.0
    assert kendall_tau(list("dcba"), list("abcd")) == -1.0
    assert kendall_tau(list("bacd"), list("abcd")) == pytest.approx(4 / 6)
