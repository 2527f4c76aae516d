"""CE / CCE / RAE on games with known answers: chicken and Shapley's game (closed forms), a random
3-player game checked against a brute-force deviation count, the stag hunt's risk dominance."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from scipy.optimize import linprog

from arena.errors import ArenaError
from arena.exact import equilibria as eq

CHICKEN = np.array([[0.0, 7.0], [2.0, 6.0]])  # action 0 = dare, 1 = chicken (row payoffs)
CHICKEN_GAME = [CHICKEN, CHICKEN.T]
SHAPLEY = [
    np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
    np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
]


def violation(game, joint, kind):
    return float((eq.constraint_rows(game, kind) @ joint.ravel()).max())


@pytest.mark.parametrize("kind", ["ce", "cce"])
def test_chicken_max_welfare_is_the_closed_form(kind):
    joint = eq.max_welfare(CHICKEN_GAME, kind)
    assert violation(CHICKEN_GAME, joint, kind) <= 1e-9
    assert np.allclose(joint, [[0.0, 0.25], [0.25, 0.5]], atol=1e-9)
    assert np.allclose(eq.joint_values(CHICKEN_GAME, joint), 5.25, atol=1e-9)
    assert np.all(eq.gaps(CHICKEN_GAME, joint, kind) <= 1e-9)


@pytest.mark.parametrize("kind", ["ce", "cce"])
def test_chicken_max_entropy(kind):
    joint = eq.max_entropy(CHICKEN_GAME, kind)
    assert violation(CHICKEN_GAME, joint, kind) <= 1e-9
    assert np.allclose(joint, [[0.1483, 0.2967], [0.2967, 0.2583]], atol=2e-4)
    # the maximum: no other point of the polytope along a feasible direction does better
    h = -np.sum(joint * np.log(joint))
    aumann = np.array([[0.0, 1 / 3], [1 / 3, 1 / 3]])
    assert h > -np.sum(aumann[aumann > 0] * np.log(aumann[aumann > 0]))


def test_gaps_on_known_points():
    uniform = np.full((2, 2), 0.25)
    assert np.allclose(eq.gaps(CHICKEN_GAME, uniform, "cce"), 0.25)
    assert np.allclose(eq.gaps(CHICKEN_GAME, uniform, "ce"), 0.25)
    aumann = np.array([[0.0, 1 / 3], [1 / 3, 1 / 3]])
    assert np.all(eq.gaps(CHICKEN_GAME, aumann, "ce") <= 1e-12)
    # half (0,1), half (1,0) in Shapley's game: a CCE that is not a CE
    cycle = np.zeros((3, 3))
    cycle[0, 1] = cycle[1, 0] = 0.5
    assert np.all(eq.gaps(SHAPLEY, cycle, "cce") <= 1e-12)
    assert eq.gaps(SHAPLEY, cycle, "ce").max() > 0.1


@pytest.mark.parametrize("kind,welfare", [("ce", 1.0), ("cce", 1.0)])
def test_shapley_max_welfare_and_entropy(kind, welfare):
    joint = eq.max_welfare(SHAPLEY, kind)
    assert violation(SHAPLEY, joint, kind) <= 1e-9
    assert eq.joint_values(SHAPLEY, joint).sum() == pytest.approx(welfare, abs=1e-9)
    assert np.allclose(eq.max_entropy(SHAPLEY, kind), 1 / 9, atol=1e-7)


@pytest.mark.parametrize("kind,best", [("ce", 1 / 7), ("cce", 1 / 3)])
def test_shapley_polytopes_have_the_known_extent(kind, best):
    """max sigma(0,0) over the polytope the constraint rows cut out: 1/7 over CEs, 1/3 over CCEs."""
    G = eq.constraint_rows(SHAPLEY, kind)
    c = np.zeros(9)
    c[0] = -1.0
    res = linprog(c, A_ub=G, b_ub=np.zeros(len(G)), A_eq=np.ones((1, 9)), b_eq=[1.0], bounds=[(0, None)] * 9)
    assert -res.fun == pytest.approx(best, abs=1e-9)


def brute_force_gains(game, joint):
    """Every CE deviation gain by loops over profiles (independent of the vectorised rows)."""
    out = []
    for i, table in enumerate(game):
        k = table.shape[i]
        for rec, dev in product(range(k), range(k)):
            g = 0.0
            for a in product(*(range(m) for m in table.shape)):
                if a[i] == rec:
                    b = list(a)
                    b[i] = dev
                    g += joint[a] * (table[tuple(b)] - table[a])
            out.append(g)
    return np.asarray(out)


@pytest.mark.parametrize("objective", [eq.max_welfare, eq.max_entropy])
def test_three_player_general_sum_ce_checked_by_brute_force(objective):
    rng = np.random.default_rng(3)
    game = [rng.normal(size=(3, 2, 2)) for _ in range(3)]
    joint = objective(game, "ce")
    assert joint.shape == (3, 2, 2) and joint.min() >= 0 and joint.sum() == pytest.approx(1.0)
    assert brute_force_gains(game, joint).max() <= 1e-9
    cce = objective(game, "cce")
    assert np.all(eq.gaps(game, cce, "cce") <= 1e-9)
    # the welfare LP is optimal: the CCE polytope contains the CE one
    if objective is eq.max_welfare:
        assert eq.joint_values(game, cce).sum() >= eq.joint_values(game, joint).sum() - 1e-9


def test_a_dominated_strategy_gets_no_mass():
    pd = np.array([[3.0, 0.0], [5.0, 1.0]])  # prisoner's dilemma: defect (1) strictly dominates
    for kind in ("ce", "cce"):
        joint = eq.max_entropy([pd, pd.T], kind)
        assert joint[1, 1] == pytest.approx(1.0, abs=1e-9)


def test_bad_payoffs_are_one_line():
    with pytest.raises(ArenaError, match="payoff tensor 1 has shape"):
        eq.max_welfare([np.zeros((2, 2)), np.zeros((3, 2))], "ce")
    with pytest.raises(ArenaError, match="3 players need 3-dimensional"):
        eq.max_entropy([np.zeros((2, 2))] * 3, "cce")
    with pytest.raises(ArenaError, match="kind must be one of"):
        eq.max_welfare(CHICKEN_GAME, "nash")
    with pytest.raises(ArenaError, match="joint distribution has shape"):
        eq.gaps(CHICKEN_GAME, np.ones(4) / 4, "ce")
    with pytest.raises(ArenaError, match="risk must be"):
        eq.risk_averse_equilibrium(CHICKEN_GAME, risk=-1.0)


def risk_dominant_first(a, b, c, d):
    """Harsanyi-Selten for the symmetric 2x2 game u(S,S)=a, u(S,H)=b, u(H,S)=c, u(H,H)=d:
    does (S,S) risk-dominate (H,H)? (products of the unilateral deviation losses)"""
    return (a - c) ** 2 > (d - b) ** 2


@pytest.mark.parametrize(
    "a,b,c,d",
    [
        (4, 0, 3, 3),  # the stag hunt trust dilemma: (H,H) risk-dominant, (S,S) payoff-dominant
        (5, 0, 4, 2),  # products 1 vs 4: still hare
        (10, 2, 3, 3),  # stag both payoff- and risk-dominant
        (6, 1, 2, 2),  # products 16 vs 1: stag
    ],
)
def test_rae_picks_the_risk_dominant_equilibrium(a, b, c, d):
    row = np.array([[a, b], [c, d]], dtype=float)
    mix = eq.risk_averse_equilibrium([row, row.T])
    stag = risk_dominant_first(a, b, c, d)
    for m in mix:
        assert m[0 if stag else 1] > 0.99, (a, b, c, d, mix)


def test_rae_response_trades_variance_for_mean():
    # uniform opponent in the stag hunt: stag mean 2 variance 4, hare mean 3 variance 0
    mu, cov = eq.mean_and_covariance(np.array([[4.0, 0.0], [3.0, 3.0]]), 0, [np.array([0.5, 0.5])])
    assert np.allclose(mu, [2.0, 3.0]) and np.allclose(np.diag(cov), [4.0, 0.0])
    # a gamble with a higher mean is taken partly: x_0 = (mu_0 - mu_1) / (2 risk var_0) here
    x = eq.risk_averse_response(np.array([3.0, 2.0]), np.diag([4.0, 0.0]), risk=0.25)
    assert x[0] == pytest.approx(0.5, abs=1e-6)
