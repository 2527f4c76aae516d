"""SPPO's ``explore``: responses of the starting policy π_1, judged against π_t's samples and fitted
beside them. The Hedge step is pointwise, so these change only where the regression is measured;
a response π_t no longer samples keeps a target. They must come from π_1's weights (not the live
ones), enter the regression, and survive a resume."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

import arena  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.loading import load_agent  # noqa: E402
from arena.playing.match import play_games  # noqa: E402
from arena.registry import get_registry  # noqa: E402
from arena.testing import check_trainer  # noqa: E402
from arena.tools.tiny_model import tiny_model_dir  # noqa: E402

TEXT = {"name": "llm", "model": "", "mode": "generated", "temperature": 1.0, "max_text_tokens": 1}


def _sppo(game, **params):
    agent = load_agent({**TEXT, "model": str(tiny_model_dir())}, game)
    return agent, get_registry().get("trainer", "sppo").factory(game, [agent], judge="preference", **params)


def test_explored_responses_come_from_the_starting_weights_and_enter_the_regression(monkeypatch):
    import torch

    from arena.plugins.trainers.llm import preference_text

    torch.set_num_threads(1)
    game = arena.load_game("cyclic_preference(length=1)")
    agent, sppo = _sppo(game, samples=3, explore=2, epochs=2, lr=1e-2, seed=0)

    def weights():
        return {n: p.detach().clone() for n, p in sppo._params().items()}

    def same(a, b):
        return all(torch.equal(a[n], b[n]) for n in a)

    sampled, fitted = [], []
    sample, logprobs = preference_text.sampled_opponents, preference_text.response_logprobs

    def spy_sample(game, agent, groups, size, seed):
        sampled.append((size, weights()))
        return sample(game, agent, groups, size, seed)

    def spy_logprobs(model, agent, trajs, grad, ref=None):
        fitted.append(len(trajs))
        return logprobs(model, agent, trajs, grad, ref)

    monkeypatch.setattr(preference_text, "sampled_opponents", spy_sample)
    monkeypatch.setattr(preference_text, "response_logprobs", spy_logprobs)
    pi_1 = weights()
    for k in range(2):
        trajs = [r.trajectory for r in play_games(game, [agent], num_games=4, seed=k, record=True)]
        sppo.update(trajs)
    assert [size for size, _ in sampled] == [2, 2]
    assert all(same(w, pi_1) for _, w in sampled)  # π_1 both times, though the update moved the weights
    assert not same(weights(), pi_1)
    assert set(fitted) == {4 * (3 + 2)}  # every game's group of 3 and its 2 explored responses


def test_sppo_exploring_with_the_optimistic_step_passes_the_trainer_kit():
    """The resume check fails unless π_1's weights are part of the state (a resumed run starts
    from saved weights, which are not π_1)."""
    llm = {**TEXT, "model": str(tiny_model_dir())}
    params = {"judge": "preference:sample=true", "samples": 2, "optimism": True, "explore": 1}
    check_trainer("sppo", "cyclic_preference(length=1)", [llm], params=params, games=2)


def test_explore_needs_a_whole_number_and_free_text():
    game = arena.load_game("cyclic_preference(length=1)")
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ArenaError, match="explore must be a whole number"):
            _sppo(game, explore=bad)
    kuhn = arena.load_game("kuhn_poker")
    agent = load_agent({"name": "llm", "model": str(tiny_model_dir())}, kuhn)
    with pytest.raises(ArenaError, match="explore samples free-text responses"):
        get_registry().get("trainer", "sppo").factory(kuhn, [agent], explore=2)
