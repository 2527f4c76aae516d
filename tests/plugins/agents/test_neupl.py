"""``neupl``: its exact values against a mixture agree with arena's policy evaluation, training
brings the conditional policy to the exact best response of held-out mixtures (and it uses the
mixture it is given), checkpoints round-trip, bad input is one line."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ArenaError
from arena.exact.exploitability import correlated_best_response, policy_value
from arena.loading import load_agent, load_checkpoint, load_game, save_checkpoint


@pytest.fixture(scope="module")
def kuhn():
    return load_game("kuhn_poker")


def test_values_against_a_mixture_are_arenas_exact_values(kuhn):
    agent = load_agent("neupl:basis_size=3,hidden=16,seed=1", kuhn)
    tree = agent.tree
    sigma = np.array([0.2, 0.5, 0.3])
    own = agent.slot_policy(sigma)
    for p in range(2):
        s0, s1 = tree.player_slots[p]
        expected = 0.0
        for w, profile in zip(sigma, agent.basis):
            joint = profile.copy()
            joint[s0:s1] = own[s0:s1]
            expected += w * policy_value(kuhn, joint, tree)[p]
        assert agent.action_values(own, sigma, p)[1] == pytest.approx(expected, abs=1e-12)
        # the best response to the mixture is worth at least any one policy, the conditional one included
        assert correlated_best_response(tree, list(agent.basis), list(sigma), p)[0] >= expected - 1e-12
    assert (agent.gaps([sigma]) > 0.05).all()  # untrained: near uniform, far from the best response


def test_training_reaches_the_best_response_to_held_out_mixtures(kuhn):
    agent = load_agent("neupl:basis=deterministic,basis_size=3,hidden=32,batch=8,seed=0,basis_seed=3", kuhn)
    held_out = agent.eval_mixtures(20, seed=123)
    before = agent.gaps(held_out)
    out = agent.improve(400)
    after = agent.gaps(held_out)
    assert out["iterations"] == 400
    assert after.max() < 0.02 and after.mean() < before.mean() / 10, (before.mean(), after)
    # it best-responds to the mixture it is given: told the least likely basis policy, it does worse
    told = [np.eye(3)[np.argmin(s)] for s in held_out]
    wrong = np.asarray(
        [
            sum(
                correlated_best_response(agent.tree, list(agent.basis), list(s), p)[0]
                - agent.action_values(agent.slot_policy(t), s, p)[1]
                for p in range(2)
            )
            / 2
            for s, t in zip(held_out, told)
        ]
    )
    assert wrong.mean() > 3 * after.mean() + 0.01, (wrong.mean(), after.mean())


def test_checkpoint_round_trip_keeps_basis_weights_and_mixture(kuhn, tmp_path):
    agent = load_agent("neupl:basis_size=2,hidden=8,mixture=0.25/0.75,iterations=3", kuhn)
    save_checkpoint(agent, tmp_path / "ck", "neupl:basis_size=2,hidden=8,mixture=0.25/0.75,iterations=3")
    again = load_checkpoint(tmp_path / "ck", kuhn)
    assert np.array_equal(again.basis, agent.basis) and np.allclose(again.mixture, [0.25, 0.75])
    assert again.iteration == agent.iteration == 3
    sigma = np.array([0.6, 0.4])
    assert np.allclose(again.slot_policy(sigma), agent.slot_policy(sigma))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("neupl:basis=psro", "basis must be one of random, deterministic"),
        ("neupl:basis_size=2,mixture=1/2/3", "mixture must be 2 non-negative weights"),
        ("neupl:mixture=a/b", "mixture must be weights separated by '/'"),
        ("neupl:batch=0", "batch must be a positive integer"),
        ("neupl:lr=0", "lr and alpha must be positive"),
    ],
)
def test_bad_parameters_are_one_error(kuhn, spec, message):
    with pytest.raises(ArenaError, match=message):
        load_agent(spec, kuhn)
