"""VDN and QMIX: the least-squares additive fit VDN must reach on uniform data, QMIX's monotone
mixer, exact resume from state_dict, the qnet agent's conformance, refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from arena.errors import ArenaError
from arena.loading import load_game
from arena.playing.match import play_games
from arena.plugins.trainers.value_decomposition import QAgent, make_qmix, make_vdn
from arena.testing import check_agent
from arena.trainer import load_trainer_state, save_trainer_state


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny networks: torch's worker threads only contend on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def team(game, seed=0):
    agents = [QAgent(game, hidden=16, seed=seed + p) for p in range(2)]
    for p, a in enumerate(agents):
        a.name = f"q{p}"
    return agents


def train(game, agents, trainer, updates, start=0):
    for b in range(start, start + updates):
        res = play_games(game, agents, num_games=40, seed=1000 + b, record=True)
        trainer.update([r.trajectory for r in res])


def test_vdn_on_uniform_play_fits_the_additive_projection():
    """With both agents uniform (epsilon 1), the best additive fit of the climbing table has
    Q_i(a) - Q_i(c) = row-mean differences: -8 for a, -22/3 for b; VDN's greedy pair is (c,c)."""
    game = load_game("climbing")
    agents = team(game)
    trainer = make_vdn(game, agents, eps_start=1.0, eps_end=1.0, lr=1e-2, train_steps=40, batch=256, seed=0)
    train(game, agents, trainer, 30)
    s = game.new_initial_state()
    with torch.no_grad():
        q = agents[0].net(torch.as_tensor(np.asarray(s.observation_tensor(0), dtype=np.float32))).numpy()
    assert q[0] - q[2] == pytest.approx(-8.0, abs=1.0)
    assert q[1] - q[2] == pytest.approx(-22 / 3, abs=1.0)
    assert int(np.argmax(q)) == 2


def test_qmix_mixer_is_monotone_in_every_agent_q():
    game = load_game("penalty")
    trainer = make_qmix(game, team(game), seed=1)
    q = torch.randn(64, 2, requires_grad=True)
    s = torch.randn(64, trainer.state_size)
    trainer.mixer(q, s).sum().backward()
    assert (q.grad >= 0).all()


def test_resume_from_state_dict_gives_the_same_numbers(tmp_path):
    game = load_game("climbing")
    a = team(game)
    t = make_qmix(game, a, seed=3, eps_updates=10)
    train(game, a, t, 3)
    save_trainer_state(t, tmp_path / "trainer.pt")  # as a league commits it: loaded with weights_only
    for x in a:
        x.save(tmp_path / x.name)
    train(game, a, t, 2, start=3)
    b = [QAgent(game, checkpoint=str(tmp_path / x.name)) for x in a]
    for p, x in enumerate(b):
        x.name = f"q{p}"
    u = make_qmix(game, b, seed=3, eps_updates=10)
    load_trainer_state(u, tmp_path / "trainer.pt")
    train(game, b, u, 2, start=3)
    for x, y in zip(a, b):
        for p1, p2 in zip(x.net.parameters(), y.net.parameters()):
            assert torch.equal(p1, p2)
    assert x.epsilon == y.epsilon


def test_qnet_agent_conformance():
    check_agent("qnet", "climbing", games=4)


def test_refusals():
    with pytest.raises(ArenaError, match="simultaneous-move games"):
        make_vdn(load_game("kuhn_poker"), team(load_game("climbing")))
    game = load_game("climbing")
    with pytest.raises(ArenaError, match="one qnet learner per seat"):
        make_qmix(game, team(game)[:1])
    with pytest.raises(ArenaError, match="has no parameter"):
        make_vdn(game, team(game), learning_rate=1.0)


def test_optimistic_weighting_finds_the_climbing_optimum_plain_qmix_misses():
    """The comparison of docs/results/cooperative.md in miniature (one seed)."""
    from arena.tools.bench.coop import run_one

    assert run_one("climbing", "ow_qmix", 0, 3000, 50)["joint"] == "aa"
    assert run_one("climbing", "qmix", 0, 3000, 50)["joint"] != "aa"
