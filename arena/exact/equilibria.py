"""Equilibria of n-player general-sum normal-form games: correlated (CE), coarse correlated (CCE)
and risk-averse (RAE).

A game is one payoff tensor per player, ``payoffs[i][a_0, ..., a_{n-1}]``, the shape meta-solvers
see. A (C)CE is a *joint* distribution over pure profiles, a polytope cut out by linear
deviation constraints (Marris, Muller, Lanctot, Tuyls, Graepel, *Multi-Agent Training beyond
Zero-Sum with Correlated Equilibrium Meta-Solvers*, arXiv 2106.09435):

- CCE, for every player i and deviation a': ``sum_a sigma(a) (u_i(a', a_-i) - u_i(a)) <= 0``;
- CE, for every i, recommendation a_i and deviation a': the same sum over profiles with a_i only.

Why two selection criteria: the polytope is rarely a point. Max-welfare is an LP (a vertex, may
be one of many optima); max-entropy is strictly concave, so unique, and solved through its dual
``min_{lambda >= 0} log sum_a exp(-(G^T lambda)_a)``, whose solution is a Gibbs distribution.

The RAE (Slumbers, Mguni, McAleer, Blumberg, Yang, Wang, arXiv 2205.15434) is a product profile
where each player's mixture minimises ``risk * x^T Cov(y) x - x^T mu(y)`` against the others'
mixtures ``y``: the variance the opponents' randomness puts on its payoff, traded against the
mean. It is computed by fictitious play from uniform beliefs.
"""

from __future__ import annotations

import contextlib
from typing import Any, Sequence

import numpy as np

from arena.errors import ArenaError

try:  # optional, a speed-up only (see _one_blas_thread)
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

KINDS = ("ce", "cce")


def check_payoffs(payoffs: Sequence[np.ndarray], who: str = "equilibrium solver") -> list[np.ndarray]:
    """The tensors as float arrays, or one ArenaError line saying what is wrong with their shapes."""
    tables = [np.asarray(t, dtype=float) for t in payoffs]
    n = len(tables)
    if n < 2:
        raise ArenaError(f"{who}: needs one payoff tensor per player for 2 or more players, got {n}")
    shape = tables[0].shape
    for i, t in enumerate(tables):
        if t.ndim != n or t.shape != shape:
            raise ArenaError(
                f"{who}: payoff tensor {i} has shape {t.shape}; {n} players need {n}-dimensional "
                f"tensors of one shape (player 0's is {shape})"
            )
        if not np.all(np.isfinite(t)):
            raise ArenaError(f"{who}: payoff tensor {i} has non-finite entries")
    if min(shape) < 1:
        raise ArenaError(f"{who}: every player needs at least one strategy, shape is {shape}")
    return tables


def is_two_player_zero_sum(payoffs: Sequence[np.ndarray], tol: float = 1e-9) -> bool:
    tables = [np.asarray(t, dtype=float) for t in payoffs]
    return len(tables) == 2 and bool(np.allclose(tables[0] + tables[1], 0.0, atol=tol))


def _gains(table: np.ndarray, i: int, dev: int) -> np.ndarray:
    """Player i's gain in every profile from switching its own action to ``dev``."""
    return np.expand_dims(np.take(table, dev, axis=i), i) - table


def constraint_rows(payoffs: Sequence[np.ndarray], kind: str) -> np.ndarray:
    """The deviation constraints ``G sigma <= 0`` as rows over the flattened joint profiles
    (C-order), CCE: sum_i |A_i| rows; CE: sum_i |A_i|(|A_i|-1) rows."""
    if kind not in KINDS:
        raise ArenaError(f"equilibrium kind must be one of {', '.join(KINDS)}, not {kind!r}")
    rows = []
    for i, table in enumerate(payoffs):
        k = table.shape[i]
        own = np.indices(table.shape)[i]
        for dev in range(k):
            g = _gains(table, i, dev)
            if kind == "cce":
                rows.append(g.ravel())
                continue
            rows.extend(np.where(own == rec, g, 0.0).ravel() for rec in range(k) if rec != dev)
    size = int(np.prod(payoffs[0].shape))
    return np.asarray(rows, dtype=float).reshape(len(rows), size) if rows else np.zeros((0, size))


