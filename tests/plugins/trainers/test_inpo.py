"""``inpo``: one update moves each judged pair's log-ratio toward its mirror-descent target
η·m/2 (anchored at π_t and π_ref), bad settings are one line, and the trainer kit holds."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.loading import load_agent  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

LLM = {"mode": "generated", "temperature": 1.0, "max_text_tokens": 4}


def _inpo(game, **params):
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir()), **LLM}, game)
    return agent, get_registry().get("trainer", "inpo").factory(game, [agent], **params)


def test_one_update_moves_each_pair_toward_its_target():
    import torch

    from arena.plugins.trainers.llm.preference_text import pair_margins, response_logprobs, sampled_groups
    from arena.rng import derive_seed

    torch.set_num_threads(1)
    game = arena.load_game("open_task(instances=2,length=8)")
    agent, inpo = _inpo(game, judge="scorer:scale=0.05", samples=4, epochs=1, eta=2.0, tau=0.1, lr=1e-4, seed=0)
    trajs = [r.trajectory for r in play_games(game, [agent], num_games=2, seed=3, record=True)]
    seed = derive_seed(0, "inpo", 0)  # the groups update() builds
    groups, _ = sampled_groups(game, agent, trajs, 4, seed)
    margins = pair_margins(inpo.judge, groups)
    flat = [c.trajectory for g in groups for c in g]
    before = response_logprobs(inpo.model, agent, flat, grad=False).cpu().numpy()
    metrics = inpo.update(trajs)
    after = response_logprobs(inpo.model, agent, flat, grad=False).cpu().numpy()
    moved, want, first = [], [], 0
    for grp, m in zip(groups, margins):
        for (i, j), x in m.items():
            if abs(x) > 0.1:  # at the start pi = pi_t = pi_ref: the target is eta*x/2
                moved.append(np.sign((after[first + i] - after[first + j]) - (before[first + i] - before[first + j])))
                want.append(np.sign(x))
        first += len(grp)
    assert metrics["inpo/pairs"] == 12 and len(moved) >= 4
    assert (np.array(moved) == np.array(want)).mean() >= 0.75, (moved, want)


def test_bad_settings_are_one_line():
    game = arena.load_game("cyclic_preference")
    with pytest.raises(arena.ArenaError, match="samples must be at least 2"):
        _inpo(game, judge="preference", samples=1)
    with pytest.raises(arena.ArenaError, match="eta\\*tau <= 1"):
        _inpo(game, judge="preference", eta=10.0, tau=0.5)


def test_inpo_passes_the_trainer_kit():
    from arena.testing import check_trainer

    llm = {"name": "llm", "model": str(tiny_model_dir()), **LLM}
    check_trainer("inpo", "cyclic_preference", [llm], params={"judge": "preference:sample=true", "samples": 2}, games=2)
