"""arena.arrays' draw helpers: the column-by-column kth_true and the searchsorted cdf_pick give
exactly what their row-wise definitions give, for every shape the faces use."""

from __future__ import annotations

import numpy as np
import pytest

from arena.arrays import cdf_pick, kth_true


@pytest.mark.parametrize("rows", [1, 5, 47, 48, 300, 4096])
@pytest.mark.parametrize("width", [1, 2, 3, 6, 61, 100])
def test_kth_true_is_the_cumsum_definition(rows, width):
    rng = np.random.default_rng(rows * 1000 + width)
    mask = rng.random((rows, width)) < 0.5
    mask[:, 0] = True
    k = rng.integers(0, mask.sum(axis=1))
    got = kth_true(mask, k)
    assert np.array_equal(got, (mask.cumsum(axis=1) <= k[:, None]).sum(axis=1))
    assert mask[np.arange(rows), got].all()  # the column found is a True one


def test_cdf_pick_counts_the_edges_a_uniform_passes():
    probs = [0.25, 0.0, 0.5, 0.25]  # a zero-probability outcome is never picked
    edges = np.cumsum(probs)
    u = np.concatenate([np.random.default_rng(0).random(10_000), edges[:-1], [0.0, np.nextafter(1.0, 0.0)]])
    got = cdf_pick(u, probs)
    assert np.array_equal(got, np.minimum((u[:, None] >= edges[None, :]).sum(axis=1), 3))
    assert 1 not in got and got[-2] == 0 and got[-1] == 3
