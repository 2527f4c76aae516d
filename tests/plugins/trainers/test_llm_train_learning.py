"""LLM trainers learn (measured before/after on fixed seeds, exact numbers on Kuhn poker), LoRA
trains only adapters, checkpoints load back as agents with the same policy, the learner trains a
private copy, and ``arena llm-train`` runs from the command line (bad input: one line, exit 2).
The long runs with the measured numbers are configs/llm/*.yaml (docs/results/llm_training.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("transformers")

from arena.exact.exploitability import exploitability  # noqa: E402
from arena.exact.head_to_head import vs_random  # noqa: E402
from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _learner(game, temperature=16.0, seed=1):
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir(seed)), "temperature": temperature}, game)
    agent.name = "learner"
    return agent


def _train(game, agent, trainer, iterations, games):
    for it in range(iterations):
        res = play_games(game, [agent, agent], num_games=games, seed=100 + it, record=True)
        metrics = trainer.update([r.trajectory for r in res])
    return metrics


def test_selfplay_rlvr_lowers_exploitability_and_beats_random_more():
    game = load_game("kuhn_poker")
    agent = _learner(game)
    before = vs_random(game, agent)["winrate_vs_random"], exploitability(game, agent)
    trainer = get_registry().get("trainer", "selfplay_rlvr").factory(game, [agent], lr=0.002, epochs=2)
    m = _train(game, agent, trainer, 3, 96)
    after = vs_random(game, agent)["winrate_vs_random"], exploitability(game, agent)
    assert m["rlvr/decisions"] > 0 and m["rlvr/baseline_p0"] != m["rlvr/baseline_p1"]
    assert after[1] < before[1] - 0.05, (before, after)
    assert after[0] > before[0] + 0.03, (before, after)


def test_sppo_iteration_lowers_exploitability():
    game = load_game("kuhn_poker")
    agent = _learner(game)
    before = exploitability(game, agent)
    trainer = get_registry().get("trainer", "sppo").factory(game, [agent], lr=0.001, rollouts=8, epochs=20)
    res = play_games(game, [agent, agent], num_games=24, seed=7, record=True)
    m = trainer.update([r.trajectory for r in res])
    assert m["sppo/prompts"] >= 10 and m["sppo/skipped_games"] == 0  # Kuhn has 12 infosets
    assert m["sppo/loss_last"] < m["sppo/loss_first"]
    assert exploitability(game, agent) < before - 0.01


def test_lora_trains_adapters_and_checkpoint_loads_back(tmp_path):
    game = load_game("kuhn_poker")
    agent = _learner(game)
    other = load_agent({"name": "llm", "model": str(tiny_model_dir(1)), "temperature": 16.0}, game)
    trainer = get_registry().get("trainer", "selfplay_rlvr").factory(game, [agent], lr=0.02, lora={"r": 4, "alpha": 8})
    base = trainer.model.model.get_base_model()
    assert all("lora_" in n for n, p in trainer.model.model.named_parameters() if p.requires_grad)
    frozen = {n: p.detach().clone() for n, p in base.named_parameters() if "lora_" not in n}
    _train(game, agent, trainer, 1, 32)
    assert all((p == frozen[n]).all() for n, p in base.named_parameters() if "lora_" not in n)
    agent.save(tmp_path / "snap")  # what a league snapshot does
    loaded = load_agent({"name": "llm", "model": str(tmp_path / "snap"), "temperature": 16.0}, game)
    s = game.new_initial_state()
    s.apply_action(2)
    s.apply_action(0)
    from arena.agent import Observation

    obs = Observation(s, 0, None, game.spec.full_name)
    mine, back, untouched = agent.policy(obs), loaded.policy(obs), other.policy(obs)
    assert abs(mine[1] - back[1]) < 1e-4
    assert abs(mine[1] - untouched[1]) > 1e-3  # trained, and the agent sharing the path was not


def test_bad_trainer_parameter_is_one_line():
    game = load_game("kuhn_poker")
    from arena.errors import ArenaError

    with pytest.raises(ArenaError, match="no parameter 'lrr'"):
        get_registry().get("trainer", "selfplay_rlvr").factory(game, [_learner(game)], lrr=1)


def test_cli_runs_and_rejects_bad_input(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"game: kuhn_poker\nmodel: {{dir: {tiny_model_dir(1)}}}\nagent: {{temperature: 16}}\n"
        f"iterations: 1\ngames_per_iter: 8\neval_every: 1\nout: {tmp_path / 'run'}\n"
    )
    ok = subprocess.run([sys.executable, "-m", "arena.cli", "llm-train", str(cfg)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr[-2000:]
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert set(res["first"]) == {"step", "seconds", "return_vs_random", "winrate_vs_random", "exploitability"}
    assert (tmp_path / "run" / "snapshots" / "learner@1" / "config.json").exists()
    assert (tmp_path / "run" / "curves.png").exists()
    bad = subprocess.run(
        [sys.executable, "-m", "arena.cli", "llm-train", str(cfg), "params.baseline=median", f"out={tmp_path / 'bad'}"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "baseline must be one of" in bad.stderr


def test_llm_aa_learns_reciprocity_on_the_text_ipd_where_naive_defects(tmp_path):
    """The shipped IPD config at a test budget (5 rounds, 8 iterations): the same warmed-up tiny
    model, trained with the AA term, plays tit-for-tat (cooperates in self-play, defects against
    always-defect after the first round); with beta 0 (naive REINFORCE) it defects everywhere."""
    from arena.config import load_config
    from arena.errors import ArenaError
    from arena.plugins.trainers.llm.driver import LLMTrainConfig, train

    budget = [
        "game=ipd(horizon=5,text=brief)",
        f"model.dir={tmp_path / 'model'}",
        "model.pretrain_steps=150",
        "params.lr=0.0003",
        "iterations=8",
        "eval_every=8",
        "eval_games=32",
        "eval_opponents=[always_defect]",
        "quiet=true",
    ]
    runs = {}
    for name, beta in (("aa", 3.0), ("naive", 0.0)):
        cfg = load_config(
            LLMTrainConfig, "configs/llm/ipd_aa.yaml", budget + [f"params.beta={beta}", f"out={tmp_path / name}"]
        )
        runs[name] = train(cfg)
    aa, naive = runs["aa"]["final"], runs["naive"]["final"]
    first = [{k: v for k, v in runs[x]["first"].items() if k != "seconds"} for x in ("aa", "naive")]
    assert first[0] == first[1]  # same model, same start
    assert 0.3 < runs["aa"]["first"]["selfplay/cooperation"] < 0.7  # the warm-up teaches no strategy
    assert aa["selfplay/cooperation"] > 0.8 and naive["selfplay/cooperation"] < 0.1, (aa, naive)
    assert aa["probe/P(C|CC)"] > 0.9 and aa["probe/P(C|CD)"] < 0.1  # reciprocity, not blind cooperation
    assert aa["vs_always_defect/cooperation"] <= 0.25  # cooperates at most in the first round
    assert json.loads((tmp_path / "model" / "arena_pretrain.json").read_text())["warmup"]["steps"] == 150
    cfg = load_config(LLMTrainConfig, "configs/llm/ipd_aa.yaml", budget[:2] + ["model.pretrain_steps=10"])
    with pytest.raises(ArenaError, match="model.dir .* exists with warm-up"):
        train(cfg)
