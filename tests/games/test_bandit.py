"""The bandit game: reward distributions from explicit chance, means given or drawn (and hidden),
the regret metrics against hand-computed games, renderings, conformance, bad parameters."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ArenaError
from arena.game import CHANCE
from arena.games.bandit import GRID, QUANTILES, Z
from arena.loading import load_game
from arena.testing import check_game


def pull(state, arm, outcome):
    state.apply_action(arm)
    assert state.current_player() == CHANCE
    state.apply_action(outcome)


def test_bernoulli_rewards_follow_the_given_means():
    g = load_game("bandit(means=[0.2,0.7],horizon=4)")
    assert g.arms == 2 and g.spec.params == {"arms": 2, "horizon": 4, "means": [0.2, 0.7]}
    assert load_game(g.spec.full_name).spec == g.spec  # "bandit(arms=2,horizon=4,means=[0.2;0.7])"
    s = g.new_initial_state()
    assert s.current_player() == 0 and s.legal_actions() == [0, 1]
    s.apply_action(1)
    assert s.chance_outcomes() == [(0, pytest.approx(0.3)), (1, 0.7)]
    s.apply_action(1)
    assert s.returns() == [1.0]


def test_gaussian_noise_points_have_mean_zero_and_unit_variance():
    z = np.array(Z)
    assert len(z) == QUANTILES and abs(z.mean()) < 1e-12 and z.var() == pytest.approx(1.0)
    assert np.all(np.diff(z) > 0) and z[-1] == -z[0]
    g = load_game("bandit(kind=gaussian,means=[1.0,2.0],sigma=0.5)")
    s = g.new_initial_state()
    s.apply_action(0)
    outs = s.chance_outcomes()
    assert len(outs) == QUANTILES and sum(p for _, p in outs) == pytest.approx(1.0)
    mean = sum(p * (1.0 + 0.5 * Z[a]) for a, p in outs)
    assert mean == pytest.approx(1.0)
    assert g.reward_range == pytest.approx((1.0 + 0.5 * Z[0], 2.0 + 0.5 * Z[-1]))


def test_drawn_means_come_from_chance_and_stay_hidden():
    g = load_game("bandit(arms=3,horizon=2)")
    s = g.new_initial_state()
    for pick in (0, 9, 4):
        assert s.current_player() == CHANCE
        assert s.chance_outcomes() == [(i, 0.1) for i in range(10)]
        s.apply_action(pick)
    assert s.means == [GRID[0], GRID[9], GRID[4]] == [0.05, 0.95, 0.45]
    view, text = s.observation_struct(0), s.observation_text(0)
    assert "means" not in view and "0.95" not in text and "0.45" not in text
    pull(s, 1, 1)
    pull(s, 0, 0)
    assert s.is_terminal() and s.outcome_info()["regret"] == pytest.approx(0.9)


def test_regret_metrics_by_hand():
    g = load_game("bandit(means=[0.2,0.5,0.8],horizon=5)")
    s = g.new_initial_state()
    for arm, r in [(0, 0), (0, 1), (1, 1), (2, 1), (2, 0)]:
        pull(s, arm, r)
    info = s.outcome_info()
    assert info["regret"] == pytest.approx(2 * 0.6 + 0.3)  # gaps of the arms pulled
    assert info["realized_regret"] == pytest.approx(5 * 0.8 - 3)
    assert info["best_arm_rate"] == pytest.approx(0.4) and info["arms_tried"] == 1.0
    assert info["means"] == [0.2, 0.5, 0.8]


def test_regret_payoff_returns_minus_the_pseudo_regret():
    g = load_game("bandit(means=[0.2,0.5,0.8],horizon=3,payoff=regret)")
    assert (g.spec.min_utility, g.spec.max_utility) == (pytest.approx(-1.8), 0.0)
    s = g.new_initial_state()
    for arm, r in [(0, 1), (2, 0), (1, 1)]:
        pull(s, arm, r)
    assert s.returns() == [pytest.approx(-0.9)] and s.outcome_info()["regret"] == pytest.approx(0.9)
    drawn = load_game("bandit(payoff=regret)").new_initial_state()
    assert drawn.returns() == [0.0]  # before the means are drawn


def test_text_shows_the_history_an_llm_needs():
    g = load_game("bandit(means=[0.3,0.6],horizon=6,recent=2)")
    s = g.new_initial_state()
    for arm, r in [(0, 1), (1, 0), (1, 1)]:
        pull(s, arm, r)
    text = s.observation_text(0)
    assert "Pull 4 of 6." in text
    assert "arm 0: 1 pulls, mean reward 1.00; arm 1: 2 pulls, mean reward 0.50." in text
    assert "Last pulls (oldest first): arm 1 paid 0.00, arm 1 paid 1.00." in text
    assert "Legal: arm 0, arm 1." in text and "0.3" not in text
    view = s.observation_struct(0)
    assert [st["pulls"] for st in view["stats"]] == [1, 2] and view["stats"][1]["total"] == 1.0
    assert view["recent"] == [{"arm": 1, "reward": 0.0}, {"arm": 1, "reward": 1.0}]
    brief = load_game("bandit(means=[0.3,0.6],horizon=6,recent=2,text=brief)").new_initial_state()
    for arm, r in [(0, 1), (1, 0), (1, 1)]:
        pull(brief, arm, r)
    assert brief.observation_text(0) == "t 3/6 n 1 2 m 1 .5 last 1:0 1:1"
    assert list(brief.observation_tensor(0)) == pytest.approx([1 / 6, 1.0, 2 / 6, 0.5, 0.5])


@pytest.mark.parametrize(
    "name",
    [
        "bandit",
        "bandit(kind=gaussian,arms=4,horizon=20)",
        "bandit(means=[0.0,1.0],horizon=30,text=brief)",
        "bandit(horizon=20,payoff=regret)",
    ],
)
def test_conformance(name):
    check_game(name, games=30)


@pytest.mark.parametrize(
    "name,msg",
    [
        ("bandit(arms=1)", "'arms' must be an integer 2..100"),
        ("bandit(kind=poisson)", "'kind' must be bernoulli or gaussian"),
        ("bandit(means=[0.5,1.5])", "Bernoulli 'means' must lie in"),
        ("bandit(arms=3,means=[0.5,0.6])", "'means' has 2 values for 3 arms"),
        ("bandit(kind=gaussian,sigma=0)", "'sigma' must be a positive number"),
        ("bandit(horizon=0)", "'horizon' must be an integer"),
        ("bandit(payoff=score)", "'payoff' must be reward or regret"),
    ],
)
def test_bad_parameters_are_one_line(name, msg):
    with pytest.raises(ArenaError, match=msg):
        load_game(name)
