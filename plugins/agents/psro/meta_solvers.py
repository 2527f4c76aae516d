"""Meta-solvers: from the meta-game payoff tensors to one mixture per player's population.

``meta_games[i]`` holds player ``i``'s payoff for every pure profile (shape ``|Π_0| x ... x
|Π_{n-1}|``). A solver returns one probability vector per player: uniform, Nash LP, PRD, regret
matching, α-Rank, and SHOR-PSRO's hybrid with its annealed training solver and its separate
evaluation solver (Listing 6 of Li, Schultz, Hennes and Lanctot, *Discovering Multiagent Learning
Algorithms with Large Language Models*, arXiv 2602.16928); for general-sum and n-player
meta-games the max-welfare and max-entropy CE/CCE (``mwce``, ``mwcce``, ``mece``, ``mecce``: a joint
distribution, so PSRO becomes JPSRO) and the risk-averse equilibrium (``rae``).

Why objects and not functions: SHOR-PSRO's training solver anneals with the number of times it
has been called, so a solver may carry state (``calls``), which PSRO checkpoints with it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from arena.errors import ArenaError
from arena.exact import equilibria

Mixtures = list[np.ndarray]


def payoff_vs(meta_games: Sequence[np.ndarray], sigma: Sequence[np.ndarray], p: int) -> np.ndarray:
    """Expected payoff of each of player ``p``'s pure strategies against the others' ``sigma``."""
    t = meta_games[p]
    n = t.ndim
    if n == 2:  # the common case, one matrix-vector product
        return t @ sigma[1] if p == 0 else sigma[0] @ t
    for q in reversed(range(n)):  # contract the trailing axes first so indices stay valid
        if q != p:
            t = np.tensordot(t, sigma[q], axes=([q], [0]))
    return t


def _normalize(x: np.ndarray) -> np.ndarray:
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    s = x.sum()
    return x / s if s > 0 else np.full(x.shape, 1.0 / x.size)


class MetaSolver:
    """Base class: ``solver(meta_games) -> [mixture per player]``. A correlated solver (``kind``
    "ce" or "cce") also has ``joint(meta_games)``, a distribution over joint profiles, which
    PSRO best-responds to instead of the product of the mixtures (JPSRO)."""

    name = "base"
    kind: str | None = None

    def __call__(self, meta_games: Sequence[np.ndarray]) -> Mixtures:
        raise NotImplementedError

    def state(self) -> dict:
        return {}

    def load_state(self, state: dict) -> None:
        pass


class Uniform(MetaSolver):
    """Every population member equally: PSRO with it is fictitious play over the population."""

    name = "uniform"

    def __call__(self, meta_games):
        return [np.full(k, 1.0 / k) for k in np.shape(meta_games[0])]


def zero_sum_nash(A: np.ndarray) -> tuple[np.ndarray, float]:
    """Row player's maximin strategy of the matrix game ``A`` (row payoffs) and its value, by LP:
    max v s.t. x^T A[:, j] >= v for all j, x in the simplex."""
    from scipy.optimize import linprog

    A = np.asarray(A, dtype=float)
    m, k = A.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-A.T, np.ones((k, 1))])
    A_eq = np.zeros((1, m + 1))
    A_eq[0, :m] = 1.0
    res = linprog(
        c, A_ub=A_ub, b_ub=np.zeros(k), A_eq=A_eq, b_eq=[1.0], bounds=[(0, None)] * m + [(None, None)], method="highs"
    )
    if not res.success:
        raise ArenaError(f"meta-solver 'nash': the LP failed ({res.message})")
    return _normalize(res.x[:m]), float(res.x[-1])


class Nash(MetaSolver):
    """Exact Nash of a 2-player zero-sum meta-game (one LP per player): PSRO = Double Oracle."""

    name = "nash"

    def __call__(self, meta_games):
        if len(meta_games) != 2:
            raise ArenaError(
                "meta-solver 'nash' solves 2-player zero-sum meta-games; use prd, rm, alpharank "
                "or shor for more players"
            )
        M0, M1 = np.asarray(meta_games[0], float), np.asarray(meta_games[1], float)
        x, _ = zero_sum_nash(M0)
        y, _ = zero_sum_nash(M1.T)
        return [x, y]


class ProjectedReplicatorDynamics(MetaSolver):
    """x <- x + dt·x∘(u - x·u) for every player at once, then project onto {x_k >= gamma} and
    renormalize; returns the average of all iterates (OpenSpiel's defaults: dt 1e-3,
    gamma 1e-6, 1e5 steps — fewer steps here by default, see ``steps``)."""

    name = "prd"

    def __init__(self, steps: int = 20_000, dt: float = 1e-3, gamma: float = 1e-6) -> None:
        self.steps, self.dt, self.gamma = int(steps), float(dt), float(gamma)

    def __call__(self, meta_games):
        meta_games = [np.asarray(m, dtype=float) for m in meta_games]
        n = len(meta_games)
        x = [np.full(k, 1.0 / k) for k in np.shape(meta_games[0])]
        avg = [np.zeros_like(v) for v in x]
        for _ in range(self.steps):
            u = [payoff_vs(meta_games, x, p) for p in range(n)]
            for p in range(n):
                x[p] = x[p] + self.dt * x[p] * (u[p] - x[p] @ u[p])
                x[p] = np.maximum(x[p], self.gamma)
                x[p] /= x[p].sum()
                avg[p] += x[p]
        return [_normalize(a) for a in avg]


class RegretMatching(MetaSolver):
    """Regret-matching self-play on the meta-game (simultaneous updates); returns the average."""

    name = "rm"

    def __init__(self, iterations: int = 10_000) -> None:
        self.iterations = int(iterations)

    def __call__(self, meta_games):
        meta_games = [np.asarray(m, dtype=float) for m in meta_games]
        n = len(meta_games)
        shape = np.shape(meta_games[0])
        R = [np.zeros(k) for k in shape]
        avg = [np.zeros(k) for k in shape]
        x = [np.full(k, 1.0 / k) for k in shape]
        for _ in range(self.iterations):
            u = [payoff_vs(meta_games, x, p) for p in range(n)]
            for p in range(n):
                R[p] += u[p] - x[p] @ u[p]
                avg[p] += x[p]
            x = [_normalize(np.maximum(r, 0.0)) if r.max() > 0 else np.full(r.size, 1.0 / r.size) for r in R]
        return [_normalize(a) for a in avg]


class AlphaRank(MetaSolver):
    """α-Rank (OpenSpiel's implementation, m=50, α=100): per-player marginals of the
    stationary distribution over pure profiles."""

    name = "alpharank"

    def __init__(self, alpha: float = 100.0, m: int = 50) -> None:
        self.alpha, self.m = float(alpha), int(m)

    def __call__(self, meta_games):
        import warnings

        from open_spiel.python.egt import alpharank

        shape = np.shape(meta_games[0])
        if all(k == 1 for k in shape):
            return [np.ones(1) for _ in shape]
        tables = [np.asarray(t, dtype=float) for t in meta_games]
        with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore")
            try:
                pi = np.asarray(alpharank.compute(tables, m=self.m, alpha=self.alpha)[2], dtype=float)
            except (ValueError, np.linalg.LinAlgError):
                pi = np.full(1, np.nan)
            if not np.all(np.isfinite(pi)):
                # large payoffs overflow the Fermi probabilities at finite alpha: use its limit
                pi = np.asarray(
                    alpharank.compute(tables, m=self.m, alpha=self.alpha, use_inf_alpha=True, inf_alpha_eps=0.01)[2],
                    dtype=float,
                )
        joint = pi.reshape(shape)
        out = []
        for p in range(len(shape)):
            axes = tuple(q for q in range(len(shape)) if q != p)
            out.append(_normalize(joint.sum(axis=axes)))
        return out


class Correlated(MetaSolver):
    """Max-welfare (LP) or max-entropy (C)CE of an n-player general-sum meta-game (JPSRO's
    meta-solvers, Marris et al., arXiv 2106.09435); ``__call__`` gives the joint's marginals."""

    def __init__(self, kind: str, objective: str) -> None:
        self.kind, self.objective = kind, objective
        self.name = ("mw" if objective == "welfare" else "me") + kind

    def joint(self, meta_games: Sequence[np.ndarray]) -> np.ndarray:
        tables = equilibria.check_payoffs(meta_games, f"meta-solver '{self.name}'")
        if equilibria.is_two_player_zero_sum(tables):
            raise ArenaError(
                f"meta-solver '{self.name}' is for general-sum or n-player meta-games; this one is "
                "2-player zero-sum, where a (coarse) correlated equilibrium is a Nash one: use nash"
            )
        solve = equilibria.max_welfare if self.objective == "welfare" else equilibria.max_entropy
        return solve(tables, self.kind)

    def __call__(self, meta_games):
        return [_normalize(m) for m in equilibria.marginals(self.joint(meta_games))]


class RiskAverse(MetaSolver):
    """Risk-averse equilibrium (Slumbers et al., arXiv 2205.15434): each mixture trades the
    variance the others' mixtures put on its payoff (weight ``risk``) against the mean."""

    name = "rae"

    def __init__(self, risk: float = 0.1, iterations: int = 300) -> None:
        self.risk, self.iterations = float(risk), int(iterations)

    def __call__(self, meta_games):
        eq = equilibria.risk_averse_equilibrium(meta_games, self.risk, self.iterations)
        return [_normalize(m) for m in eq]


# -- SHOR-PSRO (Li et al. 2026, Listing 6) ----------------------------------------------------
def hybrid(
    meta_games: Sequence[np.ndarray], iters: int, lam: float, temp: float, beta: float, div: float, avg: bool
) -> Mixtures:
    """SHOR-PSRO's internal routine: optimistic RM+ with a diversity bonus, blended with a
    softmax best pure strategy (eq. 8); every step as in Listing 6 of arXiv 2602.16928."""
    meta_games = [np.asarray(m, dtype=float) for m in meta_games]
    n = len(meta_games)
    shape = np.shape(meta_games[0])
    sigma = [np.full(k, 1.0 / k) for k in shape]
    C = [np.zeros(k) for k in shape]
    g_prev = [np.zeros(k) for k in shape]
    A = [np.zeros(k) for k in shape]
    for _ in range(int(iters)):
        for p in range(n):
            u = payoff_vs(meta_games, sigma, p)
            g = u - u.mean()
            go = (1.0 + beta) * g - beta * g_prev[p]
            go = go + div * (1.0 - sigma[p])
            m = np.abs(go).max()
            if m > 1e-8:
                go = go / m
            C[p] = np.maximum(0.0, C[p] + go)
            s = C[p].sum()
            orm = C[p] / s if s > 1e-12 else np.full(C[p].size, 1.0 / C[p].size)
            z = (u - u.max()) / temp
            sm = np.exp(z)
            sm /= sm.sum()
            sigma[p] = (1.0 - lam) * orm + lam * sm
            g_prev[p] = g
            if avg:
                A[p] += sigma[p]
    return [_normalize(a) for a in A] if avg else [_normalize(s) for s in sigma]


class ShorTraining(MetaSolver):
    """SHOR-PSRO's training solver: annealed blend/temperature/diversity over its first 75
    calls, momentum 0.5, time-averaged."""

    name = "shor"

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, meta_games):
        self.calls += 1
        prog = min(1.0, self.calls / 75.0)
        lam = float(np.clip(0.30 + (0.05 - 0.30) * prog, 0.05, 0.30))
        temp = float(np.clip(0.50 + (0.01 - 0.50) * prog, 0.01, 0.50))
        div = float(np.clip(0.05 + (0.001 - 0.05) * prog, 0.001, 0.05))
        k0 = int(np.shape(meta_games[0])[0])
        iters = int(np.clip(1000 + 20 * (k0 - 1), 1000, 5000))
        return hybrid(meta_games, iters, lam, temp, 0.5, div, avg=True)

    def state(self) -> dict:
        return {"calls": self.calls}

    def load_state(self, state: dict) -> None:
        self.calls = int(state.get("calls", 0))


