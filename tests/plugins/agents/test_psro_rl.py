"""PSRO's RL oracle on a game without a tree view: Kuhn poker seen only through its PettingZoo AEC
face (randomness inside the env, no tree). The PPO best response must beat the opponent mixture
it was trained against; because the same policy also runs on the tree-view Kuhn, its value
against that mixture is measured exactly too, next to the exact best-response value."""

from __future__ import annotations

import numpy as np
import pytest

from arena.adapters.pettingzoo import from_pettingzoo
from arena.agent import PolicyAgent
from arena.exact.exploitability import policy_array
from arena.loading import load_game
from arena.playing.aec import ArenaAECEnv
from arena.playing.match import play_games
from arena.plugins.agents.basic import RandomAgent
from arena.plugins.agents.psro.exact import TreeOracle
from arena.plugins.agents.psro.rl import MixtureAgent, RLOracle
from arena.plugins.agents.psro.solver import PSRO


class AlwaysBet(PolicyAgent):
    name = "always_bet"

    def policy(self, obs):
        return {a: float(a == max(obs.legal_actions)) for a in obs.legal_actions}


def kuhn_without_tree():
    kuhn = load_game("kuhn_poker")
    return kuhn, from_pettingzoo(
        lambda: ArenaAECEnv(kuhn), "kuhn_aec", min_utility=-2.0, max_utility=2.0, zero_sum=True
    )


def test_mixture_agent_draws_one_member_per_game():
    kuhn, _ = kuhn_without_tree()
    mix = MixtureAgent([RandomAgent(), AlwaysBet()], [0.0, 1.0])
    res = play_games(kuhn, [AlwaysBet(), mix], num_games=50, seed=0, record=True)
    assert all(s.action == 1 for r in res for s in r.trajectory.for_player(1))
    mix = MixtureAgent([RandomAgent(), AlwaysBet()], [0.5, 0.5])
    a = [r.returns for r in play_games(kuhn, [RandomAgent(), mix], num_games=200, seed=5)]
    b = [r.returns for r in play_games(kuhn, [RandomAgent(), mix], num_games=200, seed=5, batch_size=7)]
    assert a == b  # the member draw depends on the game's seed only, not on batching
    assert not mix._chosen  # per-game choices are released when games end


@pytest.mark.slow
def test_ppo_best_response_beats_the_mixture_it_was_trained_against():
    kuhn, aec = kuhn_without_tree()
    assert not aec.spec.tree
    mixture = lambda: MixtureAgent([RandomAgent(), AlwaysBet()], [0.5, 0.5], "mix")  # noqa: E731
    oracle = RLOracle(aec, seed=0, br_games=1500, br_batch=150, hidden=32, ppo={"lr": 0.01, "gamma": 1.0, "epochs": 4})
    br, curve = oracle.train_best_response(0, [mixture()], "br", 1)
    # measured on the tree-less game: the trained response against the mixture vs random's
    sampled = {
        name: float(np.mean([r.returns[0] for r in play_games(aec, [agent, mixture()], num_games=3000, seed=123)]))
        for name, agent in (("br", br), ("random", RandomAgent()))
    }
    assert sampled["br"] > 0.12 and sampled["br"] - sampled["random"] > 0.15, (sampled, curve)
    # exact: its value against the mixture on the tree-view Kuhn, below the exact best response
    t = TreeOracle(kuhn)
    (s0, e0), (s1, e1) = t.slots
    u, b = policy_array(kuhn, RandomAgent()), policy_array(kuhn, AlwaysBet())
    opp = t.aggregate(1, [u[s1:e1], b[s1:e1]], np.array([0.5, 0.5]))
    exact_br = t.best_response(0, t.joint([u[s0:e0], opp]))[0]
    value = t.values([policy_array(kuhn, br)[s0:e0], opp])[0]
    random_value = t.values([u[s0:e0], opp])[0]
    assert exact_br == pytest.approx(1 / 3) and random_value == pytest.approx(-1 / 16)
    assert random_value + 0.15 < value <= exact_br + 1e-9


def test_psro_with_the_ppo_oracle_runs_on_a_tree_less_game():
    _, aec = kuhn_without_tree()
    psro = PSRO(
        aec, "uniform", oracle="ppo", oracle_params={"br_games": 100, "br_batch": 50, "payoff_games": 20, "hidden": 8}
    )
    psro.run(1)
    assert [len(p) for p in psro.pops] == [2, 2] and psro.meta[0].shape == (2, 2)
    assert np.allclose(psro.meta[0] + psro.meta[1], 0.0)  # zero-sum, sampled
    assert psro.exploitability() is None and "exploitability" not in psro.curve[0]
