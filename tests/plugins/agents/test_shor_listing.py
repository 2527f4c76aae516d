"""SHOR-PSRO's meta-solvers against a plain transcription of Listing 6 of *Discovering Multiagent
Learning Algorithms with Large Language Models* (arXiv 2602.16928, v1): the same mixtures on
random 2- and 3-player meta-games, and the same annealing schedule call by call."""

from __future__ import annotations

import numpy as np
import pytest

from arena.plugins.agents.psro.meta_solvers import make_meta_solver


def listing_hybrid(M, iters, lam, temp, beta_mom, div, avg):
    """Listing 6's internal routine, written out loop by loop (no shared code with arena)."""
    n = len(M)
    sizes = M[0].shape
    sigma = [np.ones(k) / k for k in sizes]
    C = [np.zeros(k) for k in sizes]
    g_prev = [np.zeros(k) for k in sizes]
    A = [np.zeros(k) for k in sizes]
    for _ in range(iters):
        for p in range(n):
            letters = "abcdefgh"[:n]  # expected payoff of each pure strategy of p against sigma_-p
            spec = letters + "," + ",".join(letters[q] for q in range(n) if q != p) + "->" + letters[p]
            u = np.einsum(spec, M[p], *[sigma[q] for q in range(n) if q != p])
            g = u - u.mean()
            go = (1 + beta_mom) * g - beta_mom * g_prev[p]
            go = go + div * (1 - sigma[p])
            if np.max(np.abs(go)) > 1e-8:
                go = go / np.max(np.abs(go))
            C[p] = np.maximum(0.0, C[p] + go)
            orm = C[p] / C[p].sum() if C[p].sum() > 1e-12 else np.ones(sizes[p]) / sizes[p]
            e = np.exp((u - u.max()) / temp)
            sm = e / e.sum()
            sigma[p] = (1 - lam) * orm + lam * sm
            g_prev[p] = g
            if avg:
                A[p] = A[p] + sigma[p]
    return [a / a.sum() for a in A] if avg else sigma


def listing_training_settings(k, pop0):
    prog = min(1.0, k / 75)
    lam = min(max(0.30 + (0.05 - 0.30) * prog, 0.05), 0.30)
    temp = min(max(0.50 + (0.01 - 0.50) * prog, 0.01), 0.50)
    div = min(max(0.05 + (0.001 - 0.05) * prog, 0.001), 0.05)
    iters = min(max(1000 + 20 * (pop0 - 1), 1000), 5000)
    return iters, lam, temp, 0.5, div


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 2)])
def test_shor_solvers_equal_the_listing(shape):
    rng = np.random.default_rng(len(shape))
    M = [rng.normal(size=shape) for _ in shape]
    train = make_meta_solver("shor")
    for k in (1, 2, 3):  # the schedule moves with every call
        ours = train(M)
        ref = listing_hybrid(M, *listing_training_settings(k, shape[0]), avg=True)
        assert all(np.allclose(a, b, atol=1e-12) for a, b in zip(ours, ref))
    ours = make_meta_solver("shor_eval")(M)
    ref = listing_hybrid(M, min(max(8000 + 50 * (shape[0] - 1), 8000), 15000), 0.01, 0.001, 0.2, 0.0, avg=False)
    assert all(np.allclose(a, b, atol=1e-12) for a, b in zip(ours, ref))


def test_annealing_reaches_its_floor_at_call_75():
    assert listing_training_settings(75, 101) == pytest.approx((3000, 0.05, 0.01, 0.5, 0.001))
    assert listing_training_settings(1, 1)[1:3] == pytest.approx((0.30 - 0.25 / 75, 0.50 - 0.49 / 75))