def support(G: np.ndarray) -> np.ndarray:
    """Which profiles some point of ``{sigma >= 0, G sigma <= 0}`` gives mass, by one LP: in the
    cone, any such profile can reach 1, and sums stay in the cone, so ``max sum_a y_a``
    subject to ``y <= min(sigma, 1)`` is attained with y = 1 exactly on the largest support."""
    from scipy import sparse
    from scipy.optimize import linprog

    m, n = G.shape
    c = np.concatenate([np.zeros(n), -np.ones(n)])
    eye = sparse.identity(n, format="csr")
    A = sparse.vstack([sparse.hstack([sparse.csr_matrix(G), sparse.csr_matrix((m, n))]), sparse.hstack([-eye, eye])])
    res = linprog(c, A_ub=A, b_ub=np.zeros(m + n), bounds=[(0.0, None)] * n + [(0.0, 1.0)] * n, method="highs")
    if not res.success:
        raise ArenaError(f"equilibrium support: the LP failed ({res.message})")
    return res.x[n:] > 0.5


def max_welfare(payoffs: Sequence[np.ndarray], kind: str = "cce") -> np.ndarray:
    """The (C)CE maximising the sum of expected payoffs, by LP (HiGHS); a joint distribution."""
    from scipy.optimize import linprog

    tables = check_payoffs(payoffs, f"max-welfare {kind}")
    G = constraint_rows(tables, kind)
    c = -np.sum(tables, axis=0).ravel()
    n = c.size
    res = linprog(
        c,
        A_ub=G,
        b_ub=np.zeros(len(G)),
        A_eq=np.ones((1, n)),
        b_eq=[1.0],
        bounds=[(0.0, None)] * n,
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if not res.success:
        raise ArenaError(f"max-welfare {kind}: the LP failed ({res.message})")
    x = np.clip(res.x, 0.0, None)
    return (x / x.sum()).reshape(tables[0].shape)


def max_entropy(
    payoffs: Sequence[np.ndarray], kind: str = "cce", tol: float = 1e-10, max_iter: int = 1000
) -> np.ndarray:
    """The (C)CE of maximum Shannon entropy (unique), through its convex dual; a joint
    distribution. Where the polytope forces some profiles to 0 the dual optimum is at infinity,
    so it is solved again on the largest support. Its answer may violate the constraints
    (by ``tol`` if it converges within ``max_iter`` L-BFGS-B steps, which large CE meta-games
    can take more than), so it is then moved to the nearest (in L1) exact equilibrium, by LP:
    always a (C)CE within ``tol``, of maximum entropy up to that step."""
    tables = check_payoffs(payoffs, f"max-entropy {kind}")
    G = constraint_rows(tables, kind)
    keep = np.ones(G.shape[1], dtype=bool)
    x = _max_entropy_on(G, keep, tol, max_iter)
    if len(G) and (G @ x).max() > 1e-7:  # far off: some profiles must get no mass
        keep = support(G)
        x = _max_entropy_on(G, keep, tol, max_iter)
    return nearest_feasible(G, x, tol).reshape(tables[0].shape)


def _max_entropy_on(G_all: np.ndarray, keep: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """The dual ``min_{lambda >= 0} log sum_a exp(-(G^T lambda)_a)`` over the profiles ``keep``."""
    from scipy.optimize import minimize

    G = G_all[:, keep]
    scale = np.abs(G).max(axis=1) if len(G) else np.zeros(0)
    G = G[scale > 0] / scale[scale > 0, None]  # all-zero rows constrain nothing
    out = np.zeros(keep.size)
    if not len(G):
        out[keep] = 1.0 / keep.sum()
        return out

    def dual(lam: np.ndarray) -> tuple[float, np.ndarray]:
        z = -(lam @ G)
        m = z.max()
        w = np.exp(z - m)
        s = w.sum()
        return float(m + np.log(s)), -(G @ (w / s))

    opts = {"gtol": tol, "ftol": 0.0, "maxiter": max_iter}
    with _one_blas_thread():
        lam = minimize(
            dual, np.zeros(len(G)), jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * len(G), options=opts
        ).x
    out[keep] = _gibbs(G, lam)
    return out


def _one_blas_thread() -> Any:
    """L-BFGS-B makes many tiny BLAS calls; on a busy machine waking BLAS threads for each
    costs milliseconds (measured 4 ms per step instead of 0.1), so they are held to one."""
    return contextlib.nullcontext() if threadpool_limits is None else threadpool_limits(1, user_api="blas")


def nearest_feasible(G: np.ndarray, x: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """The distribution closest to ``x`` in L1 that satisfies ``G sigma <= 0`` (to HiGHS's 1e-10),
    or ``x`` itself if it already does: ``min sum_a t_a`` with ``|sigma - x| <= t``."""
    from scipy import sparse
    from scipy.optimize import linprog

    if not len(G) or (G @ x).max() <= tol:
        return x
    m, n = G.shape
    eye = sparse.identity(n, format="csr")
    A = sparse.vstack(
        [
            sparse.hstack([sparse.csr_matrix(G), sparse.csr_matrix((m, n))]),
            sparse.hstack([eye, -eye]),
            sparse.hstack([-eye, -eye]),
        ]
    )
    b = np.concatenate([np.zeros(m), x, -x])
    eq = np.hstack([np.ones((1, n)), np.zeros((1, n))])
    opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    c = np.concatenate([np.zeros(n), np.ones(n)])
    res = linprog(c, A_ub=A, b_ub=b, A_eq=eq, b_eq=[1.0], bounds=[(0.0, None)] * (2 * n), method="highs", options=opts)
    if not res.success:
        raise ArenaError(f"equilibrium polish: the LP failed ({res.message})")
    y = np.clip(res.x[:n], 0.0, None)
    return y / y.sum()


def _gibbs(G: np.ndarray, lam: np.ndarray) -> np.ndarray:
    z = -(lam @ G)
    w = np.exp(z - z.max())
    return w / w.sum()


def joint_values(payoffs: Sequence[np.ndarray], joint: np.ndarray) -> np.ndarray:
    """Every player's expected payoff under the joint distribution."""
    return np.asarray([float(np.sum(np.asarray(t, dtype=float) * joint)) for t in payoffs])


def gaps(payoffs: Sequence[np.ndarray], joint: np.ndarray, kind: str = "cce") -> np.ndarray:
    """Per player, how much it gains by its best deviation from ``joint``: CCE, the best single
    deviation; CE, the sum over recommendations of the best deviation from each (0 at a (C)CE)."""
    tables = check_payoffs(payoffs, f"{kind} gap")
    joint = np.asarray(joint, dtype=float)
    if joint.shape != tables[0].shape:
        raise ArenaError(f"{kind} gap: the joint distribution has shape {joint.shape}, the game {tables[0].shape}")
    out = []
    for i, table in enumerate(tables):
        k = table.shape[i]
        per_dev = np.stack(
            [np.moveaxis(_gains(table, i, d) * joint, i, 0).reshape(k, -1).sum(axis=1) for d in range(k)]
        )
        # per_dev[d, r]: gain of deviating to d when recommended r
        out.append(
            max(0.0, float(per_dev.sum(axis=1).max()))
            if kind == "cce"
            else float(np.maximum(per_dev.max(axis=0), 0).sum())
        )
    return np.asarray(out)


def marginals(joint: np.ndarray) -> list[np.ndarray]:
    """Each player's marginal of a joint distribution."""
    n = joint.ndim
    return [joint.sum(axis=tuple(q for q in range(n) if q != p)) for p in range(n)]


# -- risk-averse equilibrium ---------------------------------------------------------------------
def mean_and_covariance(table: np.ndarray, i: int, others: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of player i's pure strategies' payoffs when the others draw a pure
    profile from their mixtures ``others`` (one per other player, in seat order)."""
    M = np.moveaxis(table, i, 0).reshape(table.shape[i], -1)
    w = np.ones(1)
    for y in others:
        w = np.outer(w, y).ravel()
    mu = M @ w
    cov = (M * w) @ M.T - np.outer(mu, mu)
    return mu, (cov + cov.T) / 2


def risk_averse_response(mu: np.ndarray, cov: np.ndarray, risk: float) -> np.ndarray:
    """argmin over the simplex of ``risk * x^T cov x - mu^T x`` (a convex QP, by SLSQP)."""
    from scipy.optimize import minimize

    k = mu.size
    if k == 1:
        return np.ones(1)
    start = np.zeros(k)
    start[int(np.argmax(mu))] = 1.0
    res = minimize(
        lambda x: (risk * x @ cov @ x - mu @ x, 2 * risk * cov @ x - mu),
        start,
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * k,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0, "jac": lambda x: np.ones(k)}],
        options={"ftol": 1e-12, "maxiter": 200},
    )
    x = np.clip(res.x, 0.0, None)
    return x / x.sum()


def risk_averse_equilibrium(
    payoffs: Sequence[np.ndarray], risk: float = 0.1, iterations: int = 300
) -> list[np.ndarray]:
    """Fictitious play of risk-averse responses from uniform beliefs; returns the average
    mixtures (the RAE, one mixture per player). ``risk`` = 0 is plain fictitious play."""
    tables = check_payoffs(payoffs, "rae")
    if risk < 0:
        raise ArenaError(f"rae: risk must be >= 0, got {risk}")
    n = len(tables)
    avg = [np.full(k, 1.0 / k) for k in tables[0].shape]
    for t in range(1, int(iterations) + 1):
        responses = []
        for i, table in enumerate(tables):
            mu, cov = mean_and_covariance(table, i, [avg[q] for q in range(n) if q != i])
            responses.append(risk_averse_response(mu, cov, risk))
        avg = [a + (r - a) / (t + 1) for a, r in zip(avg, responses)]
    return avg
