"""Kuhn poker as torch tensors plays the numpy face's games, draw for draw, and a neural policy's
on-device rollout makes the neural agent's decisions on the array path."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import arena  # noqa: E402
from arena.arrays import ArrayRandom, pick_uniform  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.games.card_torch import KuhnTorch, TorchRandom, mix, rollout  # noqa: E402
from arena.plugins.agents.neural import NeuralAgent  # noqa: E402
from arena.rng import GameRandom, _mix  # noqa: E402


def _game(n: int):
    return arena.load_game("kuhn_poker" if n == 2 else f"kuhn_poker(players={n})")


def test_mix_is_splitmix64_bit_for_bit():
    z = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1, 0x9E3779B97F4A7C15, 123456789], dtype=np.uint64)
    with np.errstate(over="ignore"):
        want = _mix(z)
    got = mix(torch.from_numpy(z.view(np.int64).copy())).numpy().view(np.uint64)
    assert np.array_equal(got, want)


def test_streams_are_the_runners_per_game_streams():
    rng = TorchRandom(11, [0, 5, 2**40])
    ref = [GameRandom(11, i) for i in (0, 5, 2**40)]
    for r in ref:
        r.bits()  # the state seed: the runner's first draw
    for _ in range(3):
        assert rng.uniform().tolist() == [r.uniform() for r in ref]
    rng.uniform(torch.tensor([True, False, True]))
    assert rng.uniform().tolist()[1] == ref[1].uniform()


@pytest.mark.parametrize("n", [2, 3])
def test_random_games_match_the_numpy_face(n):
    """10,000 random games, same seed: the same deals, moves and returns as the numpy face (which
    its own tests hold to the State path), and every observation OpenSpiel's information-state tensor."""
    b, seed = 10_000, 7
    face = _game(n).array_face()
    rng = ArrayRandom(seed, range(b))
    g = face.reset(rng)
    kt = KuhnTorch(n)
    trng = TorchRandom(seed, range(b))
    s = kt.reset(trng)
    assert np.array_equal(s.cards.numpy(), g.cards)
    while (live := np.flatnonzero(g.player >= 0)).size:
        assert np.array_equal(kt.observations(s).numpy()[live], g.observations(live))
        g.step(live, pick_uniform(g.legal_mask(live), rng.uniform(live)))
        s = kt.step(s, torch.from_numpy(pick_uniform(np.ones((b, 2), bool), trng.uniform(s.player >= 0).numpy())))
        assert np.array_equal(s.player.numpy(), g.player)
    assert np.array_equal(s.returns.numpy(), g.returns())
    ret, moves, _ = rollout(KuhnTorch(n), ["random"] * n, TorchRandom(seed, range(b)))
    assert [[a for a in row if a >= 0] for row in moves.tolist()] == [g.history(k)[n:] for k in range(b)]
    assert np.array_equal(ret.numpy(), g.returns())
    assert ret.sum(1).abs().max().item() == 0.0 and set(np.unique(ret.numpy())) <= {-2.0, -1.0, 1.0, 2.0, 3.0, 4.0}


def _numpy_path(agents, n: int, b: int, seed: int):
    """The neural agents' games on the numpy face: actions, log-probabilities and returns."""
    g = _game(n).array_face().reset(ArrayRandom(seed, range(b)))
    logp = np.zeros((b, 2 * n - 1), dtype=np.float32)
    while (live := np.flatnonzero(g.player >= 0)).size:
        for p in range(n):
            rows = live[g.player[live] == p]
            if rows.size:
                t = g.hlen[rows] - n
                acts, infos = agents[p].act_arrays_info(g, rows)
                logp[rows, t] = [i["log_prob"] for i in infos]
                g.step(rows, acts)
    return [g.history(k)[n:] for k in range(b)], logp, g.returns()


@pytest.mark.parametrize("n", [2, 3])
def test_neural_rollout_on_device_makes_the_agents_decisions(n):
    b, seed = 4_000, 3
    game = _game(n)
    agents = [NeuralAgent(game, hidden=16, seed=s) for s in range(n)]
    for a in agents:  # a policy far from uniform, so the draws matter
        with torch.no_grad():
            a.net.actor[-1].weight.mul_(300.0)
    hist, logp, returns = _numpy_path(agents, n, b, seed)
    with torch.no_grad():
        ret, moves, lp = rollout(KuhnTorch(n), [a.net.actor for a in agents], TorchRandom(seed, range(b)))
    assert [[a for a in row if a >= 0] for row in moves.tolist()] == hist
    assert np.array_equal(ret.numpy(), returns)
    np.testing.assert_allclose(lp.numpy(), logp, rtol=0, atol=1e-6)
    assert len({len(h) for h in hist}) > 1 and logp.min() < -1.0  # varied games, decisive policies


def test_a_learner_against_random_seats_and_bad_policies():
    game = _game(2)
    agent = NeuralAgent(game, hidden=8, seed=1)
    b = 2_000
    ret, _, lp = rollout(KuhnTorch(2), [agent.net.actor, "random"], TorchRandom(0, range(b)))
    assert (lp[:, 1] == 0).all()  # seat 1 (random) moves second: no log-probability
    assert (lp[:, 0] < 0).all()
    with pytest.raises(ArenaError, match="policies"):
        rollout(KuhnTorch(2), ["random"], TorchRandom(0, range(4)))
    with pytest.raises(ArenaError, match="'greedy'"):
        rollout(KuhnTorch(2), ["random", "greedy"], TorchRandom(0, range(4)))
    with pytest.raises(ArenaError, match="players"):
        KuhnTorch(1)
