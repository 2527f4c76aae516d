"""The neural agent on a game's array face: the same games, actions, log-probabilities and
returns as on the ``State`` path for the same seed, against random and in self-play."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import arena
from arena.playing.array_match import array_face_for
from arena.playing.match import play_games

torch = pytest.importorskip("torch")

from arena.plugins.agents.basic import RandomAgent  # noqa: E402
from arena.plugins.agents.neural import NeuralAgent  # noqa: E402

VIEW = ("info_state", "legal_actions", "action_labels", "text")


def lopsided(game, seed: int, array_native: bool = True) -> NeuralAgent:
    """A small net whose policy is far from uniform (the initial one is nearly uniform)."""
    agent = NeuralAgent(game, hidden=16, seed=seed, array_native=array_native)
    with torch.no_grad():
        agent.net.actor[-1].weight.mul_(300.0)
        agent.net.actor[-1].bias.copy_(torch.linspace(-0.5, 0.5, agent.num_actions))
    agent.name = f"net{seed}"
    return agent


def recorded(results):
    """Every field of each result and of each step of its trajectory."""
    out = []
    for r in results:
        t = r.trajectory
        steps = [
            (s.player, s.action, s.log_prob, s.reward, s.extra, s.observation.tensor.tolist())
            + tuple(getattr(s.observation, f) for f in VIEW)
            for s in t.steps
        ]
        out.append((r.index, r.seats, r.returns, r.length, r.forfeit, r.transcript))
        out.append((t.game_index, t.seed, t.seats, t.returns, steps))
    return out


def both(game, make, games=2000, seed=5, caplog=None):
    with caplog.at_level(logging.DEBUG, logger="arena"):
        fast = play_games(game, make(True), games, seed=seed, rotate_seats=True, record=True)
    assert f"match on {game.spec.full_name}: array path" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="arena"):
        slow = play_games(game, make(False), games, seed=seed, rotate_seats=True, record=True)
    assert f"match on {game.spec.full_name}: State path" in caplog.text
    return fast, slow


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_same_games_and_log_probs_against_random(name, caplog):
    game = arena.load_game(name)

    def make(array):
        r = RandomAgent()
        r.array_native = array
        return [lopsided(game, 1, array), r]

    fast, slow = both(game, make, caplog=caplog)
    assert recorded(fast) == recorded(slow)
    mine = [s for r in fast for s in r.trajectory.steps if r.trajectory.seats[s.player] == "net1"]
    assert len(mine) > 2000 and all(s.log_prob is not None and s.log_prob <= 0 for s in mine)
    # the policy is lopsided and sampled, not argmax: both actions of some info state are taken
    lp = np.array([s.log_prob for s in mine])
    assert (lp < -1.0).mean() > 0.02 and (lp > -0.6).mean() > 0.1 and len(np.unique(lp)) > 10
    assert {s.action for s in mine} == set(range(game.spec.num_distinct_actions))


def test_same_games_in_self_play(caplog):
    game = arena.load_game("kuhn_poker")

    def make(array):
        a = lopsided(game, 2, array)
        return [a, a]

    fast, slow = both(game, make, caplog=caplog)
    assert recorded(fast) == recorded(slow)
    assert len({tuple(r.returns) for r in fast}) > 3


def test_a_decisions_log_prob_does_not_depend_on_its_batch():
    game = arena.load_game("leduc_poker")
    agent = lopsided(game, 3)
    x = torch.as_tensor(np.random.default_rng(0).integers(0, 2, (300,) + agent.shape).astype(np.float32))
    mask = torch.ones((300, agent.num_actions), dtype=torch.bool)
    mask[::3, 2] = False
    with torch.no_grad():
        whole = agent.act_log_probs(x, mask)
        for n, start in [(1, 7), (2, 100), (3, 0), (5, 41), (9, 250), (64, 200)]:
            assert torch.equal(
                agent.act_log_probs(x[start : start + n], mask[start : start + n]), whole[start : start + n]
            )


def test_the_switch_and_the_greedy_agent(caplog):
    game = arena.load_game("kuhn_poker")
    assert array_face_for(game, [lopsided(game, 4), RandomAgent()], True, None)[0] is not None
    face, why = array_face_for(game, [lopsided(game, 4, array_native=False), RandomAgent()], True, None)
    assert face is None and "need a State" in why
    spec = arena.load_agent("neural:hidden=8,array_native=false", game)
    assert spec.array_native is False

    def make(array):
        a = lopsided(game, 5, array)
        a.greedy = True
        return [a, RandomAgent()]

    fast, slow = both(game, make, games=500, caplog=caplog)
    assert recorded(fast) == recorded(slow)


@pytest.mark.parametrize("name", ["liars_dice", "openspiel:tic_tac_toe", "ipd"])
def test_same_games_on_other_faces(name, caplog):
    """Faces without tables (tic-tac-toe), with their own tensors (ipd: simultaneous moves, a
    face that does not record), and Liar's dice."""
    game = arena.load_game(name)
    record = game.array_face().records

    def make(array):
        r = RandomAgent()
        r.array_native = array
        return [lopsided(game, 6, array), r]

    with caplog.at_level(logging.DEBUG, logger="arena"):
        fast = play_games(game, make(True), 500, seed=2, rotate_seats=True, record=record)
    assert "array path" in caplog.text
    slow = play_games(game, make(False), 500, seed=2, rotate_seats=True, record=record)
    if record:
        assert recorded(fast) == recorded(slow)
    assert [(r.returns, r.length, r.forfeit) for r in fast] == [(r.returns, r.length, r.forfeit) for r in slow]
    assert len({tuple(r.returns) for r in fast}) > 1
