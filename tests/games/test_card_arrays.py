"""The array face of Kuhn poker and Leduc hold'em against OpenSpiel through the State face."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.arrays import ArrayRandom, cdf_pick, pick_weighted
from arena.testing import ConformanceError, check_array_face


@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=3)", "kuhn_poker(players=4)", "leduc_poker"])
def test_face_agrees_with_openspiel_decision_by_decision(name):
    check_array_face(name, games=400, seed=3)


def test_a_wrong_rule_is_caught(monkeypatch):
    from arena.games.card_arrays import KuhnGames

    settle = KuhnGames._settle

    def backwards(self, rows):  # the pot to the lowest card
        settle(self, rows)
        self._returns[rows] *= -1

    monkeypatch.setattr(KuhnGames, "_settle", backwards)
    with pytest.raises(ConformanceError, match="returns differ"):
        check_array_face("kuhn_poker", games=50)


def test_leduc_for_more_players_has_no_face():
    assert arena.load_game("leduc_poker(players=3)").array_face() is None


def test_every_kuhn_info_state_is_openspiels():
    import pyspiel

    game = arena.load_game("kuhn_poker(players=3)")
    face = game.array_face()
    rng = ArrayRandom(0, range(3000))
    games = face.reset(rng)
    seen = set()
    while (live := np.flatnonzero(games.player >= 0)).size:
        seen |= {face.info_state_key(int(i)) for i in games.info_states(live)}
        games.step(live, (rng.uniform(live) < 0.5).astype(np.int64))
    expected = set()

    def walk(s):
        if s.is_terminal():
            return
        if not s.is_chance_node():
            expected.add(s.information_state_string())
        for a in s.legal_actions():
            walk(s.child(a))

    walk(pyspiel.load_game("kuhn_poker(players=3)").new_initial_state())
    assert seen == expected


def test_inverse_cdf_and_weighted_pick_match_the_python_samplers():
    from arena.agent import sample_from

    u = np.random.default_rng(0).random(2000)
    probs = [0.1, 0.2, 0.3, 0.4]
    for x, k in zip(u, cdf_pick(u, probs)):
        acc, want = 0.0, len(probs) - 1
        for j, p in enumerate(probs):
            acc += p
            if x < acc:
                want = j
                break
        assert k == want
    weights = np.array([[0.0, 0.7, 0.3], [0.5, -1.0, 0.5], [0.0, 0.0, 0.0]])
    mask = np.array([[True, True, True], [True, True, False], [False, True, True]])
    for row in range(3):
        for x in u[:200]:
            legal = np.flatnonzero(mask[row]).tolist()
            want = sample_from({a: weights[row, a] for a in legal}, _Fixed(x))
            got = pick_weighted(weights[row : row + 1], mask[row : row + 1], np.array([x]))[0]
            assert got == want


class _Fixed(np.random.Generator):
    """A generator whose next draw is ``x`` (for sample_from's numpy branch)."""

    def __init__(self, x):
        super().__init__(np.random.PCG64(0))
        self.x = x

    def random(self, *args, **kwargs):
        return self.x
