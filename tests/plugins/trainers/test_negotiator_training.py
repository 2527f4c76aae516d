"""Trained negotiators and turn-level credit: Deal or No Deal reports its Pareto metrics as numbers
the learner metrics average, PPO's ``advantage: trajectory`` ablation gives every decision of a
seat's game one advantage, and a short ``arena train`` run against ``fair`` tracks the metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from arena.loading import load_agent, load_game  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from support import REPO  # noqa: E402


def test_negotiation_outcome_numbers():
    g = load_game("deal_or_no_deal")
    res = list(play_games(g, [load_agent("greedy", g), load_agent("fair", g)], num_games=40, seed=0))
    for r in res:
        assert r.info["agreement"] == float(r.info["agreed"])
        assert r.info["pareto"] == float(r.info["pareto_optimal"])
        assert r.info["joint_fraction"] == pytest.approx(r.info["joint_utility"] / r.info["max_joint_utility"])


@pytest.mark.parametrize("mode", ["gae", "trajectory"])
def test_trajectory_advantages_are_one_per_seat_and_game(mode):
    g = load_game("deal_or_no_deal")
    agent = load_agent({"name": "neural", "arch": "mlp", "hidden": 16}, g)
    trainer = get_registry().get("trainer", "ppo").factory(g, [agent], advantage=mode, whiten=False)
    trajs = [r.trajectory for r in play_games(g, [agent, load_agent("fair", g)], num_games=12, seed=1, record=True)]
    games = trainer.segments(trajs)
    trainer.advantages(games)
    segs = [s for segs in games for s in segs if s.owner is not None]
    long = [s for s in segs if len(s.rewards) > 1]
    assert long
    for s in segs:
        if mode == "trajectory":
            assert np.allclose(s.advantages, float(np.sum(s.rewards)) - float(s.values[0]))
        else:  # per decision: GAE from the learned value differs along the game
            assert s.advantages.shape == s.rewards.shape
    if mode == "gae":
        assert any(not np.allclose(s.advantages, s.advantages[0]) for s in long)


def test_short_dond_training_tracks_pareto_metrics(tmp_path):
    from arena.config import load_config
    from arena.plugins.trainers.train_command import TrainConfig, train

    torch.set_num_threads(1)
    cfg = load_config(
        TrainConfig,
        REPO / "configs" / "social" / "dond_ppo.yaml",
        overrides=[
            "iterations=2",
            "games_per_iter=32",
            "eval_every=2",
            "eval_games=20",
            "quiet=true",
            "eval_opponents=[fair]",
            f"out={tmp_path / 'dond'}",
        ],
    )
    out = train(cfg)
    for row in (out["first"], out["final"]):
        assert 0.0 <= row["vs_fair/agreement"] <= 1.0 and 0.0 <= row["vs_fair/pareto"] <= row["vs_fair/agreement"]
        assert row["vs_fair/joint_utility"] >= row["vs_fair/return"] >= 0.0


def test_llm_train_faces_fixed_opponents_or_itself():
    """``arena llm-train`` with ``opponents``: the LLM learner is matched uniformly against fixed
    agents in the other seats (as ``arena train``'s); without them it plays itself."""
    from arena.config import load_config
    from arena.plugins.trainers.llm.driver import LLMTrainConfig, league_config

    cfg = load_config(
        LLMTrainConfig, REPO / "configs" / "llm" / "dond_rlvr.yaml", overrides=["opponents=[fair,greedy]"]
    )
    learner, *fixed = league_config(cfg, load_game(cfg.game), tmp := Path("model")).population
    assert learner.role == "learner" and learner.matchmaking == "uniform"
    assert learner.opponents == ["opponent_0", "opponent_1"] and learner.agent["model"] == str(tmp)
    assert [(m.label, m.agent, m.role) for m in fixed] == [
        ("opponent_0", "fair", "fixed"),
        ("opponent_1", "greedy", "fixed"),
    ]
    alone = load_config(LLMTrainConfig, REPO / "configs" / "llm" / "dond_rlvr.yaml", overrides=["opponents=[]"])
    (only,) = league_config(alone, load_game(alone.game), tmp).population
    assert only.matchmaking == "self_play" and only.opponents is None
