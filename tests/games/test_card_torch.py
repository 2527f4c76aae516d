"""Kuhn poker as torch tensors plays the numpy face's games, draw for draw, and a neural policy's
on-device rollout makes the neural agent's decisions on the array path."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import arena  # noqa: E402
from arena.arrays import ArrayRandom, pick_uniform  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.games.card_torch import KuhnTorch, LeducTorch, TorchRandom, mix, rollout  # noqa: E402
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


CASES = {"kuhn2": ("kuhn_poker", lambda: KuhnTorch(2)), "kuhn3": ("kuhn_poker(players=3)", lambda: KuhnTorch(3))}
CASES["leduc"] = ("leduc_poker", lambda: LeducTorch())


def _numpy_path(agents, name: str, b: int, seed: int):
    """The agents' games on the numpy face: each game's decisions, their log-probabilities, the returns."""
    g = arena.load_game(name).array_face().reset(ArrayRandom(seed, range(b)))
    n = len(agents)
    decisions: list[list[int]] = [[] for _ in range(b)]
    logp = np.zeros((b, 8), dtype=np.float32)
    while (live := np.flatnonzero(g.player >= 0)).size:
        for p in range(n):
            rows = live[g.player[live] == p]
            if rows.size:
                acts, infos = agents[p].act_arrays_info(g, rows)
                for r, a, i in zip(rows.tolist(), acts.tolist(), infos):
                    logp[r, len(decisions[r])] = i["log_prob"]
                    decisions[r].append(a)
                g.step(rows, acts)
    return decisions, logp, g.returns()


@pytest.mark.parametrize("case", sorted(CASES))
def test_neural_rollout_on_device_makes_the_agents_decisions(case):
    name, make = CASES[case]
    b, seed = 2_000, 3
    game = arena.load_game(name)
    agents = [NeuralAgent(game, hidden=16, seed=s) for s in range(game.spec.num_players)]
    for a in agents:  # a policy far from uniform, so the draws matter
        with torch.no_grad():
            a.net.actor[-1].weight.mul_(300.0)
    decisions, logp, returns = _numpy_path(agents, name, b, seed)
    with torch.no_grad():
        ret, acts, lp = rollout(make(), [a.net.actor for a in agents], TorchRandom(seed, range(b)))
    assert [[a for a in row if a >= 0] for row in acts.tolist()] == decisions
    assert np.array_equal(ret.numpy(), returns)
    np.testing.assert_allclose(lp.numpy(), logp[:, : lp.shape[1]], rtol=0, atol=1e-6)
    assert len({len(d) for d in decisions}) > 1 and logp.min() < -1.0  # varied games, decisive policies


def test_leduc_random_games_match_the_numpy_face():
    """10,000 random Leduc games stepped side by side: the same deals (the public card dealt
    inside the step from the same streams), legal masks, observations (OpenSpiel's tensors), returns."""
    b, seed = 10_000, 5
    g = arena.load_game("leduc_poker").array_face().reset(ArrayRandom(seed, range(b)))
    lt = LeducTorch()
    s = lt.reset(TorchRandom(seed, range(b)))
    assert np.array_equal(s.cards.numpy(), g.cards)
    while (live := np.flatnonzero(g.player >= 0)).size:
        mask = lt.legal_mask(s).numpy()
        assert np.array_equal(mask[live], g.legal_mask(live))
        assert np.array_equal(lt.observations(s).numpy()[live], g.observations(live))
        g.step(live, pick_uniform(g.legal_mask(live), g.rng.uniform(live)))
        s = lt.step(s, torch.from_numpy(pick_uniform(mask, lt.rng.uniform(s.player >= 0).numpy())))
        assert np.array_equal(s.player.numpy(), g.player) and np.array_equal(s.public.numpy(), g.public)
    assert np.array_equal(s.returns.numpy(), g.returns())
    ret, acts, _ = rollout(LeducTorch(), ["random", "random"], TorchRandom(seed, range(b)))
    assert np.array_equal(ret.numpy(), g.returns())
    assert (g.public >= 0).mean() > 0.3 and set(np.unique(g.returns())) >= {-13.0, 13.0, 0.0}


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


@pytest.mark.slow
def test_a_compiled_rollout_plays_the_eager_rollouts_games():
    """torch.compile fuses the rollout (int64 wrap-around, float64 uniforms and all) without
    changing a single game: actions, returns and an MLP seat's log-probs."""
    from arena.games.card_torch import compiled_rollout

    game = KuhnTorch(2)
    net = torch.nn.Sequential(torch.nn.Linear(game.obs_width, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    with torch.no_grad():
        fast = compiled_rollout(game, [net, "random"])
        for first in (0, 512):  # a second batch of other games reuses the compiled code
            want = rollout(game, [net, "random"], TorchRandom(3, range(first, first + 512)))
            got = fast(TorchRandom(3, range(first, first + 512)))
            assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
            assert torch.allclose(got[2], want[2], atol=1e-6)
