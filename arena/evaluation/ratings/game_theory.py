"""Game-theoretic views of the empirical payoff matrix: α-Rank ("α-Rank: Multi-Agent Evaluation by
Evolution", arXiv 1903.01373; single population, checked against OpenSpiel's ``alpharank``, whose
import alone costs seconds of plotting libraries) and Nash averaging ("Re-evaluating Evaluation",
arXiv 1806.02643; the maximum-entropy symmetric Nash solved with scipy, where OpenSpiel's version
needs cvxpy). Unlike a transitive rating, neither moves when an agent is copied."""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np


def payoff_matrix(records: Iterable[Any], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``M[i,j]`` = mean return of i in 2-player games against j; ``C[i,j]`` = games. Unplayed
    pairs (and the diagonal) read 0."""
    idx = {n: i for i, n in enumerate(names)}
    n = len(names)
    S, C = np.zeros((n, n)), np.zeros((n, n))
    for r in records:
        if len(r.seats) != 2 or r.seats[0] == r.seats[1]:
            continue
        i, j = idx[r.seats[0]], idx[r.seats[1]]
        S[i, j] += r.returns[0]
        S[j, i] += r.returns[1]
        C[i, j] += 1
        C[j, i] += 1
    return np.divide(S, C, out=np.zeros_like(S), where=C > 0), C


def _fixation(u: float, m: int) -> float:
    """Probability that one mutant with fitness advantage ``u`` (= α·Δf) takes over a population
    of ``m``: ``(1 − e^{−u}) / (1 − e^{−m u})``, ``1/m`` at ``u = 0``, computed without overflow."""
    if abs(u) < 1e-12:
        return 1.0 / m
    if u > 0:
        return math.expm1(-u) / math.expm1(-m * u)
    v = -u
    return math.exp(-(m - 1) * v) * math.expm1(-v) / math.expm1(-m * v)


def alpha_rank(payoffs: np.ndarray, alpha: float = 100.0, m: int = 50) -> np.ndarray:
    """α-Rank (Omidshafiei et al. 2019) of a symmetric 2-player game, one population, local
    selection: the stationary distribution of the chain that moves from strategy s to r with
    probability ``η·ρ(r, s)``, ``η = 1/(K − 1)``, ``u = α(M[r,s] − M[s,r])``. Matches
    OpenSpiel's ``alpharank.compute([M], m, alpha)`` (checked in the tests) without importing
    its plotting stack."""
    M = np.asarray(payoffs, dtype=float)
    k = M.shape[0]
    if k < 2:
        return np.ones(k)
    eta = 1.0 / (k - 1)
    P = np.zeros((k, k))
    for s in range(k):
        for r in range(k):
            if r != s:
                P[s, r] = eta * _fixation(alpha * (M[r, s] - M[s, r]), m)
        P[s, s] = 1.0 - P[s].sum()
    A = np.vstack([P.T - np.eye(k), np.ones(k)])
    b = np.zeros(k + 1)
    b[-1] = 1.0
    pi = np.linalg.lstsq(A, b, rcond=None)[0]
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def nash_averaging(A: np.ndarray, eps: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-entropy symmetric Nash ``p*`` of the antisymmetric part of ``A`` and the Nash
    averaged scores ``A p*`` (Balduzzi et al. 2018). Invariant to duplicated agents.

    Two cases are exact without a solver. When the uniform distribution is an equilibrium
    (``A u ≤ eps``: e.g. every pair level, as in a duplicate-deal round robin of equal agents)
    it is the answer, having the most entropy of all. An agent that beats every other (``A[i, j] > 0`` for all ``j ≠ i``, ``eps = 0``) is the
    unique equilibrium: any mass elsewhere gives it ``(A p)_i > 0``. Then ``p*`` is exact and
    scipy.optimize (~0.3 s of import, most of a 10⁴-game tournament's fixed cost) is not
    loaded; the solver's answer there was only near it (for two agents SLSQP stopped at its
    starting point, ``p = (0.9995, 0.0005)``)."""
    A = np.asarray(A, dtype=float)
    A = (A - A.T) / 2.0
    n = A.shape[0]
    if n == 1:
        return np.ones(1), np.zeros(1)
    uniform = np.full(n, 1.0 / n)
    scores = A @ uniform
    if np.all(scores <= eps):  # uniform is an equilibrium, and no distribution has more entropy
        return uniform, scores
    if eps == 0.0:
        beats = (A > 0) | np.eye(n, dtype=bool)
        winners = np.flatnonzero(beats.all(axis=1))
        if winners.size:  # at most one agent can beat all others
            p = np.zeros(n)
            p[winners[0]] = 1.0
            return p, A @ p
    from scipy.optimize import linprog, minimize  # here: only a pool without an agent that beats all

    # a feasible point: an LP for any symmetric equilibrium (A p ≤ eps, p in the simplex)
    lp = linprog(
        np.zeros(n), A_ub=A, b_ub=np.full(n, eps), A_eq=np.ones((1, n)), b_eq=[1.0], bounds=[(0, 1)] * n, method="highs"
    )
    p0 = lp.x if lp.success else np.full(n, 1.0 / n)
    p0 = 0.999 * p0 + 0.001 / n

    def negent(p: np.ndarray) -> tuple[float, np.ndarray]:
        q = np.clip(p, 1e-15, None)
        return float(np.sum(q * np.log(q))), np.log(q) + 1.0

    cons = [
        {"type": "eq", "fun": lambda p: np.sum(p) - 1.0, "jac": lambda p: np.ones(n)},
        {"type": "ineq", "fun": lambda p: eps - A @ p, "jac": lambda p: -A},
    ]
    res = minimize(
        negent,
        p0,
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=cons,
        options={"ftol": 1e-12, "maxiter": 500},
    )
    p = np.clip(res.x if res.success else p0, 0.0, None)
    p /= p.sum()
    return p, A @ p
