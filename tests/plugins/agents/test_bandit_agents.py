"""UCB1 and Thompson sampling on the bandit game: UCB1's index by hand, its mean regret over
seeds within Auer et al.'s Theorem 1 bound and growing sublinearly (far below uniform play's
linear regret), Thompson sampling below UCB1 on Bernoulli arms, both learning on Gaussian arms,
and conformance (reproducible from the seed, however games are batched)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.agent import Observation
from arena.errors import ArenaError
from arena.loading import load_agent, load_game
from arena.playing.match import play_games
from arena.testing import check_agent

SEEDS = 10


def mean_regret(agent: str, game: str, seeds: int = SEEDS) -> float:
    g = load_game(game)
    results = play_games(g, [load_agent(agent, g)], num_games=seeds, seed=0)
    return float(np.mean([r.info["regret"] for r in results]))


def ucb1_bound(means, n):
    """Auer, Cesa-Bianchi, Fischer (2002), Theorem 1."""
    best = max(means)
    gaps = [best - m for m in means if m < best]
    return 8 * sum(math.log(n) / d for d in gaps) + (1 + math.pi**2 / 3) * sum(gaps)


def test_ucb1_pulls_each_arm_once_then_follows_the_index():
    g = load_game("bandit(means=[0.5,0.5,0.5],horizon=20)")
    s, agent = g.new_initial_state(), load_agent("ucb1", g)
    for arm, reward in [(0, 1), (1, 0), (2, 1), (0, 1), (2, 0)]:
        assert agent.act(Observation(s, 0)) == arm if s.counts.count(0) else True
        s.apply_action(arm)
        s.apply_action(reward)
    # n = 5: arm 0 2/2, arm 1 0/1, arm 2 1/2: indices 1 + sqrt(2 ln5/2), 0 + sqrt(2 ln5), 0.5 + sqrt(2 ln5/2)
    index = [1 + math.sqrt(math.log(5)), math.sqrt(2 * math.log(5)), 0.5 + math.sqrt(math.log(5))]
    assert agent.act(Observation(s, 0)) == int(np.argmax(index)) == 0
    assert agent.policy(Observation(s, 0)) == {0: 1.0}


def test_ucb1_regret_within_the_finite_time_bound_and_sublinear():
    means = (0.5, 0.6)
    assert ucb1_bound(means, 1000) == pytest.approx(553.0, abs=0.05)
    r1000 = mean_regret("ucb1", "bandit(means=[0.5,0.6],horizon=1000)")
    r4000 = mean_regret("ucb1", "bandit(means=[0.5,0.6],horizon=4000)")
    assert r1000 <= ucb1_bound(means, 1000) and r4000 <= ucb1_bound(means, 4000)
    assert r4000 < 2.5 * r1000  # linear regret would be 4x
    uniform = 4000 * 0.1 / 2  # uniform play's expected regret: n * mean gap
    assert r4000 < 0.4 * uniform
    assert mean_regret("random", "bandit(means=[0.5,0.6],horizon=4000)", 5) == pytest.approx(uniform, rel=0.05)


@pytest.mark.parametrize("means", ["[0.5,0.6]", "[0.3,0.5,0.7]"])
def test_thompson_regret_below_ucb1_on_bernoulli_arms(means):
    game = f"bandit(means={means},horizon=1000)"
    ts, ucb = mean_regret("thompson", game), mean_regret("ucb1", game)
    assert ts < 0.75 * ucb, (ts, ucb)


def test_both_learn_on_gaussian_arms():
    game = "bandit(kind=gaussian,means=[0.0,0.5,1.0],sigma=0.25,horizon=1000)"
    uniform = 1000 * (1.0 + 0.5) / 3
    for agent in ("ucb1", "thompson"):
        assert mean_regret(agent, game, 5) < 0.5 * uniform


def test_thompson_draws_from_the_game_stream():
    g = load_game("bandit(horizon=30)")
    a = play_games(g, [load_agent("thompson", g)], num_games=6, seed=7, record=True)
    b = play_games(g, [load_agent("thompson", g)], num_games=6, seed=7, record=True, batch_size=1)
    c = play_games(g, [load_agent("thompson", g)], num_games=6, seed=8, record=True)
    moves = [[[s.action for s in r.trajectory.steps] for r in rs] for rs in (a, b, c)]
    assert moves[0] == moves[1] != moves[2]


@pytest.mark.parametrize("agent", ["ucb1", "thompson"])
@pytest.mark.parametrize("game", ["bandit(horizon=20)", "bandit(kind=gaussian,arms=4,horizon=20)"])
def test_conformance(agent, game):
    check_agent(agent, game, games=6)


def test_bandit_agents_refuse_other_games():
    with pytest.raises(ArenaError, match="plays the bandit game"):
        load_agent("ucb1", load_game("ipd"))
