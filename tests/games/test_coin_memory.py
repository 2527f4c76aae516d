"""The Coin Game's pickup memory (``coin_game(memory=k)``) and its retaliation probe."""

from __future__ import annotations

import numpy as np
import pytest

import arena
from arena.agent import Agent, Observation
from arena.errors import ArenaError

RIGHT, DOWN, UP, LEFT = 3, 1, 0, 2


def _state(memory, pos, coin, colour):
    s = arena.load_game("coin_game", memory=memory).new_initial_state(seed=0)
    s.pos, s.coin, s.coin_colour = [tuple(p) for p in pos], tuple(coin), colour
    return s


def _memory(s, player):
    x = s.observation_tensor(player)
    assert x.shape == (8, 3, 3)
    planes = x[4:]
    assert (planes == planes[:, :1, :1]).all()  # constant planes
    return planes[:, 0, 0].tolist()


def test_memory_counts_who_took_whose_coin_in_the_window():
    # (I took mine, I took the other's, the other took its own, the other took mine)
    s = _state(2, [(0, 0), (2, 2)], (0, 1), 1)
    assert _memory(s, 0) == [0, 0, 0, 0] and _memory(s, 1) == [0, 0, 0, 0]
    s.apply_actions([RIGHT, UP])  # red takes blue's coin; blue moves to (1, 2)
    assert s.returns() == [1.0, -2.0]
    assert _memory(s, 0) == [0, 1, 0, 0] and _memory(s, 1) == [0, 0, 0, 1]
    s.coin, s.coin_colour = (0, 2), 1
    s.apply_actions([DOWN, UP])  # blue takes its own coin at (0, 2); red moves to (1, 1)
    assert _memory(s, 0) == [0, 1, 1, 0] and _memory(s, 1) == [1, 0, 0, 1]
    s.coin, s.coin_colour = (2, 0), 0
    s.apply_actions([UP, UP])  # nobody reaches (2, 0): red's grab leaves the 2-step window
    assert _memory(s, 0) == [0, 0, 1, 0] and _memory(s, 1) == [1, 0, 0, 0]
    # both arrive at once on red's coin: red took its own, blue took red's
    s = _state(3, [(0, 0), (0, 2)], (0, 1), 0)
    s.apply_actions([RIGHT, LEFT])
    assert _memory(s, 0) == [1, 0, 0, 1] and _memory(s, 1) == [0, 1, 1, 0]
    assert s.observation_struct(0)["recent_pickups"] == ["I took my coin; the other took my coin"]
    assert "the other took its coin" in s.observation_text(1)


def test_memory_counts_repeats_and_leaves_the_grid_planes_alone():
    s = _state(4, [(0, 0), (1, 1)], (1, 2), 0)
    plain = _state(0, [(0, 0), (1, 1)], (1, 2), 0)
    s.apply_actions([LEFT, RIGHT])  # blue takes red's coin
    plain.apply_actions([LEFT, RIGHT])
    s.coin, s.coin_colour = (1, 0), 0
    plain.coin, plain.coin_colour = (1, 0), 0
    s.pos[1], plain.pos[1] = (1, 1), (1, 1)
    s.apply_actions([RIGHT, LEFT])  # and again
    plain.apply_actions([RIGHT, LEFT])
    assert _memory(s, 0) == [0, 0, 0, 2] and _memory(s, 1) == [0, 2, 0, 0]
    for p in (0, 1):
        assert np.array_equal(s.observation_tensor(p)[:4], plain.observation_tensor(p))


def test_memory_parameter_and_default():
    game = arena.load_game("coin_game")
    assert game.spec.observation_shape == (4, 3, 3) and game.spec.full_name == "coin_game"
    assert arena.load_game("coin_game(memory=3)").spec.observation_shape == (8, 3, 3)
    for bad in (-1, 1.5, True):
        with pytest.raises(ArenaError, match="memory"):
            arena.load_game("coin_game", memory=bad)


def test_scripted_agents_play_the_same_games_with_memory():
    """The memory planes change what a policy sees, not the game: scripted agents (which read
    the grid planes only) get the same returns with and without them."""
    out = []
    for name in ("coin_game", "coin_game(memory=4)"):
        game = arena.load_game(name)
        agents = [arena.load_agent("take_every_coin", game), arena.load_agent("always_cooperate", game)]
        out.append([r.returns for r in arena.play(game, agents, games=20, seed=3, rotate_seats=True)])
    assert out[0] == out[1]


class Grudger(Agent):
    """Takes any coin while the other took one of its coins in the window, else only its own."""

    name = "grudger"

    def __init__(self, game):
        self.game = game

    def policy(self, obs: Observation):
        x = np.asarray(obs.tensor)
        kind = "take_every_coin" if x[7, 0, 0] > 0 else "always_cooperate"
        goal = np.argwhere((x[2] + (x[3] if kind == "take_every_coin" else 0)) > 0)
        probs = {a: 0.0 for a in range(4)}
        me = np.argwhere(x[0] > 0)[0]
        moves = ((-1, 0), (1, 0), (0, -1), (0, 1))
        hits = [a for a, d in enumerate(moves) if len(goal) and tuple((me + d) % 3) == tuple(goal[0])]
        for a in hits or [a for a in range(4) if tuple((me + moves[a]) % 3) != tuple(np.argwhere(x[3] > 0)[0])]:
            probs[a] = 1.0
        total = sum(probs.values())
        return {a: p / total for a, p in probs.items()}


def test_retaliation_probe_reads_a_grudge_and_is_blind_without_memory():
    game = arena.load_game("coin_game(memory=2)")
    probe = game.agent_metrics(Grudger(game))
    assert probe["probe/P(take other's coin|calm)"] == 0.0
    assert probe["probe/P(take other's coin|after its grab)"] == 1.0
    assert probe["probe/P(take own coin|calm)"] == 1.0
    # without memory the probe has only the calm states (a policy cannot see a grab)
    plain = arena.load_game("coin_game")
    agent = arena.load_agent("neural", plain)
    assert set(plain.agent_metrics(agent)) == {"probe/P(take other's coin|calm)", "probe/P(take own coin|calm)"}


def test_coin_game_with_memory_passes_the_pettingzoo_api_test():
    from pettingzoo.test import api_test, parallel_api_test

    api_test(arena.make_env("coin_game(memory=3)"), num_cycles=100)
    parallel_api_test(arena.make_parallel_env("coin_game(memory=3)"), num_cycles=100)
