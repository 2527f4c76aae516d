"""SPPO on free text: K sampled responses per prompt, P̂ from a judge's pairwise margins, the
regression on whole-response log-probs — the win rates are SPPO's estimate, one update moves
each response's log-probability toward its target, and the trainer resumes exactly."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.judge import Candidate  # noqa: E402
from arena.loading import load_agent  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.testing import check_trainer  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402
from arena.trainer import Trajectory  # noqa: E402

LLM = {"mode": "generated", "temperature": 1.0, "max_text_tokens": 4}


def test_win_rates_are_the_group_mean_with_the_response_itself_counting_a_half():
    from arena.plugins.trainers.llm.preference_text import win_rates

    group = [Candidate(Trajectory(0, 0, [], [], [0.0]), 0) for _ in range(3)]
    margins = [{(0, 1): 0.8, (0, 2): -0.4, (1, 2): 0.2}]  # P(0>1) = .9, P(0>2) = .3, P(1>2) = .6
    p = win_rates([group], margins)[0]
    assert p == pytest.approx([(0.5 + 0.9 + 0.3) / 3, (0.1 + 0.5 + 0.6) / 3, (0.7 + 0.4 + 0.5) / 3])
    assert p.mean() == pytest.approx(0.5)  # a constant-sum preference: the group's mean win rate is ½


def test_one_update_moves_each_response_toward_its_target():
    """On open_task with a noiseless scorer: after one regression step, log π rises for the responses
    the judge ranks above the group and falls for those below (the sign of P̂ − ½)."""
    import torch

    from arena.plugins.trainers.llm.preference_text import pair_margins, response_logprobs, win_rates

    torch.set_num_threads(1)
    game = arena.load_game("open_task(instances=2,length=8)")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), **LLM}, game)
    sppo = (
        get_registry()
        .get("trainer", "sppo")
        .factory(game, [agent], judge="scorer:scale=0.05", samples=4, epochs=1, eta=2.0, lr=1e-4, seed=0)
    )
    trajs = [r.trajectory for r in play_games(game, [agent], num_games=2, seed=3, record=True)]
    groups, _ = sampled_groups_of(sppo, trajs)
    p_hat = np.concatenate(win_rates(groups, pair_margins(sppo.judge, groups)))
    flat = [c.trajectory for g in groups for c in g]
    before = response_logprobs(sppo.model, agent, flat, grad=False).cpu().numpy()
    metrics = sppo.update(trajs)
    after = response_logprobs(sppo.model, agent, flat, grad=False).cpu().numpy()
    moved = np.sign(after - before)[np.abs(p_hat - 0.5) > 0.05]
    want = np.sign(p_hat - 0.5)[np.abs(p_hat - 0.5) > 0.05]
    assert metrics["sppo/prompts"] == 2 and metrics["sppo/p_hat_spread"] > 0.05
    assert moved.size >= 4 and (moved == want).mean() >= 0.75, (p_hat, after - before)


def sampled_groups_of(sppo, trajs):
    """The groups ``sppo.update`` will build next (same seed), rebuilt outside it."""
    from arena.plugins.trainers.llm.preference_text import sampled_groups
    from arena.rng import derive_seed

    seed = derive_seed(int(sppo.p["seed"]), "sppo-text", sppo.updates)
    return sampled_groups(sppo.game, sppo.agent, trajs, int(sppo.p["samples"]), seed)


def test_sppo_on_text_passes_the_trainer_kit():
    llm = {"name": "llm", "model": str(tiny_model_dir()), **LLM}
    check_trainer("sppo", "cyclic_preference", [llm], params={"judge": "preference:sample=true", "samples": 2}, games=2)
