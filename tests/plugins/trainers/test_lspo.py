"""LSPO's pieces against known values: the table-talk game and its abstraction (uniform Kuhn
exploitability 11/24, a leaky talker is exploitable, CFR solves the abstract game), latent
strategies (phrase families recovered), the DPO loss (hand-computed), DPO raising the chosen
response's margin, outcome pairs, and one LSPO iteration end to end with a resumable state."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.errors import ArenaError
from arena.exact.exploitability import exploitability
from arena.loading import load_agent, load_game
from arena.playing.match import play_games
from support import REPO


def _uniform(state, player):
    acts = state.legal_actions(player)
    return {a: 1.0 / len(acts) for a in acts}


def test_table_talk_text_face_and_abstraction():
    g = load_game("table_talk(game=kuhn_poker)")
    assert g.spec.text_decisions and not g.spec.tree
    s = g.new_initial_state()
    s.apply_action(0)  # P0: Jack
    s.apply_action(2)  # P1: King
    assert s.decision_kind(0) == "text" and s.legal_actions(0) == []
    s.apply_action("I hold\nnothing")
    assert s.decision_kind(0) == "choice" and s.legal_actions(0) == [0, 1]
    assert 'you: "I hold nothing"' in s.observation_text(0)
    assert 'your opponent: "I hold nothing"' in s.observation_text(1)
    # hidden information: each side sees its own card and the public talk, never the other card
    assert "Jack" in s.observation_text(0) and "King" not in s.observation_text(0)
    assert "King" in s.observation_text(1) and "Jack" not in s.observation_text(1)
    assert s.observation_tensor(0).shape == g.spec.observation_shape
    s.apply_action(1)  # bet
    a = s.abstracted(g.abstract(3), lambda p, text: 2)
    assert a.said == [(0, 2)] and a.information_state_key(1) != s.information_state_key(1)
    with pytest.raises(ArenaError, match="must say something"):
        s.clone().apply_action(0)
    with pytest.raises(ArenaError, match="messages must be >= 0"):
        load_game("table_talk(game=kuhn_poker,messages=-1)")


def test_abstract_game_known_values_and_cfr():
    from arena.plugins.agents.cfr.run import make_solve, run_solve

    a = load_game("table_talk(game=kuhn_poker,messages=3)")
    assert a.spec.tree
    # cheap talk said uniformly tells nothing: uniform play is exactly as exploitable as in Kuhn (11/12 / 2)
    assert exploitability(a, _uniform) == pytest.approx(11 / 24)

    def honest(state, player):  # message = own card, moves uniform: the talk leaks the hand
        if state.legal_actions(player) == [0, 1, 2]:
            card = state.inner.history()[player]
            return {m: float(m == card) for m in range(3)}
        return _uniform(state, player)

    leak = exploitability(a, honest)  # a best responder reads the card off the message
    assert leak > 11 / 24 + 0.03 and leak == pytest.approx(0.5)
    solve = run_solve(make_solve(a, "cfr+"), 300)
    assert solve.nash_conv() / 2 < 0.01


def test_latent_space_recovers_phrase_families():
    from arena.plugins.trainers.llm.latent import LatentSpace

    fam = {
        "strong": ["i have a great hand", "great hand, fold now", "a great great hand"],
        "weak": ["my card is bad", "bad card here", "my bad bad card"],
        "chat": ["nice weather today", "nice weather", "the weather is nice"],
    }
    texts = [t for rows in fam.values() for t in rows] * 3
    space = LatentSpace(k_min=2, k_max=5, embedding="tfidf", seed=0).fit(texts)
    assert space.k == 3
    ids = {name: set(space.assign(rows).tolist()) for name, rows in fam.items()}
    assert all(len(v) == 1 for v in ids.values()) and len(set().union(*ids.values())) == 3
    assert space.assign(["what nice weather"])[0] in ids["chat"]
    hashed = LatentSpace(2, 5, embedding="hashing").fit(texts)
    assert hashed.k == 3
    with pytest.raises(ArenaError, match="embedding must be one of"):
        LatentSpace(embedding="bert")


def test_dpo_loss_known_value():
    torch = pytest.importorskip("torch")
    from arena.plugins.trainers.llm.dpo import dpo_loss

    t = torch.tensor
    loss, margin = dpo_loss(t([-1.0, -3.0]), t([-2.0, -1.0]), t([-1.5, -2.0]), t([-1.5, -2.0]), beta=0.5)
    # pair 1: 0.5 * ((-1 + 1.5) - (-2 + 1.5)) = 0.5; pair 2: 0.5 * ((-3 + 2) - (-1 + 2)) = -1
    assert margin.tolist() == pytest.approx([0.5, -1.0])
    expected = (math.log1p(math.exp(-0.5)) + math.log1p(math.exp(1.0))) / 2
    assert float(loss) == pytest.approx(expected, rel=1e-6)
    # conservative DPO (label smoothing 0.25): a pair stops pulling at the margin log(0.75 / 0.25)
    m = torch.tensor([math.log(3.0) / 0.5], requires_grad=True)
    zero = torch.zeros(1)
    smooth, _ = dpo_loss(m, zero, zero, zero, beta=0.5, label_smoothing=0.25)
    smooth.backward()
    assert float(m.grad) == pytest.approx(0.0, abs=1e-6)
    assert float(smooth) == pytest.approx(0.75 * math.log1p(1 / 3) + 0.25 * math.log1p(3), rel=1e-6)
    # the NLL term (nll α): α times the chosen responses' per-token NLL, here 4 and 2 tokens
    anchored, _ = dpo_loss(
        t([-1.0, -3.0]), t([-2.0, -1.0]), t([-1.5, -2.0]), t([-1.5, -2.0]), 0.5, nll=0.5, chosen_tokens=t([4.0, 2.0])
    )
    assert float(anchored) == pytest.approx(expected + 0.5 * (1.0 / 4 + 3.0 / 2) / 2, rel=1e-6)


def load_trainer(spec, game, learners):
    """A trainer through the registry, as the league builds it."""
    from arena.registry import get_registry

    return get_registry().get("trainer", spec["name"]).factory(game, learners, **spec.get("params", {}))


def _llm(game, **kw):
    pytest.importorskip("transformers")
    from arena.tools.tiny_model import tiny_model_dir

    return load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 1.0, "score": "mean", **kw}, game)


def test_dpo_raises_the_chosen_margin_and_outcome_pairs():
    from arena.agent import Observation
    from arena.plugins.trainers.llm.dpo import PreferencePair

    g = load_game("kuhn_poker")
    agent = _llm(g)
    trainer = load_trainer({"name": "dpo", "params": {"beta": 0.5, "epochs": 6, "lr": 3e-4, "seed": 0}}, g, [agent])
    state = g.new_initial_state()
    state.apply_action(0)
    state.apply_action(1)
    obs = Observation(state, 0, np.random.default_rng(0), g.spec.full_name)
    prompt = agent.backend.prompt_ids(agent.prompts.build(obs))
    enc = [agent.backend.encode(agent.prompts.continuation(lbl)) for lbl in ("bet", "check")]
    pair = PreferencePair(tuple(prompt), tuple(enc[0]), tuple(enc[1]))
    before = trainer.pair_logprobs([pair], grad=False)
    p_bet = agent.policy(obs)[1]
    stats = trainer.fit([pair])
    after = trainer.pair_logprobs([pair], grad=False)
    assert float(after[0] - after[1]) > float(before[0] - before[1]) + 0.5
    assert stats["dpo/loss_last"] < stats["dpo/loss_first"] == pytest.approx(math.log(2), rel=1e-5)
    assert agent.policy(obs)[1] > p_bet  # the agent samples from the trained weights
    trajs = [r.trajectory for r in play_games(g, [agent, agent], num_games=12, seed=0, record=True)]
    pairs = trainer.outcome_pairs(trajs)
    assert pairs and all(p.chosen_ids != p.rejected_ids for p in pairs)
    with pytest.raises(ArenaError, match="reference must be one of"):
        load_trainer({"name": "dpo", "params": {"reference": "sft"}}, g, [agent])
    with pytest.raises(ArenaError, match="nll must be >= 0"):
        load_trainer({"name": "dpo", "params": {"nll": -1}}, g, [agent])
    # the NLL term lifts the chosen response itself above where plain DPO leaves it (same start)
    chosen = {}
    for nll in (0.0, 2.0):
        fresh = _llm(g)
        params = {"beta": 0.5, "epochs": 6, "lr": 3e-4, "seed": 0, "nll": nll}
        t = load_trainer({"name": "dpo", "params": params}, g, [fresh])
        t.fit([pair])
        chosen[nll] = float(t.pair_logprobs([pair], grad=False)[0])
    assert chosen[2.0] > chosen[0.0] + 1.0, chosen  # measured: -2.3 vs -11.5


def test_dpo_replay_keeps_fitting_earlier_pairs_and_resumes(tmp_path):
    """``replay``: a later fit keeps pulling an earlier round's pair — here a round with no new
    pair moves it further with replay and not at all without; the buffer survives a save/load."""
    from arena.agent import Observation
    from arena.plugins.trainers.llm.dpo import PreferencePair

    g = load_game("kuhn_poker")

    def pair(agent, cards, good, bad):
        state = g.new_initial_state()
        for c in cards:
            state.apply_action(c)
        obs = Observation(state, 0, np.random.default_rng(0), g.spec.full_name)
        prompt = agent.backend.prompt_ids(agent.prompts.build(obs))
        enc = [agent.backend.encode(agent.prompts.continuation(lbl)) for lbl in (good, bad)]
        return PreferencePair(tuple(prompt), tuple(enc[0]), tuple(enc[1]))

    moved, stats = {}, {}
    for keep in (0, 8):
        params = {"beta": 0.5, "epochs": 2, "lr": 5e-5, "seed": 0, "replay": keep}
        t = load_trainer({"name": "dpo", "params": params}, g, [_llm(g)])
        first = pair(t.agent, (2, 0), "bet", "check")
        t.fit([first])
        before = t.pair_logprobs([first], grad=False)
        stats[keep] = t.fit([])
        after = t.pair_logprobs([first], grad=False)
        moved[keep] = float((after[0] - after[1]) - (before[0] - before[1]))
    assert moved[0] == 0.0 and stats[0] == {"dpo/pairs": 0.0}
    assert moved[8] > 1.0 and stats[8]["dpo/replayed"] == 1.0 and stats[8]["dpo/pairs"] == 0.0, (moved, stats)
    second = pair(t.agent, (0, 2), "check", "bet")
    t.fit([second])
    from arena.trainer import load_trainer_state, save_trainer_state

    save_trainer_state(t, tmp_path / "state.pt")  # the run store's file (weights_only on load)
    again = load_trainer({"name": "dpo", "params": params}, g, [_llm(g)])
    load_trainer_state(again, tmp_path / "state.pt")
    assert again.replayed == t.replayed == [first, second]
    with pytest.raises(ArenaError, match="replay must be >= 0"):
        load_trainer({"name": "dpo", "params": {"replay": -1}}, g, [t.agent])


# A small LSPO iteration on Kuhn table talk (8-character talk, k = 2, a short CFR solve).
SMALL_LSPO = {
    "candidates": 1,
    "k_min": 2,
    "k_max": 2,
    "solver_iterations": 50,
    "eval_samples": 1,
    "compare_initial": False,
    "measure_before": False,
    "seed": 0,
}


def test_lspo_iteration_end_to_end_and_state_round_trip():
    g = load_game("table_talk(game=kuhn_poker,max_chars=8)")
    agent = _llm(g, max_text_tokens=8)
    params = {**SMALL_LSPO, "epochs": 1, "lr": 1e-4}
    trainer = load_trainer({"name": "lspo", "params": params}, g, [agent])
    trajs = [r.trajectory for r in play_games(g, [agent, agent], num_games=4, seed=0, record=True)]
    out = trainer.update(trajs)
    assert out["lspo/latent_strategies"] == 2
    assert out["lspo/cfr_exploitability"] < 0.05
    assert 0.0 <= out["lspo/llm_exploitability"] <= 2.0 and out["lspo/skipped_games"] == 0
    assert out["lspo/pairs_talk"] + out["lspo/pairs_move"] == out["dpo/pairs"] > 0
    state = trainer.state_dict()
    assert len(state["extra"]["corpus"]) == out["lspo/corpus"] > 0  # 1 + candidates utterances per talk turn
    again = load_trainer({"name": "lspo", "params": params}, g, [_llm(g, max_text_tokens=8)])
    again.load_state_dict(state)
    assert again.corpus == trainer.corpus and again.updates == trainer.updates
    with pytest.raises(ArenaError, match="free-text talk game"):
        load_trainer({"name": "lspo"}, load_game("kuhn_poker"), [_llm(load_game("kuhn_poker"))])


def test_per_token_pairs_compare_the_scored_policy_and_response_warmup():
    """A ``per_token`` pair compares mean per-token log-probs (what a ``score: mean`` agent plays);
    the ``response`` warm-up loss is the mean NLL of the answers' tokens only."""
    torch = pytest.importorskip("torch")
    from arena.agent import Observation
    from arena.plugins.trainers.llm.dpo import PreferencePair
    from arena.plugins.trainers.llm.pretrain import play_corpus, pretrain

    g = load_game("table_talk(game=kuhn_poker,max_chars=8)")
    agent = _llm(g, max_text_tokens=8)
    trainer = load_trainer({"name": "dpo", "params": {"beta": 0.5, "seed": 0}}, g, [agent])
    s = g.new_initial_state()
    for a in (0, 1, "hi"):
        s.apply_action(a)
    obs = Observation(s, 0, np.random.default_rng(0), g.spec.full_name)
    prompt = tuple(agent.backend.prompt_ids(agent.prompts.build(obs)))
    check, bet = (tuple(agent.backend.encode(agent.prompts.continuation(x))) for x in ("check", "bet"))
    assert len(check) != len(bet)
    total = trainer.pair_logprobs([PreferencePair(prompt, bet, check)], grad=False)
    mean = trainer.pair_logprobs([PreferencePair(prompt, bet, check, per_token=True)], grad=False)
    assert float(mean[0]) == pytest.approx(float(total[0]) / len(bet), rel=1e-5)
    assert float(mean[1]) == pytest.approx(float(total[1]) / len(check), rel=1e-5)
    # the agent's own policy is the softmax of exactly these means (T = 1)
    p_bet = agent.policy(obs)[1]
    assert p_bet == pytest.approx(float(torch.sigmoid(mean[0] - mean[1])), rel=1e-4)

    # warm-up on the answers only: the first loss is the untrained model's NLL of the batch's answers
    fresh = _llm(g, max_text_tokens=8)
    rows = play_corpus(g, fresh, games=3, seed=0, players="table_talker")
    batch = [rows[i] for i in np.random.default_rng(0).integers(len(rows), size=4)]
    enc = fresh.backend.encode
    scored = fresh.backend.score_ids([(enc(p), enc(c)) for p, c in batch])
    expected = -sum(sum(r) for r in scored) / sum(len(r) for r in scored)
    _, losses = pretrain(fresh, g, games=3, steps=1, batch=4, seed=0, players="table_talker", loss="response")
    assert losses[0] == pytest.approx(expected, rel=1e-4)
    with pytest.raises(ArenaError, match="loss must be one of"):
        pretrain(fresh, g, games=1, steps=1, loss="prompt")


