"""The climbing and penalty games: payoffs, the best-response chain that traps independent
learners (Claus & Boutilier 1998), conformance, bad parameters."""

from __future__ import annotations

import numpy as np
import pytest

from arena.errors import ArenaError
from arena.loading import load_game
from arena.testing import check_game


def test_climbing_payoffs_and_the_trap():
    g = load_game("climbing")
    m = np.asarray(g.matrix)
    assert m[0, 0] == 11 == g.optimum and m[1, 1] == 7 and m[0, 1] == -30
    vs_uniform = m.mean(axis=1)  # each action's value against a uniform partner
    assert np.allclose(vs_uniform, [-19 / 3, -17 / 3, 5 / 3])
    assert int(np.argmax(m[:, 2])) == 1 and int(np.argmax(m[:, 1])) == 1  # c -> b -> b: stuck at (b,b)
    s = g.new_initial_state()
    s.apply_actions([0, 0])
    assert s.returns() == [11.0, 11.0] and s.is_terminal()


@pytest.mark.parametrize("k,safe", [(-10.0, True), (-5.0, False)])
def test_penalty_safe_action_wins_against_uniform_iff_k_below_minus_8(k, safe):
    g = load_game(f"penalty(k={k})")
    m = np.asarray(g.matrix)
    assert m[0, 0] == m[2, 2] == 10 and m[0, 2] == k
    assert (int(np.argmax(m.mean(axis=1))) == 1) == safe


@pytest.mark.parametrize("name", ["climbing", "penalty"])
def test_conformance(name):
    check_game(name, games=20)


def test_bad_parameters_are_one_line():
    with pytest.raises(ArenaError, match="k must be <= 0"):
        load_game("penalty(k=3)")
    with pytest.raises(ArenaError, match="horizon must be a positive integer"):
        load_game("climbing(horizon=0)")
