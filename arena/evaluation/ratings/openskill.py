"""Weng–Lin Bayesian ratings ("A Bayesian Approximation Method for Online Ranking", JMLR 2011)
through the ``openskill`` package, Plackett–Luce by default: 1v1, free-for-all and teams. Teams
come from ``info["teams"]`` (lists of seats) when a game reports them, with ``info["winner"]``
(a team index) deciding the ranks if present; otherwise every seat is its own team, ranked by
its return."""

from __future__ import annotations

from math import exp, sqrt
from typing import Any, Iterable, Sequence

from arena.errors import ArenaError

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
    (:func:`pl_duel`), done in exactly OpenSkill's order, so the ratings are bit-for-bit those
    of ``model.rate`` (tests/evaluation/ratings/test_openskill.py checks it against ``openskill`` on random
    win/draw/loss sequences).
    """
    tau = model.tau
    b_first = rank_b < rank_a  # rate()'s stable sort by rank
    first, second = (b, a) if b_first else (a, b)
    first.mu, first.sigma, second.mu, second.sigma = pl_duel(
        first.mu, first.sigma, second.mu, second.sigma, rank_a == rank_b, tau * tau, model.beta**2, model.kappa
    )


def pl_duel(
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


def fast_plackett_luce(model: Any) -> bool:
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
    """``{agent: (mu, sigma)}`` after rating every game in order (1v1, free-for-all or teams)."""
    m = openskill_model(model)
    ratings = {n: m.rating(name=n) for n in names}
    for r in records:
        rate_game(m, ratings, r)
    return {a: (float(x.mu), float(x.sigma)) for a, x in ratings.items()}


def rate_game(model: Any, ratings: dict[str, Any], record: Any) -> None:
    """One game through ``model.rate``, updating ``ratings`` (agent → rating) in place. A game
    where one agent sits on two different teams (self-play) tells nothing about it and is
    skipped; an agent twice in one team counts once."""
    teams, ranks = teams_and_ranks(record.seats, record.returns, record.info)
    groups = [list(dict.fromkeys(record.seats[s] for s in t)) for t in teams]
    flat = [a for g in groups for a in g]
    if len(flat) != len(set(flat)) or len(groups) < 2:
        return
    for a in flat:
        if a not in ratings:
            ratings[a] = model.rating(name=a)
    new = model.rate([[ratings[a] for a in g] for g in groups], ranks=ranks)
    for g, ng in zip(groups, new):
        for a, nr in zip(g, ng):
            ratings[a] = nr


def plackett_luce_duels(
    model: Any, a: Any, b: Any, a_first: Iterable[bool], returns: Iterable[Sequence[float]]
) -> None:
    """Consecutive 1v1 games between the ratings ``a`` and ``b`` under ``model`` (one that
    :func:`fast_plackett_luce` accepts), updated in place: ``a_first`` says whether a held seat
    0, ``returns`` are the games' ``(seat 0, seat 1)`` returns. :func:`plackett_luce_1v1` game
    by game, on plain floats."""
    tau_sq, beta_sq, kappa = model.tau * model.tau, model.beta**2, model.kappa
    mu_a, sg_a, mu_b, sg_b = a.mu, a.sigma, b.mu, b.sigma
    for first, (r0, r1) in zip(a_first, returns):
        seat0_lost = r0 < r1
        tie = not (seat0_lost or r1 < r0)
        if first != seat0_lost:  # a ranks first (on a tie the seat-0 agent does: rate()'s stable sort)
            mu_a, sg_a, mu_b, sg_b = pl_duel(mu_a, sg_a, mu_b, sg_b, tie, tau_sq, beta_sq, kappa)
        else:
            mu_b, sg_b, mu_a, sg_a = pl_duel(mu_b, sg_b, mu_a, sg_a, tie, tau_sq, beta_sq, kappa)
    a.mu, a.sigma, b.mu, b.sigma = mu_a, sg_a, mu_b, sg_b
