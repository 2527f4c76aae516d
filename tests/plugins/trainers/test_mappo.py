"""MAPPO: the centralised critic reads every seat's observation and the seat id, fits the team
return, and the trainer refuses games without simultaneous moves."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from arena.errors import ArenaError
from arena.loading import load_game
from arena.playing.match import play_games
from arena.plugins.agents.neural import NeuralAgent
from arena.plugins.trainers.mappo import make_mappo


def pair(game):
    agents = [NeuralAgent(game, hidden=16, seed=p) for p in range(2)]
    for p, a in enumerate(agents):
        a.name = f"m{p}"
    return agents


def test_central_critic_reads_the_joint_observation_and_fits_the_team_return():
    torch.set_num_threads(1)
    game = load_game("climbing(horizon=2)")
    agents = pair(game)
    trainer = make_mappo(game, agents, seed=0, gamma=1.0, lam=1.0)
    res = play_games(game, agents, num_games=30, seed=1, record=True)
    segs = trainer.segments([r.trajectory for r in res])[0]
    x = trainer.joint_inputs(segs)
    assert [a.shape for a in x] == [(2, 2 * 10 + 2)] * 2
    assert np.array_equal(x[0][:, :20], x[1][:, :20]) and x[0][0, 20] == 1 and x[1][0, 21] == 1
    losses = []
    for b in range(15):
        res = play_games(game, agents, num_games=30, seed=10 + b, record=True)
        losses.append(trainer.update([r.trajectory for r in res])["central_value_loss"])
    assert np.mean(losses[-3:]) < 0.5 * np.mean(losses[:3])


def test_mappo_refuses_turn_based_games():
    game = load_game("kuhn_poker")
    with pytest.raises(ArenaError, match="simultaneous-move games"):
        make_mappo(game, pair(game))
