"""Turn-level credit (``credit: trajectory | turn | critic``) against hand-computed values: GAE and
returns-to-go per turn, the turn rewards of a hand-built game, the playout baseline against the
exact value of Kuhn poker under the model's own policy, the critic fitting known returns, resume,
parameter errors and the trainer contract."""

from __future__ import annotations

import copy
import io
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("transformers")

from arena.agent import Observation  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.plugins.trainers.llm.credit import Credit, gae, returns_to_go, turn_rewards, turns  # noqa: E402
from arena.plugins.trainers.llm.selfplay_rlvr import SelfPlayRLVR  # noqa: E402
from arena.testing import check_trainer  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from arena.trainer import Step, Trajectory  # noqa: E402


def test_gae_per_turn_against_hand_values():
    r, v = [0.0, -0.5, 2.0], [1.0, 0.5, 1.5]
    g = 0.9
    d = [0.0 + g * 0.5 - 1.0, -0.5 + g * 1.5 - 0.5, 2.0 - 1.5]  # delta_k = r_k + gamma V_{k+1} - V_k, V_3 = 0
    lam = 0.5
    want = [d[0] + g * lam * d[1] + (g * lam) ** 2 * d[2], d[1] + g * lam * d[2], d[2]]
    assert np.allclose(gae(r, v, g, lam), want)
    assert np.allclose(gae(r, v, g, 0.0), d)  # lam 0: one-step TD errors
    rtg = [0.0 + g * (-0.5) + g * g * 2.0, -0.5 + g * 2.0, 2.0]
    assert np.allclose(returns_to_go(r, g), rtg)
    assert np.allclose(gae(r, v, g, 1.0), np.array(rtg) - v)  # lam 1: Monte Carlo return minus V
    assert np.allclose(gae(r, [0.0] * 3, 1.0, 1.0), [1.5, 1.5, 2.0])  # no values: return-to-go


def _step(player, reward=0.0, invalid=0):
    return Step(player, SimpleNamespace(decision="choice"), 0, None, reward, {"invalid_attempts": invalid})


def test_turn_rewards_place_penalties_and_the_return_on_their_turns():
    # seat 0 decides at steps 0, 2, 4; seat 1 between; step rewards 1.0 at step 2, an invalid attempt at step 4
    traj = Trajectory(0, 0, ["me", "x"], [_step(0), _step(1), _step(0, 1.0), _step(1), _step(0, 0.0, 2)], [5.0, -5.0])
    r = turn_rewards(traj, 0, [0, 2, 4], invalid_penalty=-1.5)
    assert r.tolist() == [0.0, 1.0, -3.0 + 4.0]  # the return's remainder (5 - 1) lands on the last turn
    assert r.sum() == pytest.approx(5.0 - 1.5 * 2)  # what trajectory credit gives every turn
    assert turn_rewards(traj, 0, [2, 4], -1.5).tolist() == [1.0, 1.0]  # step 0 (no token ids) joins turn 0
    decisions = [SimpleNamespace(traj=0, player=0, step=s) for s in (4, 0, 2)]
    assert turns(decisions) == {(0, 0): [1, 2, 0]}


def _kuhn_agent(name="me", temperature=2.0):
    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": temperature}, game)
    agent.name = name
    return game, agent


def _exact_value(game, agent, state, player):
    """V^pi(state) for ``player`` with ``agent`` on every seat: the whole Kuhn subtree."""
    if state.is_terminal():
        return float(state.returns()[player])
    if state.is_chance_node():
        return sum(p * _exact_value(game, agent, _child(state, a), player) for a, p in state.chance_outcomes())
    pol = agent.policy(Observation(state, state.current_player(), None, game.spec.full_name))
    return sum(p * _exact_value(game, agent, _child(state, a), player) for a, p in pol.items())


def _child(state, action):
    s = state.clone()
    s.apply_action(action)
    return s


def _credit(game, agent, **kw):
    from arena.plugins.trainers.llm.model import TrainableLLM

    params = {**SelfPlayRLVR.defaults, "seed": 0, **kw}
    return Credit("selfplay_rlvr", game, agent, TrainableLLM(agent), params)


def test_turn_baseline_is_the_policys_exact_state_value():
    """The playout mean from a decision's state converges to V^pi(s) computed over the whole
    Kuhn subtree with the same (frozen) policy on both seats."""
    from arena.plugins.trainers.llm.rollout import replay

    game, agent = _kuhn_agent()
    credit = _credit(game, agent, credit="turn", playouts=150)
    trajs = [r.trajectory for r in play_games(game, [agent, agent], num_games=1, seed=4, record=True)]
    from arena.plugins.trainers.llm.tokens import learner_decisions

    decisions = learner_decisions(trajs, agent)
    values = credit.playout_values(trajs, decisions, turns(decisions))
    assert len(values) == len(decisions) and credit.playout_games == 150 * len(decisions)
    for i, d in enumerate(decisions):
        state = replay(game, trajs[d.traj])[d.step]
        exact = _exact_value(game, agent, state, d.player)
        assert abs(values[i] - exact) < 0.35, (i, values[i], exact)  # returns in [-2, 2], 150 playouts: se < 0.17