def test_balance_directions_cancels_the_common_push():
    from arena.plugins.trainers.llm.dpo import PreferencePair
    from arena.plugins.trainers.llm.lspo import balance_directions

    fold, call, bet, check = (1,), (2,), (3,), (4,)
    pairs = [PreferencePair((i,), fold, call, True) for i in range(7)]  # 7 x fold > call
    pairs += [PreferencePair((10 + i,), call, fold, True) for i in range(2)]  # 2 x call > fold
    pairs += [PreferencePair((20,), bet, check, True)]  # no counterpart: dropped
    pairs += [PreferencePair((30,), (5,), (6,)), PreferencePair((31,), (5,), (6,))]  # talk: kept
    kept, dropped = balance_directions(pairs, set(range(10)), seed=0)
    assert dropped == 6 and len(kept) == 6
    dirs = [(p.chosen_ids, p.rejected_ids) for p in kept]
    assert dirs.count((fold, call)) == dirs.count((call, fold)) == 2 and dirs.count(((5,), (6,))) == 2
    assert balance_directions(pairs, set(range(10)), seed=0)[0] == kept  # deterministic given the seed


def test_table_talker_move_honesty():
    """``move_honesty`` h: the strongest card plays its bold move (bet/call) with h + (1 - h)/2, the
    weakest the other one (check/fold) likewise, the middle card uniform; h 0 is uniform everywhere."""
    from arena.agent import Observation

    g = load_game("table_talk(game=kuhn_poker)")

    def obs(mine: int, facing_bet: bool) -> Observation:
        s = g.new_initial_state()
        player = 1 if facing_bet else 0
        for a in ((mine + 1) % 3, mine) if facing_bet else (mine, (mine + 1) % 3):
            s.apply_action(a)
        s.apply_action("hello")
        if facing_bet:
            s.apply_action(1)  # player 0 bets
            s.apply_action("hi")
        return Observation(s, player, np.random.default_rng(0), g.spec.full_name)

    talker = load_agent("table_talker:move_honesty=0.5", g)
    assert talker.policy(obs(2, False)) == {0: 0.25, 1: 0.75}  # King: bet
    assert talker.policy(obs(0, False)) == {0: 0.75, 1: 0.25}  # Jack: check
    assert talker.policy(obs(1, False)) == {0: 0.5, 1: 0.5}  # Queen: uniform
    assert talker.policy(obs(2, True)) == {0: 0.25, 1: 0.75}  # King facing a bet: call
    assert talker.policy(obs(0, True)) == {0: 0.75, 1: 0.25}  # Jack facing a bet: fold
    assert load_agent("table_talker", g).policy(obs(2, False)) == {0: 0.5, 1: 0.5}
    with pytest.raises(ArenaError, match="move_honesty must be in"):
        load_agent("table_talker:move_honesty=2", g)


