"""LLM trainer building blocks against hand-computed values: role-conditioned baselines, the
leave-one-out group baseline and AA credit, exact Kuhn evaluation (uniform against uniform is
worth +0.125 to player 0), the trainer's action log-probs against the agent's own, and state
replay for SPPO."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("transformers")

from arena.exact.exploitability import policy_value  # noqa: E402
from arena.exact.head_to_head import cached, head_to_head, uniform_policy, vs_random  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.plugins.trainers.advantage_alignment import aligned_advantages  # noqa: E402
from arena.plugins.trainers.llm.aa import leave_one_out, returns_to_go, time_steps  # noqa: E402
from arena.plugins.trainers.llm.rollout import playout_values, replay  # noqa: E402
from arena.plugins.trainers.llm.selfplay_rlvr import RoleBaseline  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from arena.trainer import Step, Trajectory  # noqa: E402


def test_role_baseline_reads_before_update_and_keeps_roles_apart():
    b = RoleBaseline(alpha=0.5)
    assert b.advantage("kuhn", 0, 1.0) == 1.0  # b starts at 0
    assert b.advantage("kuhn", 0, 1.0) == 0.5  # b = 0.5 after the first update
    assert b.advantage("kuhn", 1, -1.0) == -1.0  # the other seat has its own baseline
    assert b.values == {"kuhn/0": 0.75, "kuhn/1": -0.5}
    shared = RoleBaseline(alpha=0.5, per_role=False)
    shared.advantage("kuhn", 0, 1.0)
    assert shared.advantage("kuhn", 1, -1.0) == -1.5  # one baseline mixes the seats


def test_group_baseline_and_returns():
    assert returns_to_go([1.0, 0.0, 2.0], 0.5).tolist() == [1.5, 1.0, 2.0]
    a, b, c = leave_one_out([np.array([3.0, 1.0]), np.array([1.0, 1.0]), np.array([2.0])])
    assert a.tolist() == [3.0 - 1.5, 0.0] and b.tolist() == [1.0 - 2.5, 0.0] and c.tolist() == [0.0]


def _step(player, decision, reward):
    return Step(player, SimpleNamespace(decision=decision), 0, None, reward)


def test_time_steps_merge_talk_into_the_closing_choice():
    traj = Trajectory(
        0,
        0,
        ["a", "b"],
        [
            _step(0, "text", 0.0),
            _step(1, "text", 0.0),
            _step(0, "choice", 2.0),
            _step(1, "choice", 1.0),
            _step(0, "text", 0.0),
            _step(0, "choice", 3.0),
        ],
        [5.0, 1.0],
    )
    assert time_steps(traj, 0) == ([0, 0, 1, 1], [2.0, 3.0])
    assert time_steps(traj, 1) == ([0, 0], [1.0])


def test_aa_credit_matches_the_formula():
    from arena.plugins.trainers.llm.aa import LLMAdvantageAlignment

    game = load_game("ipd(horizon=2)")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), "temperature": 16}, game)
    agent.name = "me"
    tr = LLMAdvantageAlignment(game, [agent], beta=2.0, gamma=0.5, gamma_aa=0.5, reward_scale=1.0)
    trajs = [
        Trajectory(
            i,
            0,
            ["me", "me"],
            [
                _step(0, "choice", r0[0]),
                _step(1, "choice", r1[0]),
                _step(0, "choice", r0[1]),
                _step(1, "choice", r1[1]),
            ],
            [0, 0],
        )
        for i, (r0, r1) in enumerate([([1.0, 2.0], [0.0, 1.0]), ([3.0, 0.0], [2.0, 2.0])])
    ]
    credit = tr.credits(trajs)
    g = {(t, p): returns_to_go([s.reward for s in trajs[t].for_player(p)], 0.5) for t in range(2) for p in range(2)}
    for p in range(2):
        a0, a1 = g[(0, p)] - g[(1, p)], g[(1, p)] - g[(0, p)]
        own = {0: a0, 1: a1}
        for t in range(2):
            other = g[(t, 1 - p)] - g[(1 - t, 1 - p)]
            want = own[t] + 2.0 * np.array([0.0, 0.5 * 0.5 * own[t][0]]) * other
            assert np.allclose(credit[(t, p)], want)
            assert np.allclose(credit[(t, p)], aligned_advantages(own[t], other, 2.0, 0.5))


def test_aa_whitening_scales_mixed_batches_but_never_amplifies_a_near_uniform_one():
    from arena.plugins.trainers.llm.aa import LLMAdvantageAlignment

    game = load_game("ipd(horizon=1)")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), "temperature": 16}, game)
    agent.name = "me"

    def credit(rewards, whiten):
        tr = LLMAdvantageAlignment(game, [agent], beta=0.0, reward_scale=1.0, whiten=whiten)
        trajs = [
            Trajectory(i, 0, ["me", "me"], [_step(0, "choice", r), _step(1, "choice", -r)], [r, -r])
            for i, r in enumerate(rewards)
        ]
        return np.array([tr.credits(trajs)[(t, 0)][0] for t in range(len(rewards))])

    mixed = [0.0, 4.0, -4.0, 8.0]  # leave-one-out advantages with std > 1: rescaled to std 1
    assert np.std(credit(mixed, False)) > 1 and np.isclose(np.std(np.r_[credit(mixed, True)]), 1.0, atol=0.05)
    calm = [0.0, 0.0, 0.0, 0.01]  # nearly every game alike: the one deviation stays small
    raw, white = credit(calm, False), credit(calm, True)
    assert np.abs(white).max() <= np.abs(raw).max() + 1e-12 and np.abs(white).max() < 0.02


def test_entropy_bonus_moves_a_scored_policy_toward_uniform():
    from arena.plugins.trainers.llm.model import attach
    from arena.plugins.trainers.llm.tokens import clipped_pg_update, learner_decisions

    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 4}, game)
    agent.name = "me"
    trajs = [r.trajectory for r in play_games(game, [agent, agent], num_games=16, seed=3, record=True)]
    decisions = learner_decisions(trajs, agent)

    def entropy(trainable):
        from arena.plugins.trainers.llm.tokens import action_logprobs

        _, dists = action_logprobs(trainable, decisions, grad=False)
        return float(np.mean([-(d.exp() * d).sum() for d in dists]))

    trainable = attach(agent, lr=1e-3)
    before = entropy(trainable)
    stats = clipped_pg_update(trainable, decisions, [1e-9] * len(decisions), epochs=3, entropy=1.0)
    assert stats["entropy"] > 0 and entropy(trainable) > before + 0.01, (before, entropy(trainable))


def test_exact_kuhn_values_match_the_note_and_the_tree():
    game = load_game("kuhn_poker")
    ev, score = head_to_head(game, [uniform_policy, uniform_policy])
    assert ev[0] == pytest.approx(0.125) and ev[1] == pytest.approx(-0.125)  # uniform vs uniform, computed exactly
    assert score[0] + score[1] == pytest.approx(1.0)
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), "temperature": 8}, game)
    pol = cached(agent.policy)
    mine = head_to_head(game, [pol, uniform_policy])[0][0]
    assert mine == pytest.approx(
        policy_value(game, lambda s, p: pol(_obs(game, s, p)) if p == 0 else {a: 0.5 for a in s.legal_actions()})[0],
        abs=1e-9,
    )
    r = vs_random(game, agent)
    assert 0 < r["winrate_vs_random"] < 1


def _obs(game, state, player):
    from arena.agent import Observation

    return Observation(state, player, None, game.spec.full_name)


@pytest.mark.parametrize("score", ["sum", "mean"])
def test_trainer_action_logprobs_equal_the_agents_own(score):
    """The trainer's log pi(action) is the probability the agent sampled from, for either score
    (with ``mean`` the labels' log-probs per token: a sum-based ratio would be off-policy)."""
    from arena.plugins.trainers.llm.model import TrainableLLM
    from arena.plugins.trainers.llm.tokens import action_logprobs, learner_decisions

    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), "temperature": 4, "score": score}, game)
    agent.name = "me"
    model = TrainableLLM(agent)
    res = play_games(game, [agent, agent], num_games=6, seed=2, record=True)
    trajs = [r.trajectory for r in res]
    decs = learner_decisions(trajs, agent)
    assert len(decs) == sum(len(t.steps) for t in trajs)
    lp, dists = action_logprobs(model, decs, grad=False)
    want = [trajs[d.traj].steps[d.step].log_prob for d in decs]
    assert np.allclose(lp.numpy(), want, atol=1e-4)
    assert all(math.isclose(float(q.exp().sum()), 1.0, rel_tol=1e-6) for q in dists)


