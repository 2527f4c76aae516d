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
from math import exp, sqrt
from typing import Any, Iterable, Sequence

import numpy as np

from arena.errors import ArenaError

LN10 = math.log(10.0)


@dataclass
class RatingConfig:
    outcome: str = "margin"
    """How one game scores a pair: ``margin`` (return difference over the game's utility range;
    ranks by expected payoff) or ``win`` (win/draw/loss only)."""
    rank_by: str = "auto"
    """Leaderboard order: auto, bt, nash, elo, openskill, mean_return (see arena.evaluation.leaderboard.compute)."""
    elo_k: float = 32.0
    bootstrap: int = 200
    openskill_model: str = "PlackettLuce"
    alpha: float = 100.0
    snapshot_every: int = 200


def margin_scale(game: Any, outcome: str) -> float | None:
    """The utility range used by margin scores, or None for win/draw/loss scores."""
    if outcome not in ("margin", "win"):
        raise ArenaError(f"ratings.outcome must be 'margin' or 'win', got '{outcome}'")
    span = float(game.spec.max_utility) - float(game.spec.min_utility)
    return span if outcome == "margin" and math.isfinite(span) and span > 0 else None


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


def _comparisons(record: Any) -> Iterable[tuple[int, int]]:
    """Seat pairs of one game that compare two different agents (not self-play, not teammates)."""
    seats = record.seats
    team = {s: t for t, members in enumerate((getattr(record, "info", None) or {}).get("teams") or []) for s in members}
    for i in range(len(seats)):
        for j in range(i + 1, len(seats)):
            if seats[i] != seats[j] and (i not in team or team.get(i) != team.get(j)):
                yield i, j


def pairwise_outcomes(records: Iterable[Any], scale: float | None = None) -> list[tuple[str, str, float]]:
    """Every pair of seats held by different agents in every game: ``(a, b, score of a)``
    (see :func:`pair_score`).

    A 2-player game gives one comparison; a free-for-all of n gives n(n−1)/2. Seats of the
    same agent (self-play) are not compared, nor teammates when the game reports
    ``info["teams"]``."""
    return [
        (r.seats[i], r.seats[j], pair_score(r.returns[i], r.returns[j], scale))
        for r in records
        for i, j in _comparisons(r)
    ]


def outcome_units(records: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """The independent unit and the stratum of every outcome of :func:`pairwise_outcomes`.

    Why: games of one deal are not independent draws — the seat-swapped games of a duplicate
    deal share its cards, so their outcomes are (negatively) correlated. The bootstrap must
    resample whole deals, the units that *are* independent: a unit is ``(pairing, seed,
    deal)``, its stratum the pairing (resampled within, so every pairing keeps its count, as
    the design fixed it)."""
    units, strata = [], []
    for r in records:
        pairing = getattr(r, "pairing", None) or "|".join(sorted(set(r.seats)))
        unit = (pairing, getattr(r, "seed", 0), getattr(r, "game_index", getattr(r, "id", None)))
        for _ in _comparisons(r):
            units.append(unit)
            strata.append(pairing)
    return units, strata


# -- Elo ----------------------------------------------------------------------------------------
def elo_expected(ra: float, rb: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))


def elo_update(ra: float, rb: float, score_a: float, k: float = 32.0) -> tuple[float, float]:
    """One game: ``R' = R + K(S − E)``, zero-sum between the two players."""
    delta = k * (score_a - elo_expected(ra, rb))
    return ra + delta, rb - delta


def elo(
    records: Iterable[Any],
    k: float = 32.0,
    initial: float = 1500.0,
    names: Sequence[str] = (),
    scale: float | None = None,
) -> dict[str, float]:
    """Online Elo over the records in the order given (the store gives plan order)."""
    ratings = {n: initial for n in names}
    for a, b, s in pairwise_outcomes(records, scale):
        ra, rb = ratings.setdefault(a, initial), ratings.setdefault(b, initial)
        ratings[a], ratings[b] = elo_update(ra, rb, s, k)
    return ratings


# -- OpenSkill ------------------------------------------------------------------------------------
_OPENSKILL_MODELS = (
    "PlackettLuce",
    "BradleyTerryFull",
    "BradleyTerryPart",
    "ThurstoneMostellerFull",
    "ThurstoneMostellerPart",
)