def test_lspo_probe_report(tmp_path, capsys):
    """``tools/lspo_probe.py report``: per-seed exploitability by iteration from metrics.csv and
    the aggregate of final minus first over seeds."""
    from arena.tools.lspo_probe import report

    cols = "step,train/learner/llm_exploitability_before,train/learner/llm_exploitability\n"
    for seed, rows in ((0, "1,0.5,0.4\n2,0.41,0.3\n"), (1, "1,0.5,0.45\n2,0.46,0.35\n")):
        (tmp_path / f"seed-{seed}").mkdir()
        (tmp_path / f"seed-{seed}" / "metrics.csv").write_text(cols + rows)
    report(str(tmp_path))
    out = capsys.readouterr().out
    assert "seed-0: warmed-up 0.500; after iterations 0.400 0.300" in out
    assert "falls every iteration: True; the DPO step lowered it in 2 of 2" in out
    assert "final - first: IQM -0.100" in out and "mean -0.100" in out
    fixed = tmp_path / "fixed" / "seed-0"  # fixed_abstraction and guard
    fixed.mkdir(parents=True)
    pre = "train/learner/"
    names = "llm_exploitability,fixed_llm_exploitability_before,fixed_llm_exploitability,guard_epochs"
    (fixed / "metrics.csv").write_text(
        "step," + ",".join(pre + c for c in names.split(",")) + "\n1,0.3,0.4,0.3,24\n2,0.5,,0.2,12\n3,0.4,,0.2,0\n"
    )
    report(str(tmp_path / "fixed"))
    out = capsys.readouterr().out
    assert "seed-0: warmed-up 0.400; after iterations 0.300 0.200 0.200; falls every iteration: False" in out
    assert "final below first: True; kept steps: 24, 12, null" in out
    split = tmp_path / "split" / "seed-0"  # guard_split: the kept block is named
    split.mkdir(parents=True)
    names += ",guard_set"
    (split / "metrics.csv").write_text(
        "step," + ",".join(pre + c for c in names.split(",")) + "\n1,0.3,0.4,0.3,24,1\n2,0.5,,0.2,6,2\n3,0.4,,0.1,3,3\n"
    )
    report(str(tmp_path / "split"))
    assert "kept steps: 24, 6 moves, 3 talk" in capsys.readouterr().out