def test_prefix_shared_logprobs_and_gradients_equal_whole_sequence_passes():
    """The trainer's log-probs run each distinct prompt once for all its continuations (KV cache
    copied per label, gradients through the cache); values and gradients must equal one plain
    forward pass per (prompt, continuation), right-padded, without any cache."""
    import torch

    from arena.plugins.trainers.llm.model import TrainableLLM

    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir())}, game)
    model = TrainableLLM(agent)
    tok = model.tokenizer
    enc = lambda t: tok(t, add_special_tokens=False)["input_ids"]  # noqa: E731
    rules = enc("Rules: Kuhn poker, three cards, one chip ante. ")  # every prompt's common prefix runs once
    shared = rules + enc("You hold the King. The history is: bet. Legal actions: ")
    pairs = [(shared, enc(c)) for c in ("call", "fold", "c")] + [(rules + enc("Other prompt: pass?"), enc("pass"))]
    pairs += [(shared + enc(" again"), enc("bet")), (shared, enc("call")), (shared, [])]

    def plain(m):
        out = []
        for p, c in pairs:
            ids = torch.tensor([list(p) + list(c)])
            lp = torch.log_softmax(m(input_ids=ids).logits[0, :-1].float(), -1)
            tgt = ids[0, 1:]
            out.append(lp[torch.arange(len(tgt)), tgt][len(p) - 1 :].sum())
        return torch.stack(out)

    got = model.logprobs(pairs, grad=True)
    (got * torch.arange(1.0, len(pairs) + 1)).sum().backward()
    g_got = [p.grad.clone() for p in model.params]
    model.optimizer.zero_grad(set_to_none=True)
    model.model.train(True)
    want = plain(model.model)
    (want * torch.arange(1.0, len(pairs) + 1)).sum().backward()
    assert got[-1].item() == 0.0  # an empty continuation has log-prob 0
    assert torch.allclose(got.detach(), want.detach(), atol=1e-4), (got, want)
    for a, b in zip(g_got, (p.grad for p in model.params)):
        assert torch.allclose(a, b, atol=1e-4, rtol=1e-3)


