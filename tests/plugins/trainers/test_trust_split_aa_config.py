"""The shipped LLM Advantage Alignment config for Trust-and-Split with talk
(configs/llm/trust_split_aa.yaml) loads and runs end to end at a test budget: the warm-up on
``hand_teller`` games trains the tiny model on the game's text, the update trains on every
decision of the learner (its messages and its claims), and the evaluation plays self-play and
the greedy splitter (docs/results/trust_split_talk.md has the measured runs)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")


@pytest.fixture(autouse=True)
def _one_thread():
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_trust_split_aa_config_runs_end_to_end(tmp_path):
    from arena.config import load_config
    from arena.plugins.trainers.llm.driver import LLMTrainConfig, train

    budget = [
        "game=trust_split(talk=true,text=brief,horizon=2)",
        f"model.dir={tmp_path / 'model'}",
        "model.pretrain_steps=40",
        "model.pretrain_batch=8",
        "model.pretrain_games=20",
        "iterations=1",
        "games_per_iter=4",
        "eval_every=1",
        "eval_games=2",
        "quiet=true",
        f"out={tmp_path / 'aa'}",
    ]
    naive = load_config(LLMTrainConfig, "configs/llm/trust_split_aa.yaml", ["params.beta=0"])
    assert naive.params["beta"] == 0 and naive.trainer == "llm_advantage_alignment"
    cfg = load_config(LLMTrainConfig, "configs/llm/trust_split_aa.yaml", budget)
    assert cfg.params["beta"] > 0 and cfg.eval_opponents == ["greedy_splitter"]
    run = train(cfg)
    final = run["final"]
    for key in ("selfplay/joint_return", "selfplay/return_per_round", "vs_greedy_splitter/return_per_round"):
        assert key in final and key in run["first"], sorted(final)
    assert 0 <= final["selfplay/joint_return"] <= 2 * 100  # 2 rounds, at most 100 points of welfare each
    # 4 games x 2 seats x 2 rounds x (one message + one claim): every decision of the learner is trained
    assert final["train/learner/decisions"] == 32
    warm = json.loads((tmp_path / "model" / "arena_pretrain.json").read_text())
    assert warm["warmup"]["agent"] == "hand_teller" and warm["warmup"]["game"] == cfg.game
    first, last = warm["loss_per_token"]
    assert last < first / 2  # the warm-up learned the game's text