class ShorEval(MetaSolver):
    """SHOR-PSRO's evaluation solver: λ 0.01, temperature 0.001, no diversity, momentum 0.2,
    last iterate."""

    name = "shor_eval"

    def __call__(self, meta_games):
        k0 = int(np.shape(meta_games[0])[0])
        iters = int(np.clip(8000 + 50 * (k0 - 1), 8000, 15000))
        return hybrid(meta_games, iters, 0.01, 0.001, 0.2, 0.0, avg=False)


SOLVERS = {
    "uniform": Uniform,
    "nash": Nash,
    "prd": ProjectedReplicatorDynamics,
    "rm": RegretMatching,
    "alpharank": AlphaRank,
    "shor": ShorTraining,
    "shor_eval": ShorEval,
    "mwce": lambda: Correlated("ce", "welfare"),
    "mwcce": lambda: Correlated("cce", "welfare"),
    "mece": lambda: Correlated("ce", "entropy"),
    "mecce": lambda: Correlated("cce", "entropy"),
    "rae": RiskAverse,
}
EVAL_DEFAULT = {"shor": "shor_eval"}
"""A training solver's evaluation partner when none is named (SHOR-PSRO); others evaluate with themselves."""


def make_meta_solver(name: str) -> MetaSolver:
    if name not in SOLVERS:
        raise ArenaError(f"unknown meta-solver '{name}'; known: {', '.join(SOLVERS)}")
    return SOLVERS[name]()