def test_critic_value_converges_to_known_returns():
    """On a fixed set of decisions whose targets are a known function of the prompt (the card
    held), repeated fits drive V to the targets (the loss falls by far)."""
    game, agent = _kuhn_agent()
    credit = _credit(game, agent, credit="critic", critic_lr=0.05, critic_steps=100)
    trajs = [r.trajectory for r in play_games(game, [agent, agent], num_games=16, seed=1, record=True)]
    from arena.plugins.trainers.llm.tokens import learner_decisions

    decisions = learner_decisions(trajs, agent)
    feats = credit.features(decisions, track=True)
    card = {tuple(d.prompt_ids): i for i, d in enumerate(decisions)}  # distinct prompts
    target = np.array([float(card[tuple(d.prompt_ids)] % 3) - 1.0 for d in decisions])  # -1, 0, 1 by prompt
    first, _ = credit.fit_critic(feats, target)
    _, last = credit.fit_critic(feats, target)
    assert first == pytest.approx(float(np.var(target)), rel=1e-5)  # zero-initialised head: V = the targets' mean
    assert last < 1e-3 * first, (first, last)
    assert np.abs(credit.values(feats) - target).max() < 0.05


def test_critic_advantages_are_gae_of_its_values_and_it_learns_from_the_batch():
    game, agent = _kuhn_agent()
    credit = _credit(game, agent, credit="critic", gamma=0.9, lam=0.7)
    trajs = [r.trajectory for r in play_games(game, [agent, agent], num_games=8, seed=2, record=True)]
    from arena.plugins.trainers.llm.tokens import learner_decisions

    decisions = learner_decisions(trajs, agent)
    adv0, stats0 = credit.advantages(trajs, decisions, 0.0)
    for key, idx in turns(decisions).items():  # untrained critic: V = 0, advantages are returns-to-go
        r = turn_rewards(trajs[key[0]], key[1], [decisions[i].step for i in idx], 0.0)
        assert np.allclose([adv0[i] for i in idx], returns_to_go(r, 0.9))
    values = credit.values(credit.features(decisions))
    adv1, stats1 = credit.advantages(trajs, decisions, 0.0)
    for key, idx in turns(decisions).items():
        r = turn_rewards(trajs[key[0]], key[1], [decisions[i].step for i in idx], 0.0)
        assert np.allclose([adv1[i] for i in idx], gae(r, values[idx], 0.9, 0.7), atol=1e-5)
    assert stats1["credit/value_error"] < stats0["credit/value_error"]


def _rlvr(credit, **kw):
    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 2.0}, game)
    agent.name = "me"
    return game, agent, SelfPlayRLVR(game, [agent], credit=credit, seed=3, torch_threads=1, **kw)


def test_critic_state_round_trip_gives_the_identical_next_update():
    import torch

    game, agent, a = _rlvr("critic", critic_steps=5)
    batch = [r.trajectory for r in play_games(game, [agent, agent], num_games=8, seed=7, record=True)]
    a.update(batch)
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    state = torch.load(buf, weights_only=True)
    _, _, b = _rlvr("critic", critic_steps=5)
    b.load_state_dict(copy.deepcopy(state))
    assert torch.equal(a.credit.head.weight, b.credit.head.weight)
    nxt = [r.trajectory for r in play_games(game, [agent, agent], num_games=8, seed=8, record=True)]
    assert a.update(nxt) == b.update(nxt)
    assert torch.equal(a.credit.head.weight, b.credit.head.weight)
    assert not torch.equal(a.credit.head.weight, state["extra"]["credit"]["head"]["weight"])  # it trained


def test_unknown_credit_and_bad_knobs_are_one_clear_error():
    with pytest.raises(ArenaError, match="credit must be one of trajectory, turn, critic, not 'td'"):
        _rlvr("td")
    with pytest.raises(ArenaError, match="lam must be in"):
        _rlvr("critic", lam=1.5)
    with pytest.raises(ArenaError, match="playouts must be >= 1"):
        _rlvr("turn", playouts=0)
    with pytest.raises(ArenaError, match="playout_agents must map"):
        _rlvr("turn", playout_agents="fair")


def test_turn_credit_asks_for_the_opponents_it_must_play():
    game, agent, t = _rlvr("turn", playouts=1)
    other = load_agent("random", game)
    other.name = "opponent_0"
    batch = [r.trajectory for r in play_games(game, [agent, other], num_games=2, seed=1, record=True)]
    with pytest.raises(ArenaError, match="seat 'opponent_0'.*playout_agents"):
        t.update(batch)
    _, agent2, ok = _rlvr("turn", playouts=1, playout_agents=["random"])
    batch = [r.trajectory for r in play_games(game, [agent2, other], num_games=2, seed=1, record=True)]
    from arena.plugins.trainers.llm.tokens import learner_decisions

    want = float(len(learner_decisions(batch, agent2)))  # one playout per decision state
    assert ok.update(batch)["credit/playout_games"] == want


@pytest.mark.parametrize("credit", ["turn", "critic"])
def test_turn_credits_pass_the_trainer_contract(credit):
    llm = {"name": "llm", "model": str(tiny_model_dir()), "temperature": 8}
    check_trainer("selfplay_rlvr", "kuhn_poker", [llm], params={"credit": credit, "playouts": 1}, games=2)