def openskill_model(name: str = "PlackettLuce") -> Any:
    import openskill.models as models

    if name not in _OPENSKILL_MODELS:
        raise ArenaError(f"unknown OpenSkill model '{name}'; known: {', '.join(_OPENSKILL_MODELS)}")
    return getattr(models, name)()


def teams_and_ranks(
    seats: Sequence[str], returns: Sequence[float], info: dict | None
) -> tuple[list[list[int]], list[int]]:
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


def plackett_luce_1v1(model: Any, a: Any, b: Any, rank_a: int, rank_b: int) -> None:
    """One 1v1 game under OpenSkill's Plackett–Luce ``model`` (default options), updating the
    ratings ``a`` and ``b`` in place; lower rank wins, equal ranks draw.

    Why: ``model.rate`` validates, deep-copies and builds team objects for every game — ~35 µs
    of a tournament game's ~110. For two single-player teams Weng & Lin's Algorithm 4 (with
    OpenSkill's τ correction, γ = σ/c and κ floor) is a handful of floating-point operations
    (:func:`_pl_duel`), done in exactly OpenSkill's order, so the ratings are bit-for-bit those
    of ``model.rate`` (tests/evaluation/test_rating.py checks it against ``openskill`` on random
    win/draw/loss sequences).
    """
    tau = model.tau
    b_first = rank_b < rank_a  # rate()'s stable sort by rank
    first, second = (b, a) if b_first else (a, b)
    first.mu, first.sigma, second.mu, second.sigma = _pl_duel(
        first.mu, first.sigma, second.mu, second.sigma, rank_a == rank_b, tau * tau, model.beta**2, model.kappa
    )


def _pl_duel(
    mu0: float,
    sigma0: float,
    mu1: float,
    sigma1: float,
    tie: bool,
    tau_squared: float,
    beta_squared: float,
    kappa: float,
) -> tuple[float, float, float, float]:
    """The Plackett–Luce 1v1 step on plain floats: team 0 ranks first (or ties), team 1 second;
    returns ``(mu0, sigma0, mu1, sigma1)``. OpenSkill's operations in OpenSkill's order (teams
    sorted by rank, ``sum_q`` accumulated as it does), so the result is bit-for-bit
    ``model.rate``'s. Left out are only operations that are exact identities in IEEE arithmetic:
    OpenSkill's ``x * 1.0`` weights, its ``0.0 +`` start of a sum of positive terms (``v + β²``
    is never −0), ``s**2`` computed twice (``ratio = v / v``), ``max`` written as a comparison."""
    s0 = sqrt(sigma0 * sigma0 + tau_squared)
    s1 = sqrt(sigma1 * sigma1 + tau_squared)
    v0, v1 = s0**2, s1**2
    c = sqrt((v0 + beta_squared) + (v1 + beta_squared))
    e0, e1 = exp(mu0 / c), exp(mu1 / c)
    total = e0 + e1
    x0, x1 = e0 / total, e1 / total
    if tie:  # both teams compare against both sums (each e0 + e1), A_q = 2
        d0 = x0 * (1 - x0) / 2 + x0 * (1 - x0) / 2
        w0 = (1 - x0) / 2 - x0 / 2
        d1 = x1 * (1 - x1) / 2 + x1 * (1 - x1) / 2
        w1 = -x1 / 2 + (1 - x1) / 2
    else:  # the winner compares against sum_q[0] = e0 + e1, the loser against it and e1 alone
        d0 = x0 * (1 - x0)
        w0 = 1 - x0
        y = e1 / e1
        d1 = x1 * (1 - x1) + y * (1 - y)
        w1 = -x1 + (1 - y)
    c2 = c**2
    w0 *= v0 / c
    d0 *= v0 / c2
    d0 *= sqrt(v0) / c
    ratio0 = v0 / v0
    w1 *= v1 / c
    d1 *= v1 / c2
    d1 *= sqrt(v1) / c
    ratio1 = v1 / v1
    f0 = 1 - ratio0 * d0
    f1 = 1 - ratio1 * d1
    return (
        mu0 + ratio0 * w0,
        s0 * sqrt(kappa if kappa > f0 else f0),
        mu1 + ratio1 * w1,
        s1 * sqrt(kappa if kappa > f1 else f1),
    )