def test_replay_rebuilds_recorded_states_and_rejects_tampering():
    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), "temperature": 8}, game)
    res = play_games(game, [agent, agent], num_games=8, seed=5, record=True)
    for r in res:
        states = replay(game, r.trajectory)
        assert states is not None and len(states) == len(r.trajectory.steps)
        assert [s.information_state_key(s.current_player()) for s in states] == [
            st.observation.info_state for st in r.trajectory.steps
        ]
    assert any(
        replay(game, Trajectory(t.game_index, t.seed + 1, t.seats, t.steps, t.returns)) is None
        for t in [r.trajectory for r in res]
    )


def test_playouts_estimate_q_values():
    """After a bet with the King, the opponent (random) can only fold (+1) or call (+2 with the King)."""
    game = load_game("kuhn_poker")
    rnd = load_agent("random", game)
    s = game.new_initial_state()
    s.apply_action(2)  # player 0: King
    s.apply_action(0)  # player 1: Jack
    v = playout_values(game, [(s, 1, 0)] * 400, rnd, seed=0)
    assert set(np.unique(v)) <= {1.0, 2.0} and 1.35 < v.mean() < 1.65


def test_warmup_corpus_is_the_agents_own_prompts_under_uniform_play():
    from arena.plugins.trainers.llm.pretrain import random_play_corpus

    game = load_game("ipd(horizon=3,text=brief)")
    agent = load_agent(
        {"name": "llm", "model": str(tiny_model_dir()), "templates": "configs/llm/ipd_templates.yaml"}, game
    )
    texts = random_play_corpus(game, agent, games=40, seed=0)
    assert len(texts) == 40 * 3 * 2  # every decision of both seats
    assert all("Iterated prisoner's dilemma" in t and "Your move:" in t for t in texts)
    endings = {lbl: agent.prompts.continuation(lbl) for lbl in ("cooperate", "defect")}
    assert all(t.endswith(endings["cooperate"]) != t.endswith(endings["defect"]) for t in texts)
    share = np.mean([t.endswith(endings["cooperate"]) for t in texts])
    assert 0.4 < share < 0.6  # uniform random actions: no strategy in the corpus
    assert sum("last move: defect" in t for t in texts) > 0 and sum("First round." in t for t in texts) == 80


