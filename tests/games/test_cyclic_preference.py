"""``cyclic_preference``: the von Neumann winner of its intransitive preferences is (1/7, 2/7, 4/7),
derived in closed form and solved as an LP; Bradley–Terry ranks A first instead; the exact SPPO
update (Hedge) averages to the winner; the ``preference`` judge reads the game's probabilities."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.games.cyclic_preference import CyclicPreference, response_index
from arena.judge import Candidate
from arena.loading import load_judge
from arena.testing import check_game
from arena.trainer import Trajectory

WINNER = np.array([1, 2, 4]) / 7


def test_von_neumann_winner_is_one_seventh_two_sevenths_four_sevenths():
    game = CyclicPreference()
    p = game.von_neumann_winner()
    assert np.abs(p - WINNER).max() < 1e-9
    P = game.preference_matrix()[:3, :3]
    assert np.allclose(p @ P, 0.5)  # against the winner every response wins exactly half the time
    assert np.allclose(np.diag(P), 0.5) and np.allclose(P + P.T, 1.0)  # a constant-sum preference


@pytest.mark.parametrize("p_ab,p_bc,p_ca", [(0.8, 0.7, 0.9), (0.55, 0.95, 0.6)])
def test_winner_of_any_cycle_is_proportional_to_the_opposite_margins(p_ab, p_bc, p_ca):
    """Setting column payoffs to zero gives p ∝ (M_BC, M_CA, M_AB) with M = P − ½."""
    game = CyclicPreference(p_ab, p_bc, p_ca)
    closed = np.array([p_bc - 0.5, p_ca - 0.5, p_ab - 0.5])
    assert np.abs(game.von_neumann_winner() - closed / closed.sum()).max() < 1e-9


def test_bradley_terry_ranks_a_first_where_the_winner_puts_most_on_c():
    """A reward model (Bradley–Terry MLE of the pairwise probabilities) scores A highest — a
    DPO/BT learner collapses on A — while the winner gives A the least mass."""
    from scipy.optimize import minimize

    P = CyclicPreference().preference_matrix()[:3, :3]

    def nll(s):
        d = s[:, None] - s[None, :]
        return -(P * -np.logaddexp(0.0, -d)).sum()

    s = minimize(nll, np.zeros(3)).x
    s -= s.mean()
    assert np.argmax(s) == 0 and np.allclose(s, [0.275, -0.413, 0.138], atol=2e-3)
    assert np.argmax(WINNER) == 2


def test_exact_sppo_hedge_average_reaches_the_winner_and_its_last_iterate_cycles():
    P = CyclicPreference().preference_matrix()[:3, :3]
    pi, total = np.full(3, 1 / 3), np.zeros(3)
    for _ in range(5000):
        pi = pi * np.exp(1.0 * (P @ pi))
        pi /= pi.sum()
        total += pi
    assert np.abs(total / total.sum() - WINNER).sum() < 0.05
    assert np.abs(pi - WINNER).sum() > 0.05


def test_preference_judge_reads_the_game_and_samples_labels():
    game = arena.load_game("cyclic_preference")

    def cand(text):
        s = game.new_initial_state()
        s.apply_action(text)
        return Candidate(Trajectory(0, 0, [], [], [0.0]), 0, s)

    a, b, c, junk = cand("A"), cand(" b, surely"), cand("c"), cand("zzz")
    expected = load_judge("preference", game)
    assert expected.compare([(a, b), (b, c), (c, a), (junk, a), (junk, junk)]) == pytest.approx(
        [0.8, 0.2, 0.4, -1.0, 0.0]
    )
    sampled = load_judge({"name": "preference", "sample": True, "seed": 3}, game)
    labels = np.array(sampled.compare([(a, b)] * 4000))
    assert set(labels) == {-1.0, 1.0} and abs((labels > 0).mean() - 0.9) < 0.02
    assert [response_index(t) for t in ("A", " b", "Cab", "", "x")] == [0, 1, 2, 3, 3]


@pytest.mark.parametrize("name", ["cyclic_preference", "cyclic_preference(text=false)"])
def test_both_forms_pass_the_kit(name):
    check_game(name, games=20)


def test_bad_parameters_are_one_line():
    with pytest.raises(arena.ArenaError, match="cyclic_preference: p_ab"):
        arena.load_game("cyclic_preference(p_ab=1.5)")