def test_shipped_kuhn_talk_config():
    """The shipped LSPO config: the trainer's seed follows the run's (``arena sweep`` sets ``seed=S``)
    and the warm-up players are talkers whose moves depend on their card."""

    from arena.config import load_config
    from arena.plugins.trainers.llm.driver import LLMTrainConfig

    path = REPO / "configs/llm/kuhn_talk_lspo.yaml"
    cfg = load_config(LLMTrainConfig, str(path), overrides=["seed=7"])
    assert cfg.params["seed"] == 7 and cfg.params["balance_moves"] is True
    assert cfg.params["guard"] and cfg.params["guard_first"] and cfg.params["guard_split"]
    talker = load_agent(cfg.model.pretrain_agent, load_game(cfg.game))
    assert talker.move_honesty == 0.8


def _lspo(**extra):
    g = load_game("table_talk(game=kuhn_poker,max_chars=8)")
    agent = _llm(g, max_text_tokens=8)
    params = {**SMALL_LSPO, "epochs": 8, "lr": 1e-3, **extra}
    return g, agent, load_trainer({"name": "lspo", "params": params}, g, [agent])


def test_lspo_guard_backtracks_and_restores_the_weights():
    """``guard``: a fit that raises the measured exploitability is undone (weights and optimizer)
    and retried with half the steps; when every try raises it the iteration is a null step."""
    import torch

    from arena.plugins.trainers.llm.dpo import PreferencePair

    g, agent, trainer = _lspo(guard_halvings=3)
    state = g.new_initial_state()
    for a in (0, 1, "hi"):
        state.apply_action(a)
    from arena.agent import Observation

    obs = Observation(state, 0, np.random.default_rng(0), g.spec.full_name)
    prompt = tuple(agent.backend.prompt_ids(agent.prompts.build(obs)))
    enc = [tuple(agent.backend.encode(agent.prompts.continuation(lbl))) for lbl in ("bet", "check")]
    pairs = [PreferencePair(prompt, enc[0], enc[1], per_token=True)]
    tried = []
    fit = trainer.fit

    def recording_fit(ps):
        tried.append(trainer.p["epochs"])
        return fit(ps)

    trainer.fit = recording_fit
    start = {k: v.clone() for k, v in trainer.model.model.state_dict().items()}
    before = {"exploitability": 0.4}
    stats, after = trainer.guarded_fit(pairs, lambda: {"exploitability": 0.5}, before)
    assert tried == [8, 4, 2, 1] and stats["lspo/guard_epochs"] == 0 and stats["lspo/guard_tries"] == 4
    assert after is before and trainer.updates == 1 and trainer.p["epochs"] == 8
    now = trainer.model.model.state_dict()
    assert all(torch.equal(start[k], now[k]) for k in start)  # a null step: the iteration's start weights
    assert not trainer.model.optimizer.state  # Adam's moments are the start's too (none before any fit)
    tried.clear()
    results = iter([0.6, 0.3])
    stats, after = trainer.guarded_fit(pairs, lambda: {"exploitability": next(results)}, before)
    assert tried == [8, 4] and stats["lspo/guard_epochs"] == 4 and after["exploitability"] == 0.3
    assert trainer.updates == 2 and trainer.p["epochs"] == 8
    now = trainer.model.model.state_dict()
    assert not all(torch.equal(start[k], now[k]) for k in start)  # the 4-step fit is kept
    tried.clear()  # guard_first: a fit that lowers this game's exploitability but raises another's is undone
    other = iter([0.2, 0.5, 0.2])  # before the fit, after 8 steps, after 4 steps
    stats, after = trainer.guarded_fit(pairs, lambda: {"exploitability": 0.3}, before, [lambda: next(other)])
    assert tried == [8, 4] and stats["lspo/guard_epochs"] == 4 and trainer.updates == 3
    assert stats["lspo/guard_set"] == 1
    # guard_split: every try on all the pairs refused, then the first block (the move pairs) is
    # searched the same way and its 4-step fit kept; an empty block is skipped
    tried.clear()
    fitted = []
    trainer.fit = lambda ps: (fitted.append(len(ps)), recording_fit(ps))[1]
    talk = [PreferencePair(prompt, enc[1], enc[0]), PreferencePair(prompt, enc[0], enc[1])]
    results = iter([0.5, 0.5, 0.5, 0.5, 0.45, 0.35])
    stats, after = trainer.guarded_fit(
        pairs + talk, lambda: {"exploitability": next(results)}, before, blocks=[[], pairs, talk]
    )
    assert tried == [8, 4, 2, 1, 8, 4] and fitted == [3, 3, 3, 3, 1, 1]
    assert stats["lspo/guard_set"] == 3 and stats["lspo/guard_epochs"] == 4 and stats["lspo/guard_tries"] == 6
    tried.clear()
    stats, after = trainer.guarded_fit(pairs + talk, lambda: {"exploitability": 0.5}, before, blocks=[pairs, talk])
    assert tried == [8, 4, 2, 1] * 3 and stats["lspo/guard_set"] == 0 and after is before  # all refused: null
    # with DPO's replay buffer: an undone try leaves no pairs in it, a kept fit its pairs once
    trainer.fit, trainer.p["replay"] = fit, 8
    trainer.guarded_fit(pairs, lambda: {"exploitability": 0.5}, before)
    assert trainer.replayed == []
    results = iter([0.6, 0.3])
    trainer.guarded_fit(pairs, lambda: {"exploitability": next(results)}, before)
    assert trainer.replayed == pairs
    with pytest.raises(ArenaError, match="guard_split needs"):
        load_trainer({"name": "lspo", "params": {"guard_split": True}}, g, [agent])
    with pytest.raises(ArenaError, match="guard_first needs"):
        load_trainer({"name": "lspo", "params": {"guard_first": True, "guard": True}}, g, [agent])
    with pytest.raises(ArenaError, match="guard_halvings and guard_tol"):
        load_trainer({"name": "lspo", "params": {"guard_tol": -1}}, g, [agent])


