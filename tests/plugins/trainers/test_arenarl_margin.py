"""``arenarl``'s advantage maps on real sampled groups: ``margin`` turns the tournament's own
comparisons into the true-reward advantage when the judge is noiseless (a rank cannot), the
default stays ArenaRL's rank map, and a bad map is one line."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.evaluation.judge_ranking import group_zscore, rank_advantages  # noqa: E402
from arena.loading import load_agent  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

LLM = {"mode": "generated", "temperature": 1.0, "max_text_tokens": 8}


def trainer(game, agent, **params):
    return get_registry().get("trainer", "arenarl").factory(game, [agent], judge="scorer", group=8, seed=0, **params)


def test_margin_map_is_the_true_reward_advantage_with_a_noiseless_judge():
    import torch

    torch.set_num_threads(1)
    game = arena.load_game("open_task(instances=2,length=8,shape=pairs)")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), **LLM}, game)
    trajs = [r.trajectory for r in play_games(game, [agent], num_games=3, seed=5, record=True)]
    margin, rank = trainer(game, agent, advantage="margin"), trainer(game, agent)
    assert rank.p["advantage"] == "rank"
    groups, _ = margin.groups(trajs)
    truth = [np.array([margin.judge.truth(c) for c in g]) for g in groups]
    assert any(np.ptp(t) > 0 for t in truth)
    advs, spent = margin.advantages(groups)
    assert spent == sum(2 * len(g) - 2 for g in groups)  # the same single-elimination comparisons
    for a, t in zip(advs, truth):
        assert a == pytest.approx(group_zscore(t), abs=1e-4)
    ranked, _ = rank.advantages(groups)
    for a, t in zip(ranked, truth):
        if np.ptp(t) > 0:  # ArenaRL's map: evenly spaced whatever the gaps
            assert sorted(a) == pytest.approx(sorted(rank_advantages(list(range(len(t))))), abs=1e-6)


def test_bad_advantage_map_is_one_line():
    game = arena.load_game("open_task(instances=2,length=8)")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), **LLM}, game)
    with pytest.raises(ArenaError, match="advantage must be one of rank, margin"):
        trainer(game, agent, advantage="elo")
