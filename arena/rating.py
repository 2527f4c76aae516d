"""Rating systems, all computed from stored match records (so every rating is reproducible).

- **Elo** — online, order-dependent; replayed in plan order so a resumed run equals a clean one.
- **OpenSkill** (Plackett–Luce by default) through the ``openskill`` package: 1v1, free-for-all
  and teams. Teams come from ``info["teams"]`` (lists of seats) when a game reports them, with
  ``info["winner"]`` (a team index) deciding the ranks if present; otherwise every seat is its
  own team, ranked by its return.
- **Bradley–Terry** maximum likelihood with a bootstrap confidence interval (the Chatbot Arena
  recipe): ``P(i beats j) = σ(ln10·(θi − θj))``, reported as ``400·θ + 1000`` centred on the
  pool mean. A tiny ridge term keeps an undefeated agent finite.
- **Game-theoretic views** of the empirical payoff matrix: α-Rank (single population, checked
  against OpenSpiel's ``alpharank``, whose import alone costs seconds of plotting libraries) and
  Nash averaging (maximum-entropy symmetric Nash solved with scipy; OpenSpiel's version needs
  cvxpy).

Formulas and oracle numbers: ``shared/papers/ranking_league.md`` §3–4.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
from scipy.optimize import linprog, minimize

from arena.errors import ArenaError

LN10 = math.log(10.0)


# -- outcomes ---------------------------------------------------------------------------------
def pair_score(ra: float, rb: float, scale: float | None = None) -> float:
    """a's score against b in one game, in [0, 1].

    Without ``scale``: 1 for the higher return, 0.5 on equal returns, 0 otherwise. With
    ``scale`` (the game's utility range ``max − min``): the *margin* score
    ``1/2 + (ra − rb)/(2·scale)``, whose expectation is monotone in the expected payoff — the
    right notion for poker-like games where winning many small pots loses to winning big
    ones. For win/draw/loss games (returns ±1, 0) both agree."""
    if scale:
        return min(1.0, max(0.0, 0.5 + (ra - rb) / (2.0 * scale)))
    return 1.0 if ra > rb else 0.5 if ra == rb else 0.0


def pairwise_outcomes(records: Iterable[Any], scale: float | None = None) -> list[tuple[str, str, float]]:
    """Every pair of seats held by different agents in every game: ``(a, b, score of a)``
    (see :func:`pair_score`).

    A 2-player game gives one comparison; a free-for-all of n gives n(n−1)/2. Seats of the
    same agent (self-play) are not compared, nor teammates when the game reports
    ``info["teams"]``."""
    out = []
    for r in records:
        seats, rets = r.seats, r.returns
        team = {s: t for t, members in enumerate((getattr(r, "info", None) or {}).get("teams") or [])
                for s in members}
        for i in range(len(seats)):
            for j in range(i + 1, len(seats)):
                if seats[i] != seats[j] and (i not in team or team.get(i) != team.get(j)):
                    out.append((seats[i], seats[j], pair_score(rets[i], rets[j], scale)))
    return out


# -- Elo ----------------------------------------------------------------------------------------
def elo_expected(ra: float, rb: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))


def elo_update(ra: float, rb: float, score_a: float, k: float = 32.0) -> tuple[float, float]:
    """One game: ``R' = R + K(S − E)``, zero-sum between the two players."""
    delta = k * (score_a - elo_expected(ra, rb))
    return ra + delta, rb - delta


def elo(records: Iterable[Any], k: float = 32.0, initial: float = 1500.0,
        names: Sequence[str] = (), scale: float | None = None) -> dict[str, float]:
    """Online Elo over the records in the order given (the store gives plan order)."""
    ratings = {n: initial for n in names}
    for a, b, s in pairwise_outcomes(records, scale):
        ra, rb = ratings.setdefault(a, initial), ratings.setdefault(b, initial)
        ratings[a], ratings[b] = elo_update(ra, rb, s, k)
    return ratings


# -- OpenSkill ------------------------------------------------------------------------------------
_OPENSKILL_MODELS = ("PlackettLuce", "BradleyTerryFull", "BradleyTerryPart", "ThurstoneMostellerFull",
                     "ThurstoneMostellerPart")


def openskill_model(name: str = "PlackettLuce") -> Any:
    import openskill.models as models

    if name not in _OPENSKILL_MODELS:
        raise ArenaError(f"unknown OpenSkill model '{name}'; known: {', '.join(_OPENSKILL_MODELS)}")
    return getattr(models, name)()


def teams_and_ranks(seats: Sequence[str], returns: Sequence[float], info: dict | None) -> tuple[list[list[int]], list[int]]:
    """Team assignment (lists of seats) and ranks (lower is better) for one game."""
    info = info or {}
    teams = info.get("teams")
    if teams:
        teams = [[int(s) for s in t] for t in teams]
        winner = info.get("winner")
        if isinstance(winner, int) and not isinstance(winner, bool) and 0 <= winner < len(teams):
            return teams, [0 if t == winner else 1 for t in range(len(teams))]
        totals = [sum(returns[s] for s in t) for t in teams]
    else:
        teams = [[s] for s in range(len(seats))]
        totals = list(returns)
    order = sorted(set(totals), reverse=True)
    return teams, [order.index(x) for x in totals]


def openskill(records: Iterable[Any], model: str = "PlackettLuce",
              names: Sequence[str] = ()) -> dict[str, tuple[float, float]]:
    """``{agent: (mu, sigma)}`` after rating every game in order (1v1, free-for-all or teams).

    A game where one agent sits on two different teams (self-play) tells nothing about it and is
    skipped; an agent twice in one team counts once."""
    m = openskill_model(model)
    ratings = {n: m.rating(name=n) for n in names}
    for r in records:
        teams, ranks = teams_and_ranks(r.seats, r.returns, r.info)
        groups = []
        for t in teams:
            members = list(dict.fromkeys(r.seats[s] for s in t))
            groups.append(members)
        flat = [a for g in groups for a in g]
        if len(flat) != len(set(flat)) or len(groups) < 2:
            continue
        for a in flat:
            ratings.setdefault(a, m.rating(name=a))
        new = m.rate([[ratings[a] for a in g] for g in groups], ranks=ranks)
        for g, ng in zip(groups, new):
            for a, nr in zip(g, ng):
                ratings[a] = nr
    return {a: (float(x.mu), float(x.sigma)) for a, x in ratings.items()}


# -- Bradley–Terry --------------------------------------------------------------------------------
@dataclass
class BTFit:
    """Bradley–Terry ratings on the Elo scale (``400·θ + 1000``, centred), with 95% intervals."""

    names: list[str]
    rating: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    theta: np.ndarray
    cov: np.ndarray
    """Covariance of θ from the observed information (for uncertainty-guided pairing)."""

    def as_dict(self) -> dict[str, tuple[float, float, float]]:
        return {n: (float(r), float(lo), float(h)) for n, r, lo, h in zip(self.names, self.rating, self.lo, self.hi)}


def win_matrix(outcomes: Iterable[tuple[str, str, float]], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``W[i,j]`` = points of i against j (draws count half), ``N[i,j]`` = games between them."""
    idx = {n: i for i, n in enumerate(names)}
    n = len(names)
    W, N = np.zeros((n, n)), np.zeros((n, n))
    for a, b, s in outcomes:
        i, j = idx[a], idx[b]
        W[i, j] += s
        W[j, i] += 1.0 - s
        N[i, j] += 1
        N[j, i] += 1
    return W, N


def _bt_nll(theta: np.ndarray, W: np.ndarray, N: np.ndarray, ridge: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Negative log-likelihood (each pair counted once), its gradient and Hessian."""
    d = LN10 * (theta[:, None] - theta[None, :])
    logp = -np.logaddexp(0.0, -d)
    logq = -np.logaddexp(0.0, d)
    nll = -0.5 * np.sum(W * logp + (N - W) * logq) + ridge * np.sum(theta ** 2)
    p = np.exp(logp)
    g = -LN10 * np.sum(W - N * p, axis=1) + 2 * ridge * theta
    w = LN10 ** 2 * N * p * (1 - p)
    H = -w
    np.fill_diagonal(H, w.sum(axis=1) - np.diag(w) + 2 * ridge)
    return float(nll), g, H


def _bt_theta(W: np.ndarray, N: np.ndarray, ridge: float, x0: np.ndarray | None = None) -> np.ndarray:
    """Newton's method with step halving (the problem is small and strictly convex with the ridge)."""
    n = W.shape[0]
    theta = np.zeros(n) if x0 is None else np.array(x0, dtype=float)
    ridge = max(ridge, 1e-9)
    f, g, H = _bt_nll(theta, W, N, ridge)
    for _ in range(100):
        step = np.linalg.solve(H + 1e-12 * np.eye(n), g)
        t = 1.0
        while True:
            cand = theta - t * step
            fc, gc, Hc = _bt_nll(cand, W, N, ridge)
            if fc <= f + 1e-12 or t < 1e-8:
                break
            t *= 0.5
        theta, f, g, H = cand, fc, gc, Hc
        if np.max(np.abs(g)) < 1e-9 or np.max(np.abs(t * step)) < 1e-10:
            break
    return theta - theta.mean()


def _bt_cov(theta: np.ndarray, N: np.ndarray, ridge: float) -> np.ndarray:
    return np.linalg.pinv(_bt_nll(theta, np.zeros_like(N), N, max(ridge, 1e-9))[2])


def bradley_terry(outcomes: Sequence[tuple[str, str, float]], names: Sequence[str], bootstrap: int = 200,
                  seed: int = 0, ridge: float = 1e-3, ci: float = 0.95) -> BTFit:
    """Maximum-likelihood BT ratings; interval from ``bootstrap`` resamples of the games."""
    names = list(names)
    W, N = win_matrix(outcomes, names)
    theta = _bt_theta(W, N, ridge)
    rating = 400.0 * theta + 1000.0
    lo = hi = rating.copy()
    if bootstrap > 0 and outcomes:
        idx = {n: i for i, n in enumerate(names)}
        cells: dict[tuple[int, int, float], int] = {}
        for a, b, s in outcomes:
            key = (idx[a], idx[b], s)
            cells[key] = cells.get(key, 0) + 1
        keys = list(cells)
        counts = np.array([cells[k] for k in keys], dtype=float)
        ii = np.array([k[0] for k in keys])
        jj = np.array([k[1] for k in keys])
        ss = np.array([k[2] for k in keys])
        rng = np.random.default_rng(seed)
        total = int(counts.sum())
        samples = np.empty((bootstrap, len(names)))
        for b in range(bootstrap):
            c = rng.multinomial(total, counts / total)
            Wb, Nb = np.zeros_like(W), np.zeros_like(N)
            np.add.at(Wb, (ii, jj), c * ss)
            np.add.at(Wb, (jj, ii), c * (1 - ss))
            np.add.at(Nb, (ii, jj), c)
            np.add.at(Nb, (jj, ii), c)
            samples[b] = 400.0 * _bt_theta(Wb, Nb, ridge, theta) + 1000.0
        q = (1 - ci) / 2
        lo, hi = np.quantile(samples, q, axis=0), np.quantile(samples, 1 - q, axis=0)
    return BTFit(names, rating, lo, hi, theta, _bt_cov(theta, N, ridge))


# -- game-theoretic views -----------------------------------------------------------------------
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
    averaged scores ``A p*`` (Balduzzi et al. 2018). Invariant to duplicated agents."""
    A = np.asarray(A, dtype=float)
    A = (A - A.T) / 2.0
    n = A.shape[0]
    if n == 1:
        return np.ones(1), np.zeros(1)
    # a feasible point: an LP for any symmetric equilibrium (A p ≤ eps, p in the simplex)
    lp = linprog(np.zeros(n), A_ub=A, b_ub=np.full(n, eps), A_eq=np.ones((1, n)), b_eq=[1.0],
                 bounds=[(0, 1)] * n, method="highs")
    p0 = lp.x if lp.success else np.full(n, 1.0 / n)
    p0 = 0.999 * p0 + 0.001 / n

    def negent(p: np.ndarray) -> tuple[float, np.ndarray]:
        q = np.clip(p, 1e-15, None)
        return float(np.sum(q * np.log(q))), np.log(q) + 1.0

    cons = [{"type": "eq", "fun": lambda p: np.sum(p) - 1.0, "jac": lambda p: np.ones(n)},
            {"type": "ineq", "fun": lambda p: eps - A @ p, "jac": lambda p: -A}]
    res = minimize(negent, p0, jac=True, method="SLSQP", bounds=[(0.0, 1.0)] * n, constraints=cons,
                   options={"ftol": 1e-12, "maxiter": 500})
    p = np.clip(res.x if res.success else p0, 0.0, None)
    p /= p.sum()
    return p, A @ p


def kendall_tau(order: Sequence[Any], truth: Sequence[Any]) -> float:
    """Kendall τ between two rankings of the same items (best first): (concordant − discordant)
    pairs over all pairs."""
    pos = {x: i for i, x in enumerate(truth)}
    ranks = [pos[x] for x in order]
    n = len(ranks)
    if n < 2:
        return 1.0
    s = sum(1 if ranks[i] < ranks[j] else -1 for i in range(n) for j in range(i + 1, n))
    return s / (n * (n - 1) / 2)