def test_lspo_fixed_abstraction_measures_every_iteration_in_the_first_game():
    """``fixed_abstraction``: the first iteration's latent space is kept (not re-clustered) and
    every iteration's policy is measured in its abstract game; it survives a resume."""
    g, agent, trainer = _lspo(fixed_abstraction=True, guard=True, epochs=1)
    trajs = [r.trajectory for r in play_games(g, [agent, agent], num_games=4, seed=0, record=True)]
    first = trainer.update(trajs)
    assert 0.0 <= first["lspo/fixed_llm_exploitability_before"] <= 2.0
    assert 0.0 <= first["lspo/fixed_llm_exploitability"] <= 2.0
    assert first["lspo/guard_tries"] >= 1 and "lspo/llm_exploitability_before" in first
    reps = list(trainer.fixed.representatives)
    assert reps == list(trainer.latent.representatives)  # the first iteration's own abstraction
    trainer.corpus = [t + "zz" for t in trainer.corpus]  # new utterances: the next fit re-clusters them
    more = [r.trajectory for r in play_games(g, [agent, agent], num_games=4, seed=1, record=True)]
    second = trainer.update(more)
    assert "lspo/fixed_llm_exploitability_before" not in second and "lspo/fixed_llm_exploitability" in second
    assert trainer.fixed.representatives == reps and trainer.latent.representatives != reps
    again = load_trainer({"name": "lspo", "params": dict(trainer.p)}, g, [_llm(g, max_text_tokens=8)])
    again.load_state_dict(trainer.state_dict())
    assert again._fixed_game() is not None and again.fixed.representatives == reps
    assert again._fixed_exploitability(again._fixed_game()) == pytest.approx(
        trainer._fixed_exploitability(trainer._fixed_game())
    )
    with pytest.raises(ArenaError, match="fixed_abstraction needs a fixed encoder"):
        load_trainer({"name": "lspo", "params": {"fixed_abstraction": True, "embedding": "hidden"}}, g, [agent])