@pytest.mark.parametrize("lora", [None, {"r": 4}])
def test_prefix_shared_logprobs_and_gradients_equal_whole_sequences(lora, monkeypatch):
    """``TrainableLLM.logprobs`` runs a prompt once for all its continuations (copied KV cache);
    its values and gradients equal running every prompt + continuation whole, also with
    prompts of different lengths in one batch, repeated pairs, and a batch split in two."""
    import torch

    from arena.plugins.trainers.llm import model as model_mod

    game = load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir())}, game)
    trainable = model_mod.TrainableLLM(agent, lora=lora)
    enc = agent.backend.encode
    prompts = [enc("Deal or No Deal\np0 pool 2 1 3 turn 1/4\nAction:"), enc("short\nAction:")]
    labels = [enc(" take 1 0 2\n"), enc(" accept\n"), enc(" x")]
    pairs = [(p, c) for p in prompts for c in labels] + [(prompts[1], labels[0])]

    def whole() -> torch.Tensor:
        out = []
        for p, c in pairs:
            ids = torch.tensor([list(p) + list(c)])
            logits = trainable.model(input_ids=ids).logits[0, :-1].float()
            lp = torch.log_softmax(logits, -1).gather(-1, ids[0, 1:, None]).squeeze(-1)
            out.append(lp[len(p) - 1 :].sum())
        return torch.stack(out)

    def grads(values: torch.Tensor) -> list[torch.Tensor]:
        trainable.model.zero_grad()
        (values * torch.arange(1.0, len(pairs) + 1)).sum().backward()
        return [p.grad.clone() for p in trainable.params]

    want = whole()
    g_want = grads(want)
    for budget in (10**6, 40):  # one batch; then a prompt's continuations spread over batches
        monkeypatch.setattr(model_mod, "LOGPROB_BATCH_TOKENS", budget)
        got = trainable.logprobs(pairs)
        assert torch.allclose(got, want, atol=1e-4)
        assert all(torch.allclose(a, b, atol=1e-4) for a, b in zip(grads(got), g_want))


def test_the_warm_up_runs_on_the_configured_threads(tmp_path, monkeypatch):
    """``ensure_model`` warms up on ``torch_threads`` (1 by default): two threads under CPU
    contention summed in another order from run to run, so a rebuilt warm-up differed (measured
    on the Kuhn table-talk warm-up, docs/results/lspo.md); one thread gives the same model every time."""
    import torch

    from arena.config import load_config
    from arena.plugins.trainers.llm import driver, pretrain

    seen, real = [], pretrain.pretrain

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(pretrain, "pretrain", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        overrides = [f"model.dir={tmp_path / 'm'}", "model.pretrain_steps=2", "model.pretrain_games=4"]
        cfg = load_config(driver.LLMTrainConfig, "configs/llm/kuhn_talk_lspo.yaml", overrides)
        assert (driver.ensure_model(cfg, load_game(cfg.game)) / "arena_pretrain.json").exists()
    finally:
        torch.set_num_threads(before)
    assert seen == [1]


def test_a_model_another_process_is_building_is_waited_for_not_built_again(tmp_path):
    """A sweep's seeds share one warm-up model: the second to find it missing waits for the
    first's build (``<model.dir>.lock``) and uses it. Seen before the lock: both built in the same
    side directory and the second's rename failed on the first's finished model."""
    import fcntl
    import subprocess
    import sys
    import time

    model = tmp_path / "m"
    code = (
        "from arena.config import load_config; from arena.loading import load_game;"
        "from arena.plugins.trainers.llm import driver;"
        f"cfg = load_config(driver.LLMTrainConfig, 'configs/llm/kuhn_talk_lspo.yaml', ['model.dir={model}', 'model.pretrain_steps=0']);"
        "print(driver.ensure_model(cfg, load_game(cfg.game)))"
    )
    with open(tmp_path / "m.lock", "a") as held:  # another process is building it
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        time.sleep(8)  # ample for the child to import, load and (without the lock) build the model
        assert child.poll() is None and not model.exists()
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0 and out.strip() == str(model)
    assert (model / "config.json").exists() and not (tmp_path / "m.building").exists()
