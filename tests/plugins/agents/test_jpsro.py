"""JPSRO: PSRO with correlated meta-solvers on 3-player Kuhn poker (exact CCE gap to zero), the
correlated best response cross-checked against a behaviour mixture, RAE as a meta-solver, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ArenaError
from arena.exact.exploitability import best_response, correlated_best_response
from arena.loading import load_agent, load_game
from arena.plugins.agents.psro.exact import TreeOracle
from arena.plugins.agents.psro.meta_solvers import make_meta_solver
from arena.plugins.agents.psro.solver import PSRO


@pytest.fixture(scope="module")
def kuhn3():
    return load_game("kuhn_poker(players=3)")


def test_correlated_response_to_one_players_mixture_is_the_behaviour_mixtures():
    """With one opponent, a correlated mixture of its policies is realization-equivalent to the
    aggregated behaviour policy, so both best responses have the same value."""
    game = load_game("kuhn_poker")
    t = TreeOracle(game)
    rng = np.random.default_rng(0)
    members = [t.uniform(1)]
    for _ in range(2):  # best responses to random policies: deterministic, varied members
        members.append(t.best_response(1, rng.random(t.tree.num_slots))[1])
    w = np.array([0.2, 0.5, 0.3])
    profiles = [t.joint([t.uniform(0), m]) for m in members]
    value, _ = correlated_best_response(t.tree, profiles, w, 0)
    behaviour = t.joint([t.uniform(0), t.aggregate(1, members, w)])
    assert value == pytest.approx(best_response(t.tree, behaviour, 0)[0], abs=1e-12)


def test_jpsro_cce_drives_the_exact_gap_to_zero_on_three_player_kuhn(kuhn3):
    psro = PSRO(kuhn3, "mecce")
    gaps = []
    for _ in range(14):
        psro.step()
        gaps.append(psro.train_gap)
        if psro.train_gap < 1e-3:
            break
    # the first iteration's summed gap is the one OpenSpiel's jpsro logs on kuhn_poker_3p (2.0625)
    assert gaps[0] == pytest.approx(2.0625, abs=1e-9)
    assert gaps[-1] < 1e-3, gaps
    assert psro.equilibrium_gap() < 1e-3
    joint = psro.joint
    assert joint is not None and joint.shape == tuple(len(p) for p in psro.pops)
    # the mixtures are the joint's marginals
    assert np.allclose(psro.mixtures[2], joint.sum(axis=(0, 1)))


def test_jpsro_ce_gap_bounds_the_cce_gap(kuhn3):
    psro = PSRO(kuhn3, "mwce")
    psro.run(3, measure=False)
    assert len(psro.pops[0]) == 4
    o = psro.oracle
    _, ce = o.joint_responses(psro.pops, psro.joint, "ce", psro.meta)
    _, cce = o.joint_responses(psro.pops, psro.joint, "cce", psro.meta)
    assert np.all(ce >= cce - 1e-12) and np.all(cce >= 0)
    assert psro.equilibrium_gap() == pytest.approx(float(ce.sum()))


def test_rae_is_a_meta_solver_and_correlated_solvers_refuse_zero_sum_pairs(kuhn3):
    stag = np.array([[4.0, 0.0], [3.0, 3.0]])
    assert make_meta_solver("rae")([stag, stag.T])[0][1] > 0.99
    with pytest.raises(ArenaError, match="2-player zero-sum.*use nash"):
        make_meta_solver("mwce")([stag, -stag])
    with pytest.raises(ArenaError, match="2-player zero-sum"):
        PSRO(load_game("kuhn_poker"), "mecce")
    with pytest.raises(ArenaError, match="needs oracle=exact"):
        PSRO(kuhn3, "mwcce", oracle="ppo")
    psro = PSRO(kuhn3, "rae")
    psro.run(2)
    assert psro.curve[-1]["exploitability"] >= 0


def test_psro_agent_plays_the_marginals_of_a_cce(kuhn3):
    agent = load_agent("psro:meta_solver=mecce,iterations=2", kuhn3)
    assert agent.psro.joint is not None
    metrics = agent.improve(1)
    assert metrics["iterations"] == 3.0 and metrics["population"] == 4.0