def _fast_plackett_luce(model: Any) -> bool:
    """Whether :func:`plackett_luce_1v1` reproduces ``model.rate`` (default gamma, no sigma limit)."""
    import openskill.models as models
    from openskill.models.weng_lin import plackett_luce

    return (
        type(model) is models.PlackettLuce
        and model.gamma is plackett_luce._gamma
        and not model.limit_sigma
        and not model.balance
    )


def openskill(
    records: Iterable[Any], model: str = "PlackettLuce", names: Sequence[str] = ()
) -> dict[str, tuple[float, float]]:
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


def _bt_nll(theta: np.ndarray, W: np.ndarray, N: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Negative log-likelihood (each pair counted once), its gradient and Hessian, for a batch:
    ``theta`` is ``(B, n)``, ``W`` and ``N`` are ``(B, n, n)``."""
    d = LN10 * (theta[:, :, None] - theta[:, None, :])
    logp = -np.logaddexp(0.0, -d)
    logq = -np.logaddexp(0.0, d)
    nll = -0.5 * np.sum(W * logp + (N - W) * logq, axis=(1, 2)) + ridge * np.sum(theta**2, axis=1)
    p = np.exp(logp)
    g = -LN10 * np.sum(W - N * p, axis=2) + 2 * ridge * theta
    w = LN10**2 * N * p * (1 - p)
    H = -w
    diag = w.sum(axis=2) - np.diagonal(w, axis1=1, axis2=2) + 2 * ridge
    idx = np.arange(theta.shape[1])
    H[:, idx, idx] = diag
    return nll, g, H


def _bt_theta(W: np.ndarray, N: np.ndarray, ridge: float, x0: np.ndarray | None = None) -> np.ndarray:
    """Newton's method with step halving, for one ``(n, n)`` problem or a ``(B, n, n)`` batch
    (the bootstrap solves all resamples at once; each problem is small and strictly convex
    with the ridge)."""
    single = W.ndim == 2
    if single:
        W, N = W[None], N[None]
    B, n = W.shape[0], W.shape[1]
    theta = np.zeros((B, n)) if x0 is None else np.broadcast_to(np.asarray(x0, dtype=float), (B, n)).copy()
    ridge = max(ridge, 1e-9)
    f, g, H = _bt_nll(theta, W, N, ridge)
    active = np.ones(B, dtype=bool)
    for _ in range(100):
        step = np.linalg.solve(H + 1e-12 * np.eye(n), g[:, :, None])[:, :, 0]
        step[~active] = 0.0
        t = np.ones(B)
        cand = theta - step
        fc, gc, Hc = _bt_nll(cand, W, N, ridge)
        for _ in range(27):  # halve the steps that do not decrease the objective (t down to ~1e-8)
            bad = fc > f + 1e-12
            if not bad.any():
                break
            t[bad] *= 0.5
            cand = theta - t[:, None] * step
            fc, gc, Hc = _bt_nll(cand, W, N, ridge)
        theta, f, g, H = cand, fc, gc, Hc
        active = (np.max(np.abs(g), axis=1) >= 1e-9) & (np.max(np.abs(t[:, None] * step), axis=1) >= 1e-10)
        if not active.any():
            break
    theta = theta - theta.mean(axis=1, keepdims=True)
    return theta[0] if single else theta


def _bt_cov(theta: np.ndarray, N: np.ndarray, ridge: float) -> np.ndarray:
    return np.linalg.pinv(_bt_nll(theta[None], np.zeros_like(N)[None], N[None], max(ridge, 1e-9))[2][0])


def bradley_terry(
    outcomes: Sequence[tuple[str, str, float]],
    names: Sequence[str],
    bootstrap: int = 200,
    seed: int = 0,
    ridge: float = 1e-3,
    ci: float = 0.95,
    units: Sequence[Any] | None = None,
    strata: Sequence[Any] | None = None,
    interval: str = "basic",
) -> BTFit:
    """Maximum-likelihood BT ratings; a *basic* bootstrap interval from ``bootstrap`` resamples.

    Basic (``2θ̂ − q_hi, 2θ̂ − q_lo``), not percentile: with few games per agent the MLE spreads
    the ratings out, and a resample spreads them out again around θ̂, so percentile intervals
    sit too far out and miss the truth (84% coverage for seeded elimination at 16 games a
    match); reflecting around θ̂ corrects that bias (96%; ``arena bench rating-coverage``).

    The bootstrap resamples ``units`` (one per outcome; outcomes sharing a unit move together),
    within ``strata`` (one per outcome, constant within a unit). Pass
    :func:`outcome_units` of the records so deals — not games — are resampled within their
    pairing; without ``units`` every outcome is its own unit and the stratum is the unordered
    pair of agents."""
    names = list(names)
    W, N = win_matrix(outcomes, names)
    hist = _unit_histogram(outcomes, units, strata) if bootstrap > 0 and outcomes else UnitHistogram()
    return bt_fit(W, N, names, hist, bootstrap=bootstrap, seed=seed, ridge=ridge, ci=ci, interval=interval)


def bt_fit(
    W: np.ndarray,
    N: np.ndarray,
    names: Sequence[str],
    hist: "UnitHistogram",
    bootstrap: int = 200,
    seed: int = 0,
    ridge: float = 1e-3,
    ci: float = 0.95,
    interval: str = "basic",
) -> BTFit:
    """:func:`bradley_terry` from its sufficient statistics: the win and game matrices and the
    histogram of bootstrap units (what :class:`RatingState` keeps as games arrive)."""
    if interval not in ("basic", "percentile"):
        raise ArenaError(f"bradley_terry: interval must be 'basic' or 'percentile', got '{interval}'")
    names = list(names)
    theta = _bt_theta(W, N, ridge)
    rating = 400.0 * theta + 1000.0
    lo = hi = rating.copy()
    if bootstrap > 0 and hist.units:
        samples = 400.0 * _bt_theta(*hist.resample(names, bootstrap, seed), ridge, theta) + 1000.0
        q = (1 - ci) / 2
        lo, hi = np.quantile(samples, q, axis=0), np.quantile(samples, 1 - q, axis=0)
        if interval == "basic":
            lo, hi = 2 * rating - hi, 2 * rating - lo
    return BTFit(names, rating, lo, hi, theta, _bt_cov(theta, N, ridge))


def bradley_terry_records(
    records: Sequence[Any],
    names: Sequence[str],
    scale: float | None = None,
    bootstrap: int = 200,
    seed: int = 0,
    ridge: float = 1e-3,
) -> BTFit:
    """:func:`bradley_terry` of stored games, its bootstrap resampling deals within pairings
    (:func:`outcome_units`) — what leaderboards report."""
    units, strata = outcome_units(records)
    return bradley_terry(
        pairwise_outcomes(records, scale),
        names,
        bootstrap=bootstrap,
        seed=seed,
        ridge=ridge,
        units=units,
        strata=strata,
    )


Signature = tuple[tuple[str, str, float], ...]


class UnitHistogram:
    """Bootstrap units counted by what they contribute: per stratum, how many units had each
    signature (the sorted outcomes ``(a, b, score)`` of the unit).

    Why: resampling ``m`` units of a stratum with replacement and summing their outcomes has
    the same distribution as drawing the count of every *distinct* signature from a multinomial
    with the signatures' frequencies — and a game with few distinct outcomes (poker margins,
    win/draw/loss) has few signatures, so memory and time do not grow with the games played.
    Games with continuous returns have up to one signature per unit (what a per-unit bootstrap
    holds anyway)."""

    def __init__(self) -> None:
        self.strata: dict[Any, dict[Signature, int]] = {}
        self.units = 0

    def add(self, stratum: Any, outcomes: Iterable[tuple[str, str, float]]) -> None:
        sig = tuple(sorted(outcomes))
        bucket = self.strata.setdefault(stratum, {})
        bucket[sig] = bucket.get(sig, 0) + 1
        self.units += 1

    def resample(self, names: Sequence[str], bootstrap: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """``(W, N)`` of ``bootstrap`` stratified unit resamples, as ``(B, n, n)`` arrays."""
        idx = {a: i for i, a in enumerate(names)}
        n = len(names)
        rng = np.random.default_rng(seed)
        W, N = np.zeros((bootstrap, n * n)), np.zeros((bootstrap, n * n))
        for _, bucket in sorted(self.strata.items(), key=lambda kv: repr(kv[0])):  # arrival order must not matter
            sigs = sorted(bucket)
            freq = np.array([bucket[g] for g in sigs], dtype=float)
            m = int(freq.sum())
            counts = rng.multinomial(m, freq / m, size=bootstrap)
            SW, SN = np.zeros((len(sigs), n * n)), np.zeros((len(sigs), n * n))
            for k, sig in enumerate(sigs):
                for a, b, sc in sig:
                    i, j = idx[a], idx[b]
                    SW[k, i * n + j] += sc
                    SW[k, j * n + i] += 1.0 - sc
                    SN[k, i * n + j] += 1
                    SN[k, j * n + i] += 1
            W += counts @ SW
            N += counts @ SN
        return W.reshape(bootstrap, n, n), N.reshape(bootstrap, n, n)


def _unit_histogram(
    outcomes: Sequence[tuple[str, str, float]], units: Sequence[Any] | None, strata: Sequence[Any] | None
) -> UnitHistogram:
    if units is None:
        units = range(len(outcomes))
    if strata is None:
        strata = [tuple(sorted((a, b))) for a, b, _ in outcomes]
    if len(units) != len(outcomes) or len(strata) != len(outcomes):
        raise ArenaError("bradley_terry: units and strata need one entry per outcome")
    grouped: dict[Any, tuple[Any, list[tuple[str, str, float]]]] = {}
    for o, u, st in zip(outcomes, units, strata):
        grouped.setdefault(u, (st, []))[1].append(o)
    hist = UnitHistogram()
    for st, outs in grouped.values():
        hist.add(st, outs)
    return hist


class RatingState:
    """Every rating and tally a leaderboard shows, updated one game at a time in plan order.

    Why: recomputing ratings from every stored game at every snapshot made a tournament's cost
    quadratic in its games. This state keeps sufficient statistics instead — the pairwise win
    and game matrices (Bradley–Terry), the online Elo and OpenSkill ratings, the W/D/L tallies,
    the payoff sums and the bootstrap's unit histogram — so a snapshot costs the same at game
    10⁶ as at game 10³, and the leaderboard of a store is one streamed pass over its records.
    Fed the same records in the same order it gives exactly what the batch functions
    (:func:`bradley_terry_records`, :func:`elo`, :func:`openskill`) give.

    A bootstrap unit (a deal, :func:`outcome_units`) is complete once it holds as many games as
    the game has seats (one per seat rotation); complete units move into the histogram, the few
    open ones wait in a dict."""

    def __init__(
        self,
        names: Sequence[str] = (),
        scale: float | None = None,
        elo_k: float = 32.0,
        openskill_model: str = "PlackettLuce",
        initial_elo: float = 1500.0,
    ) -> None:
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.scale, self.elo_k, self.initial_elo = scale, elo_k, initial_elo
        self.records = 0
        self.W: list[list[float]] = []
        self.N: list[list[float]] = []
        self.elo: dict[str, float] = {}
        self._osk_model_name = openskill_model
        self._osk: Any = None
        self._osk_fast = False
        self.openskill: dict[str, Any] = {}
        self.tally: dict[str, dict[str, float]] = {}
        self.S: list[list[float]] = []
        self.C: list[list[float]] = []
        self.two_player = True
        self.hist = UnitHistogram()
        self.open_units: dict[Any, tuple[Any, int, list[tuple[str, str, float]]]] = {}
        self.ensure(names)

    def ensure(self, names: Iterable[str]) -> None:
        """Add agents (in this order) that the state does not know yet."""
        for a in names:
            if a in self.index:
                continue
            self.index[a] = len(self.names)
            self.names.append(a)
            for M in (self.W, self.N, self.S, self.C):
                for row in M:
                    row.append(0.0)
                M.append([0.0] * len(self.names))
            self.elo[a] = self.initial_elo
            self.openskill[a] = self.model().rating(name=a)
            self.tally[a] = {"games": 0, "wins": 0, "draws": 0, "losses": 0, "points": 0.0, "ret": 0.0, "forfeits": 0}

    def model(self) -> Any:
        if self._osk is None:
            self._osk = openskill_model(self._osk_model_name)
            self._osk_fast = _fast_plackett_luce(self._osk)
        return self._osk

    def add(self, r: Any) -> None:
        """One game (in plan order)."""
        self.add_all((r,))

    def add_all(self, records: Iterable[Any]) -> "RatingState":
        """Games in plan order. Runs of duels between the same two agents (no teams, the default
        OpenSkill model) go through :meth:`_add_duels` with the pair's statistics held in locals
        — a tournament's rating cost per game; every other game through :meth:`_add_one`."""
        run: list[Any] = []
        p = q = None
        self.model()
        fast = self._osk_fast
        for r in records:
            seats = r.seats
            if fast and len(seats) == 2:
                info = getattr(r, "info", None)
                if not (info and info.get("teams")):
                    a, b = seats
                    if (a == p and b == q) or (a == q and b == p):
                        run.append(r)
                        continue
                    if a != b:
                        if run:
                            self._add_duels(p, q, run)
                        run, p, q = [r], a, b
                        continue
            if run:
                self._add_duels(p, q, run)
                run, p, q = [], None, None
            self._add_one(r)
        if run:
            self._add_duels(p, q, run)
        return self

    def _add_one(self, r: Any) -> None:
        """Any game: teams, self-play, more than two seats."""
        seats, returns = r.seats, r.returns
        self.ensure(seats)
        self.records += 1
        idx, W, N = self.index, self.W, self.N
        outs = [(seats[i], seats[j], pair_score(returns[i], returns[j], self.scale)) for i, j in _comparisons(r)]
        for a, b, sc in outs:  # Bradley–Terry sufficient statistics, then online Elo
            i, j = idx[a], idx[b]
            W[i][j] += sc
            W[j][i] += 1.0 - sc
            N[i][j] += 1
            N[j][i] += 1
            self.elo[a], self.elo[b] = elo_update(self.elo[a], self.elo[b], sc, self.elo_k)
        if outs:
            pairing = getattr(r, "pairing", None) or "|".join(sorted(set(seats)))
            unit = (pairing, getattr(r, "seed", 0), getattr(r, "game_index", getattr(r, "id", None)))
            st, games, acc = self.open_units.get(unit, (pairing, 0, []))
            acc.extend(outs)
            if games + 1 >= len(seats):
                self.open_units.pop(unit, None)
                self.hist.add(st, acc)
            else:
                self.open_units[unit] = (st, games + 1, acc)
        self._openskill(r)
        best = max(returns)
        top = sum(1 for x in returns if x == best)
        for seat, a in enumerate(seats):
            t = self.tally[a]
            t["games"] += 1
            t["ret"] += returns[seat]
            if returns[seat] == best:
                t["wins" if top == 1 else "draws"] += 1
                t["points"] += 1.0 if top == 1 else 0.5
            else:
                t["losses"] += 1
            if r.forfeit_player == seat:
                t["forfeits"] += 1
        if len(seats) != 2:
            self.two_player = False
        elif seats[0] != seats[1]:
            i, j = idx[seats[0]], idx[seats[1]]
            self.S[i][j] += returns[0]
            self.S[j][i] += returns[1]
            self.C[i][j] += 1
            self.C[j][i] += 1

    def _add_duels(self, p: str, q: str, records: Sequence[Any]) -> None:
        """:meth:`_add_one` for consecutive games between agents ``p`` and ``q`` (either seating),
        no teams, the default OpenSkill model: the same updates in the same floating-point order,
        on locals — every sum that depends on its order (scores, returns, Elo, OpenSkill) is
        accumulated game by game in a local starting from the table's value; counts (games,
        wins, the ``N``/``C`` matrices) and points (multiples of ½, exact in any order) are added
        once at the end. A deal's two games are usually adjacent, so a bootstrap unit completes
        without the open-units table, and completed units are counted per signature before they
        enter the histogram (tests/evaluation/test_tournament_scale.py and tests/evaluation/test_rating.py check all of
        it against the batch functions)."""
        self.ensure((p, q))
        i, j = self.index[p], self.index[q]
        W, S, elo_k, scale = self.W, self.S, self.elo_k, self.scale
        w_pq, w_qp, s_pq, s_qp = W[i][j], W[j][i], S[i][j], S[j][i]
        e_p, e_q = self.elo[p], self.elo[q]
        rating_p, rating_q = self.openskill[p], self.openskill[q]
        mu_p, sg_p, mu_q, sg_q = rating_p.mu, rating_p.sigma, rating_q.mu, rating_q.sigma
        model = self._osk
        tau_sq, beta_sq, kappa = model.tau * model.tau, model.beta**2, model.kappa
        t_p, t_q = self.tally[p], self.tally[q]
        ret_p, ret_q = t_p["ret"], t_q["ret"]
        wins_p = wins_q = draws = forfeits_p = forfeits_q = 0
        two_scale = 2.0 * scale if scale else 0.0
        duel = _pl_duel
        open_units = self.open_units
        completed: dict[tuple[Any, tuple[str, str, float], tuple[str, str, float]], int] = {}
        pend_unit: Any = None
        pend_out: Any = None
        for r in records:
            a = r.seats[0]
            ra, rb = r.returns
            if two_scale:  # pair_score, written out
                x = 0.5 + (ra - rb) / two_scale
                sc = x if 0.0 < x < 1.0 else (1.0 if x >= 1.0 else 0.0)
            else:
                sc = 1.0 if ra > rb else 0.5 if ra == rb else 0.0
            if a == p:  # p in seat 0
                w_pq += sc
                w_qp += 1.0 - sc
                delta = elo_k * (sc - 1.0 / (1.0 + 10.0 ** ((e_q - e_p) / 400.0)))
                e_p, e_q = e_p + delta, e_q - delta
                if ra < rb:
                    mu_q, sg_q, mu_p, sg_p = duel(mu_q, sg_q, mu_p, sg_p, False, tau_sq, beta_sq, kappa)
                else:
                    mu_p, sg_p, mu_q, sg_q = duel(mu_p, sg_p, mu_q, sg_q, not rb < ra, tau_sq, beta_sq, kappa)
                ret_p += ra
                ret_q += rb
                s_pq += ra
                s_qp += rb
                if rb > ra:
                    wins_q += 1
                elif ra == rb:
                    draws += 1
                elif ra == ra:  # not nan
                    wins_p += 1
                out = (p, q, sc)
            else:  # q in seat 0
                w_qp += sc
                w_pq += 1.0 - sc
                delta = elo_k * (sc - 1.0 / (1.0 + 10.0 ** ((e_p - e_q) / 400.0)))
                e_q, e_p = e_q + delta, e_p - delta
                if ra < rb:
                    mu_p, sg_p, mu_q, sg_q = duel(mu_p, sg_p, mu_q, sg_q, False, tau_sq, beta_sq, kappa)
                else:
                    mu_q, sg_q, mu_p, sg_p = duel(mu_q, sg_q, mu_p, sg_p, not rb < ra, tau_sq, beta_sq, kappa)
                ret_q += ra
                ret_p += rb
                s_qp += ra
                s_pq += rb
                if rb > ra:
                    wins_p += 1
                elif ra == rb:
                    draws += 1
                elif ra == ra:
                    wins_q += 1
                out = (q, p, sc)
            forfeit = r.forfeit_player
            if forfeit is not None:
                if (forfeit == 0) == (a == p):
                    forfeits_p += forfeit in (0, 1)
                else:
                    forfeits_q += forfeit in (0, 1)
            try:  # the bootstrap unit: (pairing, seed, deal)
                pairing, seed, deal = r.pairing, r.seed, r.game_index
            except AttributeError:
                pairing, seed = getattr(r, "pairing", None), getattr(r, "seed", 0)
                deal = getattr(r, "game_index", getattr(r, "id", None))
            if not pairing:
                pairing = "|".join(sorted({p, q}))
            if pend_unit is not None and deal == pend_unit[2] and pairing == pend_unit[0] and seed == pend_unit[1]:
                key = (pairing, pend_out, out)  # the seat-swapped game right after: the deal is complete
                completed[key] = completed.get(key, 0) + 1
                pend_unit = None
                continue
            unit = (pairing, seed, deal)
            held = open_units.pop(unit, None) if open_units else None
            if held is not None:
                held[2].append(out)
                self.hist.add(held[0], held[2])
                continue
            if pend_unit is not None:
                open_units[pend_unit] = (pend_unit[0], 1, [pend_out])
            pend_unit, pend_out = unit, out
        if pend_unit is not None:
            open_units[pend_unit] = (pend_unit[0], 1, [pend_out])
        hist = self.hist
        for (stratum, first, second), count in completed.items():
            bucket = hist.strata.setdefault(stratum, {})
            sig = (first, second) if first <= second else (second, first)  # tuple(sorted(outcomes))
            bucket[sig] = bucket.get(sig, 0) + count
            hist.units += count
        n = len(records)
        self.records += n
        W[i][j], W[j][i], S[i][j], S[j][i] = w_pq, w_qp, s_pq, s_qp
        for M in (self.N, self.C):
            M[i][j] += n
            M[j][i] += n
        self.elo[p], self.elo[q] = e_p, e_q
        rating_p.mu, rating_p.sigma, rating_q.mu, rating_q.sigma = mu_p, sg_p, mu_q, sg_q
        losses_p = n - wins_p - draws
        losses_q = n - wins_q - draws
        for t, wins, losses, forfeits, ret in (
            (t_p, wins_p, losses_p, forfeits_p, ret_p),
            (t_q, wins_q, losses_q, forfeits_q, ret_q),
        ):
            t["games"] += n
            t["wins"] += wins
            t["draws"] += draws
            t["losses"] += losses
            t["points"] += wins + 0.5 * draws
            t["ret"] = ret
            t["forfeits"] += forfeits

    def _openskill(self, r: Any) -> None:
        teams, ranks = teams_and_ranks(r.seats, r.returns, r.info)
        groups = [list(dict.fromkeys(r.seats[s] for s in t)) for t in teams]
        flat = [a for g in groups for a in g]
        if len(flat) != len(set(flat)) or len(groups) < 2:
            return
        new = self.model().rate([[self.openskill[a] for a in g] for g in groups], ranks=ranks)
        for g, ng in zip(groups, new):
            for a, nr in zip(g, ng):
                self.openskill[a] = nr

    def matrices(self, names: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(W, N)`` of :func:`win_matrix` over ``names`` (default: every agent seen)."""
        W, N = (
            np.array(self.W, dtype=float).reshape(len(self.names), -1),
            np.array(self.N, dtype=float).reshape(len(self.names), -1),
        )
        if names is None or list(names) == self.names:
            return W, N
        sel = [self.index[a] for a in names]
        return W[np.ix_(sel, sel)], N[np.ix_(sel, sel)]

    def bradley_terry(
        self, names: Sequence[str] | None = None, bootstrap: int = 0, seed: int = 0, ridge: float = 1e-3
    ) -> BTFit:
        """The BT fit of every game so far (the bootstrap also counts the still open units)."""
        names = list(self.names if names is None else names)
        self.ensure(names)
        W, N = self.matrices(names)
        hist = self.hist
        if bootstrap > 0 and self.open_units:
            hist = UnitHistogram()
            for st, bucket in self.hist.strata.items():
                hist.strata[st] = dict(bucket)
            hist.units = self.hist.units
            for st, _, acc in self.open_units.values():
                hist.add(st, acc)
        return bt_fit(W, N, names, hist, bootstrap=bootstrap, seed=seed, ridge=ridge)

    def bt_ratings(self, names: Sequence[str] | None = None, ridge: float = 1e-3) -> np.ndarray:
        """The ratings of :meth:`bradley_terry` alone (no bootstrap, no covariance): what a
        rating snapshot records, every ``snapshot_every`` games."""
        names = list(self.names if names is None else names)
        self.ensure(names)
        return 400.0 * _bt_theta(*self.matrices(names), ridge) + 1000.0

    def games(self) -> dict[str, int]:
        return {a: int(t["games"]) for a, t in self.tally.items()}

    def openskill_ratings(self) -> dict[str, tuple[float, float]]:
        return {a: (float(x.mu), float(x.sigma)) for a, x in self.openskill.items()}

    def payoff(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`payoff_matrix` of the games so far."""
        S, C = np.array(self.S, dtype=float), np.array(self.C, dtype=float)
        if not self.names:
            return np.zeros((0, 0)), np.zeros((0, 0))
        return np.divide(S, C, out=np.zeros_like(S), where=C > 0), C


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


def kendall_tau(order: Sequence[Any], truth: Sequence[Any]) -> float:
    """Kendall τ between two rankings of the same items (best first), by ``scipy.stats.kendalltau``
    on the items' positions (without ties τ-b is (concordant − discordant) pairs over all pairs;
    rounded to 12 digits, so identical rankings read exactly 1)."""
    from scipy.stats import kendalltau

    if len(order) < 2:
        return 1.0
    pos = {x: i for i, x in enumerate(truth)}
    return round(float(kendalltau([pos[x] for x in order], range(len(order))).statistic), 12)
